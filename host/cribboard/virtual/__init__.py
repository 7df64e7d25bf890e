"""The virtual board: the real firmware on MicroPython's unix port, behind a pty.

:class:`VirtualBoard` starts it and hands out a serial port path that pyserial, mpremote and
the cribboard host package open like a USB board; :class:`SimControl` presses its buttons and
reads its LEDs through a side channel. See docs/virtual-board.md.
"""

from .control import FlashStop, SimControl
from .errors import (
    FlashInUse,
    MicroPythonNotFoundError,
    NoFrameError,
    SimControlError,
    VirtualBoardError,
)
from .interpreter import ENV_MICROPYTHON, find_micropython
from .launcher import DEFAULT_FLASH_SIZE, DEFAULT_HEAP, VirtualBoard
from .sidechannel import FrameCallback

__all__ = [
    "DEFAULT_FLASH_SIZE",
    "DEFAULT_HEAP",
    "FlashInUse",
    "ENV_MICROPYTHON",
    "FlashStop",
    "FrameCallback",
    "MicroPythonNotFoundError",
    "NoFrameError",
    "SimControl",
    "SimControlError",
    "VirtualBoard",
    "VirtualBoardError",
    "find_micropython",
]
