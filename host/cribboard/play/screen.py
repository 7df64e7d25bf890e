"""A terminal screen for a game on a board: the board as its LEDs show it, the scores, and a
log of what happened.

On a terminal (`color`), every change redraws the whole screen: a title, the board, the scores,
then the last lines of the log. Otherwise (a pipe, a test) the log lines are printed as they
come and the board is printed after each change."""

from __future__ import annotations

import builtins
import contextlib
import os
import sys
import termios
from collections.abc import Callable, Iterator

from cribboard.api import Board, BoardState
from cribboard.terminal import describe_state, draw_frame, fit_lines

CLEAR = "\x1b[H\x1b[2J"


def terminal_input(prompt: str) -> str:
    """A line from the person at the terminal (`input` looked up at each call, so tests can
    swap it). Raises EOFError at the end of the input."""
    fd = _piped_stdin()
    if fd is None:
        _line_editor()
        return builtins.input(prompt)
    builtins.print(prompt, end="", flush=True)
    return _PIPED_LINES.readline(fd)


def _line_editor() -> None:
    """Line editing for `input` at a terminal, where Python has it (GNU readline or libedit):
    a line being typed can then be shown again after the screen is drawn (`reprompt`)."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (imported for what it does to input)


def _piped_stdin() -> int | None:
    """stdin's file descriptor when it is a pipe or a file, not a terminal; None otherwise (a
    terminal, or a test's stand-in without one)."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return None if os.isatty(fd) else fd


class _Lines:
    """Lines read straight from a file descriptor. The apps wait for typing on a thread of its
    own; reading a pipe through sys.stdin, that thread would hold sys.stdin's lock while it
    waits, and a Ctrl-C then aborts the interpreter as it exits ("could not acquire lock for
    <stdin> at interpreter shutdown") instead of leaving with status 130."""

    def __init__(self) -> None:
        self.pending = b""

    def readline(self, fd: int) -> str:
        while b"\n" not in self.pending:
            chunk = os.read(fd, 4096)
            if not chunk:
                if not self.pending:
                    raise EOFError
                break
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode(errors="replace").rstrip("\r")


_PIPED_LINES = _Lines()


@contextlib.contextmanager
def terminal_kept() -> Iterator[None]:
    """The terminal's settings as they were, again at the end: a line editor left reading on
    its thread when the app ends (a Ctrl-C, q while the board was drawn) must not leave the
    terminal without its echo."""
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    except (AttributeError, OSError, ValueError, termios.error):
        saved = None
    try:
        yield
    finally:
        if saved is not None:
            with contextlib.suppress(OSError, termios.error):
                termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def terminal_output(text: str) -> None:
    """Text for the person at the terminal, at once."""
    builtins.print(text, flush=True)


class TableScreen:
    """Draws `board` and a running log through `output`."""

    def __init__(
        self,
        board: Board,
        *,
        output: Callable[[str], None] | None = None,
        color: bool = False,
        title: str = "",
        log_lines: int = 14,
        status: Callable[[], list[str]] | None = None,
    ) -> None:
        self.board = board
        self.output = output or terminal_output
        self.color = color
        self.title = title
        self.log_lines = log_lines
        self.status = status
        """Lines drawn under the scores on a terminal (the table's situation)."""
        self.log: list[str] = []
        self.picture = ""
        self.state: BoardState | None = None

    def say(self, text: str) -> None:
        """Add a line to the log (and show it)."""
        self.log.extend(fit_lines([text]))
        if self.color:
            self.draw()
        else:
            self.output("\n".join(fit_lines([text])))

    async def refresh(self) -> None:
        """Read the board again and show it."""
        frame = await self.board.frame()
        self.state = await self.board.state()
        self.picture = (
            draw_frame(frame.rgb, self.color, self.state.players)
            + "\n"
            + describe_state(self.state)
        )
        if self.color:
            self.draw()
        elif not any(self.state.pending):  # a pending count is shown again once it is pegged
            self.output(self.picture)

    def draw(self) -> None:
        """Redraw the whole screen (terminal mode)."""
        parts = fit_lines([self.title]) if self.title else []
        if self.picture:
            parts.append(self.picture)
        if self.status is not None:
            parts.extend(fit_lines(self.status()))
        parts.append("")
        parts.extend(self.log[-self.log_lines :])
        self.output(CLEAR + "\n".join(parts))


def reprompt(prompt: str) -> None:
    """The prompt again, after the screen was drawn while a line is typed, with what was typed
    so far when the line editor can tell (it goes on where it was)."""
    editor = sys.modules.get("readline")
    typed = editor.get_line_buffer() if editor is not None else ""
    builtins.print(prompt + typed, end="", flush=True)
