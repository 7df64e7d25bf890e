"""A virtual board's simulated radio as a Bumble peripheral on the virtual radio link.

The virtual board's firmware runs against ``firmware/sim/bluetooth.py`` and reaches the launcher's
radio (:mod:`cribboard.virtual.radio`) through its side channel. :class:`SimPeripheral` puts
that board on a Bumble ``LocalLink`` as a peripheral, so a real host stack (a Bumble central,
driven through the BlueZ front in :mod:`cribdev.fakebluez`) meets it over real
advertising, a real LE connection, ATT and GATT: Bumble's own peripheral stack advertises what the
board advertises (read from ``ble-info``), serves a GATT table built from the board's, and carries
the central's writes to the board (``ble-write``) and the board's notifications to the central
(Bumble notifications; sent whether or not the central subscribed, as ``gatts_notify`` does on
MicroPython's stacks). A connection, an MTU exchange and a disconnection on the link become
``ble-connect``, ``ble-mtu`` and ``ble-disconnect``; the board's own disconnections
(``ble-disconnected``, a restart) and its side channel closing (the board killed) end the link
connection from the peripheral's side.

This is the stand-in's edge: the board's end of the radio below MicroPython's ``bluetooth``
module is simulated (the real stacks, btstack and NimBLE, run the firmware in the blestack tier);
the central's end is not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bumble import hci
from bumble.core import BaseBumbleError
from bumble.device import Connection, Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport.common import AsyncPipeSink

from cribboard.virtual.errors import VirtualBoardError
from cribboard.waiting import within

from .bumbleradio import CorrectedController

_log = logging.getLogger("cribdev.simperipheral")
ADVERTISING_INTERVAL = 100.0  # ms, as the firmware asks (Bumble's own default is a second)
POLL = 0.05  # seconds between looks at what the board advertises (the side channel pushes none)


class RadioError(VirtualBoardError):
    """A request to the board's radio failed, or the board is gone."""


@dataclass
class _Info:
    address: str
    adv: bytes | None
    resp: bytes
    mtu: int
    gatt: list[tuple[str, ...]]


class _Radio:
    """Requests to one virtual board's radio, and its pushed events (notifications,
    disconnections), over two connections to its side channel."""

    def __init__(self, control: str, on_event: Callable[[_Radio, list[str]], None]) -> None:
        self.control = control
        self._on_event = on_event
        self._lock = asyncio.Lock()
        self._owed = 0  # replies still to come for requests already written
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._events: asyncio.Task[None] | None = None
        self._events_writer: asyncio.StreamWriter | None = None
        self.closed = False

    async def open(self) -> None:
        self._reader, self._writer = await asyncio.open_unix_connection(self.control)
        reader, self._events_writer = await asyncio.open_unix_connection(self.control)
        self._events_writer.write(b"ble-subscribe\n")
        if await reader.readline() != b"ok\n":
            raise RadioError(f"{self.control}: the board's side channel has no radio")
        self._events = asyncio.create_task(self._read_events(reader))

    async def _read_events(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                words = line.decode("ascii", "replace").split()
                if words and words[0].startswith("ble-"):
                    self._on_event(self, words)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self.closed = True
            self._on_event(self, ["ble-closed"])

    async def request(self, line: str) -> list[str]:
        async with self._lock:
            if self._writer is None or self._reader is None or self.closed:
                raise RadioError("the board is gone")
            try:
                # Replies come in order: first drop those owed to requests whose caller gave
                # up (a discovery loop cancelled mid-request), or this one would read theirs.
                while self._owed:
                    await within(self._reader.readline(), 5.0)
                    self._owed -= 1
                self._writer.write(line.encode() + b"\n")
                self._owed += 1
                reply = await within(self._reader.readline(), 5.0)
                self._owed -= 1
            except (TimeoutError, OSError) as err:
                raise RadioError(f"radio: {err}") from err
            if not reply:
                raise RadioError("the board is gone")
            return reply.decode("ascii", "replace").split()

    async def info(self) -> _Info:
        words = await self.request("ble-info")
        fields = dict(word.partition("=")[::2] for word in words[1:])
        gatt = [
            tuple(entry.split(":"))
            for entry in fields.get("gatt", "-").split(",")
            if entry and entry != "-"
        ]
        adv = fields.get("adv", "-")
        resp = fields.get("resp", "-")
        return _Info(
            fields.get("addr", ""),
            None if adv == "-" else bytes.fromhex(adv),
            b"" if resp == "-" else bytes.fromhex(resp),
            int(fields.get("mtu", "23")),
            gatt,
        )

    async def close(self) -> None:
        self.closed = True
        for writer in (self._writer, self._events_writer):
            if writer is not None:
                writer.close()  # a request waiting for its reply reads the end at once
        if self._events is not None:
            self._events.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._events


def _gatt_table(info: _Info) -> list[tuple[str, list[tuple[str, int, int]]]]:
    """The board's GATT table: (service UUID, [(characteristic UUID, flags, value handle)])."""
    services: list[tuple[str, list[tuple[str, int, int]]]] = []
    for entry in info.gatt:
        if entry[0] == "S" and len(entry) == 3:
            services.append((entry[1], []))
        elif entry[0] == "C" and len(entry) == 4 and services:
            services[-1][1].append((entry[1], int(entry[2]), int(entry[3])))
    return services


class SimPeripheral:
    """One virtual board (its side channel `control`) as a Bumble peripheral on `link`.

    Lives on the loop that runs the link; :meth:`start` once the board runs, :meth:`stop` at
    the end."""

    def __init__(self, link: LocalLink, control: str) -> None:
        self.link = link
        self.control = control
        self.radio = _Radio(control, self._board_event)
        self.device: Device | None = None
        self._controller: CorrectedController | None = None
        self._chars: dict[int, Characteristic[Any]] = {}  # by the board's value handle
        self._conns: dict[int, Connection] = {}  # link connections by the board's conn id
        self._ids: dict[int, int] = {}  # the board's conn id by link connection handle
        self._advertised: tuple[bytes, bytes] | None = None
        self._work: asyncio.Queue[Callable[[], Awaitable[None]]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False

    async def start(self, timeout: float = 10.0) -> None:
        """Open the side channel, wait for the board's GATT table, put the board on the link."""
        await self.radio.open()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        info = await self.radio.info()
        while not info.gatt:  # the firmware registers its services at start-up
            if loop.time() > deadline:
                raise RadioError(f"{self.control}: the board registered no GATT services")
            await asyncio.sleep(POLL)
            info = await self.radio.info()
        self._controller = CorrectedController("sim-board", link=self.link)
        # The board advertises with legacy commands, as MicroPython's stacks do (and as the
        # radio's scan-response correction expects)
        self._controller.le_features &= ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        device = Device(
            name="sim-board",
            address=hci.Address(info.address),
            host=Host(self._controller, AsyncPipeSink(self._controller)),
        )
        for uuid, characteristics in _gatt_table(info):
            chars = []
            for char_uuid, flags, handle in characteristics:
                char: Characteristic[Any] = Characteristic(
                    char_uuid,
                    Characteristic.Properties(flags & 0xFF),
                    Characteristic.READABLE | Characteristic.WRITEABLE,
                    CharacteristicValue(
                        read=lambda _conn: b"",
                        write=lambda conn, value, h=handle: self._written(conn, h, value),
                    ),
                )
                self._chars[handle] = char
                chars.append(char)
            device.add_service(Service(uuid, chars))
        device.gatt_server.max_mtu = info.mtu
        device.on("connection", self._connected)
        await device.power_on()
        self.device = device
        self._tasks = [
            asyncio.create_task(self._run_work()),
            asyncio.create_task(self._mirror_advertising()),
        ]

    async def stop(self) -> None:
        # The side channel first: a request still waiting for the board ends at once.
        self._stopping = True
        await self.radio.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self.device is not None:
            with contextlib.suppress(BaseBumbleError, hci.HCI_Error):
                await self._stop_advertising()
                for conn in list(self.device.connections.values()):
                    await conn.disconnect()
            await self.device.power_off()
            if self._controller is not None:
                self.link.remove_controller(self._controller)

    # -- the board's side ------------------------------------------------------------------------

    async def _mirror_advertising(self) -> None:
        """While the board advertises, Bumble advertises the same data; when it stops, so does
        Bumble (the simulated radio pushes nothing about advertising: looked at every POLL)."""
        assert self.device is not None
        while not self.radio.closed and not self._stopping:
            try:
                info = await self.radio.info()
            except RadioError:
                break
            self.device.gatt_server.max_mtu = info.mtu
            wanted = (info.adv, info.resp) if info.adv is not None else None
            if wanted != self._advertised:
                self._work.put_nowait(lambda w=wanted: self._advertise(w))  # type: ignore[misc]
            await asyncio.sleep(POLL)

    async def _advertise(self, wanted: tuple[bytes, bytes] | None) -> None:
        assert self.device is not None
        if wanted == self._advertised:
            return
        await self._stop_advertising()
        if wanted is not None:
            await self.device.start_advertising(
                advertising_data=wanted[0],
                scan_response_data=wanted[1],
                advertising_interval_min=ADVERTISING_INTERVAL,
                advertising_interval_max=ADVERTISING_INTERVAL,
            )
        self._advertised = wanted

    async def _stop_advertising(self) -> None:
        if self.device is not None and self.device.is_advertising:
            await self.device.stop_advertising()
        self._advertised = None

    def _board_event(self, _radio: _Radio, words: list[str]) -> None:
        if words[0] == "ble-notify" and len(words) == 4:
            conn_id, handle, data = int(words[1]), int(words[2]), bytes.fromhex(words[3])
            self._work.put_nowait(lambda: self._notify(conn_id, handle, data))
        elif words[0] == "ble-disconnected" and len(words) == 2:
            conn_id = int(words[1])
            self._work.put_nowait(lambda: self._board_disconnected(conn_id))
        elif words[0] == "ble-closed":  # the board is gone (killed, or stopped)
            self._work.put_nowait(self._board_gone)

    async def _notify(self, conn_id: int, handle: int, data: bytes) -> None:
        conn, char = self._conns.get(conn_id), self._chars.get(handle)
        if conn is not None and char is not None and self.device is not None:
            await self.device.notify_subscriber(conn, char, data, force=True)

    async def _board_disconnected(self, conn_id: int) -> None:
        conn = self._conns.pop(conn_id, None)
        if conn is not None:
            self._ids.pop(conn.handle, None)
            with contextlib.suppress(BaseBumbleError, hci.HCI_Error):
                await conn.disconnect()

    async def _board_gone(self) -> None:
        for conn_id in list(self._conns):
            await self._board_disconnected(conn_id)
        await self._stop_advertising()

    # -- the link's side --------------------------------------------------------------------------

    def _connected(self, conn: Connection) -> None:
        conn.on("disconnection", lambda _reason: self._work.put_nowait(lambda: self._gone(conn)))
        conn.on(
            "connection_att_mtu_update",
            lambda: self._work.put_nowait(lambda: self._mtu(conn)),
        )
        self._work.put_nowait(lambda: self._connect(conn))

    async def _connect(self, conn: Connection) -> None:
        self._advertised = None  # a controller stops advertising on a connection
        kind = "public" if conn.peer_address.is_public else "random"
        address = conn.peer_address.to_string(False).upper()
        words = await self.radio.request(f"ble-connect {kind} {address}")
        if words[0] != "ok":  # the board stopped advertising meanwhile: it never saw this one
            with contextlib.suppress(BaseBumbleError, hci.HCI_Error):
                await conn.disconnect()
            return
        self._conns[int(words[1])] = conn
        self._ids[conn.handle] = int(words[1])

    async def _mtu(self, conn: Connection) -> None:
        conn_id = self._ids.get(conn.handle)
        if conn_id is not None:
            await self.radio.request(f"ble-mtu {conn_id} {conn.att_mtu}")

    async def _gone(self, conn: Connection) -> None:
        conn_id = self._ids.pop(conn.handle, None)
        if conn_id is not None and self._conns.pop(conn_id, None) is not None:
            with contextlib.suppress(RadioError):
                await self.radio.request(f"ble-disconnect {conn_id}")

    def _written(self, conn: Connection, handle: int, value: bytes) -> None:
        self._work.put_nowait(lambda: self._write(conn, handle, bytes(value)))

    async def _write(self, conn: Connection, handle: int, data: bytes) -> None:
        conn_id = self._ids.get(conn.handle)
        if conn_id is not None:
            await self.radio.request(f"ble-write {conn_id} {handle} {data.hex()}")

    async def _run_work(self) -> None:
        """Everything that reaches the board or the link, one at a time, in order."""
        while not self._stopping:  # (Bumble may turn a cancellation into an error of its own)
            job = await self._work.get()
            try:
                await job()
            except (RadioError, BaseBumbleError, hci.HCI_Error) as err:
                _log.debug("%s: %s", self.control, err)
