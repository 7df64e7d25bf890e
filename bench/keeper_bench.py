"""`make bench`: the scorekeeper on a board shared with other programs.

1. From a peg made elsewhere to the scorekeeper's screen: `cribboard keep` (its Scorekeeper,
   waiting for a line) and a second program on one virtual board; the second pegs, and the time
   from its reply to the keeper's redraw that shows the change is measured, each of `ROUNDS`.
2. What the saved virtual board's stop costs: `VirtualBoard.stop()` as a power cut, and with
   `save_on_stop` (the app ended as a Ctrl-C ends it, saving the last second's change).

Prints figures only: nothing here asserts speed.

    .venv/bin/python bench/keeper_bench.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import statistics
import tempfile
import time
from pathlib import Path

from cribboard.api import Board
from cribboard.play.scorekeeper import Scorekeeper
from cribboard.virtual import VirtualBoard

ROUNDS = 50


async def redraws(port: str, rounds: int) -> list[float]:
    """Seconds from another program's peg (its reply) to the keeper's screen showing it."""
    lines: queue.Queue[str] = queue.Queue()
    shown = asyncio.Event()
    seen: list[str] = []

    def output(text: str) -> None:
        seen.append(text)
        shown.set()

    delays = []
    async with await Board.open(port) as board, await Board.open(port) as other:
        await board.new_game(121, 2)
        keeper = Scorekeeper(board, input=lambda prompt: lines.get(), output=output)
        running = asyncio.ensure_future(keeper.run())
        while not seen:
            shown.clear()
            await shown.wait()
        for round_ in range(rounds):
            if round_ % 20 == 19:
                await other.new_game()  # far from the target
            expected = f"orange pegs 1: {(await other.state()).front[1] + 1} "
            shown.clear()
            await other.peg(1, 1)
            pegged = time.perf_counter()
            while not any(expected in text for text in seen[-2:]):
                shown.clear()
                await shown.wait()
            delays.append(time.perf_counter() - pegged)
        lines.put("q")
        await running
    return delays


def stops(save_on_stop: bool, rounds: int = 5) -> list[float]:
    """Seconds `stop()` takes right after a peg, with or without saving first."""
    taken = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(rounds):
            board = VirtualBoard(flash=Path(folder) / "board.flash", save_on_stop=save_on_stop)
            board.start()
            asyncio.run(_peg(board.port))
            started = time.perf_counter()
            board.stop()
            taken.append(time.perf_counter() - started)
    return taken


async def _peg(port: str) -> None:
    async with await Board.open(port) as board:
        await board.peg(0, 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args(argv)
    print("the scorekeeper on a shared board (bench/keeper_bench.py)")
    with VirtualBoard() as board:
        delays = asyncio.run(redraws(board.port, args.rounds))
    ms = sorted(1000 * d for d in delays)
    print(
        f"  a peg made elsewhere, drawn by the keeper: median {statistics.median(ms):.1f} ms, "
        f"95% {ms[int(0.95 * (len(ms) - 1))]:.1f} ms, most {ms[-1]:.1f} ms ({len(ms)} pegs)"
    )
    for save in (False, True):
        taken = stops(save)
        what = "saving first (save_on_stop)" if save else "a power cut"
        print(
            f"  stop() right after a peg, {what}: median {1000 * statistics.median(taken):.0f} "
            f"ms, most {1000 * max(taken):.0f} ms"
        )


if __name__ == "__main__":
    main()
