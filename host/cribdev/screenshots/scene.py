"""The game the README's pictures show, played on a fresh board through the real apps: blue on
the home stretch, orange behind both skunk lines, the show half counted."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from cribboard.api import Board
from cribboard.play.scorekeeper import Scorekeeper

COLUMNS = 80
TYPED = ("b2", "o3", "12", "10")
"""Blue pegs 2 and orange 3 in the play; orange's hand counts 12, blue's 10."""


@contextlib.contextmanager
def columns(count: int) -> Iterator[None]:
    """The terminal's width as the apps read it ($COLUMNS), for a while."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(count)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


async def set_up(board: Board) -> None:
    """The game in progress when the scorekeeper starts: blue deals, blue 84, orange 40."""
    await board.new_game(121, 2)
    await board.set_dealer(0)
    await board.set_pegs(0, 84, 70)
    await board.set_pegs(1, 40, 33)


async def keeper_screen(board: Board) -> str:
    """The scorekeeper's last screen for the scene, as the terminal receives it (colour codes
    included), with its prompt; the board is left showing the scene."""
    await set_up(board)
    typed = iter([*TYPED, "q"])
    screens: list[str] = []
    keeper = Scorekeeper(
        board,
        input=lambda prompt: next(typed),
        output=screens.append,
        color=True,
        where="the virtual board",
        target=121,
    )
    with columns(COLUMNS):
        await keeper.run()
    return screens[-1] + "\n> "
