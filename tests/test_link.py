"""Two boards, one game (`cribboard link`): the real mosquitto on a free port and two virtual
boards. Pegs made at both ends at once converge to the game an independent count of the pegs
gives; a move delivered twice counts once; an undo at one end and a new game reach the other;
an end whose link process is killed, while its board's buttons and the other end go on, catches
up when it is started again, an undo made meanwhile included."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cribboard.api import Board, BoardState
from cribboard.hall.address import BrokerAddress
from cribboard.hall.broker import Broker
from cribboard.link import topics as t
from cribboard.link.moves import Change, Move, Position, encode_move
from cribboard.link.side import LinkSide, describe
from cribboard.virtual import SimControl, VirtualBoard
from cribcore.profiles import PROFILES
from hallsupport import HALL, WAIT_S, need_mosquitto
from support import EventLog

GAME = "friday"
CLI = [sys.executable, "-m", "cribboard.cli"]
PINS = PROFILES["sim"].buttons
TAP_MS = 60


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    need_mosquitto()
    with Broker.create(tmp_path / "broker", HALL, tables=1, links=True) as running:
        yield running


@pytest.fixture
def other_vboard() -> Iterator[VirtualBoard]:
    with VirtualBoard() as board:
        yield board


def link_address(broker: Broker) -> BrokerAddress:
    password = broker.credentials(t.LINK_USER).password
    return BrokerAddress("127.0.0.1", broker.port, username=t.LINK_USER, password=password)


@contextlib.asynccontextmanager
async def running_side(broker: Broker, port: str, state: Path) -> AsyncIterator[LinkSide]:
    side = LinkSide(
        link_address(broker), GAME, lambda: Board.open(port, timeout=3.0), state, say=print
    )
    task = asyncio.create_task(side.run())
    try:
        await side.wait_until(lambda: side.synced.is_set() and side.converged.is_set(), WAIT_S)
        yield side
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def in_step(*sides: LinkSide, moves: int) -> Position:
    """Wait until every side holds `moves` moves and its board shows their merged game."""
    for side in sides:
        try:
            await side.wait_until(
                lambda side=side: (  # type: ignore[misc]
                    len(side.log.moves) == moves
                    and side.converged.is_set()
                    and side.board_state is not None
                    and Position.of_state(side.board_state) == side.log.merged().position
                ),
                WAIT_S,
            )
        except TimeoutError:
            raise AssertionError(
                f"side {side.side}: {len(side.log.moves)} of {moves} moves, board "
                f"{side.board_state}, merged {side.log.merged().position}"
            ) from None
    positions = {Position.of_state(side.board_state) for side in sides if side.board_state}
    assert len(positions) == 1, positions
    return positions.pop()


def board_of(side: LinkSide) -> Board:
    assert side.board is not None
    return side.board


async def pegs(board: Board, made: list[tuple[int, int]], rng: random.Random, count: int) -> None:
    """Peg at one board as another host would (the link did not ask for it)."""
    for _ in range(count):
        player, points = rng.randrange(2), rng.randint(1, 4)
        await board.peg(player, points)
        made.append((player, points))
        if rng.random() < 0.5:
            await asyncio.sleep(0)  # let the other end's pegs interleave


async def test_pegs_at_both_ends_at_once_converge_and_a_move_delivered_twice_counts_once(
    broker: Broker, vboard: VirtualBoard, other_vboard: VirtualBoard, tmp_path: Path
) -> None:
    # Each board shows a game of its own before the link: the first end's is the linked game.
    async with await Board.open(vboard.port) as first, await Board.open(other_vboard.port) as b:
        await first.peg(0, 3)
        await b.peg(1, 10)
    async with running_side(broker, vboard.port, tmp_path / "a.json") as a:
        async with running_side(broker, other_vboard.port, tmp_path / "b.json") as b_side:
            start = await in_step(a, b_side, moves=1)
            assert start.front == (3, 0)
            made_a: list[tuple[int, int]] = []
            made_b: list[tuple[int, int]] = []
            await asyncio.gather(
                pegs(board_of(a), made_a, random.Random(1), 15),
                pegs(board_of(b_side), made_b, random.Random(2), 15),
            )
            position = await in_step(a, b_side, moves=31)
            # An independent count: every peg counted once, wherever it was made.
            for player in (0, 1):
                points = [p for who, p in made_a + made_b if who == player]
                assert position.front[player] == (3 if player == 0 else 0) + sum(points)
                assert position.front[player] - position.back[player] in points
            assert (await board_of(a).state()).front == list(position.front)
            assert (await board_of(b_side).state()).front == list(position.front)

            # One of a's moves delivered again, and again with other contents: counted once.
            moves = a.log.of_side(a.side)
            again = moves[5]
            forged = Move(again.side, again.seq, again.clock, again.game, Change("peg", 0, 29))
            async with link_address(broker).client("test-redeliver") as client:
                for move in (again, forged):
                    topic = t.move_topic(GAME, move.side, move.seq)
                    await client.publish(topic, encode_move(move), qos=1, retain=True)
            await board_of(a).peg(1, 2)  # a move after them: when it is in, they are too
            position = await in_step(a, b_side, moves=32)
            assert position.front[1] == (sum(p for who, p in made_a + made_b if who == 1) + 2)

            # An undo at b takes back the last move (a's peg of 2) at both ends.
            await board_of(b_side).undo()
            undone = await in_step(a, b_side, moves=33)
            assert undone.front[1] == position.front[1] - 2
            # A new game at a: both boards start it.
            await board_of(a).new_game(61)
            fresh = await in_step(a, b_side, moves=34)
            assert (fresh.target, fresh.front, fresh.back) == (61, (0, 0), (0, 0))


def link_words(broker: Broker, port: str, state: Path) -> list[str]:
    return [
        *CLI,
        "link",
        "--broker",
        f"mqtt://127.0.0.1:{broker.port}",
        "--game",
        GAME,
        "--port",
        port,
        "--user",
        t.LINK_USER,
        "--password-env",
        "LINK_PASSWORD",
        "--state",
        str(state),
    ]


async def start_link(broker: Broker, port: str, state: Path) -> Any:
    env = {**os.environ, "LINK_PASSWORD": broker.credentials(t.LINK_USER).password}
    return await asyncio.create_subprocess_exec(
        *link_words(broker, port, state),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=(state.parent / "link-stderr.txt").open("ab"),
        env=env,
    )


async def read_until(process: Any, check: Callable[[str], bool]) -> str:
    async with asyncio.timeout(WAIT_S):
        while True:
            line = (await process.stdout.readline()).decode()
            assert line, "the link process stopped"
            if check(line.strip()):
                return line.strip()


async def tap(sim: SimControl, host: Board, name: str, times: int = 1) -> None:
    """Press a board button as a finger would, each tap once the board reported the one before
    (`host` hears its `btn` events): a simulated press starts when the firmware first looks,
    so one sent by the test's clock alone could merge with the last on a busy machine."""
    log = EventLog.of(host)
    for _ in range(times):
        sim.press(str(PINS[name]), ms=TAP_MS)
        await log.wait(lambda e: e.name == "btn" and e.fields == {"n": name, "a": "tap"})


async def board_shows(port: str, check: Callable[[BoardState], bool]) -> BoardState:
    async with await Board.open(port) as board:
        state = await board.state()
        assert check(state), state
        return state


async def test_an_end_whose_link_was_killed_catches_up_with_what_both_ends_did(
    broker: Broker, vboard: VirtualBoard, other_vboard: VirtualBoard, tmp_path: Path
) -> None:
    state_b = tmp_path / "b.json"
    async with running_side(broker, vboard.port, tmp_path / "a.json") as a:
        process = await start_link(broker, other_vboard.port, state_b)
        try:
            await read_until(process, lambda line: line.startswith("synced:"))
            await a.wait_until(lambda: True in a.peers.values(), WAIT_S)
            await board_of(a).peg(0, 6)
            want = describe(await in_step(a, moves=2))
            await read_until(process, lambda line: line == f"board: {want}")
            process.send_signal(signal.SIGKILL)  # no goodbye: its Last Will says it is gone
            await process.wait()
            await a.wait_until(lambda: False in a.peers.values(), WAIT_S)
            # While it is away: pegs at a, and orange's buttons at b (2, then deal: at once).
            await board_of(a).peg(0, 5)
            await board_of(a).peg(1, 9)
            async with await Board.open(other_vboard.port) as b_host:
                with SimControl(other_vboard.control) as sim:
                    await tap(sim, b_host, "B+", 2)
                    await tap(sim, b_host, "deal")  # handled: the next read shows it
                assert (await b_host.state()).front == [6, 2]
            process = await start_link(broker, other_vboard.port, state_b)
            position = await in_step(a, moves=5)  # b's offline peg arrived as b's move
            # b's peg has the clock b had when it went down: before a's later orange 9.
            assert (position.front, position.back) == ((11, 11), (6, 2)), a.moves()
            await read_until(process, lambda line: line == f"board: {describe(position)}")
            # Killed again, and an undo at b meanwhile: it takes back the last move b showed
            # (a's orange 9, last in the order), whatever b's board took back itself.
            process.send_signal(signal.SIGKILL)
            await process.wait()
            async with await Board.open(other_vboard.port) as b_host:
                await b_host.undo()
            process = await start_link(broker, other_vboard.port, state_b)
            position = await in_step(a, moves=6)
            assert (position.front, position.back) == ((11, 2), (6, 0)), a.moves()
            await read_until(process, lambda line: line == f"board: {describe(position)}")
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
            await a.wait_until(lambda: False in a.peers.values(), WAIT_S)  # its goodbye
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    shown = await board_shows(other_vboard.port, lambda s: True)
    assert Position.of_state(shown) == position


@pytest.mark.parametrize(
    ("words", "message", "status"),
    [
        (["--game", "Friday!", "--port", "/dev/null"], "bad game name", 2),
        (["--game", "g", "--port", "/dev/null", "--ble", "x"], "--port or --ble, not both", 2),
        (["--game", "g", "--password-env", "NOPE_X", "--user", "u"], "NOPE_X", 2),
    ],
)
def test_bad_link_options_get_one_line(words: list[str], message: str, status: int) -> None:
    done = subprocess.run(
        [*CLI, "link", "--broker", "mqtt://127.0.0.1:1", *words], capture_output=True, text=True
    )
    assert done.returncode == status, done
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


async def test_a_refused_login_stops_the_link_with_one_line(
    broker: Broker, vboard: VirtualBoard, tmp_path: Path
) -> None:
    env = {**os.environ, "LINK_PASSWORD": "not-the-password"}
    process = await asyncio.create_subprocess_exec(
        *link_words(broker, vboard.port, tmp_path / "s.json"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    async with asyncio.timeout(WAIT_S):
        _, err = await process.communicate()
    assert process.returncode == 1
    (line,) = err.decode().strip().splitlines()
    assert line.startswith("cribboard: the broker refused the link's login"), line
