"""A virtual Bluetooth LE radio for boards running MicroPython's real `bluetooth` module.

The board is the unchanged firmware on a unix MicroPython built with a real stack (btstack or
NimBLE, ``firmware/ports/unix/bin``; see ``firmware/ports/unix/build.py``), launched by
:class:`~cribboard.virtual.VirtualBoard` with ``ble=False`` (the simulated ``bluetooth`` stays
off the path, so the firmware finds MicroPython's own). Its HCI UART (``MICROPYBTUART``) is a pty
on which one of Google Bumble's virtual controllers answers. Centrals are Bumble devices: Bumble's
real host stack (HCI, L2CAP, ATT, GATT) on their own controllers, all on one local link. Nothing of
the central's or the board's GATT, ATT or link layer is simulated here; what this module adds is
the corrections of Bumble's controller below, a paced link, and power cuts.

Use::

    async with VirtualRadio() as radio:
        board = await radio.start_board(stack="nimble", state_dir=tmp_path)
        central = await radio.add_central()          # a powered-on bumble.device.Device
        connection = await central.connect(board.address)
        ...
        await board.power_cut()                      # the interpreter killed, started again

One radio per test (or per module): each has its own link, so tests run side by side.

:meth:`VirtualRadio.start_board` returns a :class:`RadioBoard`: ``address`` (a
``bumble.hci.Address``, the board's public address), ``name`` (``Cribboard-XXXX``, as the board
advertises it), ``stack``, ``virtual`` (the VirtualBoard: ``port`` is its USB console, ``control``
its side channel for :class:`~cribboard.virtual.VirtualControl`, the buttons), ``controller``,
``power_cut()`` and ``stop()``. ``pace_ms`` paces the board's controller: it takes ACL packets
from the board into ``acl_buffers`` buffers and sends one on every ``pace_ms`` milliseconds, as a
radio's connection events do; without it Bumble sends each at once. ``controller.stall(True)``
makes a paced link take nothing more until ``stall(False)``; ``controller.wait_queued(n)``
returns once it holds ``n`` packets (with ``n`` its buffers, full). A connection that ends takes
its packets still waiting with it, as a controller flushes them.

The corrections, each following the Bluetooth Core specification and a real controller's
behaviour. Tested: 1, 2 and 3 in tests/ble/test_bumble_radio.py (1 and 2 with the correction off too:
`test_bumble_still_...` fails once Bumble answers by itself); 4 in tests/ble/test_ble_real.py (found by
name; and with it off, the name never seen); 5 there by the power cut (the central hears 0x08);
6 there by every connect (without it about one in twenty connects hung). On each Bumble upgrade,
rerun both with each correction switched off (``CorrectedController.corrections``,
``CorrectedLink.correct``) and drop the ones Bumble has fixed:

1. A command the controller does not know is answered with Command Complete, status Unknown HCI
   Command (Core v5.3, Vol 4, Part E, 4.5). Bumble 0.0.236 parses btstack's vendor command 0xFC09
   as an Intel command, raises IndexError and answers nothing, so ``ble.active(True)`` times out.
2. LE Encrypt (Vol 4, Part E, 7.8.22) is answered with AES-128 of the key and plaintext. Bumble
   0.0.236 has no handler and answers nothing, which stalls btstack's command queue.
3. LE data goes out from the connection's own address. Bumble's LocalLink sends it from the
   sender's random address; with a public address (btstack and NimBLE use the controller's, as a
   Pico W does) the receiver finds no connection and GATT hangs.
4. An active scan reports the advertiser's scan response data as the scan response. Bumble
   0.0.236 repeats the advertising data, so the full name a board puts there is never seen.
5. HCI Reset (and a power cut) ends the controller's connections: the peer's host hears of it as
   a supervision timeout (0x08), and advertising and scanning stop (Vol 4, Part E, 7.3.2). Bumble
   0.0.236 leaves them running, so a rebooted board still "had" its old connections.

6. An advertising event is one moment: a central's CONNECT_IND answers the ADV_IND of the same
   event (within 150 us on a radio), while the advertiser still advertises. Bumble 0.0.236
   passes each PDU through the event loop, so a host that stops or restarts advertising in
   between (as the firmware does after every connect) leaves the central with a connection the
   board never had, and GATT hangs; seen here about once in twenty connects. The PDUs are
   delivered at once instead.

Not corrected: Bumble's advertising timer reads the interval (0.625 ms units) as milliseconds,
so a 100 ms interval becomes 160 ms; connecting waits for the next advertisement.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from bumble import core, hci
from bumble.controller import Controller
from bumble.crypto.builtin import e as aes_e
from bumble.device import Device
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport.common import AsyncPipeSink, Transport
from bumble.transport.pty import open_pty_transport

from cribboard.paths import firmware_dir
from cribboard.virtual.launcher import DEFAULT_HEAP, VirtualBoard, flush_tty

STACKS = ("btstack", "nimble")
"""The Bluetooth stacks the unix interpreters are built with."""

NAME_PREFIX = "Cribboard-"
_EVENT_PACKET = 0x04
_COMMAND_PACKET = 0x01
_COMMAND_COMPLETE = 0x0E
_LE_ENCRYPT = 0x2017
_CONNECTION_TIMEOUT = 0x08
_ACTIVE_SCAN = 1


def interpreter(stack: str) -> Path:
    """The unix MicroPython built with `stack` (btstack or nimble) that the project ships."""
    if stack not in STACKS:
        raise ValueError(f"unknown stack {stack!r}: one of {', '.join(STACKS)}")
    return firmware_dir() / "ports" / "unix" / "bin" / f"micropython-bt-{stack}"


class CorrectedLink(LocalLink):
    """Bumble's local link, sending LE data from the connection's own address (correction 3)
    and an advertising event's PDUs at once (correction 6)."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.correct = True

    def send_advertising_pdu(self, sender_controller: Controller, packet: Any) -> None:
        if not self.correct:
            super().send_advertising_pdu(sender_controller, packet)
            return
        for controller in list(self.controllers):
            if controller is not sender_controller:
                controller.on_ll_advertising_pdu(packet)

    def send_acl_data(
        self,
        sender_controller: Controller,
        destination_address: hci.Address,
        transport: Any,
        data: bytes,
    ) -> None:
        connection = sender_controller.le_connections.get(destination_address)
        if not self.correct or connection is None or transport != core.PhysicalTransport.LE:
            super().send_acl_data(sender_controller, destination_address, transport, data)
            return
        receiver = self.find_le_controller(destination_address)
        # (as Bumble does, but from the connection's address)
        if receiver is not None:
            source = connection.self_address
            asyncio.get_running_loop().call_soon(receiver.on_link_acl_data, source, transport, data)


class CorrectedController(Controller):
    """Bumble's controller with corrections 1, 2, 4 and 5 (see the module), and pacing.

    Args (besides Controller's): pace_ms: send one ACL packet of the host's every pace_ms
    milliseconds (None: at once); acl_buffers: the LE ACL buffers it reports to its host.
    """

    CORRECTIONS = {"unknown_command", "le_encrypt", "scan_response", "reset_ends_links"}

    def __init__(
        self,
        name: str,
        *,
        link: LocalLink,
        public_address: hci.Address | str | None = None,
        host_source: Any = None,
        host_sink: Any = None,
        pace_ms: float | None = None,
        acl_buffers: int = 8,
    ) -> None:
        super().__init__(
            name,
            host_source=host_source,
            host_sink=host_sink,
            link=link,
            public_address=public_address,
        )
        self.corrections = set(self.CORRECTIONS)
        self.pace_ms = pace_ms
        if pace_ms is not None:
            self.total_num_le_acl_data_packets = acl_buffers
        self._paced: collections.deque[hci.HCI_AclDataPacket] = collections.deque()
        self._pacer: asyncio.TimerHandle | None = None
        self._stalled = False
        self._advertising_waiters: list[asyncio.Future[None]] = []
        self._queued_waiters: list[tuple[int, asyncio.Future[None]]] = []

    # --- what the host made of its advertising, for tests to wait on ---------------------------

    @property
    def advertising(self) -> bool:
        """Whether the controller advertises now (legacy advertising, as both stacks use)."""
        return bool(self.le_legacy_advertiser.enabled)

    async def wait_advertising(self, on: bool) -> None:
        """Return once the controller advertises (on) or does not (off)."""
        while self.advertising != on:
            waiter = asyncio.get_running_loop().create_future()
            self._advertising_waiters.append(waiter)
            await waiter

    def _advertising_changed(self) -> None:
        waiters, self._advertising_waiters = self._advertising_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def on_hci_le_set_advertising_enable_command(self, command: Any) -> Any:
        result = super().on_hci_le_set_advertising_enable_command(command)
        self._advertising_changed()
        return result

    def on_le_connect_ind(self, packet: Any) -> None:
        super().on_le_connect_ind(packet)  # (a connection stops the advertiser)
        self._advertising_changed()

    def on_le_disconnected(self, connection: Any, reason: int) -> None:
        # A paced link's data still waiting goes with its connection, as a controller flushes
        # it (Vol 4, Part E, 4.3): never sent on a new connection given the same handle.
        self._paced = collections.deque(
            packet for packet in self._paced if packet.connection_handle != connection.handle
        )
        super().on_le_disconnected(connection, reason)

    # --- 1 and 2: commands Bumble does not answer ----------------------------------------------

    def on_packet(self, packet: bytes) -> None:
        if packet and packet[0] == _COMMAND_PACKET and len(packet) >= 4:
            opcode = packet[1] | packet[2] << 8
            if opcode == _LE_ENCRYPT and "le_encrypt" in self.corrections:
                self._le_encrypt(packet[4:])
                return
            if "unknown_command" in self.corrections:
                try:
                    parsed = hci.HCI_Packet.from_bytes(packet)
                except Exception:  # noqa: BLE001 (Bumble's parser fails on vendor commands)
                    self._complete(opcode, bytes([hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR]))
                    return
                if not self._handles(parsed):
                    self._complete(opcode, bytes([hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR]))
                    return
                self.on_hci_packet(parsed)
                return
        super().on_packet(packet)

    def _handles(self, command: hci.HCI_Packet) -> bool:
        """Whether Bumble answers this command (a handler of its own, or a sync command the
        generic handler answers)."""
        if not isinstance(command, hci.HCI_Command):
            return True
        if hasattr(self, f"on_{command.name.lower()}"):
            return True
        return isinstance(command, hci.HCI_SyncCommand)

    def _le_encrypt(self, parameters: bytes) -> None:
        if len(parameters) != 32:
            self._complete(_LE_ENCRYPT, bytes([hci.HCI_INVALID_HCI_COMMAND_PARAMETERS_ERROR]))
            return
        # Both values travel least significant octet first, as bumble.crypto.e takes them.
        self._complete(_LE_ENCRYPT, b"\x00" + aes_e(parameters[:16], parameters[16:]))

    def _complete(self, opcode: int, parameters: bytes) -> None:
        body = bytes([1, opcode & 0xFF, opcode >> 8]) + parameters
        event = bytes([_EVENT_PACKET, _COMMAND_COMPLETE, len(body)]) + body
        if self.host:
            asyncio.get_running_loop().call_soon(self.host.on_packet, event)

    # --- 4: the scan response ------------------------------------------------------------------

    def on_advertising_pdu(self, pdu: Any) -> None:
        from bumble import ll

        if "scan_response" not in self.corrections or not isinstance(pdu, ll.AdvInd):
            super().on_advertising_pdu(pdu)
            return
        if self.le_scan_enable:
            reports = [(hci.HCI_LE_Advertising_Report_Event.EventType.ADV_IND, pdu.data)]
            if self.le_scan_type == _ACTIVE_SCAN:
                response = self._scan_response_of(pdu.advertiser_address)
                reports.append((hci.HCI_LE_Advertising_Report_Event.EventType.SCAN_RSP, response))
            for kind, data in reports:
                self._report(pdu.advertiser_address, kind, data)
        pending = self.pending_le_connection
        if pending and pending.peer_address == pdu.advertiser_address:
            self.create_le_connection(pdu.advertiser_address)

    def on_hci_le_set_extended_scan_parameters_command(self, command: Any) -> Any:
        # Bumble keeps no scan type from the extended command: an active scan looked passive.
        if "scan_response" in self.corrections and command.scan_types:
            self.le_scan_type = command.scan_types[0]
        return super().on_hci_le_set_extended_scan_parameters_command(command)

    def _scan_response_of(self, address: hci.Address) -> bytes:
        for controller in self.link.controllers:
            advertiser = controller.le_legacy_advertiser
            if advertiser.enabled and advertiser.address == address:
                return bytes(advertiser.scan_response_data)
        return b""

    def _report(self, address: hci.Address, kind: int, data: bytes) -> None:
        if self.le_features & hci.LeFeatureMask.LE_EXTENDED_ADVERTISING:
            # A legacy ADV_IND and its scan response, as an extended report gives them.
            ext = hci.HCI_LE_Extended_Advertising_Report_Event.EventType
            event_type = (
                ext.LEGACY_ADVERTISING_PDU_USED
                | ext.CONNECTABLE_ADVERTISING
                | ext.SCANNABLE_ADVERTISING
            )
            if kind == hci.HCI_LE_Advertising_Report_Event.EventType.SCAN_RSP:
                event_type |= ext.SCAN_RESPONSE
            report = hci.HCI_LE_Extended_Advertising_Report_Event.Report(
                event_type=event_type,
                address_type=address.address_type,
                address=address,
                primary_phy=hci.Phy.LE_1M,
                secondary_phy=hci.Phy.LE_1M,
                advertising_sid=0,
                tx_power=0,
                rssi=-50,
                periodic_advertising_interval=0,
                direct_address_type=0,
                direct_address=hci.Address.ANY,
                data=data,
            )
            self.send_hci_packet(hci.HCI_LE_Extended_Advertising_Report_Event([report]))
        else:
            legacy = hci.HCI_LE_Advertising_Report_Event.Report(
                event_type=kind,
                address_type=address.address_type,
                address=address,
                data=data,
                rssi=-50,
            )
            self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([legacy]))

    # --- 5: reset and power cuts end the links -------------------------------------------------

    def on_hci_reset_command(self, command: Any) -> Any:
        if "reset_ends_links" in self.corrections:
            self.drop_links()
        return super().on_hci_reset_command(command)

    def drop_links(self) -> None:
        """What losing power does to a controller: its peers see their connections time out,
        it stops advertising and scanning, and ACL data still waiting is gone."""
        for connection in list(self.le_connections.values()):
            peer = self.link.find_le_controller(connection.peer_address)
            if peer is not None:
                theirs = peer.le_connections.get(connection.self_address)
                if theirs is not None:
                    peer.on_le_disconnected(theirs, _CONNECTION_TIMEOUT)
            # Its own host hears the same (a host that lost power hears nothing, harmlessly).
            self.on_le_disconnected(connection, _CONNECTION_TIMEOUT)
        self.le_legacy_advertiser.stop()
        self.le_scan_enable = False
        self._paced.clear()
        self._advertising_changed()

    # --- pacing --------------------------------------------------------------------------------

    def on_hci_acl_data_packet(self, packet: hci.HCI_AclDataPacket) -> None:
        if self.pace_ms is None:
            super().on_hci_acl_data_packet(packet)
            return
        self._paced.append(packet)
        self._schedule()
        waiting, self._queued_waiters = self._queued_waiters, []
        for count, waiter in waiting:
            if len(self._paced) < count:
                self._queued_waiters.append((count, waiter))
            elif not waiter.done():
                waiter.set_result(None)

    @property
    def queued(self) -> int:
        """ACL packets of its host's that a paced link has taken and not sent yet."""
        return len(self._paced)

    async def wait_queued(self, count: int) -> None:
        """Return once a paced link holds `count` packets of its host's (its buffers full when
        `count` is its `acl_buffers`: the host has to keep what it sends next)."""
        if len(self._paced) < count:
            waiter = asyncio.get_running_loop().create_future()
            self._queued_waiters.append((count, waiter))
            await waiter

    def stall(self, on: bool) -> None:
        """A paced link that takes nothing more from the host (its buffers fill and stay full),
        as a link whose peer stopped answering does until the supervision timeout; or that
        carries on."""
        self._stalled = on
        self._schedule()

    def _schedule(self) -> None:
        if self._pacer is None and self._paced and not self._stalled:
            assert self.pace_ms is not None
            self._pacer = asyncio.get_running_loop().call_later(self.pace_ms / 1000, self._pace)

    def _pace(self) -> None:
        self._pacer = None
        if self._paced and not self._stalled:
            super().on_hci_acl_data_packet(self._paced.popleft())
        self._schedule()


def board_address(rng: random.Random) -> hci.Address:
    """A public address for a board's controller (unique on one radio)."""
    octets = [0x28, 0xCD, 0xC1] + [rng.randrange(256) for _ in range(3)]  # most significant first
    return hci.Address(":".join(f"{b:02X}" for b in octets), hci.Address.PUBLIC_DEVICE_ADDRESS)


@dataclass
class RadioBoard:
    """A board on the radio: the firmware on a real stack, its controller, its flash."""

    stack: str
    address: hci.Address
    controller: CorrectedController
    transport: Transport
    uart: str  # the pty (a symlink to its replica) the interpreter opens as its HCI UART
    flash: Path
    heap: str | None
    virtual: VirtualBoard = field(init=False)
    # A power cut and a stop, one after the other: a stop during a power cut's boot waits for it.
    _power: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)

    @property
    def name(self) -> str:
        """The name the board advertises: the prefix and its address's last two bytes."""
        octets = str(self.address).split("/")[0].split(":")
        return NAME_PREFIX + octets[4] + octets[5]

    @property
    def control(self) -> str:
        """The board's side channel (buttons, LEDs): for VirtualControl."""
        return self.virtual.control

    def _launch(self) -> None:
        self.virtual = VirtualBoard(
            flash=self.flash,
            heap=self.heap,
            micropython=interpreter(self.stack),
            ble=False,
            environment={"MICROPYBTUART": self.uart},
        )
        self.virtual.start()

    async def power_cut(self) -> None:
        """Cut the board's power and give it back: the interpreter is killed (nothing saved
        that the firmware had not written), the controller loses its links (centrals see a
        supervision timeout), and the board boots again from its flash."""
        async with self._power:
            await asyncio.to_thread(self.virtual.stop)
            self.controller.drop_links()
            flush_tty(self.uart)
            await asyncio.to_thread(self._launch)

    async def stop(self) -> None:
        async with self._power:
            await asyncio.to_thread(self.virtual.stop)
            self.controller.drop_links()
            await self.transport.close()


class VirtualRadio:
    """One local link of Bumble controllers: boards on real stacks and Bumble centrals.

    An async context manager; see the module's documentation."""

    def __init__(self, *, seed: int | None = None) -> None:
        self.link = CorrectedLink()
        self._rng = random.Random(seed)
        self._boards: list[RadioBoard] = []
        self._centrals: list[tuple[Device, CorrectedController]] = []
        self._directory: tempfile.TemporaryDirectory[str] | None = None

    async def __aenter__(self) -> VirtualRadio:
        self._directory = tempfile.TemporaryDirectory(prefix="cribboard-radio-")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        for board in self._boards:
            with contextlib.suppress(Exception):
                await board.stop()
        self._boards.clear()
        self._centrals.clear()
        if self._directory is not None:
            self._directory.cleanup()
            self._directory = None

    def _scratch(self) -> Path:
        if self._directory is None:
            raise RuntimeError("VirtualRadio used outside `async with`")
        return Path(self._directory.name)

    async def start_board(
        self,
        stack: str = "btstack",
        state_dir: str | os.PathLike[str] | None = None,
        *,
        heap: str | None = DEFAULT_HEAP,
        pace_ms: float | None = None,
        acl_buffers: int = 8,
    ) -> RadioBoard:
        """Start a board with `stack`'s interpreter; returns once it has booted (it advertises
        a few milliseconds later). state_dir keeps its flash (``flash.img``) across boards and
        runs; default: the radio's scratch directory."""
        path = interpreter(stack)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: build it with firmware/ports/unix/build.py")
        index = len(self._boards)
        scratch = self._scratch()
        uart = str(scratch / f"hci-{index}")
        transport = await open_pty_transport(uart)
        address = board_address(self._rng)
        controller = CorrectedController(
            f"board-{index}",
            link=self.link,
            public_address=address,
            host_source=transport.source,
            host_sink=transport.sink,
            pace_ms=pace_ms,
            acl_buffers=acl_buffers,
        )
        directory = Path(state_dir) if state_dir is not None else scratch / f"board-{index}"
        directory.mkdir(parents=True, exist_ok=True)
        board = RadioBoard(
            stack, address, controller, transport, uart, directory / "flash.img", heap
        )
        await asyncio.to_thread(board._launch)
        self._boards.append(board)
        return board

    async def add_central(
        self, name: str | None = None, *, pace_ms: float | None = None, acl_buffers: int = 8
    ) -> Device:
        """A powered-on Bumble device (Bumble's host stack on a controller of its own) on the
        link, with a random static address, to scan and connect as a central. ``pace_ms`` and
        ``acl_buffers`` pace what it sends, as for a board (a radio never carries a burst at
        once)."""
        index = len(self._centrals)
        controller = CorrectedController(
            f"central-{index}", link=self.link, pace_ms=pace_ms, acl_buffers=acl_buffers
        )
        octets = [0xC0 | self._rng.randrange(64)] + [self._rng.randrange(256) for _ in range(5)]
        address = hci.Address(
            ":".join(f"{b:02X}" for b in octets), hci.Address.RANDOM_DEVICE_ADDRESS
        )
        device = Device(
            name=name or f"central-{index}",
            address=address,
            host=Host(controller, AsyncPipeSink(controller)),
        )
        await device.power_on()
        self._centrals.append((device, controller))
        return device

    def vanish(self, central: Device) -> None:
        """The central is gone without a word (out of range, switched off): its controller
        drops its links; the board's stack hears of it as a supervision timeout."""
        for device, controller in self._centrals:
            if device is central:
                controller.drop_links()
                return
        raise ValueError("not a central of this radio")
