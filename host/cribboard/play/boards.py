"""Which board to play on, and that one app keeps its game at a time.

The board is the one named (`--port`, $CRIBBOARD_PORT), else the physical board found on USB,
else the virtual board running now (`cribboard virtual`, or the one another app started), else the
saved virtual board, started here (cribboard.virtual.saved: its game outlives the app). `--virtual`
skips the first two.

One app keeps a board's game at a time (`keep` or `play`): a second is refused, naming the
first and what to run instead. Other programs may still change the board (the page, a script,
`cribboard peg`): the app takes those as changes made elsewhere."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from cribboard import portshare
from cribboard.discovery import named_port, running_virtual_board, usb_board
from cribboard.errors import CribboardError, NoBoardFound
from cribboard.i18n import _
from cribboard.rundir import runtime_dir
from cribboard.virtual.saved import start_saved, starting

_HOLDER_BYTES = 200


@dataclass(frozen=True)
class ChosenBoard:
    """A board to open: its port, a sentence saying which it is, whether it is virtual, and
    the flash image its game is kept in (a virtual board with one; None otherwise)."""

    port: str
    description: str
    virtual: bool
    flash: Path | None = None

    def kept(self, command: str) -> str:
        """Where the game is kept once the app ends, and that `command` (as it is typed, quoted)
        goes on with it."""
        if self.flash is not None:
            return _(
                "the game is kept in %(flash)s: %(command)s goes on with it",
                flash=self.flash,
                command=command,
            )
        if self.virtual:
            return _(
                "the game is kept on the virtual board %(port)s until it stops (it keeps no "
                "flash file: `cribboard virtual --flash FILE` would)",
                port=self.port,
            )
        return _("the board keeps the game: %(command)s goes on with it", command=command)


async def choose_board(
    port: str | None, virtual: bool, stack: contextlib.ExitStack, program: str
) -> ChosenBoard:
    """`--port` (or $CRIBBOARD_PORT), else the first board that answers on USB, else the
    virtual board running now, else the saved virtual board, started for `program` (``cribboard
    keep``) and stopped when `stack` closes; `virtual` skips the first two. This app keeps the
    board's game until `stack` closes (`keeping`: BoardKept when another does). NoBoardFound
    when several virtual boards run (none of them is the one)."""
    if not virtual:
        named = named_port(port)
        if named:
            return _kept(
                stack, program, ChosenBoard(named, _("the board on %(port)s", port=named), False)
            )
        with contextlib.suppress(NoBoardFound):  # at the prompt: the virtual board instead
            found = await usb_board(first_of_several=True)
            if found is not None:
                return _kept(stack, program, ChosenBoard(found.port, found.description, False))
    with starting():  # kept before another app looks: it finds the board kept, not free
        running = running_virtual_board()
        if running is not None:
            assert running.sim is not None
            flash = Path(running.sim.flash) if running.sim.flash else None
            description = running.description
            if not virtual:
                description = _("%(board)s: no board found on USB", board=description)
            return _kept(stack, program, ChosenBoard(running.port, description, True, flash))
        board = start_saved(stack, program)
        if virtual:
            description = _("the virtual board on %(port)s", port=board.port)
        else:
            description = _("the virtual board on %(port)s: no board found on USB", port=board.port)
        return _kept(stack, program, ChosenBoard(board.port, description, True, board.flash_path))


def _kept(stack: contextlib.ExitStack, program: str, chosen: ChosenBoard) -> ChosenBoard:
    stack.enter_context(keeping(chosen, program, _("follow it here with `cribboard watch`")))
    return chosen


class BoardKept(CribboardError):
    """Another app keeps this board's game."""


@contextlib.contextmanager
def keeping(chosen: ChosenBoard, program: str, instead: str) -> Iterator[None]:
    """While it lasts, this app (`program`) keeps the game of the board `chosen`; BoardKept
    when another does, naming it and saying what to run instead (`instead`). The lock goes with
    the process, however it ends."""
    key = portshare.port_key(chosen.port) if portshare.shareable(chosen.port) else chosen.port
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    fd = os.open(
        runtime_dir() / f"keeper-{digest}.lock",
        os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
    )
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BoardKept(
                _(
                    "the board on %(port)s is kept by %(holder)s: go on there, or %(instead)s",
                    port=chosen.port,
                    holder=_holder(fd),
                    instead=instead,
                )
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n{program}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    """The app holding a keeper's lock, as its file says (read as hostile: short, printable)."""
    text = os.pread(fd, _HOLDER_BYTES, 0).decode("utf-8", "replace")
    lines = ["".join(c for c in line if c.isprintable())[:80] for line in text.split("\n")]
    if len(lines) >= 2 and lines[0].isdigit():
        return _("%(program)s (pid %(pid)s)", program=lines[1] or "?", pid=lines[0])
    return _("another program")


@contextlib.contextmanager
def ending_on_signals() -> Iterator[None]:
    """While it lasts, SIGTERM and SIGHUP (the computer shutting down, the terminal closed) end
    the app as a Ctrl-C does (KeyboardInterrupt), so that what it started is stopped in order:
    the virtual board saves its last change."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
