"""Helpers for the real-stack Bluetooth tier: a Bumble central speaking the line protocol over NUS
to a board on cribdev.bumbleradio. Bumble's own host stack does all the GATT work; this
only joins notifications into lines and splits lines into writes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bumble.core import UUID
from bumble.device import Connection, Device, Peer
from bumble.hci import Address

from cribcore.protocol import NUS_RX, NUS_SERVICE, NUS_TX
from cribdev.bumbleradio import RadioBoard

STACKS = ("btstack", "nimble")
WAIT = 20.0  # the longest any one awaited event may take (a guard, never a synchronisation)


class Nus:
    """One central's NUS session with a board."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.packets: list[bytes] = []  # every notification, as it came
        self.lines: asyncio.Queue[bytes] = asyncio.Queue()
        self.gone: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._partial = b""
        self._rx: object = None
        connection.on(connection.EVENT_DISCONNECTION, self._disconnected)

    @classmethod
    async def open(cls, central: Device, board: RadioBoard) -> Nus:
        connection = await asyncio.wait_for(central.connect(board.address), WAIT)
        session = cls(connection)
        peer = Peer(connection)
        await asyncio.wait_for(peer.discover_services([UUID(NUS_SERVICE)]), WAIT)
        for service in peer.services:
            await asyncio.wait_for(service.discover_characteristics(), WAIT)
        session._rx = peer.get_characteristics_by_uuid(UUID(NUS_RX))[0]
        tx = peer.get_characteristics_by_uuid(UUID(NUS_TX))[0]
        await asyncio.wait_for(tx.subscribe(session._notified), WAIT)
        return session

    def _notified(self, value: bytes) -> None:
        data = bytes(value)
        self.packets.append(data)
        self._partial += data
        while b"\n" in self._partial:
            line, self._partial = self._partial.split(b"\n", 1)
            self.lines.put_nowait(line + b"\n")

    def _disconnected(self, reason: int) -> None:
        if not self.gone.done():
            self.gone.set_result(reason)

    @property
    def mtu(self) -> int:
        return int(self.connection.att_mtu)

    async def write(self, data: bytes) -> None:
        """Write `data` in pieces of the MTU - 3 (writes without response, in order)."""
        step = self.mtu - 3
        for i in range(0, len(data), step):
            await self._rx.write_value(data[i : i + step], with_response=False)  # type: ignore[attr-defined]

    async def next_line(self) -> bytes:
        return await asyncio.wait_for(self.lines.get(), WAIT)

    async def expect(self, match: Callable[[bytes], bool]) -> bytes:
        """The next line `match` accepts (the others before it are passed over)."""
        while True:
            line = await self.next_line()
            if match(line):
                return line

    async def request(self, line: bytes) -> bytes:
        """Send a line with an id (`#id ...`) and return the reply with that id."""
        ident = line.split(b" ", 1)[0] + b" "
        await self.write(line)
        return await self.expect(lambda reply: reply.startswith(ident))

    async def close(self) -> None:
        if not self.gone.done():
            await self.connection.disconnect()
            await asyncio.wait_for(asyncio.shield(self.gone), WAIT)


async def find(central: Device, match: Callable[[object], bool]) -> object:
    """The first advertisement (active scan) that `match` accepts."""
    found: asyncio.Future[object] = asyncio.get_running_loop().create_future()

    def seen(advertisement: object) -> None:
        if not found.done() and match(advertisement):
            found.set_result(advertisement)

    central.on(central.EVENT_ADVERTISEMENT, seen)
    await central.start_scanning(active=True, filter_duplicates=False)
    try:
        return await asyncio.wait_for(found, WAIT)
    finally:
        central.remove_listener(central.EVENT_ADVERTISEMENT, seen)
        await central.stop_scanning()


def same_address(a: Address, b: Address) -> bool:
    return bytes(a) == bytes(b) and a.address_type == b.address_type
