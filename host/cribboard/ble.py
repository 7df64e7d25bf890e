"""Bluetooth LE: boards found by their Nordic UART Service, and a transport over it, on bleak.

    boards = await scan()                          # advertised boards, strongest first
    board = await Board.open_ble("Cribboard-71A3")  # cribboard.api: name, address or None

The board is a peripheral with the Nordic UART Service (docs/protocol.md, section 10): requests
are written to the RX characteristic in pieces of at most MTU - 3 bytes (20 unless a larger MTU
was exchanged), replies and events arrive as notifications of the TX characteristic and are
joined by the protocol client, which reassembles lines. Writing "without response" when the
board offers it: the board reassembles lines whatever the pieces, and each write waits for the
one before it.

On Linux bleak talks to BlueZ over the D-Bus system bus; on macOS and Windows to the system's
own stack (addresses are then UUIDs on macOS). When no Bluetooth stack can be reached, the
functions here raise :class:`BluetoothUnavailable` with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from cribboard.errors import LinkError, NoBoardFound
from cribboard.transport import DataCallback, LostCallback, Transport
from cribboard.waiting import within
from cribcore.protocol import NUS_RX, NUS_SERVICE, NUS_TX

log = logging.getLogger(__name__)

SCAN_TIMEOUT = 5.0  # seconds to look for a board
SETTLE = 0.5  # after the first board is seen, how long to wait for others
CONNECT_TIMEOUT = 10.0
DEFAULT_CHUNK = 20  # ATT MTU 23 - 3
_ADDRESS = re.compile(
    r"([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}|[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}"
    r"-[0-9A-Fa-f]{12}"
)


class BluetoothUnavailable(LinkError):
    """No Bluetooth stack could be reached (no adapter, BlueZ not running, no D-Bus);
    `reason` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Bluetooth is not available: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class FoundBleBoard:
    """A board seen advertising the Nordic UART Service."""

    address: str
    name: str
    rssi: int | None
    device: Any = field(default=None, compare=False, repr=False)  # bleak's BLEDevice


def is_address(text: str) -> bool:
    """Whether `text` is a Bluetooth address (or a macOS device UUID) rather than a name."""
    return _ADDRESS.fullmatch(text) is not None


@contextlib.asynccontextmanager
async def _bluetooth_errors(what: str) -> AsyncIterator[None]:
    """bleak's and D-Bus's errors as this package's: BluetoothUnavailable or LinkError."""
    from bleak.exc import BleakBluetoothNotAvailableError, BleakDBusError, BleakError

    try:
        yield
    except BleakBluetoothNotAvailableError as err:
        raise BluetoothUnavailable(str(err) or "no Bluetooth adapter") from err
    except BleakDBusError as err:
        if err.dbus_error in (
            "org.freedesktop.DBus.Error.ServiceUnknown",
            "org.freedesktop.DBus.Error.NameHasNoOwner",
        ):
            raise BluetoothUnavailable("BlueZ (bluetoothd) is not running") from err
        raise LinkError(f"{what}: {err}") from err
    except BleakError as err:
        if "BlueZ" in str(err) and "requires" in str(err):
            raise BluetoothUnavailable(str(err)) from err
        raise LinkError(f"{what}: {err}") from err
    except (FileNotFoundError, ConnectionRefusedError) as err:
        raise BluetoothUnavailable(f"no D-Bus system bus: {err.strerror or err}") from err
    except OSError as err:
        raise LinkError(f"{what}: {err}") from err
    except EOFError as err:
        # bleak closes a client's own D-Bus connection when the device disconnects: a call
        # still waiting on it (a write the link lost) ends here, and is resent after the
        # reconnect like any write the link lost.
        raise LinkError(f"{what}: the device disconnected") from err
    except Exception as err:
        if type(err).__module__.startswith("dbus_fast"):  # AuthError, DBusError...
            raise BluetoothUnavailable(f"D-Bus: {err}") from err
        raise


def _scanner_args(adapter: str | None) -> dict[str, Any]:
    return {"bluez": {"adapter": adapter}} if adapter else {}


def _found(device: Any, adv: Any) -> FoundBleBoard:
    name = adv.local_name or device.name or device.address
    return FoundBleBoard(device.address, name, adv.rssi, device)


def _offers_service(adv: Any) -> bool:
    return NUS_SERVICE in (uuid.lower() for uuid in adv.service_uuids)


async def scan(
    timeout: float = SCAN_TIMEOUT, *, settle: float | None = None, adapter: str | None = None
) -> list[FoundBleBoard]:
    """Boards advertising the Nordic UART Service, strongest signal first. Scans `timeout`
    seconds, or with `settle` until `settle` seconds after the first board was seen."""
    from bleak import BleakScanner

    found: dict[str, FoundBleBoard] = {}
    first = asyncio.Event()

    def seen(device: Any, adv: Any) -> None:
        if _offers_service(adv):
            found[device.address] = _found(device, adv)
            first.set()

    async with _bluetooth_errors("Bluetooth scan"):
        async with BleakScanner(seen, service_uuids=[NUS_SERVICE], **_scanner_args(adapter)):
            if settle is None:
                await asyncio.sleep(timeout)
            else:
                with contextlib.suppress(asyncio.TimeoutError):
                    await within(first.wait(), timeout)
                    await asyncio.sleep(settle)
    return sorted(found.values(), key=lambda b: -(b.rssi if b.rssi is not None else -999))


async def find(
    target: str | None = None, timeout: float = SCAN_TIMEOUT, *, adapter: str | None = None
) -> FoundBleBoard:
    """The board named by `target` (its address, or its advertised name, case-insensitive), or
    the only board advertising when `target` is None. Raises NoBoardFound."""
    from bleak import BleakScanner

    if not target:
        boards = await scan(timeout, settle=SETTLE, adapter=adapter)
        if len(boards) == 1:
            return boards[0]
        if not boards:
            raise NoBoardFound("no board found over Bluetooth (is it on and in range?)")
        raise NoBoardFound(
            "several boards found over Bluetooth ("
            + ", ".join(b.name for b in boards)
            + "): choose one with --ble NAME"
        )
    wanted = target.lower()
    address = is_address(target)
    hit: list[FoundBleBoard] = []

    def match(device: Any, adv: Any) -> bool:
        if address:
            ok = bool(device.address.lower() == wanted)
        else:
            ok = _offers_service(adv) and wanted in (
                (adv.local_name or "").lower(),
                (device.name or "").lower(),
            )
        if ok:
            hit.append(_found(device, adv))
        return ok

    async with _bluetooth_errors("Bluetooth scan"):
        await BleakScanner.find_device_by_filter(match, timeout=timeout, **_scanner_args(adapter))
    if not hit:
        raise NoBoardFound(f"no board {target!r} found over Bluetooth within {timeout:g} s")
    return hit[0]


class BleTransport(Transport):
    """A board over Bluetooth LE (the Nordic UART Service), through bleak.

    Args:
        target: the board found by :func:`scan`/:func:`find`, or its address or name (found
            by scanning when the transport opens: each reconnect looks for it again).
        adapter: the Bluetooth adapter to use (``hci1``...; Linux), default the system's.
        scan_timeout: seconds to look for the board when opening.
        response: write with response (True) or without (False); default: without when the
            board offers it.
    """

    def __init__(
        self,
        target: FoundBleBoard | str,
        *,
        adapter: str | None = None,
        scan_timeout: float = SCAN_TIMEOUT,
        response: bool | None = None,
    ) -> None:
        self._target = target
        self._adapter = adapter
        self._scan_timeout = scan_timeout
        self._response = response
        address = target.address if isinstance(target, FoundBleBoard) else target
        self.name = f"ble:{address}"
        self._client: Any = None
        self._rx: Any = None
        self._chunk = DEFAULT_CHUNK
        self._with_response = True
        self._lock = asyncio.Lock()
        self._closing = False

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        """Connect (finding the board first when it was named). Sharing the connection with
        this user's other cribboard processes is a wrapper's (cribboard.sharing)."""
        self._closing = False
        await self._connect(on_data, on_lost)

    async def _connect(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        from bleak import BleakClient

        target = self._target
        if not isinstance(target, FoundBleBoard):
            target = await find(target, self._scan_timeout, adapter=self._adapter)
        self.name = f"ble:{target.address}"

        def gone(_client: Any) -> None:
            if not self._closing:
                on_lost(LinkError(f"{self.name}: the Bluetooth connection was lost"))

        def notified(_char: Any, data: bytearray) -> None:
            on_data(bytes(data))

        client = BleakClient(
            target.device if target.device is not None else target.address,
            disconnected_callback=gone,
            timeout=CONNECT_TIMEOUT,
            **_scanner_args(self._adapter),
        )
        try:
            async with _bluetooth_errors(f"cannot connect to {target.name}"):
                await client.connect()
                tx, rx = self._characteristics(client)
                await client.start_notify(tx, notified)
        except TimeoutError as err:
            await self._drop(client)
            raise LinkError(f"cannot connect to {target.name}: timed out") from err
        except BaseException:
            await self._drop(client)
            raise
        self._client = client
        self._rx = rx
        self._chunk = max(DEFAULT_CHUNK, int(rx.max_write_without_response_size))
        offers = "write-without-response" in rx.properties
        self._with_response = self._response if self._response is not None else not offers

    def _characteristics(self, client: Any) -> tuple[Any, Any]:
        service = client.services.get_service(NUS_SERVICE)
        if service is None:
            raise LinkError(f"{self.name} does not offer the Nordic UART Service")
        tx = rx = None
        for char in service.characteristics:  # by UUID, else by what it can do
            if char.uuid.lower() == NUS_TX or (tx is None and "notify" in char.properties):
                tx = char
            if char.uuid.lower() == NUS_RX or (
                rx is None and {"write", "write-without-response"} & set(char.properties)
            ):
                rx = char
        if tx is None or rx is None:
            raise LinkError(f"{self.name}: the UART service lacks its RX or TX characteristic")
        return tx, rx

    async def write(self, data: bytes) -> None:
        client = self._client
        if client is None or self._closing:
            raise LinkError(f"{self.name} is not open")
        async with self._lock:  # one request's pieces are never interleaved with another's
            for start in range(0, len(data), self._chunk):
                try:
                    async with _bluetooth_errors(f"write to {self.name} failed"):
                        await client.write_gatt_char(
                            self._rx,
                            data[start : start + self._chunk],
                            response=self._with_response,
                        )
                except TimeoutError as err:
                    raise LinkError(f"write to {self.name} timed out") from err

    async def close(self) -> None:
        self._closing = True
        client, self._client = self._client, None
        if client is not None:
            await self._drop(client)

    @staticmethod
    async def _drop(client: Any) -> None:
        with contextlib.suppress(Exception, asyncio.TimeoutError):
            await within(client.disconnect(), 5.0)
