"""`cribboard demo`: two computer players play a whole game of cribbage on the virtual board,
drawn in the terminal at a watchable pace, then the demo exits.

Every deal is real: the rules engine deals, the computers lay away and play (see
`cribboard.play.players.Computer`), and the game driver pegs each score on the board through the
library, a pending count first. `delay` is the pause after each card and each score (0: as fast as
the board answers, for tests); the whole game takes about 150 delays."""

from __future__ import annotations

import asyncio
import random
import sys

from cribboard.api import Board
from cribboard.i18n import _
from cribboard.names import player_name
from cribboard.play.driver import GameDriver
from cribboard.play.players import Computer
from cribboard.play.screen import TableScreen
from cribboard.rules.variants import STANDARD, Variant
from cribboard.virtual.launcher import VirtualBoard


async def play(
    board: Board,
    rng: random.Random,
    delay: float,
    color: bool,
    variant: Variant = STANDARD,
    title: str = "",
) -> None:
    """Play one computer-against-computer game on `board`, drawing it as it goes."""
    screen = TableScreen(board, color=color, title=title)
    players = [Computer(player_name(seat)) for seat in range(variant.players)]
    driver = GameDriver(
        board,
        players,
        variant=variant,
        rng=rng,
        delay=delay,
        reveal=True,
        say=screen.say,
        on_board=screen.refresh,
    )
    screen.status = driver.situation
    await driver.play_game()


def run_demo(delay: float = 0.6, seed: int | None = None, color: bool = True) -> int:
    """Start the virtual board, play a whole game on it, stop it."""
    rng = random.Random(seed)
    with VirtualBoard() as virtual:
        print(_("virtual board on %(port)s", port=virtual.port), file=sys.stderr)
        title = _(
            "cribboard demo: computer against computer on the virtual board (%(port)s)",
            port=virtual.port,
        )

        async def main() -> None:
            async with await Board.open(virtual.port) as board:
                await play(board, rng, delay, color, title=title)

        asyncio.run(main())
    return 0
