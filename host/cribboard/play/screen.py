"""A terminal screen for a game on a board: the board as its LEDs show it, the scores, and a
log of what happened.

On a terminal (`color`), every change redraws the whole screen: a title, the board, the scores,
then the last lines of the log. Otherwise (a pipe, a test) the log lines are printed as they
come and the board is printed after each change."""

from __future__ import annotations

import builtins
from collections.abc import Callable

from cribboard.api import Board, BoardState
from cribboard.terminal import describe_state, draw_frame

CLEAR = "\x1b[H\x1b[2J"


def terminal_input(prompt: str) -> str:
    """A line from the person at the terminal (looked up at each call, so tests can swap it)."""
    return builtins.input(prompt)


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
        self.log.append(text)
        if self.color:
            self.draw()
        else:
            self.output(text)

    async def refresh(self) -> None:
        """Read the board again and show it."""
        frame = await self.board.frame()
        self.state = await self.board.state()
        self.picture = draw_frame(frame.rgb, self.color) + "\n" + describe_state(self.state)
        if self.color:
            self.draw()
        elif not any(self.state.pending):  # a preview is shown again once it is pegged
            self.output(self.picture)

    def draw(self) -> None:
        """Redraw the whole screen (terminal mode)."""
        parts = [self.title] if self.title else []
        if self.picture:
            parts.append(self.picture)
        if self.status is not None:
            parts.extend(self.status())
        parts.append("")
        parts.extend(self.log[-self.log_lines :])
        self.output(CLEAR + "\n".join(parts))
