"""`make bench`, remote games part: two virtual boards joined by `cribboard remote` through a
private mosquitto (bench/run.py calls main()). Prints figures only; nothing here asserts speed.

Both ends run in this process (two RemoteEnd objects, each with its own board
connection); the boards are two MicroPython processes and the broker a third, all on this
machine.

1. Latency from a peg at board A (the request sent) to board B's state event showing it, p50 /
   p99 over a few hundred pegs one after another: A's board, A's side reading the change as a
   move and publishing it, the broker, B's side merging it and pegging B's board, B's event.
2. Both ends at once: 100 pegs at each board as fast as the boards take them; the time until
   both boards show the merged game of all 200.
3. Bytes per move: the JSON payload of a peg, and the whole MQTT PUBLISH packet.

    .venv/bin/python bench/remote_bench.py
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cribboard.api import Board, BoardEvent, BoardState, StateEvent
from cribboard.hall.broker import Broker, MosquittoNotFound, find_executable
from cribboard.mqtt.address import BrokerAddress
from cribboard.remote import topics as t
from cribboard.remote.end import RemoteEnd
from cribboard.remote.moves import Change, Move, Position, encode_move
from cribboard.virtual import VirtualBoard

GAME = "bench"
PEGS = 300
BURST = 100  # pegs at each end at once
WAIT_S = 60.0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


class Watch:
    """A board's state events, as they come, with when."""

    def __init__(self, board: Board) -> None:
        self.latest: tuple[float, BoardState] | None = None
        self.changed = asyncio.Event()
        board.subscribe(self._take)

    def _take(self, event: BoardEvent) -> None:
        if isinstance(event, StateEvent):
            self.latest = (time.monotonic(), event.state)
            self.changed.set()

    async def until(self, check: Callable[[BoardState], bool]) -> float:
        """When a state passing `check` arrived (now or to come)."""
        async with asyncio.timeout(WAIT_S):
            while self.latest is None or not check(self.latest[1]):
                self.changed.clear()
                await self.changed.wait()
        assert self.latest is not None
        return self.latest[0]


async def settled(sides: list[RemoteEnd], moves: int) -> None:
    for side in sides:
        await side.wait_until(
            lambda side=side: (  # type: ignore[misc]
                len(side.log.moves) == moves
                and side.converged.is_set()
                and side.board_state is not None
                and Position.of_state(side.board_state) == side.log.merged().position
            ),
            WAIT_S,
        )


async def run(work: Path) -> None:
    broker = Broker.create(work / "broker", "bench", tables=1, links=True)
    broker.start()
    password = broker.credentials(t.LINK_USER).password
    ca = broker.ca_file
    address = BrokerAddress.parse(
        broker.url, t.LINK_USER, password, None if ca is None else str(ca)
    )
    boards = [VirtualBoard().start(), VirtualBoard().start()]
    sides = [
        RemoteEnd(
            address,
            GAME,
            lambda port=vb.port: Board.open(port, timeout=5.0),  # type: ignore[misc]
            work / f"side{i}.json",
            secret="the bench's game secret",
        )
        for i, vb in enumerate(boards)
    ]
    a, b = sides
    # One end first, as people start a remote game: two ends starting at the same instant
    # would both bring their board's game (two starts, merged into one, but one move more).
    tasks = [asyncio.create_task(a.run())]
    try:
        await a.wait_until(lambda: a.converged.is_set(), WAIT_S)
        tasks.append(asyncio.create_task(b.run()))
        await b.wait_until(lambda: b.converged.is_set() and b.board is not None, WAIT_S)
        assert a.board is not None and b.board is not None
        watch_b = Watch(b.board)
        rng = random.Random(3)
        latencies: list[float] = []
        moves = 1
        for _ in range(PEGS):
            state = await a.board.state()
            if max(state.front) > 100:  # a new game before anyone wins (not measured)
                await a.board.new_game(121)
                moves += 1
                await settled(sides, moves)
                state = await a.board.state()
            player, points = rng.randrange(2), rng.randint(1, 3)
            want = state.front[player] + points
            sent = time.monotonic()
            await a.board.peg(player, points)
            moves += 1
            shown = await watch_b.until(lambda s, p=player, w=want: s.front[p] == w)  # type: ignore[misc]
            latencies.append((shown - sent) * 1000)
            await settled(sides, moves)
        await a.board.new_game(121)
        moves += 1
        await settled(sides, moves)

        async def burst(board: Board) -> None:
            for _ in range(BURST):
                await board.peg(rng.randrange(2), 1)

        started = time.monotonic()
        await asyncio.gather(burst(a.board), burst(b.board))
        moves += 2 * BURST
        await settled(sides, moves)
        converged = time.monotonic() - started

        peg = Move(a.side, 123, 456, f"{a.side}.1", Change("peg", 0, 12))
        body = encode_move(peg)
        topic = t.move_topic(a.channel, a.instance, peg.side, peg.seq)
        payload = a.key.sign(topic, body)  # the MAC, a space, the move
        # A QoS 1 PUBLISH under 128 bytes: the fixed header (2), the topic's length (2) and
        # the topic, the packet id (2), the payload.
        packet = 2 + 2 + len(topic) + 2 + len(payload)

        print("cribboard remote game benchmark (two virtual boards, mosquitto, one process)")
        print(
            f"  peg at board A -> board B's state event: p50 {pct(latencies, 50):.1f} ms, "
            f"p99 {pct(latencies, 99):.1f} ms, mean {statistics.fmean(latencies):.1f} ms "
            f"({len(latencies)} pegs)"
        )
        print(
            f"  both ends at once: {BURST} pegs at each board, both boards showing all "
            f"{2 * BURST} after {converged:.2f} s"
        )
        print(
            f"  a peg move: {len(body)} bytes of JSON, {len(payload)} signed, {packet} bytes as "
            "an MQTT PUBLISH (inside a TLS record)"
        )
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for vb in boards:
            vb.stop()
        broker.stop()


def main() -> None:
    try:
        find_executable("mosquitto")
    except MosquittoNotFound as err:
        print(f"remote game benchmark skipped: {err}")
        return
    with tempfile.TemporaryDirectory(prefix="cribboard-link-bench-") as work:
        asyncio.run(run(Path(work)))


if __name__ == "__main__":
    main()
