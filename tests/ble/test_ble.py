"""Bluetooth LE end to end, without radios: unmodified bleak talks to the BlueZ front on a private
D-Bus, whose Bumble central reaches the board over a virtual radio. Tests marked @on_stacks run
on the firmware over MicroPython's real `bluetooth` on btstack and on NimBLE; the others need no
radio. (The virtual board's simulated radio has its tests in tests/ble/test_simulated_radio.py.) The
library, phone-app traffic (plain lines, Bluefruit control pad packets), admission by a
press of the board's deal button, a USB host alongside, a power cut during a request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from blesupport import Nus, bluetooth, board_name, needs_dbus, nus, on_stacks, pad_packet, vboard
from cribboard.api import AdmitEvent, Board, ButtonEvent, LinkEvent, StateEvent
from cribboard.ble import _bluetooth_errors, scan
from cribboard.errors import BoardRejected, LinkError
from cribboard.virtual import VirtualBoard, VirtualControl
from cribcore import protocol
from cribcore.layout import LED_OF_HOLE, WIN_HOLE
from cribcore.profiles import PROFILES
from cribdev.fakebluez import FakeBluetooth
from support import WAIT_S, EventLog, state_event, wait_state

__all__ = ["bluetooth", "vboard", "nus"]  # fixtures from blesupport
pytestmark = needs_dbus
PINS = PROFILES["sim"].buttons
DENIED = b"err denied tap the deal button on the board to admit this device\n"


@pytest.fixture
def usb(board: Board) -> Board:
    """A USB host: conftest's board (on blesupport's virtual board, which BlueZ presents)."""
    return board


@pytest.fixture
async def ble(vboard: VirtualBoard, usb: Board) -> AsyncIterator[Board]:
    """A BLE host on a board in open mode (the owner let every device change it)."""
    await usb.set_open(True)
    board = await Board.open_ble(board_name(vboard), timeout=3.0)
    try:
        yield board
    finally:
        await board.close()


# --- finding and connecting ------------------------------------------------------------------


@on_stacks
async def test_a_scan_by_service_uuid_finds_the_board(vboard: VirtualBoard) -> None:
    boards = await scan(3.0, settle=0.2)
    assert [(b.address, b.name, b.rssi) for b in boards] == [
        (vboard.ble_address, board_name(vboard), -50)
    ]


@on_stacks
async def test_every_command_over_ble(ble: Board, vboard: VirtualBoard) -> None:
    assert ble.name == f"ble:{vboard.ble_address}"
    assert ble.hello.board == "sim" and ble.hello.fields["ble"] == board_name(vboard)
    assert "admit" in ble.hello.capabilities
    await ble.ping()
    await ble.peg(0, 12)
    await ble.peg(1, 29)
    await ble.undo()
    await ble.set_pegs(1, 100, 90)
    state = await ble.state()
    assert (state.front, state.back) == ([12, 100], [0, 90])
    assert await ble.set_dealer(1) == 1
    assert await ble.set_dealer() == 0
    await ble.set_pending(0, 6)
    assert (await ble.state()).pending == [6, 0]
    await ble.set_skunk_double(True)
    await ble.set_pegs(0, 115, 100)
    await ble.set_pegs(1, 80, 70)
    await ble.peg(0, 8)
    state = await ble.state()
    assert state.winner == 0 and state.result == "skunk" and state.games == [2, 0]
    with pytest.raises(BoardRejected) as refused:
        await ble.peg(1, 2)
    assert refused.value.code == "game_over"
    await ble.clear_games()
    assert await ble.games() == [0, 0]
    await ble.new_game(61, 3)
    state = await ble.state()
    assert (state.target, state.players, state.front) == (61, 3, [0, 0, 0])
    assert await ble.brightness(40) == 40
    assert await ble.budget(900) == 900
    frame = await ble.frame()  # a 757-byte reply, in 20-byte notifications
    assert len(frame.rgb) == 3 * 121
    admission = await ble.admission()
    assert admission.open and not admission.you and admission.may_change


@on_stacks
async def test_a_reply_longer_than_20_bytes_is_split_to_the_mtu(
    nus: Nus, vboard: VirtualBoard, bluetooth: FakeBluetooth
) -> None:
    await nus.write(b"#1 hello\n")
    (hello,) = await nus.lines(1)
    version = b"%d.%d" % (protocol.PROTOCOL_MAJOR, protocol.PROTOCOL_MINOR)
    assert hello.startswith(b"#1 ok proto=" + version + b" ") and len(hello) > 150
    assert max(len(p) for p in nus.packets) == 20 and len(nus.packets) >= len(hello) // 20
    await nus.write(b"#2 frame\n")
    (frame,) = await nus.lines(1)
    assert frame.startswith(b"#2 ok scale=") and len(frame) > 750
    assert max(len(p) for p in nus.packets) == 20
    # a central that exchanges a larger MTU gets fewer, longer notifications
    await nus.close()
    bluetooth.bluez.mtu = 185
    big = await Nus.connect(board_name(vboard))
    try:
        await big.write(b"#3 frame\n")
        (frame,) = await big.lines(1)
        assert len(frame) > 750 and max(len(p) for p in big.packets) == 182
    finally:
        await big.close()


@on_stacks
async def test_plain_lines_from_a_uart_terminal_in_pieces_of_any_size(nus: Nus) -> None:
    for i in range(0, 14, 3):  # "peg 0 5\r\n#7 st\n" three bytes at a time, with response
        await nus.write(b"#5 ping\r\n#7 st\n"[i : i + 3], response=True)
    assert await nus.lines(2) == [
        b"#5 ok\n",
        b"#7 ok r=0 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=0 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
    ]
    await nus.write(b"admit\npeg 0 5\r\n")  # two lines in one write
    assert await nus.lines(2) == [b"ok open=0 you=0 admitted=0\n", DENIED]


# --- several hosts, disconnecting, reconnecting -------------------------------------------------


@on_stacks
async def test_a_usb_host_and_a_ble_host_at_once_see_every_change(
    usb: Board, ble: Board, vboard: VirtualBoard
) -> None:
    at_usb, at_ble = EventLog.of(usb), EventLog.of(ble)
    await usb.peg(0, 7)
    await at_ble.wait(state_event(lambda s: s.front == [7, 0]))
    await ble.peg(1, 9)
    await at_usb.wait(state_event(lambda s: s.front == [7, 9]))
    with VirtualControl(vboard.control) as sim:  # a button on the board: both hear it
        sim.press(PINS["A+"], 60)
        await at_usb.wait(lambda e: e == ButtonEvent("A+", "tap"))
        sim.press(PINS["deal"], 60)
    for events in (at_usb, at_ble):
        await events.wait(lambda e: e == ButtonEvent("deal", "tap"))
        await events.wait(state_event(lambda s: s.front == [8, 9]))


@on_stacks
async def test_disconnect_and_reconnect(ble: Board, vboard: VirtualBoard) -> None:
    await ble.peg(0, 5)
    events = EventLog.of(ble)
    vboard.reset()  # the board restarts: the link drops, the client reconnects and resyncs
    await events.wait(lambda e: e == LinkEvent("lost"))
    await events.wait(lambda e: e == LinkEvent("back"), timeout=10)
    await events.wait(lambda e: isinstance(e, StateEvent))  # resynchronised
    assert ble.connected
    state = await wait_state(ble, lambda s: s.rev >= 0)
    assert state.front == [0, 0] or state.front == [5, 0]  # the store may not have saved yet
    await ble.close()
    # the board advertises again once the central is gone, and takes a new connection
    boards = await scan(3.0, settle=0.1)
    assert [b.address for b in boards] == [vboard.ble_address]
    again = await Board.open_ble(vboard.ble_address, timeout=3.0)
    try:
        await again.peg(1, 3)
        assert (await again.state()).front[1] == 3
    finally:
        await again.close()


# --- who may change the board ---------------------------------------------------------------


def _calling(rgb: bytes) -> bool:
    """The win hole double-blinks white while the board calls for a tap of deal."""
    led = LED_OF_HOLE[WIN_HOLE]
    r, g, b = rgb[3 * led : 3 * led + 3]
    return r == g == b and r > 100


@on_stacks
async def test_a_central_is_refused_until_the_deal_button_admits_it(
    usb: Board, vboard: VirtualBoard
) -> None:
    name = board_name(vboard)
    phone = await Board.open_ble(name, timeout=3.0, adapter="hci0")
    at_usb, at_phone = EventLog.of(usb), EventLog.of(phone)
    try:
        assert await phone.state()  # reading is allowed
        assert not (await phone.admission()).may_change
        with pytest.raises(BoardRejected) as refused:
            await phone.peg(0, 5)
        assert refused.value.code == "denied" and "deal button" in refused.value.text
        with VirtualControl(vboard.control) as sim:
            sim.wait_frame(_calling, timeout=WAIT_S)  # the board calls for a decision
            sim.press(PINS["deal"], 60)
        await at_phone.wait(lambda e: isinstance(e, AdmitEvent) and e.admission.you)
        event = await at_usb.wait(lambda e: isinstance(e, AdmitEvent))
        assert event.to_json() == {"type": "admit", "open": False, "you": True, "admitted": 1}
        await phone.peg(0, 5)
        state = await usb.state()
        assert state.front == [5, 0] and state.dealer == 0  # the tap did not pass the deal
    finally:
        await phone.close()
    # another device (adapter hci1): not admitted (one central at a time: btstack as
    # MicroPython builds it takes no more, see the Bluetooth section of docs/protocol.md)
    other = await Board.open_ble(name, timeout=3.0, adapter="hci1")
    try:
        assert not (await other.admission()).you
        with pytest.raises(BoardRejected):
            await other.undo()
    finally:
        await other.close()
    # the same device again: admitted at once
    again = await Board.open_ble(name, timeout=3.0, adapter="hci0")
    try:
        assert (await again.admission()).you
        # the owner forgets the admitted devices: refused again
        cleared = EventLog.of(again)
        assert (await usb.clear_admitted()).admitted == 0
        await cleared.wait(lambda e: isinstance(e, AdmitEvent) and not e.admission.you)
        with pytest.raises(BoardRejected):
            await again.peg(0, 1)
    finally:
        await again.close()


@on_stacks
async def test_bluefruit_control_pad(nus: Nus, usb: Board) -> None:
    events = EventLog.of(usb)
    await nus.write(pad_packet(1, True))  # not admitted: refused, nothing pressed
    assert await nus.lines(1) == [DENIED]
    await usb.set_open(True)
    await nus.lines(1)  # ! admit open=1 ...
    # a press and its release in one write: still a tap of A+ (+1 pending for player 0)
    await nus.write(pad_packet(1, True) + pad_packet(1, False))
    await events.wait(lambda e: e == ButtonEvent("A+", "tap"))
    await wait_state(usb, lambda s: s.pending == [1, 0])
    await nus.write(pad_packet(3, True))  # B+ pressed, released a moment later
    await asyncio.sleep(0.08)  # the press itself: held this long (not a wait for anything)
    await nus.write(pad_packet(3, False))
    await events.wait(lambda e: e == ButtonEvent("B+", "tap"))
    await nus.write(pad_packet(7, True) + pad_packet(7, False))  # left: deal commits
    state = await wait_state(usb, lambda s: s.front != [0, 0])
    assert state.front == [1, 1] or state.front == [1, 0]  # B+ started a count: A's committed
    await wait_state(usb, lambda s: s.front == [1, 1] and s.pending == [0, 0])
    bad = pad_packet(2, True)[:4] + b"\x00"
    await nus.write(bad)
    lines = await nus.lines(1)
    while lines[0].startswith(b"!"):
        lines = await nus.lines(1)
    assert lines == [b"err bad_line bad checksum\n"]
    assert (await usb.state()).front == [1, 1]  # nothing was pressed


async def test_a_write_cut_by_the_device_disconnecting_is_a_lost_link() -> None:
    """No radio: the host's own error mapping. bleak closes a client's own D-Bus connection when
    its device disconnects; a write still waiting on it ends in EOFError (dbus_fast). The client
    resends what a lost link cut off (LinkError), so that is what it must become: seen once in
    15 runs of the test below."""
    with pytest.raises(LinkError, match="disconnected"):
        async with _bluetooth_errors("write to the board failed"):
            raise EOFError


@on_stacks
async def test_a_power_cut_during_a_peg_is_a_real_disconnect_and_the_resend_does_not_double(
    ble: Board, vboard: VirtualBoard
) -> None:
    """The board's interpreter is killed while a peg is in flight: the peripheral's link
    connection ends, Bumble's central reports the disconnection, BlueZ's D-Bus tells bleak
    (Connected false), the client reconnects over a new link connection and resends. The peg
    counts once at most (a power cut may lose an unsaved one, docs/protocol.md), never twice."""
    events = EventLog.of(ble)
    peg = asyncio.create_task(ble.peg(0, 5))
    vboard.reset()  # SIGKILL: a power cut, whatever the peg had reached
    await events.wait(lambda e: e == LinkEvent("lost"))
    await events.wait(lambda e: e == LinkEvent("back"), timeout=10)
    await peg
    state = await ble.state()
    assert state.front[0] in (0, 5), state.front
    await ble.peg(0, 1)  # the reconnected link serves the next request
    assert (await ble.state()).front[0] == state.front[0] + 1


@on_stacks
async def test_a_board_that_loses_power_is_reported_as_bluez_reports_it(
    nus: Nus, vboard: VirtualBoard, bluetooth: FakeBluetooth
) -> None:
    """The board's power cut ends the link from its side: over D-Bus the connection's GATT
    objects go (InterfacesRemoved, the CCCD descriptor too), then ServicesResolved and Connected
    turn false on the device, which stays (BlueZ keeps a device it has seen); bleak hears it."""
    from bleak import BleakClient
    from dbus_fast import Message, MessageType
    from dbus_fast.aio import MessageBus

    assert isinstance(nus.client, BleakClient)
    device = "/dev_" + vboard.ble_address.replace(":", "_")  # under whichever adapter bleak took
    bus = await MessageBus(bus_address=bluetooth.environ["DBUS_SYSTEM_BUS_ADDRESS"]).connect()
    seen: list[tuple[str, object]] = []
    done = asyncio.Event()

    def signal(msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL:
            return
        if msg.member == "InterfacesRemoved" and device + "/" in msg.body[0]:
            seen.append(("removed", msg.body[0].partition(device)[2]))
        elif msg.member == "PropertiesChanged" and (msg.path or "").endswith(device):
            for name in ("ServicesResolved", "Connected"):
                if name in msg.body[1]:
                    seen.append((name, msg.body[1][name].value))
                    if name == "Connected":
                        done.set()

    bus.add_message_handler(signal)
    match = await bus.call(
        Message(
            destination="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            member="AddMatch",
            signature="s",
            body=["type='signal',sender='org.bluez'"],
        )
    )
    assert match is not None and match.message_type == MessageType.METHOD_RETURN, match
    try:
        vboard.reset()  # the power cut
        await asyncio.wait_for(done.wait(), WAIT_S)  # (a bound, not a pause: ends on the signal)
        removed = [what for kind, what in seen if kind == "removed"]
        assert any("/desc" in p for p in removed) and any(p.count("/") == 1 for p in removed)
        assert seen[-2:] == [("ServicesResolved", False), ("Connected", False)], seen
        assert len([s for s in seen if s[0] != "removed"]) == 2, seen
        reply = await bus.call(
            Message(
                destination="org.bluez",
                path="/",
                interface="org.freedesktop.DBus.ObjectManager",
                member="GetManagedObjects",
            )
        )
        objects = reply.body[0]
        assert [p for p in objects if p.endswith(device)]  # the device stays
        assert not [p for p in objects if device + "/" in p]  # its GATT objects are gone
        assert not nus.client.is_connected
    finally:
        bus.disconnect()


@on_stacks
async def test_a_reply_lost_with_the_link_is_resent_and_the_peg_counts_once(
    usb: Board, vboard: VirtualBoard, bluetooth: FakeBluetooth
) -> None:
    """The link drops while the peg's reply is in the air (the board applied it; the central
    goes out of range): the client reconnects over a new connection and resends the same line,
    and the board answers it from the replies it remembers for that central: one peg."""
    await usb.set_open(True)
    phone = await Board.open_ble(board_name(vboard), timeout=3.0, adapter="hci0")
    events = EventLog.of(phone)
    try:
        bluetooth.bluez.lose_link_at_next_notification(0)
        await phone.peg(0, 5)  # lost, reconnected, resent: answered
        await events.wait(lambda e: e == LinkEvent("lost"))
        assert (await phone.state()).front[0] == 5
        assert (await usb.state()).front[0] == 5
    finally:
        await phone.close()
