"""The virtual board: the real firmware on MicroPython's unix port, behind a pty.

:class:`VirtualBoard` starts it and hands out a serial port path that pyserial, mpremote and
the cribboard host package open like a USB board; :class:`VirtualControl` presses its buttons and
reads its LEDs through a side channel. :class:`AnyVirtualBoard` is what it shares with the
emulated Pico (:mod:`cribboard.virtual.rp2board`), so a test is written once for both. See
docs/virtual-board.md.

Each name is imported from its module when it is first used: the command line's `virtual` row
lives in this package (cribboard.virtual.cli), and reading the table must not start
subprocess, ctypes and sockets for every command.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .anyboard import AnyVirtualBoard
    from .control import FlashStop, VirtualControl
    from .errors import (
        FlashInUse,
        MicroPythonNotFoundError,
        NoFrameError,
        VirtualBoardError,
        VirtualControlError,
    )
    from .interpreter import ENV_MICROPYTHON, find_micropython
    from .launcher import DEFAULT_FLASH_SIZE, DEFAULT_HEAP, VirtualBoard
    from .sidechannel import FrameCallback

_HOMES = {  # each name of __all__: the module it is in
    "AnyVirtualBoard": "anyboard",
    "DEFAULT_FLASH_SIZE": "launcher",
    "DEFAULT_HEAP": "launcher",
    "ENV_MICROPYTHON": "interpreter",
    "FlashInUse": "errors",
    "FlashStop": "control",
    "FrameCallback": "sidechannel",
    "MicroPythonNotFoundError": "errors",
    "NoFrameError": "errors",
    "VirtualControl": "control",
    "VirtualControlError": "errors",
    "VirtualBoard": "launcher",
    "VirtualBoardError": "errors",
    "find_micropython": "interpreter",
}

__all__ = [
    "AnyVirtualBoard",
    "DEFAULT_FLASH_SIZE",
    "DEFAULT_HEAP",
    "FlashInUse",
    "ENV_MICROPYTHON",
    "FlashStop",
    "FrameCallback",
    "MicroPythonNotFoundError",
    "NoFrameError",
    "VirtualControl",
    "VirtualControlError",
    "VirtualBoard",
    "VirtualBoardError",
    "find_micropython",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value  # found once
    return value
