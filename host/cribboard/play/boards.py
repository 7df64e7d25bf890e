"""Which board to play on: the one named, else the physical board found on USB, else the
virtual board (started here, stopped when the program ends)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from cribboard.discovery import find_boards
from cribboard.virtual.launcher import VirtualBoard

PORT_ENV = "CRIBBOARD_PORT"


@dataclass(frozen=True)
class ChosenBoard:
    """A board to open: its port and a sentence saying which it is."""

    port: str
    description: str
    virtual: bool


async def choose_board(port: str | None, virtual: bool, stack: contextlib.ExitStack) -> ChosenBoard:
    """`--port` (or $CRIBBOARD_PORT), else the first board that answers on USB, else a virtual
    board; `virtual` skips the search. A virtual board stays up until `stack` closes."""
    if not virtual:
        named = port or os.environ.get(PORT_ENV)
        if named:
            return ChosenBoard(named, f"the board on {named}", False)
        found = [board for board in await find_boards() if board.hello is not None]
        if found:
            first = found[0]
            assert first.hello is not None
            text = (
                f"the board on {first.port} ({first.hello.board}, firmware {first.hello.firmware})"
            )
            if len(found) > 1:
                text += f"; {len(found) - 1} more found, choose one with --port"
            return ChosenBoard(first.port, text, False)
    board = stack.enter_context(VirtualBoard())
    why = "" if virtual else ": no board found on USB"
    return ChosenBoard(board.port, f"the virtual board on {board.port}{why}", True)
