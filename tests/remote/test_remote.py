"""Two boards, one game (`cribboard remote`): the real mosquitto on a free port and two virtual
boards. Pegs made at both ends at once converge to the game an independent count of the pegs
gives; a move delivered twice counts once; an undo at one end and a new game reach the other;
an end whose `cribboard remote` is killed, while its board's buttons and the other end go on,
catches up when it is started again, an undo made meanwhile included."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cribboard.api import Board, BoardState, ButtonEvent
from cribboard.hall.broker import Broker
from cribboard.mqtt.address import BrokerAddress
from cribboard.record.store import Record
from cribboard.remote import topics as t
from cribboard.remote.end import RemoteEnd, describe
from cribboard.remote.moves import Change, Move, Position, encode_move
from cribboard.remote.secret import GameKey
from cribboard.virtual import VirtualBoard, VirtualControl
from cribcore.profiles import PROFILES
from hallsupport import HALL, WAIT_S, address, broker_words, need_mosquitto
from support import EventLog

GAME = "friday"
SECRET = "a secret both ends share"
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
    return address(broker, t.LINK_USER)


@contextlib.asynccontextmanager
async def running_end(
    broker: Broker,
    port: str,
    state: Path,
    *,
    secret: str = SECRET,
    said: list[str] | None = None,
) -> AsyncIterator[RemoteEnd]:
    def say(line: str) -> None:
        print(line)
        if said is not None:
            said.append(line)

    end = RemoteEnd(
        link_address(broker),
        GAME,
        lambda: Board.open(port, timeout=3.0),
        state,
        secret=secret,
        say=say,
    )
    task = asyncio.create_task(end.run())
    try:
        await end.wait_until(lambda: end.synced.is_set() and end.converged.is_set(), WAIT_S)
        yield end
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def in_step(*sides: RemoteEnd, moves: int) -> Position:
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


def board_of(side: RemoteEnd) -> Board:
    assert side.board is not None
    return side.board


async def pegs(board: Board, made: list[tuple[int, int]], rng: random.Random, count: int) -> None:
    """Peg at one board as another host would (its end did not ask for it)."""
    for _ in range(count):
        player, points = rng.randrange(2), rng.randint(1, 4)
        await board.peg(player, points)
        made.append((player, points))
        if rng.random() < 0.5:
            await asyncio.sleep(0)  # let the other end's pegs interleave


async def test_pegs_at_both_ends_at_once_converge_and_a_move_delivered_twice_counts_once(
    broker: Broker, vboard: VirtualBoard, other_vboard: VirtualBoard, tmp_path: Path
) -> None:
    # Each board shows a game of its own before they join: the first end's is the remote game.
    async with await Board.open(vboard.port) as first, await Board.open(other_vboard.port) as b:
        await first.peg(0, 3)
        await b.peg(1, 10)
    async with running_end(broker, vboard.port, tmp_path / "a.json") as a:
        async with running_end(broker, other_vboard.port, tmp_path / "b.json") as b_side:
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
                for move in (again, forged):  # signed: only the move's id keeps it out
                    topic = t.move_topic(a.channel, a.instance, move.side, move.seq)
                    signed = a.key.sign(topic, encode_move(move))
                    await client.publish(topic, signed, qos=1, retain=True)
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


async def test_a_count_being_entered_at_one_end_survives_the_other_ends_peg(
    broker: Broker, vboard: VirtualBoard, other_vboard: VirtualBoard, tmp_path: Path
) -> None:
    async with running_end(broker, vboard.port, tmp_path / "a.json") as a:
        async with running_end(broker, other_vboard.port, tmp_path / "b.json") as b:
            await in_step(a, b, moves=1)
            # Blue's count of 1 on b's buttons, not committed yet (it commits by itself a
            # moment after the last press), while a pegs blue 2.
            with VirtualControl(other_vboard.control) as sim:
                await tap(sim, board_of(b), "A+")
            await b.wait_until(
                lambda: b.board_state is not None and b.board_state.pending[0] == 1, WAIT_S
            )
            await board_of(a).peg(0, 2)
            # Both count: a's 2 reaches b, b's buttons commit their 1 after it.
            position = await in_step(a, b, moves=3)
            assert (position.front[0], position.back[0]) == (3, 2), a.moves()


async def test_a_stranger_with_the_broker_password_cannot_find_join_or_move_the_game(
    broker: Broker, vboard: VirtualBoard, other_vboard: VirtualBoard, tmp_path: Path
) -> None:
    said_a: list[str] = []
    said_b: list[str] = []
    async with (
        running_end(broker, vboard.port, tmp_path / "a.json", said=said_a) as a,
        running_end(broker, other_vboard.port, tmp_path / "b.json", said=said_b) as b,
    ):
        await board_of(a).peg(0, 5)
        before = await in_step(a, b, moves=2)  # the start, the peg
        game = a.log.merged().current
        last = a.log.of_side(a.side)[-1]
        async with link_address(broker).client("stranger") as stranger:
            # Listing the games: topics named by the secret, never by the game's name.
            await stranger.subscribe(f"{t.ROOT}/#", qos=1)
            topics: set[str] = set()
            async with asyncio.timeout(WAIT_S):
                # 2 moves, 2 onlines and 2 hellos, retained
                async for message in stranger.messages:
                    topics.add(str(message.topic))
                    if len(topics) == 6:
                        break
            assert all(a.channel in topic and GAME not in topic for topic in topics), topics
            # A peg, a set and an undo under a's id, and a peg of a side of its own: unsigned
            # or signed with a guessed secret.
            guess = GameKey(GAME, "a guessed secret")
            seq = last.seq + 1
            forged = [
                Move(a.side, seq, 50, game, Change("peg", 0, 29)),
                Move(a.side, seq + 1, 51, game, Change("set", 1, front=(60,), back=(40,))),
                Move(a.side, seq + 2, 52, game, Change("undo", undoes=last.id)),
                Move("evil", 1, 53, game, Change("peg", 1, 20)),
            ]
            for i, move in enumerate(forged):
                topic = t.move_topic(a.channel, a.instance, move.side, move.seq)
                body = encode_move(move)
                await stranger.publish(
                    topic, body if i % 2 else guess.sign(topic, body), qos=1, retain=True
                )
            online = t.side_topic(a.channel, a.instance, "evil", t.ONLINE)
            await stranger.publish(online, b"1 1", qos=1, retain=True)
        for side in (a, b):  # both ends tell, once per side posed as
            await side.wait_until(lambda s=side: {a.side, "evil"} <= s.strangers, WAIT_S)  # type: ignore[misc]
        for said in (said_a, said_b):
            warnings = [line for line in said if line.startswith("WARNING")]
            assert len(warnings) == 2, warnings
            assert all("not signed with the game's secret" in w for w in warnings), warnings
        # Nothing of it counted: a real peg at b comes through alone.
        await board_of(b).peg(1, 3)
        after = await in_step(a, b, moves=3)
        assert after.front == (before.front[0], before.front[1] + 3)

        # Joining: the right name with a guessed secret is another game altogether; the right
        # secret at a third end is a third side, told at both ends and ignored.
        with VirtualBoard() as third:
            async with running_end(
                broker, third.port, tmp_path / "c.json", secret="a guessed secret"
            ) as guessed:
                assert guessed.channel != a.channel
                assert {m.side for m in guessed.log.moves.values()} == {guessed.side}
            async with running_end(broker, third.port, tmp_path / "d.json") as intruder:
                for side in (a, b):
                    await side.wait_until(
                        lambda s=side: intruder.side in s.strangers,
                        WAIT_S,  # type: ignore[misc]
                    )
                    assert any(f"a third end {intruder.side}" in w for w in said_a + said_b)
                await board_of(intruder).peg(0, 7)
                await board_of(a).peg(0, 1)
                final = await in_step(a, b, moves=4)
                assert final.front == (after.front[0] + 1, after.front[1])
                assert len(a.log.moves) == len(b.log.moves) == 4


def remote_words(broker: Broker, port: str, state: Path) -> list[str]:
    return [
        *CLI,
        "remote",
        "--broker",
        *broker_words(broker),
        "--game",
        GAME,
        "--port",
        port,
        "--user",
        t.LINK_USER,
        "--password-env",
        "LINK_PASSWORD",
        "--secret-env",
        "LINK_SECRET",
        "--state",
        str(state),
    ]


async def start_remote(broker: Broker, port: str, state: Path) -> Any:
    env = {
        **os.environ,
        "LINK_PASSWORD": broker.credentials(t.LINK_USER).password,
        "LINK_SECRET": SECRET,
        "XDG_DATA_HOME": str(state.parent / "data"),  # its record of games: this test's own
    }
    return await asyncio.create_subprocess_exec(
        *remote_words(broker, port, state),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=(state.parent / "remote-stderr.txt").open("ab"),
        env=env,
    )


async def read_until(process: Any, check: Callable[[str], bool]) -> str:
    async with asyncio.timeout(WAIT_S):
        while True:
            line = (await process.stdout.readline()).decode()
            assert line, "the remote process stopped"
            if check(line.strip()):
                return line.strip()


async def tap(sim: VirtualControl, host: Board, name: str, times: int = 1) -> None:
    """Press a board button as a finger would, each tap once the board reported the one before
    (`host` hears its `btn` events): a simulated press starts when the firmware first looks,
    so one sent by the test's clock alone could merge with the last on a busy machine."""
    log = EventLog.of(host)
    for _ in range(times):
        sim.press(str(PINS[name]), ms=TAP_MS)
        await log.wait(lambda e: e == ButtonEvent(name, "tap"))


async def board_shows(port: str, check: Callable[[BoardState], bool]) -> BoardState:
    async with await Board.open(port) as board:
        state = await board.state()
        assert check(state), state
        return state


async def test_an_end_whose_process_was_killed_catches_up_with_what_both_ends_did(
    broker: Broker, vboard: VirtualBoard, other_vboard: VirtualBoard, tmp_path: Path
) -> None:
    state_b = tmp_path / "b.json"
    async with running_end(broker, vboard.port, tmp_path / "a.json") as a:
        process = await start_remote(broker, other_vboard.port, state_b)
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
                with VirtualControl(other_vboard.control) as sim:
                    await tap(sim, b_host, "B+", 2)
                    await tap(sim, b_host, "deal")  # handled: the next read shows it
                assert (await b_host.state()).front == [6, 2]
            process = await start_remote(broker, other_vboard.port, state_b)
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
            process = await start_remote(broker, other_vboard.port, state_b)
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
    # Its board's game is recorded once, killed and started again as it was.
    with Record.open(tmp_path / "data" / "cribboard" / "record.sqlite") as record:
        games = record.db.execute("SELECT source, front FROM games").fetchall()
    assert [(source, json.loads(front)) for source, front in games] == [("link", shown.front[:2])]


async def test_remote_virtual_joins_a_virtual_board_started_for_it(
    broker: Broker, vboard: VirtualBoard, tmp_path: Path
) -> None:
    words = remote_words(broker, "-", tmp_path / "v.json")
    at = words.index("--port")
    words[at : at + 2] = ["--virtual"]
    env = {
        **os.environ,
        "LINK_PASSWORD": broker.credentials(t.LINK_USER).password,
        "LINK_SECRET": SECRET,
    }
    process = await asyncio.create_subprocess_exec(
        *words, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        line = await read_until(process, lambda line: line.startswith("remote game "))
        assert "board virtual " in line
        await read_until(process, lambda line: line.startswith("synced:"))
        async with running_end(broker, vboard.port, tmp_path / "a.json") as a:
            await board_of(a).peg(1, 7)
            position = await in_step(a, moves=2)
            await read_until(process, lambda line: line == f"board: {describe(position)}")
        process.send_signal(signal.SIGTERM)
        assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize(
    ("words", "message", "status"),
    [
        (["--game", "Friday!", "--port", "/dev/null"], "bad game name", 2),
        (["--game", "g", "--port", "/dev/null", "--ble", "x"], "one of --port, --ble or", 2),
        (["--game", "g", "--port", "/dev/null", "--virtual"], "one of --port, --ble or", 2),
        (["--game", "g", "--password-env", "NOPE_X", "--user", "u"], "NOPE_X", 2),
        (["--game", "g", "--port", "/dev/null"], "needs its secret: --secret-env", 2),
        (["--game", "g", "--secret-env", "NOPE_X"], "NOPE_X", 2),
        (["--game", "g", "--secret-env", "HOME_SHORT"], "8 to 256 characters", 2),
    ],
)
def test_bad_remote_options_get_one_line(words: list[str], message: str, status: int) -> None:
    done = subprocess.run(
        [*CLI, "remote", "--broker", "mqtt://127.0.0.1:1", *words],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "HOME_SHORT": "short"},
    )
    assert done.returncode == status, done
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


async def test_a_refused_login_stops_cribboard_remote_with_one_line(
    broker: Broker, vboard: VirtualBoard, tmp_path: Path
) -> None:
    env = {**os.environ, "LINK_PASSWORD": "not-the-password", "LINK_SECRET": SECRET}
    process = await asyncio.create_subprocess_exec(
        *remote_words(broker, vboard.port, tmp_path / "s.json"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    async with asyncio.timeout(WAIT_S):
        _, err = await process.communicate()
    assert process.returncode == 1
    (line,) = err.decode().strip().splitlines()
    assert line.startswith("cribboard: mqtts://") and "refused the login of link" in line, line


def test_synced_says_one_move_in_the_singular() -> None:
    from cribboard.remote.end import synced_line

    assert synced_line(1, 0) == "synced: 1 move (0 from elsewhere)"
    assert synced_line(3, 2) == "synced: 3 moves (2 from elsewhere)"


async def retained_messages(
    broker: Broker, enough: Callable[[dict[str, bytes]], bool]
) -> dict[str, bytes]:
    """The retained messages of the remote games on the broker, as a stranger with the broker's
    password reads them, once there are `enough`."""
    found: dict[str, bytes] = {}
    async with link_address(broker).client("recorder") as recorder:
        await recorder.subscribe(f"{t.ROOT}/#", qos=1)
        async with asyncio.timeout(WAIT_S):
            async for message in recorder.messages:
                if message.payload:
                    found[str(message.topic)] = bytes(message.payload)
                if enough(found):
                    break
    return found


async def test_an_earlier_games_messages_replayed_change_nothing(
    broker: Broker, vboard: VirtualBoard, other_vboard: VirtualBoard, tmp_path: Path
) -> None:
    # Last week's "friday": two pegs, then both ends leave (offline 0 each).
    async with (
        running_end(broker, vboard.port, tmp_path / "a.json") as a,
        running_end(broker, other_vboard.port, tmp_path / "b.json") as b,
    ):
        await board_of(a).peg(0, 12)
        await board_of(b).peg(1, 7)
        await in_step(a, b, moves=3)
        old_sides, old_instance = {a.side, b.side}, a.instance
    # A stranger with the broker's password keeps all of it (3 moves, 2 onlines, 2 hellos) and
    # wipes the broker, as a new broker would be.
    captured = await retained_messages(broker, lambda found: len(found) == 7)
    async with link_address(broker).client("attacker") as attacker:
        for topic in captured:
            await attacker.publish(topic, b"", qos=1, retain=True)
        # This week: fresh state files, boards at 0-0, the same name and secret. The captured
        # messages are put back before the new ends start.
        for port in (vboard.port, other_vboard.port):
            async with await Board.open(port) as board:
                await board.new_game(121)
        for topic, payload in captured.items():
            await attacker.publish(topic, payload, qos=1, retain=True)
        said: list[str] = []
        async with (
            running_end(broker, vboard.port, tmp_path / "c.json", said=said) as c,
            running_end(broker, other_vboard.port, tmp_path / "d.json", said=said) as d,
        ):
            start = await in_step(c, d, moves=1)
            assert start.front == (0, 0) and start.back == (0, 0)  # not last week's 12-7
            assert c.instance == d.instance != old_instance
            assert (c.partner, d.partner) == (None, c.side) or c.partner == d.side
            await board_of(d).peg(1, 4)
            await in_step(c, d, moves=2)
            assert c.partner == d.side and d.partner == c.side
            assert not old_sides & {c.partner, d.partner}
            # The last week's signed moves and onlines, put back again while they play: ignored.
            for topic, payload in captured.items():
                await attacker.publish(topic, payload, qos=1, retain=True)
            await board_of(c).peg(0, 2)
            position = await in_step(c, d, moves=3)
            assert position.front == (2, 4)
        # d's own `online 0` of this game, captured when it left, replayed once it is back:
        # c does not take d for gone.
        offline_topic = t.side_topic(c.channel, c.instance, d.side, t.ONLINE)
        retained = await retained_messages(broker, lambda found: offline_topic in found)
        offline = retained[offline_topic]
        assert offline.split()[1] == b"0"  # signed: `0` and the connection it ended
        async with (
            running_end(broker, vboard.port, tmp_path / "c.json", said=said) as c,
            running_end(broker, other_vboard.port, tmp_path / "d.json", said=said) as d,
        ):
            await c.wait_until(lambda: c.peers.get(d.side) is True, WAIT_S)
            await attacker.publish(offline_topic, offline, qos=1, retain=True)
            await board_of(d).peg(1, 1)  # after the replay: when it is in, the replay is too
            await in_step(c, d, moves=4)
            assert c.peers.get(d.side) is True
    assert not any("third end" in line for line in said), said


async def test_client_ids_cannot_be_read_from_topics_and_unknown_sides_flood_no_one(
    broker: Broker, vboard: VirtualBoard, other_vboard: VirtualBoard, tmp_path: Path
) -> None:
    said_a: list[str] = []
    async with (
        running_end(broker, vboard.port, tmp_path / "a.json", said=said_a) as a,
        running_end(broker, other_vboard.port, tmp_path / "b.json") as b,
    ):
        log = broker.state_dir / "mosquitto.log"
        before = log.stat().st_size
        # Every id a stranger could make of what the topics show, tried as a client id.
        for guess in (a.side, f"link-{a.channel[:8]}-{a.side}", f"link-{a.side}", a.channel):
            async with link_address(broker).client(guess):
                pass
        written = log.read_bytes()[before:].decode(errors="replace")
        assert "already connected" not in written, written
        await board_of(a).peg(0, 3)
        await in_step(a, b, moves=2)
        # 2,000 made-up sides write on the game's topics: a few lines at each end, not 2,000.
        async with link_address(broker).client("flood") as flood:
            for n in range(2000):
                topic = t.side_topic(a.channel, a.instance, f"x{n}", t.ONLINE)
                await flood.publish(topic, b"1 1", qos=0)
            await flood.publish(t.side_topic(a.channel, a.instance, "x0", t.ONLINE), b"", qos=1)
        await a.wait_until(lambda: a.unknown_messages >= 2000, WAIT_S)
        warnings = [line for line in said_a if line.startswith("WARNING")]
        assert 1 <= len(warnings) <= 5, len(warnings)
        assert len(a.strangers) <= 1024
        await board_of(b).peg(1, 2)
        await in_step(a, b, moves=3)
