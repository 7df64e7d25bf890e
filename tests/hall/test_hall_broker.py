"""The hall's broker: the real mosquitto on a free port, its persistence, ACL and Last Will."""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import aiomqtt
import pytest

from cribboard.hall.broker import Broker, BrokerError, MosquittoNotFound, find_executable
from cribboard.hallwire import messages
from cribboard.hallwire import topics as t
from support import Spawn

HALL = "club"
WAIT_S = 10.0


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    try:
        find_executable("mosquitto")
    except MosquittoNotFound as err:
        pytest.skip(f"{err} (make mosquitto)")
    hall_broker = Broker.create(tmp_path_factory.mktemp("hall"), HALL, tables=4, viewer=True)
    with hall_broker:
        yield hall_broker


def tls_context(broker: Broker) -> ssl.SSLContext | None:
    """What verifies the hall's broker: its own CA (None: a plain broker)."""
    ca = broker.ca_file
    return None if ca is None else ssl.create_default_context(cafile=str(ca))


@asynccontextmanager
async def connect(
    broker: Broker, user: str | None, **options: object
) -> AsyncIterator[aiomqtt.Client]:
    password = broker.credentials(user).password if user else None
    async with aiomqtt.Client(
        "127.0.0.1",
        broker.port,
        username=user,
        password=password,
        tls_context=tls_context(broker),
        **options,
    ) as client:
        yield client


async def live_until(client: aiomqtt.Client, marker: str) -> list[tuple[str, bytes]]:
    """The live (not retained) messages the client receives up to and including one on
    `marker`: a later publication of the same publisher, so everything denied before it would
    have arrived first."""
    seen: list[tuple[str, bytes]] = []
    async with asyncio.timeout(WAIT_S):
        async for message in client.messages:
            if not message.retain:
                seen.append((str(message.topic), bytes(message.payload)))
            if str(message.topic) == marker:
                return seen
    raise AssertionError("unreachable")


def test_missing_mosquitto_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIBBOARD_MOSQUITTO", "/nonexistent/mosquitto")
    with pytest.raises(MosquittoNotFound, match="apt-get install mosquitto"):
        find_executable("mosquitto")


async def test_a_table_publishes_only_under_its_own_topics(broker: Broker) -> None:
    own = t.table_topic(HALL, 3, t.EVENT)
    async with connect(broker, "director") as director, connect(broker, "table-3") as table:
        await director.subscribe(f"{t.hall_prefix(HALL)}/#", qos=1)
        await table.publish(t.table_topic(HALL, 4, t.EVENT), b"forged", qos=1)
        await table.publish(t.table_topic(HALL, 4, t.STATE), b"forged", qos=1)
        await table.publish(t.hall_topic(HALL, t.STANDINGS), b"forged", qos=1)
        await table.publish(t.table_topic(HALL, 3, t.CMD), b"forged", qos=1)
        await table.publish(own, b"mine", qos=1)
        assert await live_until(director, own) == [(own, b"mine")]


async def test_only_the_director_sends_commands_and_a_table_reads_only_its_own(
    broker: Broker,
) -> None:
    cmd3, cmd4 = t.table_topic(HALL, 3, t.CMD), t.table_topic(HALL, 4, t.CMD)
    command = messages.encode_command(messages.NewGame("r1t3", 121, ("Ann", "Bob")))
    async with (
        connect(broker, "director") as director,
        connect(broker, "table-3") as table3,
        connect(broker, "viewer") as viewer,
    ):
        await table3.subscribe(cmd4, qos=1)  # granted, but nothing of table 4's is delivered
        await table3.subscribe(cmd3, qos=1)
        await viewer.subscribe(f"{t.hall_prefix(HALL)}/#", qos=1)
        await viewer.publish(cmd3, b"viewer's", qos=1)  # read-only: dropped
        await director.publish(cmd4, b"for table 4", qos=1)
        await director.publish(cmd3, command, qos=1)
        assert await live_until(table3, cmd3) == [(cmd3, command)]
        standings = t.hall_topic(HALL, t.STANDINGS)
        await director.publish(standings, b'{"round":1,"standings":[]}', qos=1)
        seen = await live_until(viewer, standings)
        assert seen == [(cmd4, b"for table 4"), (cmd3, command), (standings, seen[-1][1])]


@pytest.mark.parametrize("password", [None, "wrong"])
async def test_anonymous_and_wrong_passwords_are_refused(broker: Broker, password: str) -> None:
    with pytest.raises(aiomqtt.MqttError, match="authori[sz]ed"):
        async with aiomqtt.Client(
            "127.0.0.1",
            broker.port,
            username="table-3" if password else None,
            password=password,
            tls_context=tls_context(broker),
        ):
            pass


async def test_retained_and_queued_messages_survive_a_restart(broker: Broker) -> None:
    standings, cmd2 = t.hall_topic(HALL, t.STANDINGS), t.table_topic(HALL, 2, t.CMD)
    # Table 2 keeps a persistent session, then goes away; the director publishes to it.
    async with connect(broker, "table-2", identifier="table-2", clean_session=False) as table:
        await table.subscribe(cmd2, qos=1)
    async with connect(broker, "director") as director:
        await director.publish(standings, b"kept", qos=1, retain=True)
        await director.publish(cmd2, b"queued", qos=1)
    port = broker.port
    broker.restart()
    assert broker.port == port
    async with connect(broker, "viewer") as viewer:
        await viewer.subscribe(standings, qos=1)
        async with asyncio.timeout(WAIT_S):
            message = await anext(aiter(viewer.messages))
        assert (message.retain, message.payload) == (True, b"kept")
    async with connect(broker, "table-2", identifier="table-2", clean_session=False) as table:
        async with asyncio.timeout(WAIT_S):
            message = await anext(aiter(table.messages))
        assert (str(message.topic), message.payload) == (cmd2, b"queued")


TABLE_CLIENT = """
import asyncio, ssl, sys, aiomqtt
port, password, topic, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
async def main():
    will = aiomqtt.Will(topic, b"0", qos=1, retain=True)
    async with aiomqtt.Client("127.0.0.1", port, username="table-1", password=password,
                              will=will, tls_context=ssl.create_default_context(cafile=ca)) as client:
        await client.publish(topic, b"1", qos=1, retain=True)
        print("up", flush=True)
        await asyncio.Event().wait()
asyncio.run(main())
"""


async def test_the_last_will_marks_a_dead_table_offline(broker: Broker, spawn: Spawn) -> None:
    online = t.table_topic(HALL, 1, t.ONLINE)
    password = broker.credentials("table-1").password
    ca = broker.ca_file
    assert ca is not None
    async with connect(broker, "director") as director:
        await director.subscribe(online, qos=1)
        table = spawn(
            [sys.executable, "-c", TABLE_CLIENT, str(broker.port), password, online, str(ca)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert table.stdout is not None
            assert await asyncio.to_thread(table.stdout.readline) == "up\n"
            async with asyncio.timeout(WAIT_S):
                async for message in director.messages:
                    if message.payload == messages.ONLINE:
                        break
                os.kill(table.pid, signal.SIGKILL)  # no DISCONNECT: the broker sends the will
                message = await anext(aiter(director.messages))
            assert message.payload == messages.OFFLINE
            assert message.retain is False  # live, and retained for whoever comes later
        finally:
            table.kill()
            table.wait()
    async with connect(broker, "viewer") as viewer:
        await viewer.subscribe(online, qos=1)
        async with asyncio.timeout(WAIT_S):
            message = await anext(aiter(viewer.messages))
        assert (message.retain, message.payload) == (True, b"0")


def test_a_second_start_on_the_same_port_is_refused(broker: Broker) -> None:
    with pytest.raises(BrokerError, match="in use"):
        Broker.open(broker.state_dir).start()
