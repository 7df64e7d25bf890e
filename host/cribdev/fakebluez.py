"""A fake BlueZ: virtual boards as Bluetooth LE devices for unmodified bleak, without radios.

bleak's Linux backend talks to BlueZ (``org.bluez``) over the D-Bus system bus, whose address it
takes from ``DBUS_SYSTEM_BUS_ADDRESS``. :class:`PrivateBus` runs a private ``dbus-daemon``
(Debian package ``dbus``) with a generated configuration; :class:`FakeBlueZ` owns ``org.bluez``
on it (written with dbus-fast, raw messages) and presents each virtual board it is given as a
device, bridged to the board's simulated radio through its side channel
(:mod:`cribboard.virtual.radio`): discovery reads the board's advertising data, ``Connect`` and
``WriteValue`` go to the firmware's BLE code, its notifications come back as
``PropertiesChanged`` on the characteristic's ``Value``. :func:`bluetoothctl_stub` makes the
``bluetoothctl --version`` bleak runs answer 5.66 (bleak refuses BlueZ older than 5.55).

    with fake_bluetooth() as bt:            # bus + stub + fake BlueZ; sets the environment
        with VirtualBoard() as board:
            bt.bluez.add_board(board.control)
            ...                             # bleak, `cribboard --ble`, Board.open_ble()

What it implements (what bleak 3.1 uses): ``ObjectManager.GetManagedObjects`` on ``/`` and the
``InterfacesAdded``/``InterfacesRemoved`` signals; ``Adapter1`` (``SetDiscoveryFilter``,
``StartDiscovery``, ``StopDiscovery``, ``RemoveDevice``; ``Address``, ``Powered``, ``Roles``,
``Discovering``...); ``Device1`` (``Connect``, ``Disconnect``; ``Address``, ``AddressType``,
``Alias``, ``Name``, ``Adapter``, ``UUIDs``, ``RSSI``, ``Connected``, ``ServicesResolved``...);
``GattService1`` and ``GattCharacteristic1`` (``ReadValue``, ``WriteValue``, ``StartNotify``,
``StopNotify``; ``UUID``, ``Service``, ``Flags``, ``Value``, ``Notifying``, ``MTU``);
``Properties.Get/GetAll/Set``. Devices appear only during discovery, through signals, as BlueZ
does; object paths follow BlueZ's ``/org/bluez/hci0/dev_XX_XX_XX_XX_XX_XX/serviceXXXX/charXXXX``;
UUIDs are lower case; the GATT objects exist before ``ServicesResolved`` turns true. Not
implemented: pairing, ``AcquireNotify``/``AcquireWrite`` (not offered: bleak uses
``StartNotify``), descriptors, passive scanning (advertisement monitors).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from cribboard.virtual.errors import VirtualBoardError

_log = logging.getLogger("cribdev.fakebluez")
T = TypeVar("T")

BLUEZ = "org.bluez"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"
ADAPTER = "org.bluez.Adapter1"
DEVICE = "org.bluez.Device1"
SERVICE = "org.bluez.GattService1"
CHARACTERISTIC = "org.bluez.GattCharacteristic1"
BLUEZ_VERSION = "5.66"
DEFAULT_ADAPTERS = ("00:1A:7D:DA:71:13",)
SECOND_ADAPTER = "00:1A:7D:DA:71:14"
DISCOVERY_PERIOD = 0.05  # seconds between looks at the boards' advertising while discovering
CONNECT_TIMEOUT = 3.0  # a board that does not advertise for this long: the connection fails

# GATT characteristic property bits (as MicroPython's bluetooth.FLAG_*) -> BlueZ flag names.
_FLAG_NAMES = (
    (0x0001, "broadcast"),
    (0x0002, "read"),
    (0x0004, "write-without-response"),
    (0x0008, "write"),
    (0x0010, "notify"),
    (0x0020, "indicate"),
    (0x0040, "authenticated-signed-writes"),
)

_DBUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
"""


class FakeBluetoothError(VirtualBoardError):
    """The private bus or the fake BlueZ could not be started."""


# --- the private bus and the bluetoothctl stub --------------------------------------------------


class PrivateBus:
    """A private ``dbus-daemon`` on a Unix socket in a temporary directory.

    Its :attr:`address` goes into ``DBUS_SYSTEM_BUS_ADDRESS`` for bleak. Needs the ``dbus-daemon``
    executable (Debian package ``dbus``; ``make dbus`` installs it)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self._given = Path(directory) if directory is not None else None
        self._directory: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self.address = ""

    def start(self) -> PrivateBus:
        daemon = shutil.which("dbus-daemon")
        if daemon is None:
            raise FakeBluetoothError(
                "dbus-daemon not found: install the Debian package `dbus` (make dbus)"
            )
        self._directory = self._given or Path(tempfile.mkdtemp(prefix="cribboard-dbus-"))
        config = self._directory / "bus.conf"
        config.write_text(
            _DBUS_CONFIG.format(socket=self._directory / "system_bus_socket"), encoding="utf-8"
        )
        self._proc = subprocess.Popen(
            [daemon, f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().decode().strip()
        if not line:
            error = self._proc.stderr.read().decode() if self._proc.stderr else ""
            self.stop()
            raise FakeBluetoothError(f"dbus-daemon did not start: {error.strip()}")
        self.address = line
        return self

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        if self._directory is not None and self._given is None:
            shutil.rmtree(self._directory, ignore_errors=True)
        self._directory = None

    def __enter__(self) -> PrivateBus:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def bluetoothctl_stub(directory: str | os.PathLike[str]) -> Path:
    """Write an executable ``bluetoothctl`` into `directory` that reports BlueZ 5.66; put the
    directory first on ``PATH`` (bleak runs ``bluetoothctl --version``)."""
    path = Path(directory) / "bluetoothctl"
    path.write_text(f'#!/bin/sh\necho "bluetoothctl: {BLUEZ_VERSION}"\n', encoding="utf-8")
    path.chmod(0o755)
    return path


# --- a board's radio, from the fake BlueZ's side --------------------------------------------------


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
            raise FakeBluetoothError(f"{self.control}: the board's side channel has no radio")
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
                raise _BlueZError("org.bluez.Error.NotReady", "the board is gone")
            try:
                # Replies come in order: first drop those owed to requests whose caller gave
                # up (a discovery loop cancelled mid-request), or this one would read theirs.
                while self._owed:
                    await asyncio.wait_for(self._reader.readline(), 5.0)
                    self._owed -= 1
                self._writer.write(line.encode() + b"\n")
                self._owed += 1
                reply = await asyncio.wait_for(self._reader.readline(), 5.0)
                self._owed -= 1
            except (TimeoutError, OSError) as err:
                raise _BlueZError("org.bluez.Error.Failed", f"radio: {err}") from err
            if not reply:
                raise _BlueZError("org.bluez.Error.NotReady", "the board is gone")
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
        if self._events is not None:
            self._events.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._events
        for writer in (self._writer, self._events_writer):
            if writer is not None:
                writer.close()
        self.closed = True


def parse_advertising(*payloads: bytes) -> tuple[str | None, list[str]]:
    """(name, service UUIDs) from advertising data and scan response (AD structures)."""
    name: str | None = None
    short: str | None = None
    uuids: list[str] = []
    for data in payloads:
        i = 0
        while i + 1 < len(data):
            length = data[i]
            if length == 0 or i + 1 + length > len(data):
                break
            kind, value = data[i + 1], data[i + 2 : i + 1 + length]
            if kind == 0x09:
                name = value.decode("utf-8", "replace")
            elif kind == 0x08:
                short = value.decode("utf-8", "replace")
            elif kind in (0x02, 0x03):
                for j in range(0, len(value) - 1, 2):
                    uuids.append(
                        f"0000{value[j + 1]:02x}{value[j]:02x}-0000-1000-8000-00805f9b34fb"
                    )
            elif kind in (0x06, 0x07):
                for j in range(0, len(value) - 15, 16):
                    h = value[j : j + 16][::-1].hex()
                    uuids.append(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
            i += 1 + length
    return name or short, uuids


# --- the D-Bus objects ----------------------------------------------------------------------------


class _BlueZError(Exception):
    def __init__(self, name: str, text: str) -> None:
        super().__init__(text)
        self.name = name


@dataclass
class _Object:
    path: str
    interfaces: dict[str, dict[str, Variant]]


@dataclass
class _Char:
    path: str
    value_handle: int
    flags: list[str]


@dataclass
class _Device:
    adapter: _Adapter
    radio: _Radio
    path: str
    address: str
    conn: int | None = None
    mtu: int = 23
    chars: dict[str, _Char] = field(default_factory=dict)
    services: list[str] = field(default_factory=list)
    busy: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass
class _Adapter:
    name: str
    path: str
    address: str
    discovering: bool = False
    uuid_filter: list[str] = field(default_factory=list)
    discovery: asyncio.Task[None] | None = None
    devices: dict[str, _Device] = field(default_factory=dict)  # by radio control path


def _device_path(adapter: _Adapter, address: str) -> str:
    return f"{adapter.path}/dev_{address.upper().replace(':', '_')}"


class FakeBlueZ:
    """``org.bluez`` on a private bus, presenting virtual boards as BLE devices.

    Runs its own event loop on a thread; the methods below may be called from any thread.

    Args:
        bus_address: the private bus (:attr:`PrivateBus.address`).
        adapters: addresses of the adapters ``hci0``, ``hci1``, ...: each is a central of its
            own, so a test can be two devices (the board tells centrals apart by address).
            With several, name the adapter in bleak (``bluez={"adapter": "hci1"}``): its
            default adapter is any of them.
        mtu: the ATT MTU a central asks for when it connects (23: no exchange, as a central
            that never exchanges MTUs; BlueZ itself asks for 517).
        rssi: the signal strength reported for every board.
    """

    def __init__(
        self,
        bus_address: str,
        adapters: tuple[str, ...] = DEFAULT_ADAPTERS,
        mtu: int = 23,
        rssi: int = -52,
    ) -> None:
        self.bus_address = bus_address
        self._adapter_addresses = adapters
        self.mtu = mtu
        self.rssi = rssi
        self._objects: dict[str, _Object] = {}
        self._adapters: dict[str, _Adapter] = {}
        self._radios: dict[str, _Radio] = {}
        self._bus: MessageBus | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- lifecycle (any thread) -------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> FakeBlueZ:
        self._thread = threading.Thread(target=self._run, name="fake-bluez", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise FakeBluetoothError("the fake BlueZ did not start")
        if self._failure is not None:
            raise FakeBluetoothError(
                f"the fake BlueZ did not start: {self._failure}"
            ) from self._failure
        return self

    def stop(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> FakeBlueZ:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        if self._loop is None:
            coro.close()
            raise FakeBluetoothError("the fake BlueZ is not running")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def add_board(self, control: str | os.PathLike[str]) -> None:
        """Present the virtual board with this side channel (``VirtualBoard.control``)."""
        self._call(self._add_board(os.fspath(control)))

    def remove_board(self, control: str | os.PathLike[str]) -> None:
        """Take the board away: its connections drop, its devices disappear."""
        self._call(self._remove_board(os.fspath(control)))

    def adapter_name(self, index: int = 0) -> str:
        return f"hci{index}"

    # -- the loop -------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as err:  # noqa: BLE001 - reported to start()
            self._failure = err
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        bus = await MessageBus(bus_address=self.bus_address).connect()
        self._bus = bus
        bus.add_message_handler(self._on_message)
        for i, address in enumerate(self._adapter_addresses):
            name = f"hci{i}"
            adapter = _Adapter(name, f"/org/bluez/{name}", address)
            self._adapters[adapter.path] = adapter
            self._add_object(
                adapter.path,
                {
                    ADAPTER: {
                        "Address": Variant("s", address),
                        "AddressType": Variant("s", "public"),
                        "Name": Variant("s", f"cribboard-test-{name}"),
                        "Alias": Variant("s", f"cribboard-test-{name}"),
                        "Class": Variant("u", 0),
                        "Powered": Variant("b", True),
                        "PowerState": Variant("s", "on"),
                        "Discoverable": Variant("b", False),
                        "Pairable": Variant("b", False),
                        "PairableTimeout": Variant("u", 0),
                        "DiscoverableTimeout": Variant("u", 180),
                        "Discovering": Variant("b", False),
                        "UUIDs": Variant("as", []),
                        "Modalias": Variant("s", "usb:v1D6Bp0246d0542"),
                        "Roles": Variant("as", ["central", "peripheral"]),
                        "ExperimentalFeatures": Variant("as", []),
                    }
                },
                announce=False,
            )
        reply = await bus.request_name(BLUEZ)
        _log.debug("fake BlueZ owns %s (%s)", BLUEZ, reply)
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            for control in list(self._radios):
                await self._remove_board(control)
            bus.disconnect()

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- boards ---------------------------------------------------------------------------------

    async def _add_board(self, control: str) -> None:
        if control in self._radios:
            return
        radio = _Radio(control, self._radio_event)
        await radio.open()
        self._radios[control] = radio

    async def _remove_board(self, control: str) -> None:
        radio = self._radios.pop(control, None)
        if radio is None:
            return
        for adapter in self._adapters.values():
            device = adapter.devices.pop(control, None)
            if device is not None:
                self._drop_connection(device)
                self._remove_object(device.path)
        await radio.close()

    def _radio_event(self, radio: _Radio, words: list[str]) -> None:
        if words[0] == "ble-notify" and len(words) == 4:
            conn, handle, data = int(words[1]), int(words[2]), bytes.fromhex(words[3])
            device = self._device_by_conn(radio, conn)
            if device is None:
                return
            for char in device.chars.values():
                if char.value_handle == handle:
                    props = self._objects[char.path].interfaces[CHARACTERISTIC]
                    props["Value"] = Variant("ay", data)
                    if props["Notifying"].value:
                        self._properties_changed(
                            char.path, CHARACTERISTIC, {"Value": Variant("ay", data)}
                        )
        elif words[0] == "ble-disconnected" and len(words) == 2:
            device = self._device_by_conn(radio, int(words[1]))
            if device is not None:
                self._drop_connection(device)
        elif words[0] == "ble-closed":
            for adapter in self._adapters.values():
                device = adapter.devices.get(radio.control)
                if device is not None:
                    self._drop_connection(device)

    def _device_by_conn(self, radio: _Radio, conn: int) -> _Device | None:
        for adapter in self._adapters.values():
            device = adapter.devices.get(radio.control)
            if device is not None and device.conn == conn:
                return device
        return None

    # -- the object tree and its signals -------------------------------------------------------

    def _add_object(
        self, path: str, interfaces: dict[str, dict[str, Variant]], announce: bool = True
    ) -> None:
        self._objects[path] = _Object(path, interfaces)
        if announce:
            self._signal("/", OBJECT_MANAGER, "InterfacesAdded", "oa{sa{sv}}", [path, interfaces])

    def _remove_object(self, path: str) -> None:
        obj = self._objects.pop(path, None)
        if obj is not None:
            self._signal(
                "/", OBJECT_MANAGER, "InterfacesRemoved", "oas", [path, list(obj.interfaces)]
            )

    def _set(self, path: str, interface: str, **values: Variant) -> None:
        self._objects[path].interfaces[interface].update(values)
        self._properties_changed(path, interface, values)

    def _properties_changed(self, path: str, interface: str, values: dict[str, Variant]) -> None:
        self._signal(path, PROPERTIES, "PropertiesChanged", "sa{sv}as", [interface, values, []])

    def _signal(
        self, path: str, interface: str, member: str, signature: str, body: list[Any]
    ) -> None:
        if self._bus is not None and self._bus.connected:
            self._bus.send(Message.new_signal(path, interface, member, signature, body))

    # -- method calls ---------------------------------------------------------------------------

    def _on_message(self, msg: Message) -> Message | bool | None:
        if msg.message_type != MessageType.METHOD_CALL:
            return None
        path, interface, member = msg.path or "", msg.interface or "", msg.member or ""
        obj = self._objects.get(path)
        if interface == OBJECT_MANAGER and member == "GetManagedObjects" and path == "/":
            objects = {p: o.interfaces for p, o in self._objects.items()}
            return Message.new_method_return(msg, "a{oa{sa{sv}}}", [objects])
        if interface == INTROSPECTABLE and member == "Introspect":
            return Message.new_method_return(msg, "s", [_introspection(obj)])
        if obj is None:
            return Message.new_error(
                msg, "org.freedesktop.DBus.Error.UnknownObject", f"no object {path}"
            )
        if interface == PROPERTIES:
            return self._properties_call(msg, obj)
        handler = self._methods.get((interface, member))
        if handler is None or interface not in obj.interfaces:
            return Message.new_error(
                msg,
                "org.freedesktop.DBus.Error.UnknownMethod",
                f"{interface}.{member} not implemented",
            )
        self._spawn(self._answer(msg, handler(self, msg, obj)))
        return True

    async def _answer(self, msg: Message, work: Awaitable[tuple[str, list[Any]] | None]) -> None:
        try:
            result = await work
            reply = Message.new_method_return(msg, *(result or ("", [])))
        except _BlueZError as err:
            reply = Message.new_error(msg, err.name, str(err))
        except Exception as err:  # noqa: BLE001 - a fake must answer, whatever went wrong
            _log.exception("fake BlueZ: %s.%s failed", msg.interface, msg.member)
            reply = Message.new_error(msg, "org.bluez.Error.Failed", str(err))
        if self._bus is not None and self._bus.connected:
            self._bus.send(reply)

    def _properties_call(self, msg: Message, obj: _Object) -> Message:
        member = msg.member
        interface = msg.body[0] if msg.body else ""
        props = obj.interfaces.get(interface)
        if props is None:
            return Message.new_error(
                msg, "org.freedesktop.DBus.Error.InvalidArgs", f"no interface {interface}"
            )
        if member == "GetAll":
            return Message.new_method_return(msg, "a{sv}", [props])
        if member == "Get" and len(msg.body) == 2:
            if msg.body[1] not in props:
                return Message.new_error(
                    msg, "org.freedesktop.DBus.Error.InvalidArgs", f"no property {msg.body[1]}"
                )
            return Message.new_method_return(msg, "v", [props[msg.body[1]]])
        if member == "Set" and len(msg.body) == 3:
            name, value = msg.body[1], msg.body[2]
            if name in ("Trusted", "Blocked", "Alias", "WakeAllowed") and interface == DEVICE:
                self._set(obj.path, interface, **{name: value})
                return Message.new_method_return(msg)
            return Message.new_error(
                msg, "org.freedesktop.DBus.Error.PropertyReadOnly", f"{name} is read-only here"
            )
        return Message.new_error(
            msg, "org.freedesktop.DBus.Error.UnknownMethod", f"{PROPERTIES}.{member}"
        )

    # Adapter1

    async def _set_discovery_filter(self, msg: Message, obj: _Object) -> None:
        adapter = self._adapters[obj.path]
        uuids = msg.body[0].get("UUIDs") if msg.body else None
        adapter.uuid_filter = [u.lower() for u in uuids.value] if uuids is not None else []

    async def _start_discovery(self, msg: Message, obj: _Object) -> None:
        adapter = self._adapters[obj.path]
        if adapter.discovering:
            raise _BlueZError("org.bluez.Error.InProgress", "Operation already in progress")
        adapter.discovering = True
        self._set(adapter.path, ADAPTER, Discovering=Variant("b", True))
        adapter.discovery = asyncio.create_task(self._discover(adapter))

    async def _stop_discovery(self, msg: Message, obj: _Object) -> None:
        adapter = self._adapters[obj.path]
        if not adapter.discovering:
            raise _BlueZError("org.bluez.Error.Failed", "No discovery started")
        adapter.discovering = False
        if adapter.discovery is not None:
            adapter.discovery.cancel()
            adapter.discovery = None
        self._set(adapter.path, ADAPTER, Discovering=Variant("b", False))

    async def _remove_device(self, msg: Message, obj: _Object) -> None:
        adapter = self._adapters[obj.path]
        for control, device in list(adapter.devices.items()):
            if device.path == msg.body[0]:
                self._drop_connection(device)
                del adapter.devices[control]
                self._remove_object(device.path)
                return
        raise _BlueZError("org.bluez.Error.DoesNotExist", "Does Not Exist")

    async def _discover(self, adapter: _Adapter) -> None:
        """While discovering: each board that advertises (and passes the filter) is a device
        that is announced (InterfacesAdded) or seen again (PropertiesChanged RSSI)."""
        while True:
            for radio in list(self._radios.values()):
                try:
                    info = await radio.info()
                except _BlueZError:
                    continue
                if info.adv is None:
                    continue
                name, uuids = parse_advertising(info.adv, info.resp)
                if adapter.uuid_filter and not set(adapter.uuid_filter) & set(uuids):
                    continue
                self._seen(adapter, radio, info, name, uuids)
            await asyncio.sleep(DISCOVERY_PERIOD)

    def _seen(
        self, adapter: _Adapter, radio: _Radio, info: _Info, name: str | None, uuids: list[str]
    ) -> None:
        device = adapter.devices.get(radio.control)
        if device is None or device.address != info.address:
            if device is not None:
                self._remove_object(device.path)
            device = _Device(adapter, radio, _device_path(adapter, info.address), info.address)
            adapter.devices[radio.control] = device
            props = {
                "Address": Variant("s", info.address),
                "AddressType": Variant("s", "random"),
                "Alias": Variant("s", name or info.address.replace(":", "-")),
                "Adapter": Variant("o", adapter.path),
                "UUIDs": Variant("as", uuids),
                "Paired": Variant("b", False),
                "Bonded": Variant("b", False),
                "Trusted": Variant("b", False),
                "Blocked": Variant("b", False),
                "LegacyPairing": Variant("b", False),
                "Connected": Variant("b", False),
                "ServicesResolved": Variant("b", False),
                "RSSI": Variant("n", self.rssi),
                "ManufacturerData": Variant("a{qv}", {}),
                "ServiceData": Variant("a{sv}", {}),
                "AdvertisingFlags": Variant("ay", info.adv[2:3] if info.adv else b""),
                "WakeAllowed": Variant("b", False),
            }
            if name is not None:
                props["Name"] = Variant("s", name)
            self._add_object(device.path, {DEVICE: props})
        else:
            self._set(device.path, DEVICE, RSSI=Variant("n", self.rssi))

    # Device1

    async def _connect(self, msg: Message, obj: _Object) -> None:
        device = self._device(obj.path)
        async with device.busy:
            if device.conn is not None:
                return  # already connected: BlueZ answers at once
            loop = asyncio.get_running_loop()
            deadline = loop.time() + CONNECT_TIMEOUT
            while True:
                words = await device.radio.request(f"ble-connect public {device.adapter.address}")
                if words[0] == "ok":
                    break
                if words[:2] != ["error", "not-advertising"] or loop.time() > deadline:
                    raise _BlueZError("org.bluez.Error.Failed", "Page Timeout")
                await asyncio.sleep(DISCOVERY_PERIOD)
            device.conn = int(words[1])
            device.mtu = 23
            if self.mtu > 23:
                reply = await device.radio.request(f"ble-mtu {device.conn} {self.mtu}")
                if reply[0] == "ok":
                    device.mtu = int(reply[1])
            self._set(device.path, DEVICE, Connected=Variant("b", True))
            info = await device.radio.info()
            self._add_gatt(device, info)
            self._set(device.path, DEVICE, ServicesResolved=Variant("b", True))

    async def _disconnect(self, msg: Message, obj: _Object) -> None:
        device = self._device(obj.path)
        async with device.busy:
            if device.conn is not None:
                with contextlib.suppress(_BlueZError):
                    await device.radio.request(f"ble-disconnect {device.conn}")
                self._drop_connection(device)

    def _device(self, path: str) -> _Device:
        for adapter in self._adapters.values():
            for device in adapter.devices.values():
                if device.path == path:
                    return device
        raise _BlueZError("org.bluez.Error.DoesNotExist", "Does Not Exist")

    def _add_gatt(self, device: _Device, info: _Info) -> None:
        service_path = ""
        for entry in info.gatt:
            if entry[0] == "S" and len(entry) == 3:
                service_path = f"{device.path}/service{int(entry[2]):04x}"
                device.services.append(service_path)
                self._add_object(
                    service_path,
                    {
                        SERVICE: {
                            "UUID": Variant("s", entry[1]),
                            "Device": Variant("o", device.path),
                            "Primary": Variant("b", True),
                            "Includes": Variant("ao", []),
                        }
                    },
                )
            elif entry[0] == "C" and len(entry) == 4 and service_path:
                value = int(entry[3])
                flags = [name for bit, name in _FLAG_NAMES if int(entry[2]) & bit]
                path = f"{service_path}/char{value - 1:04x}"
                device.chars[path] = _Char(path, value, flags)
                self._add_object(
                    path,
                    {
                        CHARACTERISTIC: {
                            "UUID": Variant("s", entry[1]),
                            "Service": Variant("o", service_path),
                            "Value": Variant("ay", b""),
                            "Notifying": Variant("b", False),
                            "Flags": Variant("as", flags),
                            "MTU": Variant("q", device.mtu),
                        }
                    },
                )

    def _drop_connection(self, device: _Device) -> None:
        """The connection is gone (either side): GATT objects go, Connected turns false."""
        if device.conn is None:
            return
        device.conn = None
        for path in reversed(list(device.chars)):
            self._remove_object(path)
        for path in reversed(device.services):
            self._remove_object(path)
        device.chars.clear()
        device.services.clear()
        if device.path in self._objects:
            self._set(device.path, DEVICE, ServicesResolved=Variant("b", False))
            self._set(device.path, DEVICE, Connected=Variant("b", False))

    # GattCharacteristic1

    def _char(self, path: str) -> tuple[_Device, _Char]:
        for adapter in self._adapters.values():
            for device in adapter.devices.values():
                if path in device.chars and device.conn is not None:
                    return device, device.chars[path]
        raise _BlueZError("org.bluez.Error.Failed", "Not connected")

    async def _read_value(self, msg: Message, obj: _Object) -> tuple[str, list[Any]]:
        _, char = self._char(obj.path)
        if "read" not in char.flags:
            raise _BlueZError("org.bluez.Error.NotPermitted", "Read not permitted")
        return "ay", [obj.interfaces[CHARACTERISTIC]["Value"].value]

    async def _write_value(self, msg: Message, obj: _Object) -> None:
        device, char = self._char(obj.path)
        data = bytes(msg.body[0])
        options = msg.body[1] if len(msg.body) > 1 else {}
        kind = options["type"].value if "type" in options else "request"
        if kind == "command":
            if "write-without-response" not in char.flags:
                raise _BlueZError("org.bluez.Error.NotSupported", "Operation is not supported")
            if len(data) > device.mtu - 3:
                raise _BlueZError("org.bluez.Error.InvalidArguments", "Invalid Length")
        elif "write" not in char.flags:
            raise _BlueZError("org.bluez.Error.NotPermitted", "Write not permitted")
        words = await device.radio.request(
            f"ble-write {device.conn} {char.value_handle} {data.hex()}"
        )
        if words[0] != "ok":
            raise _BlueZError("org.bluez.Error.Failed", " ".join(words[2:]) or "write failed")

    async def _start_notify(self, msg: Message, obj: _Object) -> None:
        _, char = self._char(obj.path)
        if "notify" not in char.flags and "indicate" not in char.flags:
            raise _BlueZError("org.bluez.Error.NotSupported", "Operation is not supported")
        self._set(obj.path, CHARACTERISTIC, Notifying=Variant("b", True))

    async def _stop_notify(self, msg: Message, obj: _Object) -> None:
        self._char(obj.path)
        self._set(obj.path, CHARACTERISTIC, Notifying=Variant("b", False))

    _methods: dict[tuple[str, str], Callable[[FakeBlueZ, Message, _Object], Awaitable[Any]]] = {
        (ADAPTER, "SetDiscoveryFilter"): _set_discovery_filter,
        (ADAPTER, "StartDiscovery"): _start_discovery,
        (ADAPTER, "StopDiscovery"): _stop_discovery,
        (ADAPTER, "RemoveDevice"): _remove_device,
        (DEVICE, "Connect"): _connect,
        (DEVICE, "Disconnect"): _disconnect,
        (CHARACTERISTIC, "ReadValue"): _read_value,
        (CHARACTERISTIC, "WriteValue"): _write_value,
        (CHARACTERISTIC, "StartNotify"): _start_notify,
        (CHARACTERISTIC, "StopNotify"): _stop_notify,
    }


def _introspection(obj: _Object | None) -> str:
    interfaces = "".join(f'<interface name="{name}"/>' for name in (obj.interfaces if obj else {}))
    return (
        '<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" '
        '"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">'
        f"<node>{interfaces}</node>"
    )


# --- everything at once ------------------------------------------------------------------------


@dataclass
class FakeBluetooth:
    """A running private bus, fake BlueZ and bluetoothctl stub: what :func:`fake_bluetooth`
    yields. `environ` holds the variables a process needs to reach it through bleak."""

    bus: PrivateBus
    bluez: FakeBlueZ
    environ: dict[str, str]


@contextlib.contextmanager
def fake_bluetooth(
    *, mtu: int = 23, adapters: tuple[str, ...] = DEFAULT_ADAPTERS, set_environ: bool = True
) -> Iterator[FakeBluetooth]:
    """A private bus with the fake BlueZ on it and the bluetoothctl stub. With `set_environ`,
    ``DBUS_SYSTEM_BUS_ADDRESS`` and ``PATH`` of this process point at them until the end."""
    directory = Path(tempfile.mkdtemp(prefix="cribboard-bt-"))
    saved = {name: os.environ.get(name) for name in ("DBUS_SYSTEM_BUS_ADDRESS", "PATH")}
    try:
        bluetoothctl_stub(directory)
        with PrivateBus() as bus:
            environ = {
                "DBUS_SYSTEM_BUS_ADDRESS": bus.address,
                "PATH": f"{directory}{os.pathsep}{os.environ.get('PATH', '')}",
            }
            if set_environ:
                os.environ.update(environ)
            with FakeBlueZ(bus.address, adapters, mtu=mtu) as bluez:
                yield FakeBluetooth(bus, bluez, environ)
    finally:
        if set_environ:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        shutil.rmtree(directory, ignore_errors=True)
