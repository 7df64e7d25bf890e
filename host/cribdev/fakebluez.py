"""A BlueZ front for a real host stack: ``org.bluez`` on a private D-Bus, driving a Bumble central.

bleak's Linux backend and Chromium's Web Bluetooth talk to BlueZ (``org.bluez``) over the D-Bus
system bus, whose address they take from ``DBUS_SYSTEM_BUS_ADDRESS``. :class:`PrivateBus` runs a
private ``dbus-daemon`` (Debian package ``dbus``) with a generated configuration; :class:`FakeBlueZ`
owns ``org.bluez`` on it (dbus-fast, raw messages) and translates each call to Bumble's host API
on a central (a Bumble device, host stack and controller, on a ``LocalLink``:
:mod:`cribdev.bumbleradio`, with its corrections of Bumble's controller). Nothing of the central's GATT, ATT or link layer is written
here: ``StartDiscovery`` starts Bumble's active scanning and each advertising report it delivers
announces or refreshes a device; ``Connect`` is a Bumble LE connection, then (with `mtu`) an ATT
MTU exchange and Bumble's service, characteristic and descriptor discovery, whose results become
``GattService1``/``GattCharacteristic1`` (flags from the real properties) and
``GattDescriptor1`` objects (the CCCD Chromium needs); ``WriteValue`` is an ATT write (request or
command), ``ReadValue`` an ATT read, ``StartNotify`` a subscription (the CCCD written) whose
notifications come back as ``PropertiesChanged`` on ``Value``, ``Disconnect`` a real disconnect.
A disconnection from the other side (the board killed, a power cut) reaches bleak as BlueZ reports
it: the GATT objects go (``InterfacesRemoved``), ``ServicesResolved`` and ``Connected`` turn false.

Peripherals on the same link: the unchanged firmware on MicroPython's real `bluetooth` module,
on btstack or NimBLE (:meth:`FakeBlueZ.start_board`), or any Bumble device a caller puts on
:attr:`FakeBlueZ.link` through :meth:`FakeBlueZ.call`.

    with fake_bluetooth() as bt:            # bus + stub + front; sets the environment
        board = bt.bluez.start_board("nimble")
        ...                                 # bleak, `cribboard --ble`, Board.open_ble()

:func:`bluetoothctl_stub` makes the ``bluetoothctl --version`` bleak runs answer 5.66 (bleak
refuses BlueZ older than 5.55).

What the front implements (what bleak 3.1 and Chromium use): ``ObjectManager.GetManagedObjects``
on ``/`` and the ``InterfacesAdded``/``InterfacesRemoved`` signals; ``Adapter1``
(``SetDiscoveryFilter`` by UUIDs, ``StartDiscovery``, ``StopDiscovery``, ``RemoveDevice``);
``Device1`` (``Connect``, ``Disconnect``); ``GattCharacteristic1`` and ``GattDescriptor1``
(``ReadValue``, ``WriteValue``; ``StartNotify``, ``StopNotify``); ``Properties.Get/GetAll/Set``.
Object paths follow BlueZ's (``/org/bluez/hci0/dev_XX_XX_XX_XX_XX_XX/serviceXXXX/charXXXX/
descXXXX``, by attribute handle); UUIDs are lower case; as BlueZ does, the GAP and GATT services
(claimed by BlueZ itself) are not exported, and the GATT objects exist before
``ServicesResolved`` turns true. Not done, unlike BlueZ: pairing and bonding, the GATT cache,
``AcquireNotify``/``AcquireWrite`` (not offered: bleak and Chromium then use ``StartNotify``
and ``WriteValue``), long writes, passive scanning, removing a device that has not been seen
for ``TemporaryTimeout``.

A virtual board's simulated radio (firmware/sim/bluetooth.py, :mod:`cribboard.virtual.radio`)
is not on this link: everything bleak and Chromium reach runs on a real stack. What no tier here
shows: a radio (range, interference, a real controller's timing), BlueZ's own code, and a
phone's stack.
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

from bumble import hci
from bumble.core import UUID, BaseBumbleError
from bumble.device import Connection, Device, Peer
from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from cribboard.virtual.errors import VirtualBoardError

from .bumbleradio import RadioBoard, VirtualRadio

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
DESCRIPTOR = "org.bluez.GattDescriptor1"
BLUEZ_VERSION = "5.66"
CONNECT_TIMEOUT = 3.0  # a board that does not advertise for this long: the connection fails
CLAIMED_SERVICES = ("00001800", "00001801")  # GAP and GATT: BlueZ keeps them to itself

# GATT characteristic property bits -> BlueZ flag names.
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
    """The private bus or the BlueZ front could not be started."""


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


def parse_advertising(*payloads: bytes) -> tuple[str | None, list[str]]:
    """(name, service UUIDs) from advertising data and scan response (AD structures)."""
    complete, short, uuids = _parse_ad(*payloads)
    return complete or short, uuids


def _parse_ad(*payloads: bytes) -> tuple[str | None, str | None, list[str]]:
    """(complete name, shortened name, service UUIDs) from AD structures."""
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
    return name, short, uuids


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
class _Attr:
    """A characteristic or descriptor object and the Bumble proxy it stands for."""

    path: str
    proxy: Any  # bumble.gatt_client.CharacteristicProxy or DescriptorProxy
    flags: list[str]
    interface: str


@dataclass
class _Device:
    adapter: _Adapter
    path: str
    address: hci.Address
    connection: Connection | None = None
    peer: Peer | None = None
    attrs: dict[str, _Attr] = field(default_factory=dict)  # by object path, in handle order
    services: list[str] = field(default_factory=list)
    busy: asyncio.Lock = field(default_factory=asyncio.Lock)
    gone: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class _Adapter:
    name: str
    path: str
    address: str
    central: Device
    discovering: bool = False
    uuid_filter: list[str] = field(default_factory=list)
    drop_next: bool = False  # fault injection: the link drops as the next notification comes
    devices: dict[str, _Device] = field(default_factory=dict)  # by address
    heard: dict[str, tuple[str | None, str | None, list[str]]] = field(default_factory=dict)


def _device_path(adapter: _Adapter, address: str) -> str:
    return f"{adapter.path}/dev_{address.upper().replace(':', '_')}"


def uuid_string(uuid: UUID) -> str:
    """A Bumble UUID in BlueZ's form: 128-bit, lower case, with dashes."""
    h = uuid.to_bytes(force_128=True)[::-1].hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _address_text(address: hci.Address) -> str:
    return address.to_string(False).upper()


class FakeBlueZ:
    """``org.bluez`` on a private bus, each adapter a Bumble central on one virtual radio link.

    Runs its own event loop on a thread (the link, the centrals and any peripheral on the link
    live there); the methods below may be called from any thread.

    Args:
        bus_address: the private bus (:attr:`PrivateBus.address`).
        adapters: how many adapters (``hci0``, ``hci1``, ...): each a Bumble central of its
            own with a random static address, so a test can be two phones (the board tells centrals apart by address). With
            several, name the adapter in bleak (``bluez={"adapter": "hci1"}``): its default
            adapter is any of them.
        mtu: the ATT MTU a central asks for after connecting (23: no exchange, as a central
            that never exchanges MTUs; BlueZ itself asks for 517).
    """

    def __init__(
        self,
        bus_address: str,
        adapters: int = 1,
        mtu: int = 23,
    ) -> None:
        self.bus_address = bus_address
        self._adapter_count = adapters
        self.mtu = mtu
        self.radio = VirtualRadio()
        self.link = self.radio.link
        self._objects: dict[str, _Object] = {}
        self._adapters: dict[str, _Adapter] = {}
        self._bus: MessageBus | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- lifecycle (any thread) -------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> FakeBlueZ:
        self._thread = threading.Thread(target=self._run, name="bluez-front", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise FakeBluetoothError("the BlueZ front did not start")
        if self._failure is not None:
            raise FakeBluetoothError(
                f"the BlueZ front did not start: {self._failure}"
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

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        """Run `coro` on the front's loop (where :attr:`link` lives) and return its result."""
        if self._loop is None:
            coro.close()
            raise FakeBluetoothError("the BlueZ front is not running")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start_board(
        self, stack: str, state_dir: str | os.PathLike[str] | None = None
    ) -> RadioBoard:
        """Start a board on a real stack (``btstack`` or ``nimble``: the unchanged firmware on
        MicroPython's own `bluetooth` module, :mod:`cribdev.bumbleradio`) on the link."""
        return self.call(self.radio.start_board(stack, state_dir), timeout=30.0)

    def stop_board(self, board: RadioBoard) -> None:
        self.call(board.stop(), timeout=30.0)

    def power_cut(self, board: RadioBoard) -> None:
        """Cut a real-stack board's power and give it back; returns at once (as
        ``VirtualBoard.reset`` does): the board boots again on the front's loop."""
        if self._loop is None:
            raise FakeBluetoothError("the BlueZ front is not running")
        asyncio.run_coroutine_threadsafe(board.power_cut(), self._loop)

    def lose_link_at_next_notification(self, index: int = 0) -> None:
        """Fault injection for tests: when the next notification reaches adapter `index`'s
        central, its controller loses every link (the radio's ``vanish``: the board hears a
        supervision timeout) and that notification never reaches D-Bus, as when a phone goes
        out of range with a reply in the air."""

        async def arm() -> None:
            self._adapters[f"/org/bluez/hci{index}"].drop_next = True

        self.call(arm())

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
        await self.radio.__aenter__()
        for i in range(self._adapter_count):
            name = f"hci{i}"
            central = await self.radio.add_central(name)
            address = _address_text(central.random_address)
            adapter = _Adapter(name, f"/org/bluez/{name}", address, central)
            central.on("advertisement", lambda adv, a=adapter: self._advertised(a, adv))
            self._adapters[adapter.path] = adapter
            self._add_object(
                adapter.path,
                {
                    ADAPTER: {
                        "Address": Variant("s", address),
                        "AddressType": Variant("s", "random"),
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
        _log.debug("the BlueZ front owns %s (%s)", BLUEZ, reply)
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await self.radio.close()
            bus.disconnect()

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

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
        adapter.heard.clear()
        await adapter.central.start_scanning(active=True, filter_duplicates=False)
        self._set(adapter.path, ADAPTER, Discovering=Variant("b", True))

    async def _stop_discovery(self, msg: Message, obj: _Object) -> None:
        adapter = self._adapters[obj.path]
        if not adapter.discovering:
            raise _BlueZError("org.bluez.Error.Failed", "No discovery started")
        adapter.discovering = False
        await adapter.central.stop_scanning()
        self._set(adapter.path, ADAPTER, Discovering=Variant("b", False))

    async def _remove_device(self, msg: Message, obj: _Object) -> None:
        adapter = self._adapters[obj.path]
        for key, device in list(adapter.devices.items()):
            if device.path == msg.body[0]:
                await self._disconnect_device(device)
                del adapter.devices[key]
                self._remove_object(device.path)
                return
        raise _BlueZError("org.bluez.Error.DoesNotExist", "Does Not Exist")

    def _advertised(self, adapter: _Adapter, adv: Any) -> None:
        """An advertising report from Bumble's scanner: the device is announced
        (InterfacesAdded) or seen again (PropertiesChanged), as BlueZ does while discovering.
        What an advertiser said before (the name in its scan response) is kept, as BlueZ does."""
        if not adapter.discovering or not adv.is_connectable and not adv.is_scan_response:
            return
        text = _address_text(adv.address)
        complete, short, uuids = _parse_ad(bytes(adv.data))  # with its scan response, if any
        old_complete, old_short, old_uuids = adapter.heard.get(text, (None, None, []))
        complete, short = complete or old_complete, short or old_short
        uuids = old_uuids + [u for u in uuids if u not in old_uuids]
        adapter.heard[text] = (complete, short, uuids)
        name = complete or short  # as BlueZ: a complete name is never replaced by a short one
        if adapter.uuid_filter and not set(adapter.uuid_filter) & set(uuids):
            return
        device = adapter.devices.get(text)
        if device is None:
            device = _Device(adapter, _device_path(adapter, text), adv.address)
            adapter.devices[text] = device
            props = {
                "Address": Variant("s", text),
                "AddressType": Variant("s", "public" if adv.address.is_public else "random"),
                "Alias": Variant("s", name or text.replace(":", "-")),
                "Adapter": Variant("o", adapter.path),
                "UUIDs": Variant("as", uuids),
                "Paired": Variant("b", False),
                "Bonded": Variant("b", False),
                "Trusted": Variant("b", False),
                "Blocked": Variant("b", False),
                "LegacyPairing": Variant("b", False),
                "Connected": Variant("b", False),
                "ServicesResolved": Variant("b", False),
                "RSSI": Variant("n", adv.rssi),
                "ManufacturerData": Variant("a{qv}", {}),
                "ServiceData": Variant("a{sv}", {}),
                "WakeAllowed": Variant("b", False),
            }
            if name is not None:
                props["Name"] = Variant("s", name)
            self._add_object(device.path, {DEVICE: props})
            return
        changed = {"RSSI": Variant("n", adv.rssi)}
        props = self._objects[device.path].interfaces[DEVICE]
        if name is not None and props.get("Name", Variant("s", "")).value != name:
            changed["Name"] = changed["Alias"] = Variant("s", name)
        if props["UUIDs"].value != uuids:
            changed["UUIDs"] = Variant("as", uuids)
        self._set(device.path, DEVICE, **changed)

    # Device1

    async def _connect(self, msg: Message, obj: _Object) -> None:
        device = self._device(obj.path)
        async with device.busy:
            if device.connection is not None:
                return  # already connected: BlueZ answers at once
            central = device.adapter.central
            try:
                connection = await central.connect(device.address, timeout=CONNECT_TIMEOUT)
            except (TimeoutError, BaseBumbleError, hci.HCI_Error) as err:
                raise _BlueZError("org.bluez.Error.Failed", "le-connection-abort-by-local") from err
            device.connection, device.peer = connection, Peer(connection)
            device.gone = asyncio.Event()
            connection.on(
                "disconnection", lambda _reason: self._drop_connection(device, connection)
            )
            connection.on("connection_att_mtu_update", lambda: self._mtu_changed(device))
            self._set(device.path, DEVICE, Connected=Variant("b", True))
            try:
                if self.mtu > 23:
                    await device.peer.request_mtu(self.mtu)
                await self._resolve_services(device)
            except (TimeoutError, BaseBumbleError, hci.HCI_Error, asyncio.CancelledError) as err:
                if device.connection is connection:
                    with contextlib.suppress(BaseBumbleError, hci.HCI_Error):
                        await connection.disconnect()
                raise _BlueZError("org.bluez.Error.Failed", f"service discovery: {err}") from err
            if device.connection is not connection:
                raise _BlueZError("org.bluez.Error.Failed", "Disconnected early")
            self._set(device.path, DEVICE, ServicesResolved=Variant("b", True))

    async def _resolve_services(self, device: _Device) -> None:
        """Bumble's discovery of the peer's services, characteristics and descriptors, exported
        as BlueZ exports them (GAP and GATT left out)."""
        assert device.peer is not None and device.connection is not None
        peer, mtu = device.peer, device.connection.att_mtu
        for service in await peer.discover_services():
            uuid = uuid_string(service.uuid)
            if uuid[:8] in CLAIMED_SERVICES:
                continue
            characteristics = await service.discover_characteristics()
            for characteristic in characteristics:
                await characteristic.discover_descriptors()
            service_path = f"{device.path}/service{service.handle:04x}"
            device.services.append(service_path)
            self._add_object(
                service_path,
                {
                    SERVICE: {
                        "UUID": Variant("s", uuid),
                        "Device": Variant("o", device.path),
                        "Primary": Variant("b", True),
                        "Includes": Variant("ao", []),
                    }
                },
            )
            for characteristic in characteristics:
                flags = [name for bit, name in _FLAG_NAMES if characteristic.properties & bit]
                # BlueZ names a characteristic by its declaration's handle, one before its value
                path = f"{service_path}/char{characteristic.handle - 1:04x}"
                device.attrs[path] = _Attr(path, characteristic, flags, CHARACTERISTIC)
                self._add_object(
                    path,
                    {
                        CHARACTERISTIC: {
                            "UUID": Variant("s", uuid_string(characteristic.uuid)),
                            "Service": Variant("o", service_path),
                            "Value": Variant("ay", b""),
                            "Notifying": Variant("b", False),
                            "Flags": Variant("as", flags),
                            "MTU": Variant("q", mtu),
                        }
                    },
                )
                for descriptor in characteristic.descriptors:
                    desc_path = f"{path}/desc{descriptor.handle:04x}"
                    device.attrs[desc_path] = _Attr(desc_path, descriptor, [], DESCRIPTOR)
                    self._add_object(
                        desc_path,
                        {
                            DESCRIPTOR: {
                                "UUID": Variant("s", uuid_string(descriptor.type)),
                                "Characteristic": Variant("o", path),
                                "Value": Variant("ay", b""),
                            }
                        },
                    )

    def _mtu_changed(self, device: _Device) -> None:
        if device.connection is None:
            return
        mtu = Variant("q", device.connection.att_mtu)
        for path, attr in device.attrs.items():
            if attr.interface == CHARACTERISTIC and path in self._objects:
                self._set(path, CHARACTERISTIC, MTU=mtu)

    async def _disconnect(self, msg: Message, obj: _Object) -> None:
        await self._disconnect_device(self._device(obj.path))

    async def _disconnect_device(self, device: _Device) -> None:
        connection = device.connection
        if connection is None:
            return
        with contextlib.suppress(BaseBumbleError, hci.HCI_Error):
            await connection.disconnect()
        await device.gone.wait()  # the disconnection event: the objects are gone

    def _device(self, path: str) -> _Device:
        for adapter in self._adapters.values():
            for device in adapter.devices.values():
                if device.path == path:
                    return device
        raise _BlueZError("org.bluez.Error.DoesNotExist", "Does Not Exist")

    def _drop_connection(self, device: _Device, connection: Connection) -> None:
        """The link is gone (either side ended it): the GATT objects go, then
        ServicesResolved and Connected turn false, as BlueZ reports it."""
        if device.connection is not connection:
            return
        device.connection, device.peer = None, None
        for path in reversed(list(device.attrs)):
            self._remove_object(path)
        for path in reversed(device.services):
            self._remove_object(path)
        device.attrs.clear()
        device.services.clear()
        if device.path in self._objects:
            self._set(device.path, DEVICE, ServicesResolved=Variant("b", False))
            self._set(device.path, DEVICE, Connected=Variant("b", False))
        device.gone.set()

    # GattCharacteristic1 and GattDescriptor1

    def _attr(self, path: str) -> tuple[_Device, _Attr]:
        for adapter in self._adapters.values():
            for device in adapter.devices.values():
                if path in device.attrs and device.peer is not None:
                    return device, device.attrs[path]
        raise _BlueZError("org.bluez.Error.Failed", "Not connected")

    async def _read_value(self, msg: Message, obj: _Object) -> tuple[str, list[Any]]:
        device, attr = self._attr(obj.path)
        if attr.interface == CHARACTERISTIC and "read" not in attr.flags:
            raise _BlueZError("org.bluez.Error.NotPermitted", "Read not permitted")
        assert device.peer is not None
        try:
            value = bytes(await device.peer.read_value(attr.proxy))
        except (BaseBumbleError, hci.HCI_Error) as err:
            raise _BlueZError("org.bluez.Error.Failed", str(err)) from err
        self._set(obj.path, attr.interface, Value=Variant("ay", value))
        return "ay", [value]

    async def _write_value(self, msg: Message, obj: _Object) -> None:
        device, attr = self._attr(obj.path)
        assert device.peer is not None and device.connection is not None
        data = bytes(msg.body[0])
        options = msg.body[1] if len(msg.body) > 1 else {}
        kind = options["type"].value if "type" in options else ""
        if attr.interface == DESCRIPTOR:
            kind = "request"
        elif not kind:  # as BlueZ: a request where the characteristic takes one
            kind = "request" if "write" in attr.flags else "command"
        if kind == "command":
            if "write-without-response" not in attr.flags:
                raise _BlueZError("org.bluez.Error.NotSupported", "Operation is not supported")
            if len(data) > device.connection.att_mtu - 3:
                raise _BlueZError("org.bluez.Error.InvalidArguments", "Invalid Length")
        elif attr.interface == CHARACTERISTIC and "write" not in attr.flags:
            raise _BlueZError("org.bluez.Error.NotPermitted", "Write not permitted")
        try:
            await device.peer.write_value(attr.proxy, data, with_response=kind != "command")
        except (BaseBumbleError, hci.HCI_Error) as err:
            raise _BlueZError("org.bluez.Error.Failed", str(err)) from err

    async def _start_notify(self, msg: Message, obj: _Object) -> None:
        device, attr = self._attr(obj.path)
        if attr.interface != CHARACTERISTIC:
            raise _BlueZError("org.bluez.Error.NotSupported", "Operation is not supported")
        if "notify" not in attr.flags and "indicate" not in attr.flags:
            raise _BlueZError("org.bluez.Error.NotSupported", "Operation is not supported")
        if self._objects[obj.path].interfaces[CHARACTERISTIC]["Notifying"].value:
            return
        assert device.peer is not None

        def notified(value: bytes) -> None:
            adapter = device.adapter
            if adapter.drop_next:  # the link is lost with this notification in the air
                adapter.drop_next = False
                self.radio.vanish(adapter.central)
                return
            if obj.path in self._objects:
                self._set(obj.path, CHARACTERISTIC, Value=Variant("ay", bytes(value)))

        try:
            await device.peer.subscribe(attr.proxy, notified, prefer_notify=True)
        except (BaseBumbleError, hci.HCI_Error) as err:
            raise _BlueZError("org.bluez.Error.Failed", str(err)) from err
        self._set(obj.path, CHARACTERISTIC, Notifying=Variant("b", True))

    async def _stop_notify(self, msg: Message, obj: _Object) -> None:
        device, attr = self._attr(obj.path)
        assert device.peer is not None
        if not self._objects[obj.path].interfaces[CHARACTERISTIC]["Notifying"].value:
            raise _BlueZError("org.bluez.Error.Failed", "No notify session started")
        try:
            await device.peer.unsubscribe(attr.proxy)
        except (BaseBumbleError, hci.HCI_Error) as err:
            raise _BlueZError("org.bluez.Error.Failed", str(err)) from err
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
        (DESCRIPTOR, "ReadValue"): _read_value,
        (DESCRIPTOR, "WriteValue"): _write_value,
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
    *, mtu: int = 23, adapters: int = 1, set_environ: bool = True
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
