"""Sharing as one wrapper around any transport (cribboard.sharing), shown on a fake transport
(cribboard.testing): the first to claim a key opens the plain transport and serves, a second
rides and never opens its own, a rider's line that is no request never reaches the board, and
the owner leaving hands the link over. The same through real processes and a real port:
tests/host/test_portshare.py."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from cribboard import portshare
from cribboard.errors import LinkError, LinkHandedOver
from cribboard.sharing import SharedTransport, serial_transport
from cribboard.testing import FakeTransport, Request
from cribboard.transport import SerialTransport
from support import WAIT_S

_keys = itertools.count()


def echo(request: Request) -> list[bytes]:
    return [request.ok(verb=request.verb), b"! st r=1"]


class Heard:
    """What one end's `on_data` and `on_lost` got."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.lost: list[Exception | None] = []
        self._changed = asyncio.Event()

    def on_data(self, chunk: bytes) -> None:
        self.data += chunk
        self._changed.set()

    def on_lost(self, error: Exception | None) -> None:
        self.lost.append(error)
        self._changed.set()

    async def until(self, done: Callable[[], bool]) -> None:
        async def wait() -> None:
            while not done():
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), WAIT_S)


async def open_pair() -> tuple[SharedTransport, FakeTransport, Heard, SharedTransport, Heard]:
    key = f"test:{next(_keys)}"
    board = FakeTransport(echo)
    owner, owner_heard = SharedTransport(key, board), Heard()
    await owner.open(owner_heard.on_data, owner_heard.on_lost)
    rider_plain = FakeTransport(echo, name="never opened")
    rider, rider_heard = SharedTransport(key, rider_plain), Heard()
    await rider.open(rider_heard.on_data, rider_heard.on_lost)
    assert owner.owner and not rider.owner
    assert board.is_open and not rider_plain.is_open  # one link to the board
    return owner, board, owner_heard, rider, rider_heard


async def test_a_rider_is_answered_through_the_owners_link() -> None:
    owner, board, owner_heard, rider, rider_heard = await open_pair()
    try:
        await rider.write(b"#r1 peg 0 2\n")
        await rider_heard.until(lambda: b"! st r=1\n" in rider_heard.data)
        assert rider_heard.data == b"#r1 ok verb=peg\n! st r=1\n"
        await owner_heard.until(lambda: b"! st r=1\n" in owner_heard.data)
        assert [r.line for r in board.requests] == [b"#r1 peg 0 2"]
    finally:
        await rider.close()
        await owner.close()


async def test_a_riders_line_that_is_no_request_never_reaches_the_board() -> None:
    owner, board, _owner_heard, rider, rider_heard = await open_pair()
    try:
        await rider.write(b"\x03\x03import os\n#x" + b"1" * 80 + b" ping\nfrobnicate\n")
        await rider.write(b"#ok ping\n")  # its answer: everything before it was read
        await rider_heard.until(lambda: b"#ok ok" in rider_heard.data)
        assert [r.line for r in board.requests] == [b"#ok ping"]
    finally:
        await rider.close()
        await owner.close()


async def served(rider: SharedTransport, heard: Heard) -> None:
    """One request answered through the owner: the rider is being served."""
    await rider.write(b"#hi ping\n")
    await heard.until(lambda: b"#hi ok" in heard.data)


async def test_the_owner_leaving_drops_its_riders_and_frees_the_key() -> None:
    owner, board, owner_heard, rider, rider_heard = await open_pair()
    await served(rider, rider_heard)
    await owner.close()
    await rider_heard.until(lambda: bool(rider_heard.lost))
    assert isinstance(rider_heard.lost[0], LinkHandedOver)
    assert not board.is_open and owner_heard.lost == []  # closed: not "lost"
    with pytest.raises(LinkError):
        await rider.write(b"ping\n")
    await rider.close()
    again = FakeTransport(echo)
    successor = SharedTransport(owner._key, again)  # the first to reconnect owns it
    await successor.open(Heard().on_data, Heard().on_lost)
    assert successor.owner and again.is_open
    await successor.close()


async def test_an_owner_leaving_as_a_rider_connects_hands_the_link_over_too() -> None:
    """The owner closes while a rider's connection waits to be accepted, or is accepted and
    not yet served: the rider hears its link handed over (it was reset, or kept open for
    ever, serving no one)."""
    owner, _board, _owner_heard, rider, rider_heard = await open_pair()
    await owner.close()
    await rider_heard.until(lambda: bool(rider_heard.lost))
    assert isinstance(rider_heard.lost[0], LinkHandedOver)
    await rider.close()


async def test_the_plain_link_lost_reaches_the_owner_once_and_the_riders() -> None:
    owner, board, owner_heard, rider, rider_heard = await open_pair()
    await served(rider, rider_heard)
    board.drop(LinkError("unplugged"))
    await owner_heard.until(lambda: bool(owner_heard.lost))
    assert [str(e) for e in owner_heard.lost] == ["unplugged"]
    await owner.close()  # as the client does when its link is lost
    await rider_heard.until(lambda: bool(rider_heard.lost))
    assert isinstance(rider_heard.lost[0], LinkHandedOver)
    await rider.close()
    assert len(owner_heard.lost) == 1


def test_only_a_local_device_gets_the_wrapper(tmp_path: Path) -> None:
    assert isinstance(serial_transport("loop://"), SerialTransport)
    assert isinstance(serial_transport("socket://127.0.0.1:9"), SerialTransport)
    device = f"{tmp_path}/tty"
    open(device, "w").close()
    shared = serial_transport(device)
    assert isinstance(shared, SharedTransport) and shared._key == portshare.port_key(device)
