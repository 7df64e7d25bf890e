"""Sharing one board's link among this user's cribboard processes, around any transport.

    transport = SharedTransport(portshare.port_key(url), SerialTransport(url))
    transport = serial_transport(url)      # the same, where the port can be shared

A board takes one host: two processes reading one serial port each get some of its lines, and a
board over Bluetooth takes one central. `SharedTransport` claims the link's key
(cribboard.portshare): the first process to claim it opens the plain transport it wraps and
serves the others on its socket (their checked lines to the board, everything the board says
to each of them); a later one rides on that socket and never opens the plain transport. The
plain transports (`SerialTransport`, `BleTransport`) know nothing of this: every way a program
builds its link (`Board.open`, `Board.open_ble`, discovery's probe, the bridge, a remote game)
wraps the plain one here, so every command and app shares the same way."""

from __future__ import annotations

import asyncio
import logging
import sys

from cribboard import portshare
from cribboard.errors import LinkError
from cribboard.serialport import BAUDRATE, open_problem
from cribboard.transport import (
    DataCallback,
    LostCallback,
    SerialTransport,
    Transport,
)

log = logging.getLogger(__name__)


class SharedTransport(Transport):
    """`plain`, shared under `key` (a port's real path, ``ble:ADDRESS``): owned by this process
    (`plain` opened here, the riders served) or ridden on the process that owns it (`plain`
    never opened). `alias` is a second name to find the link by (a Bluetooth board's name).

    Either way it behaves as `plain` would to its user: `on_data` gets what the board says,
    `on_lost` fires once when the link goes (a rider's too when its owner leaves: then with
    :class:`~cribboard.errors.LinkHandedOver`, and the next open may own it)."""

    def __init__(self, key: str, plain: Transport, *, alias: str = "") -> None:
        self.name = plain.name
        self._key = key
        self._plain = plain
        self._alias = alias
        self._owned: portshare.Owned[Transport] | None = None
        self._server: portshare.PortServer | None = None
        self._rider: portshare.RiderLink | None = None
        self._rider_writes: set[asyncio.Future[None]] = set()
        self._closing = False

    @property
    def owner(self) -> bool:
        """Whether this process owns the link (opened `plain`) rather than riding on another."""
        return self._owned is not None

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        self._closing = False
        plain = self._plain

        def told_riders(chunk: bytes) -> None:
            if self._server is not None:
                self._server.broadcast(chunk)
            on_data(chunk)

        async def open_plain() -> Transport:
            await plain.open(told_riders, on_lost)
            return plain

        try:
            claim = await portshare.claim_async(self._key, self.name, open_plain, self._alias)
            self.name = plain.name  # (a Bluetooth board found by its name: now its address)
            if isinstance(claim, portshare.Riding):
                self._rider = portshare.RiderLink(claim.connection, self.name)
                self._rider.start(on_data, on_lost)
                return
            self._owned = claim
            self._server = portshare.PortServer(claim.listener, self._write_for_rider)
            await self._server.start()
        except BaseException as err:
            await self.close()  # nothing left open, nothing left claimed
            if isinstance(err, OSError):  # the runtime directory, a lock, the socket
                raise LinkError(open_problem(self.name, err)) from err
            raise

    def _write_for_rider(self, line: bytes) -> None:
        """A checked line from a rider, to the board: one write, after what is queued (a
        transport never mixes one write's bytes with another's)."""
        if self._closing:
            return

        async def write() -> None:
            try:
                await self._plain.write(line)
            except LinkError as err:
                log.info("write for a rider failed: %s", err)

        task = asyncio.ensure_future(write())
        self._rider_writes.add(task)
        task.add_done_callback(self._rider_writes.discard)

    async def write(self, data: bytes) -> None:
        rider = self._rider
        if rider is not None and not self._closing:
            await rider.write(data)
            return
        if self._owned is None or self._closing:
            raise LinkError(f"{self.name} is not open")
        await self._plain.write(data)

    async def close(self) -> None:
        self._closing = True
        rider, self._rider = self._rider, None
        if rider is not None:
            rider.close()
        server, self._server = self._server, None
        if server is not None:
            server.stop_accepting()
        await self._plain.close()
        owned, self._owned = self._owned, None
        if owned is not None:
            # Free before the riders hear of it: the first of them to reconnect owns the link.
            portshare.release(owned)
        if server is not None:
            server.drop_all()


def serial_transport(url: str, baudrate: int = BAUDRATE) -> Transport:
    """The transport for a serial port or pyserial URL: shared when it names a local device
    (`portshare.shareable`), plain otherwise (``socket://``, ``loop://``)."""
    plain = SerialTransport(url, baudrate)
    if not portshare.shareable(url):
        return plain
    return SharedTransport(portshare.port_key(url), plain)


def ble_shared(plain: Transport, address: str, adapter: str | None, alias: str = "") -> Transport:
    """`plain`, a Bluetooth board's transport (`cribboard.ble.BleTransport`), shared under its
    address and adapter: another adapter is another central, a link of its own."""
    if sys.platform == "win32":
        return plain
    return SharedTransport(portshare.ble_key(address, adapter), plain, alias=alias)


def shared_board(target: str | None, adapter: str | None = None) -> portshare.SharedLink | None:
    """The Bluetooth board a process of this user is connected to now through `adapter`, by
    `target` (its name or address; None: the only one), or None: a connected board may not
    advertise, so it is looked for there before scanning."""
    if sys.platform == "win32":
        return None
    held = [
        link
        for link in portshare.shared_links()
        if link.key.startswith("ble:")
        and link.key == portshare.ble_key(portshare.ble_address(link.key), adapter)
    ]
    if target is not None:
        wanted = target.lower()
        held = [
            link
            for link in held
            if link.alias.lower() == wanted or portshare.ble_address(link.key).lower() == wanted
        ]
    return held[0] if len(held) == 1 else None
