"""The protocol client on a fake transport (cribboard.testing): resending, reconnecting, the
heartbeat, a board restarting mid-request, the hello's checks and lines in pieces, where the
board is not what is tested (the tiny board of tests/fakeboard.py plays it). The client against
the real firmware: tests/host/test_host_e2e.py."""

from __future__ import annotations

import asyncio

import pytest

from cribboard.api import Board
from cribboard.client import Client
from cribboard.errors import LinkError, ProtocolMismatch
from cribboard.testing import FakeTransport, Request
from fakeboard import TinyBoard
from support import EventLog


def peg_lines(tiny: TinyBoard) -> list[bytes]:
    """Every peg request the board was sent, on every link, in order."""
    return [r.line for link in tiny.links for r in link.requests if r.verb == "peg"]


async def test_a_lost_reply_is_resent_with_the_same_id() -> None:
    """The link drops after the board applied a peg and before its reply came: the client
    reconnects, sends the same line (same id) again, and the board answers from memory: the
    peg counts once."""
    tiny = TinyBoard()

    def board(request: Request) -> list[bytes]:
        said = tiny(request)
        if request.verb == "peg" and len(tiny.links) == 1:
            tiny.links[0].drop(LinkError("cable pulled"))  # the reply never arrives
        return said

    def factory() -> FakeTransport:
        tiny.links.append(FakeTransport(board, name=f"fake{len(tiny.links)}"))
        return tiny.links[-1]

    client = Client(factory, heartbeat=0)
    await client.connect()
    b = Board(client)
    try:
        assert await b.peg(0, 9) == 1
        first, again = peg_lines(tiny)
        assert first == again and first.startswith(b"#")  # the same line, the same id
        assert tiny.applied == [first]
        assert (await b.state()).front == [9, 0]
        assert len(tiny.links) == 2
    finally:
        await client.close()


async def test_reconnect_after_the_link_drops() -> None:
    tiny = TinyBoard()
    client = Client(tiny.transport, timeout=3.0, heartbeat=0)
    await client.connect()
    b = Board(client)
    seen = EventLog()
    client.subscribe(seen)
    try:
        await b.peg(0, 4)
        tiny.links[0].drop(LinkError("unplugged"))
        await seen.wait(lambda e: e.name == "link" and e.fields["state"] == "lost")
        await seen.wait(lambda e: e.name == "link" and e.fields["state"] == "back")
        resynced = await seen.wait(lambda e: e.name == "st" and e.fields.get("f") == "4,0")
        assert resynced.fields["r"] == "1"
        await b.peg(0, 2)
        assert (await b.state()).front == [6, 0]
        assert len(tiny.links) == 2 and not tiny.links[0].is_open
    finally:
        await client.close()
    assert not tiny.links[1].is_open  # closed with the client


async def test_heartbeat_notices_a_board_that_stopped_answering() -> None:
    tiny = TinyBoard()
    client = Client(tiny.transport, timeout=0.2, heartbeat=0.05)
    await client.connect()
    seen = EventLog()
    client.subscribe(seen)
    try:
        tiny.links[0].stall()  # the board hangs: the link stays open, nothing answers
        await seen.wait(lambda e: e.name == "link" and e.fields["state"] == "lost")
        await seen.wait(lambda e: e.name == "link" and e.fields["state"] == "back")
        await client.request("ping")
        assert len(tiny.links) == 2 and not tiny.links[0].is_open
    finally:
        await client.close()


async def test_without_reconnecting_a_lost_link_fails_the_request_in_flight() -> None:
    tiny = TinyBoard()
    client = Client(tiny.transport, heartbeat=0, reconnect=False, timeout=30)
    await client.connect()
    try:
        tiny.links[0].stall()
        asking = asyncio.ensure_future(client.request("peg", 0, 2))
        while not any(r.verb == "peg" for r in tiny.links[0].requests):
            await asyncio.sleep(0)
        tiny.links[0].drop(LinkError("unplugged"))
        with pytest.raises(LinkError, match="link lost"):
            await asking
        assert len(tiny.links) == 1
    finally:
        await client.close()


async def test_protocol_major_mismatch_is_refused() -> None:
    tiny = TinyBoard(proto="2.0")
    with pytest.raises(ProtocolMismatch, match="update"):
        await Board.open_transport(tiny.transport, reconnect=False)
    assert not tiny.links[0].is_open  # a connect that fails leaves no link open


async def test_replies_and_events_in_pieces_are_joined_into_lines() -> None:
    """A Bluetooth link delivers 20 bytes at a time, here one: every line still arrives whole."""
    tiny = TinyBoard(chunk=1)
    async with await Board.open_transport(tiny.transport, timeout=5.0) as b:
        seen = EventLog.of(b)
        assert await b.peg(1, 7) == 1
        event = await seen.wait(lambda e: getattr(e, "type", "") == "state")
        assert event.state.front == [0, 7]


async def test_a_request_in_flight_when_the_board_restarts_is_sent_again() -> None:
    """The board restarts (its `! hello`) before answering a peg: the client reads the state
    again, then sends the same line (same id); answered once, and the peg counts once."""
    tiny = TinyBoard()
    restarted = False

    def board(request: Request) -> list[bytes]:
        nonlocal restarted
        if request.verb == "peg" and not restarted:
            restarted = True
            tiny.links[-1].push(b"! hello proto=1.4 board=fake")  # gone before it answered
            return []
        return tiny(request)

    def factory() -> FakeTransport:
        tiny.links.append(FakeTransport(board))
        return tiny.links[-1]

    async with await Board.open_transport(factory, timeout=5.0) as b:
        seen = EventLog.of(b)
        assert await b.peg(0, 3) == 1
        first, again = peg_lines(tiny)
        assert first == again and tiny.applied == [first]
        assert len(tiny.links) == 1  # the link stayed up
        await seen.wait(lambda e: getattr(e, "type", "") == "hello")
