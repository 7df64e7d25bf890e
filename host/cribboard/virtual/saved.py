"""The virtual board the apps keep a game on: the one `keep`, `play` and `make run` start when
no board is found. Its flash image lives in the user's state directory (cribboard.paths), so the
game on it outlives the app: quitting, a Ctrl-C, a reboot of the computer. It saves the change
of its last second when the app stops (VirtualBoard's `save_on_stop`), and it is registered as a
running virtual board while it runs (cribboard.virtual.registry), so that the user's other commands
(`peg`, `watch`, a second `keep`) find it instead of starting another.

Two apps started at once: the one that takes `starting()` first looks for a running virtual
board, finds none and starts the saved one, registered before it lets go; the other then finds
it running. The flash image is locked by the board that runs on it (virtual.flashlock), so two
boards never share it, whatever started them."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ..i18n import _
from ..paths import state_dir
from ..rundir import runtime_dir
from .errors import FlashInUse
from .launcher import VirtualBoard
from .registry import register, unregister

SAVED_FLASH = "virtual-board.flash"
"""The saved virtual board's flash image, in the state directory."""


def saved_flash() -> Path:
    """Where the saved virtual board keeps its flash (and the game on it)."""
    return state_dir() / SAVED_FLASH


@contextlib.contextmanager
def starting() -> Iterator[None]:
    """Held while a program looks for a running virtual board and, finding none, starts the
    saved one and registers it: another program doing the same waits, then finds it."""
    fd = os.open(
        runtime_dir() / "virtual-board.lock",
        os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # the lock goes with it


def start_saved(stack: contextlib.ExitStack, program: str) -> VirtualBoard:
    """Start the saved virtual board until `stack` closes, registered as run by `program`
    (``cribboard keep``). FlashInUse when another program holds its flash."""
    flash = saved_flash()
    try:
        board = stack.enter_context(VirtualBoard(flash=flash, save_on_stop=True))
    except FlashInUse:
        raise FlashInUse(
            _(
                "the saved game's virtual board (%(flash)s) is in use by another program: stop "
                "it, or name a board with --port",
                flash=flash,
            )
        ) from None
    stack.callback(unregister, register(board.port, "unix", program, str(flash)))
    return board
