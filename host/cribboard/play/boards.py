"""Which board to play on: the one named, else the physical board found on USB, else the
virtual board (started here, stopped when the program ends)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from cribboard.discovery import resolve_port
from cribboard.errors import NoBoardFound
from cribboard.i18n import _
from cribboard.virtual.launcher import VirtualBoard


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
        with contextlib.suppress(NoBoardFound):
            chosen = await resolve_port(port, first_of_several=True)
            return ChosenBoard(chosen.port, chosen.description, False)
    board = stack.enter_context(VirtualBoard())
    if virtual:
        description = _("the virtual board on %(port)s", port=board.port)
    else:
        description = _("the virtual board on %(port)s: no board found on USB", port=board.port)
    return ChosenBoard(board.port, description, True)
