"""A board at a club hall's table through the bridge (`cribboard serve --broker`): the real
mosquitto on a free port, the director in this process, the virtual board. The director records
what the board shows; a new game runs once and is acknowledged, also when sent again and after
the bridge's own restart; a broker restart holds up neither the HTTP side nor the board, and
the table republishes; the command line."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import aiomqtt
import pytest

from cribboard.bridge.halltable import TableSettings
from cribboard.hall.broker import Broker
from cribboard.hall.director import Director
from cribboard.hall.store import Store
from cribboard.hallwire import messages
from cribboard.hallwire import topics as t
from cribboard.virtual import VirtualBoard
from hallsupport import (
    HALL,
    WAIT_S,
    address,
    broker_words,
    running_broker,
    running_director,
)
from support import running_bridge

CLI = [sys.executable, "-m", "cribboard.cli"]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    with running_broker(tmp_path / "broker", tables=2) as running:
        yield running


@pytest.fixture
async def director(broker: Broker, tmp_path: Path) -> AsyncIterator[Director]:
    with Store.open(tmp_path / "hall.sqlite") as store:
        async with running_director(store, broker, rounds=2) as running:
            running.register(["Ann", "Bob"])
            yield running


def table_settings(broker: Broker, memory: Path) -> TableSettings:
    return TableSettings(address(broker, "table-1"), HALL, 1, memory)


@contextlib.asynccontextmanager
async def commands(
    broker: Broker, director: Director
) -> AsyncIterator[tuple[aiomqtt.Client, list[messages.Ack]]]:
    """Send table 1 commands through the director's own connection (a client's id is its user
    name: a second director connection would take the director's place) and collect the
    table's acks as the viewer reads them."""
    acks: list[messages.Ack] = []
    async with address(broker, "viewer").client("viewer-test") as viewer:
        await viewer.subscribe(t.table_topic(HALL, 1, t.ACK), qos=1)

        async def collect() -> None:
            async for message in viewer.messages:
                acks.append(messages.decode_ack(bytes(message.payload)))

        reader = asyncio.create_task(collect())
        try:
            client = director._client
            assert client is not None
            yield client, acks
        finally:
            reader.cancel()


async def send(client: aiomqtt.Client, command: messages.NewGame) -> None:
    payload = messages.encode_command(command)
    await client.publish(t.table_topic(HALL, 1, t.CMD), payload, qos=1)


async def until(condition: Any, what: str) -> None:
    async with asyncio.timeout(WAIT_S):
        while not condition():
            await asyncio.sleep(0.02)  # polls a value another task sets; no event to await
    assert condition(), what


async def test_the_director_records_what_the_board_shows_and_a_command_runs_once(
    vboard: VirtualBoard, broker: Broker, director: Director, tmp_path: Path
) -> None:
    store, view = director.store, director.view
    memory = tmp_path / "state" / "table-club-1.json"
    async with running_bridge(vboard.port, table=table_settings(broker, memory)) as bridge:
        await director.wait_until(lambda: view.tables.get(1) is not None, WAIT_S)
        await director.wait_until(lambda: view.tables[1].online is True, WAIT_S)
        board = bridge.registry.get(None).board  # type: ignore[union-attr]
        assert board is not None
        await board.peg(0, 20)  # a game before the round: the new game clears it
        report = await director.next_round()
        ack = report.answers[1]
        assert ack is not None and ack.ok, report.answers
        assert bridge.hall_table is not None and bridge.hall_table.names == ("Ann", "Bob")
        assert (await board.state()).front == [0, 0]
        await board.peg(1, 12)
        await director.wait_until(lambda: director.latest[1].front == [0, 12], WAIT_S)
        # Sent again (a QoS 1 redelivery, the director's resend): answered, the game goes on.
        sent = store.command(1, 1).id
        async with commands(broker, director) as (client, acks):
            command = messages.NewGame(sent, 121, ("Ann", "Bob"))
            await send(client, command)
            await until(lambda: len(acks) == 1, "no ack")
            assert acks == [messages.Ack(sent, True)]
            assert (await board.state()).front == [0, 12]
            # The win the board shows is the round's result.
            for seat, goal in ((1, 95), (0, 121)):  # pegged out, as a game is played
                score = (await board.state()).front[seat]
                while score < goal:
                    await board.peg(seat, min(29, goal - score))
                    score = min(121, score + 29)
            await director.wait_until(lambda: len(store.tournament.results) == 1, WAIT_S)
            (result,) = store.tournament.results.values()
            assert result.loser_score == 95
    # The bridge restarted on the same board: the command it ran is still remembered.
    async with running_bridge(vboard.port, table=table_settings(broker, memory)) as bridge:
        await director.wait_until(lambda: view.tables[1].online is True, WAIT_S)
        async with commands(broker, director) as (client, acks):
            await send(client, messages.NewGame(sent, 121, ("Ann", "Bob")))
            await until(lambda: len(acks) == 1, "no ack after the restart")
            assert acks == [messages.Ack(sent, True)]
            board = bridge.registry.get(None).board  # type: ignore[union-attr]
            assert board is not None and (await board.state()).winner == 0  # not restarted
            # A bad command is answered as one; a new id runs.
            await client.publish(t.table_topic(HALL, 1, t.CMD), b'{"id":"x1","op":"fly"}', qos=1)
            await send(client, messages.NewGame("r2t1", 61, ("Bob", "Ann")))
            await until(lambda: len(acks) == 3, "no answers")
            assert acks[1].error == "bad_command" and acks[2] == messages.Ack("r2t1", True)
            state = await board.state()
            assert (state.target, state.front, state.winner) == (61, [0, 0], None)
    assert store.tournament.results  # nothing recorded twice or lost on the way
    assert director.results_recorded == 1


async def test_a_broker_away_holds_up_nothing_and_the_table_republishes(
    vboard: VirtualBoard, broker: Broker, director: Director, tmp_path: Path
) -> None:
    view = director.view
    settings = table_settings(broker, tmp_path / "memory.json")
    async with running_bridge(vboard.port, table=settings) as bridge:
        await director.wait_until(lambda: bool(view.tables.get(1) and view.tables[1].online), 20)
        await asyncio.to_thread(broker.stop)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT_S)) as http:
            # The HTTP side and the board go on while the broker is away.
            async with http.post(bridge.url + "api/peg", json={"player": 0, "points": 7}) as r:
                assert r.status == 200
            async with http.get(bridge.url + "api/state") as r:
                assert (await r.json())["front"] == [7, 0]
        await asyncio.to_thread(broker.start)  # the same port, the same state
        await director.wait_until(
            lambda: director.latest.get(1) is not None and director.latest[1].front == [7, 0],
            WAIT_S,
        )
        assert view.tables[1].online is True
        # Its retained state is the board's, for whoever looks now.
        async with address(broker, "viewer").client() as viewer:
            await viewer.subscribe(t.table_topic(HALL, 1, t.STATE), qos=1)
            async with asyncio.timeout(WAIT_S):
                message = await anext(aiter(viewer.messages))
        assert messages.decode_state(bytes(message.payload)).front == [7, 0]


async def serve_process(broker: Broker, tmp_path: Path, *words: str) -> Any:
    env = {
        **os.environ,
        "TABLE_PASSWORD": broker.credentials("table-1").password,
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    return await asyncio.create_subprocess_exec(
        *CLI,
        "serve",
        "--http-port",
        "0",
        *words,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


async def test_serve_mqtt_from_the_command_line(
    broker: Broker, director: Director, tmp_path: Path
) -> None:
    process = await serve_process(
        broker,
        tmp_path,
        "--virtual",
        "--broker",
        *broker_words(broker),
        "--hall",
        HALL,
        "--table",
        "1",
        "--password-env",
        "TABLE_PASSWORD",
    )
    try:
        await director.wait_until(lambda: bool(director.view.tables.get(1)), WAIT_S)
        await director.wait_until(lambda: director.view.tables[1].online is True, WAIT_S)
        report = await director.next_round()
        assert report.answers[1] is not None and report.answers[1].ok
    finally:
        process.terminate()
        out, err = await process.communicate()
    text = (out + err).decode()
    assert "table 1 of hall club: joining" in text and "new game to 121: Ann (blue)" in text
    assert broker.credentials("table-1").password not in text
    assert (tmp_path / "state" / "cribboard" / "table-club-1.json").exists()
    await director.wait_until(lambda: director.view.tables[1].online is False, WAIT_S)


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["--broker", "mqtt://127.0.0.1:1"], "--broker needs --hall NAME and --table N"),
        (["--hall", "club"], "go with --broker"),
        (["--broker", "http://x", "--hall", "club", "--table", "1"], "bad broker URL"),
        (["--broker", "mqtt://x", "--hall", "Club!", "--table", "1"], "bad hall name"),
        (["--virtual", "--virtual", "--broker", "mqtt://x", "--hall", "c", "--table", "1"], "one"),
        (
            ["--broker", "mqtt://x", "--hall", "c", "--table", "1", "--password-env", "NOPE_X"],
            "NOPE_X: that environment variable is not set",
        ),
    ],
)
def test_bad_table_options_get_one_line_and_exit_2(words: list[str], message: str) -> None:
    done = subprocess.run(
        [*CLI, "serve", "--port", "/dev/null", *words], capture_output=True, text=True
    )
    assert done.returncode == 2, done
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


async def test_a_wrong_password_is_one_line_and_exit_1(broker: Broker, tmp_path: Path) -> None:
    process = await serve_process(
        broker,
        tmp_path,
        "--virtual",
        "--broker",
        *broker_words(broker),
        "--hall",
        HALL,
        "--table",
        "1",
        "--password-env",
        "HOME",
    )
    async with asyncio.timeout(WAIT_S):
        out, err = await process.communicate()
    assert process.returncode == 1
    assert "refused the login" in err.decode()
    assert os.environ["HOME"] not in (out + err).decode().replace(str(tmp_path), "")
