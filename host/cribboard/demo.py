"""`cribboard demo`: the virtual board pegs a game by itself, drawn in the terminal.

Until the rules engine plays real hands, the moves are plausible random counts: pegging points
and hands of a usual size, alternating between the players, with the deal passing on."""

from __future__ import annotations

import asyncio
import random
import sys

from cribboard.api import Board
from cribboard.terminal import describe_state, draw_frame
from cribboard.virtual.launcher import VirtualBoard

# Rough shape of real scores: many small pegging counts, hands mostly 2..12, now and then more.
_TYPICAL_COUNTS = [1, 1, 2, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8, 8, 9, 10, 12, 12, 14, 16, 20, 24]


async def play(board: Board, rng: random.Random, delay: float, color: bool) -> None:
    await board.new_game(121, 2)
    player = 1
    clear = "\x1b[H\x1b[2J" if color else ""
    while True:
        state = await board.state()
        if state.winner is not None:
            break
        points = rng.choice(_TYPICAL_COUNTS)
        await board.preview(player, points)
        if delay:
            await asyncio.sleep(delay / 2)
        await board.peg(player, points)
        frame = await board.frame()
        state = await board.state()
        print(clear + draw_frame(frame.rgb, color))
        print(describe_state(state))
        print(f"{['blue', 'orange'][player]} pegs {points}", flush=True)
        if rng.random() < 0.25:
            await board.set_dealer()
        player = 1 - player
        if delay:
            await asyncio.sleep(delay)


def run_demo(delay: float = 0.6, seed: int | None = None, color: bool = True) -> int:
    """Start the virtual board, peg a whole game on it, stop it."""
    rng = random.Random(seed)
    with VirtualBoard() as virtual:
        print(f"virtual board on {virtual.port}", file=sys.stderr)

        async def main() -> None:
            async with await Board.open(virtual.port) as board:
                await play(board, rng, delay, color)

        asyncio.run(main())
    return 0
