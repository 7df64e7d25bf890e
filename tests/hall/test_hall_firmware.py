"""A Wi-Fi board's own table client (firmware/cribfw/hall.py, umqtt.simple) on the virtual
board, against the real mosquitto (cribboard.hall.broker): configured by `cribboard deploy
--broker`, it joins the hall, publishes its state, every change and online, runs a director's
command once however often it comes (across a power cycle too); cut off from the broker for 30 s
(a port that accepts and never answers, then one that refuses) it keeps answering the protocol
and drawing its LEDs, and catches up when the broker is back; 8 boards on this path and 200
simulated tables play a three-round tournament whose standings match a plain computation."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from cribboard.api import Board
from cribboard.hall.broker import Broker
from cribboard.hall.certs import make_ca, pem_to_der
from cribboard.hall.store import Store
from cribboard.hall.tablesetup import HallSetup, write_config
from cribboard.hallwire import topics as t
from cribboard.virtual.launcher import VirtualBoard
from cribcore.limits import MAX_POINTS
from cribdev.simtable import SimTable
from hallsupport import (
    HALL,
    WAIT_S,
    address,
    broker_words,
    plain_standings,
    published_rows,
    running_broker,
    running_director,
)

CLI = [sys.executable, "-m", "cribboard.cli"]
CUT_OFF_S = 30.0  # issue 16: a board cut off for 30 s catches up
RECONNECT_S = 20.0  # the board's longest wait between attempts is 8 s (cribfw/hall.py)


class TableWatch:
    """One table's topics as the director reads them: each message, in order of arrival."""

    def __init__(self, broker: Broker, table: int) -> None:
        self.broker = broker
        self.table = table
        self.messages: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        self._client: aiomqtt.Client | None = None
        self._reader: asyncio.Task[None] | None = None

    def topic(self, leaf: str) -> str:
        return t.table_topic(HALL, self.table, leaf)

    async def __aenter__(self) -> TableWatch:
        self._client = address(self.broker, "director").client()
        await self._client.__aenter__()
        for leaf in t.TABLE_PUBLISHES:
            await self._client.subscribe(self.topic(leaf), qos=1)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._reader is not None and self._client is not None
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        with contextlib.suppress(aiomqtt.MqttError):
            await self._client.__aexit__(None, None, None)

    async def _read(self) -> None:
        assert self._client is not None
        async for message in self._client.messages:
            self.messages.put_nowait((t.parse(str(message.topic)).leaf, bytes(message.payload)))

    async def next(self, leaf: str, accept: Callable[[Any], bool] = lambda _: True) -> Any:
        """The next message on `leaf` that `accept` takes (JSON decoded, except online)."""
        async with asyncio.timeout(WAIT_S):
            while True:
                got, payload = await self.messages.get()
                value = payload if got == t.ONLINE else json.loads(payload)
                if got == leaf and accept(value):
                    return value

    async def order(self, *leaves: str) -> list[Any]:
        """The next messages on `leaves`, which must come in this order (others skipped)."""
        seen = []
        async with asyncio.timeout(WAIT_S):
            while len(seen) < len(leaves):
                got, payload = await self.messages.get()
                if got in leaves:
                    assert got == leaves[len(seen)], (got, leaves, seen)
                    seen.append(payload if got == t.ONLINE else json.loads(payload))
        return seen

    async def command(self, **payload: object) -> None:
        assert self._client is not None
        await self._client.publish(self.topic(t.CMD), json.dumps(payload).encode(), qos=1)


def setup_for(broker: Broker, table: int, host: str = "127.0.0.1") -> HallSetup:
    """How a board reports as `table`: over TLS, with the hall's CA, when the broker has it."""
    user = t.table_user(table)
    password = broker.credentials(user).password
    ca = None if broker.ca_file is None else pem_to_der(broker.ca_file.read_bytes())
    return HallSetup(host, broker.port, HALL, table, user, password, ca=ca)


@contextlib.contextmanager
def hall_board(broker: Broker, table: int, **options: Any) -> Iterator[VirtualBoard]:
    """A virtual board that reports as `table` (configured over mpremote, as deploy does)."""
    with VirtualBoard(**options) as board:
        write_config(board.port, setup_for(broker, table), progress=lambda _: None)
        yield board


@contextlib.asynccontextmanager
async def opened(board: VirtualBoard) -> AsyncIterator[Board]:
    client = await Board.open(board.port)
    try:
        yield client
    finally:
        await client.close()


async def saved(board: Board, saves: int) -> int:
    """Wait until the board has saved its game more than `saves` times; the new count."""
    async with asyncio.timeout(WAIT_S):
        while True:
            health = await board.health()
            assert health is not None
            if health.saves > saves:
                return health.saves
            await asyncio.sleep(0.2)


def front(*scores: int) -> Callable[[Any], bool]:
    return lambda state: state["front"] == list(scores)


async def test_a_board_deployed_for_the_hall_joins_it_and_runs_each_command_once(
    tmp_path: Path,
) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker, VirtualBoard() as virtual:
        async with TableWatch(broker, 1) as hall:
            env = dict(os.environ, CRIBBOARD_MQTT_PASSWORD=broker.credentials("table-1").password)
            deployed = await asyncio.to_thread(
                subprocess.run,
                [*CLI, "--port", virtual.port, "deploy", "--broker"]
                + [*broker_words(broker), "--table", "1", "--hall", HALL],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
            assert deployed.returncode == 0, deployed.stderr
            assert "umqtt/simple.mpy" in deployed.stdout  # the client goes with the firmware
            assert "reports as table 1 of hall 'club'" in deployed.stdout
            assert env["CRIBBOARD_MQTT_PASSWORD"] not in deployed.stdout + deployed.stderr
            online, state, event = await hall.order(t.ONLINE, t.STATE, t.EVENT)
            assert online == b"1" and state == event and state["front"] == [0, 0]

            async with opened(virtual) as board:
                await board.peg(0, 5)  # a peg at the table: an event for the director
                state, event = await hall.order(t.STATE, t.EVENT)
                assert state == event and state["front"] == [5, 0]

                await hall.command(id="r1t1", op="new", target=61, names=["Ann", "Bob"])
                state, event, ack = await hall.order(t.STATE, t.EVENT, t.ACK)  # state first
                assert (state["target"], state["front"], state["winner"]) == (61, [0, 0], None)
                assert ack == {"id": "r1t1", "ok": True}
                saves = await saved(board, 0)
                await board.peg(1, 7)
                await hall.next(t.EVENT, front(0, 7))
                await hall.command(id="r1t1", op="new", target=61, names=["Ann", "Bob"])
                assert await hall.next(t.ACK) == {"id": "r1t1", "ok": True}  # answered again
                await hall.command(id="r1t2", op="dance")
                assert await hall.next(t.ACK) == {
                    "id": "r1t2",
                    "ok": False,
                    "error": "bad_command",
                    "message": "unknown op",
                }
                assert (await board.state()).front == [0, 7]  # never run twice
                await saved(board, saves)  # the peg is on the flash

                virtual.reset()  # a power cut: the connection dies, the broker says offline
                assert await hall.next(t.ONLINE) == b"0"
                online, state, event = await hall.order(t.ONLINE, t.STATE, t.EVENT)
                assert online == b"1" and state["front"] == [0, 7] and state["rev"] == 0
                await hall.command(id="r1t1", op="new", target=61, names=["Ann", "Bob"])
                assert await hall.next(t.ACK) == {"id": "r1t1", "ok": True}
                assert (await board.state()).front == [0, 7]  # remembered across the restart
                await hall.command(id="r2t1", op="new", target=121, names=["Cid", "Dee"])
                state, ack = await hall.order(t.STATE, t.ACK)
                assert (state["target"], state["front"]) == (121, [0, 0]) and ack["ok"]


async def broker_log(broker: Broker, offset: int, *clues: str) -> str:
    """The broker's log after `offset` once it holds one of `clues` (what the broker logs when
    a client ends the TLS handshake with an alert)."""
    log = broker.state_dir / "mosquitto.log"
    async with asyncio.timeout(WAIT_S):
        while True:
            text = log.read_bytes()[offset:].decode(errors="replace")
            if any(clue in text for clue in clues):
                return text
            await asyncio.sleep(0.1)


@pytest.mark.parametrize("wrong", ["ca", "host name"])
async def test_a_board_refuses_a_broker_it_cannot_verify(tmp_path: Path, wrong: str) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        setup = setup_for(broker, 1)
        if wrong == "ca":
            setup = dataclasses.replace(setup, ca=pem_to_der(make_ca("a stranger's CA")[0]))
        else:
            setup = setup_for(broker, 1, host="localhost")  # the certificate is for 127.0.0.1
        offset = (broker.state_dir / "mosquitto.log").stat().st_size
        with VirtualBoard() as board:
            write_config(board.port, setup, progress=lambda _: None)
            text = await broker_log(broker, offset, "alert bad certificate", "alert unknown ca")
        # It hung up in the handshake: its login (and password) never went out.
        assert "as table-1" not in text and "New client connected" not in text


class SilentPort:
    """A port that takes connections and never answers (a broker hung, a host that accepts
    and then says nothing)."""

    def __init__(self, port: int) -> None:
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(64)  # never accepted: the kernel completes the handshakes

    def close(self) -> None:
        self.listener.close()


async def test_a_board_cut_off_for_30_s_keeps_playing_and_catches_up(tmp_path: Path) -> None:
    frames: list[float] = []
    lock = threading.Lock()

    def on_frame(_: bytes) -> None:
        with lock:
            frames.append(time.monotonic())

    with running_broker(tmp_path / "broker", tables=1) as broker:
        with hall_board(broker, 1, on_frame=on_frame) as virtual:
            async with opened(virtual) as board:
                async with TableWatch(broker, 1) as hall:
                    await hall.next(t.STATE)
                    await board.set_pending(1, 6)  # a blinking hole: the LEDs change all the time
                    await hall.next(t.EVENT, lambda s: s["pending"] == [0, 6])
                assert broker.pid is not None
                os.kill(broker.pid, signal.SIGKILL)
                while broker.running:  # gone, and its port with it
                    await asyncio.sleep(0.02)
                cut_at = time.monotonic()
                silent: SilentPort | None = SilentPort(broker.port)  # accepts, never answers
                pings = pegs = 0
                try:
                    while time.monotonic() - cut_at < CUT_OFF_S:
                        if silent is not None and time.monotonic() - cut_at > CUT_OFF_S / 2:
                            silent.close()  # the second half: the port refuses
                            silent = None
                        async with asyncio.timeout(2.0):  # the protocol keeps answering
                            await board.ping()
                        pings += 1
                        if pings % 8 == 0:
                            await board.peg(0, 2)  # the game goes on while cut off
                            pegs += 1
                        await asyncio.sleep(0.25)
                finally:
                    if silent is not None:
                        silent.close()
                with lock:
                    drawn = [f for f in frames if cut_at <= f <= cut_at + CUT_OFF_S]
                assert pings > 60 and pegs >= 6
                # The LEDs kept being drawn: never a second without a new frame.
                gaps = [b - a for a, b in zip([cut_at, *drawn], [*drawn, cut_at + CUT_OFF_S])]
                assert max(gaps) < 1.0, max(gaps)
                await asyncio.to_thread(broker.start)  # back: the same port and state
                async with TableWatch(broker, 1) as hall:
                    # Retained, or published as the board comes back: the game as it is now.
                    assert await hall.next(t.ONLINE, lambda online: online == b"1")
                    caught_up = await hall.next(t.STATE, front(2 * pegs, 0))
                    assert caught_up["pending"] == [0, 6] and caught_up["rev"] > pegs
                assert (await board.state()).front == [2 * pegs, 0]


async def finish_on_board(board: Board, winner: int, loser_score: int, target: int) -> None:
    """Peg a game to this end at a board: the loser to `loser_score`, the winner home."""
    state = await board.state()
    for seat, goal in ((1 - winner, loser_score), (winner, target)):
        score = state.front[seat]
        while score < goal:
            points = min(MAX_POINTS, goal - score)
            await board.peg(seat, points)
            score += points


async def test_eight_boards_and_200_simulated_tables_play_a_three_round_tournament(
    tmp_path: Path,
) -> None:
    boards_n, simulated_n = 8, 200
    count = boards_n + simulated_n
    players = [f"P{n:03}" for n in range(1, 2 * count + 1)]
    target = 61
    ends = [(0, 20), (1, 30), (0, 31), (1, 45), (0, 60)]
    with running_broker(tmp_path / "broker", tables=count) as broker:
        with contextlib.ExitStack() as stack:
            virtual = await asyncio.gather(
                *(
                    asyncio.to_thread(stack.enter_context, hall_board(broker, n))
                    for n in range(1, boards_n + 1)
                )
            )
            simulated = [
                SimTable(address(broker, t.table_user(n)), HALL, n, seed=n)
                for n in range(boards_n + 1, count + 1)
            ]
            with Store.open(tmp_path / "hall.sqlite") as store:
                async with running_director(store, broker, rounds=3, target=target) as director:
                    async with contextlib.AsyncExitStack() as running:
                        boards = [await running.enter_async_context(opened(v)) for v in virtual]
                        async with asyncio.timeout(WAIT_S):
                            await asyncio.gather(*(table.start() for table in simulated))
                        running.push_async_callback(
                            lambda: asyncio.gather(*(table.stop() for table in simulated))
                        )
                        # Every table has its session (and its cmd subscription) before the
                        # first command is sent.
                        await director.wait_until(
                            lambda: all(
                                director.view.tables.get(n) is not None
                                and director.view.tables[n].online
                                for n in range(1, count + 1)
                            ),
                            WAIT_S,
                        )
                        director.register(players)
                        games: list[tuple[str, str, int, int]] = []
                        for round_no in (1, 2, 3):
                            report = await director.next_round()
                            assert all(a is not None and a.ok for a in report.answers.values())
                            assert len(report.answers) == count
                            plays = []
                            for n in range(1, count + 1):
                                winner, loser_score = ends[(n + round_no) % len(ends)]
                                seats = report.names[n]
                                games.append(
                                    (seats[winner], seats[1 - winner], loser_score, target)
                                )
                                if n <= boards_n:
                                    plays.append(
                                        finish_on_board(boards[n - 1], winner, loser_score, target)
                                    )
                                else:
                                    plays.append(
                                        simulated[n - boards_n - 1].finish(winner, loser_score)
                                    )
                            await asyncio.gather(*plays)
                            await director.wait_until(
                                lambda r=round_no: (
                                    sum(1 for k in store.tournament.results if k[0] == r) == count
                                ),
                                WAIT_S,
                            )
                        standings = await standings_after(broker, 3 * count)
    assert standings["round"] == 3
    assert published_rows(standings) == plain_standings(players, games, [])
    for n in range(1, boards_n + 1):  # the boards' results came over their own firmware
        winner, loser_score = ends[(n + 3) % len(ends)]
        assert store.tournament.results[(3, n)].loser_score == loser_score


async def standings_after(broker: Broker, games: int) -> dict[str, Any]:
    """The hall's standings as a viewer reads them, once they count `games` games."""
    async with address(broker, "viewer").client() as viewer:
        await viewer.subscribe(t.hall_topic(HALL, t.STANDINGS), qos=1)
        async with asyncio.timeout(WAIT_S):
            async for message in viewer.messages:
                standings: dict[str, Any] = json.loads(bytes(message.payload))
                if sum(line["played"] for line in standings["standings"]) // 2 == games:
                    return standings
    raise AssertionError("unreachable")
