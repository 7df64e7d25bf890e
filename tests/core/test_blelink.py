# The Bluetooth LE link, the admission of centrals and the phone's control pad, against a fake BLE
# object that behaves as MicroPython's bluetooth.BLE documents it (IRQ events, append-mode value
# buffer, notifications): run under CPython (pytest) and MicroPython (mprun.py).
import time

from checks import FakePixels, NorFlash

from cribcore.layout import HOLES
from cribcore.profiles import PROFILES
from cribfw import blelink
from cribfw import buttons as B
from cribfw.admission import Admission
from cribfw.admitfile import AdmitRecords
from cribfw.app import App
from cribfw.blelink import (
    HANDLE_ROOM,
    KEPT_MOST,
    NUS_ADV,
    PROBE,
    QUEUED_MAX,
    RX_RING_SHARED,
    STALL_MS,
    advertising_payloads,
)
from cribfw.buttons import Button
from cribfw.pad import LATCH_MS, EitherPin, Pad, VirtualPin, checksum
from cribfw.panel import Panel
from cribfw.ring import Ring

try:
    from time import sleep_ms, ticks_ms
except ImportError:  # CPython

    def sleep_ms(ms):
        time.sleep(ms / 1000)

    def ticks_ms():
        return int(time.monotonic() * 1000)


_CONNECT = 1
_DISCONNECT = 2
_WRITE = 3
_MTU = 21
MAC = b"\xc2\x00\x00\x00\x71\xa3"
PHONE = b"\x4a\x11\x22\x33\x44\x55"
LAPTOP = b"\x00\x1a\x7d\xda\x71\x13"
DENIED = b"err denied tap the deal button on the board to admit this device\n"


class FakeUUID:
    def __init__(self, value):
        self.value = value


class FakeBLE:
    """bluetooth.BLE as the documentation describes it, plus the radio's side (connect, write,
    mtu, drop) to drive it. As NimBLE, a notification the stack cannot take (`full`) raises
    OSError(12); as btstack (`btstack=True`), it is never refused: with no free controller buffer
    (`acl`) it is copied onto the heap (`heap()` drops) and sent when one frees up
    (`complete`), before any new one (MicroPython v1.28.0, extmod/btstack)."""

    TX = 11
    RX = 13
    COPY = 76  # the heap a queued copy costs besides its bytes (64-bit MicroPython), in 16s

    @classmethod
    def cost(cls, n):
        return (cls.COPY + n + 15) & ~15

    def __init__(self, btstack=False):
        self.btstack = btstack
        self.acl = 1000  # the controller's free ACL buffers
        self.queued = []  # btstack: (conn, bytes) copied onto the heap, in order
        self.queued_most = 0
        self.free = 100000  # btstack: the free heap, as gc.mem_free() would tell
        self.garbage = 0  # btstack: what the next copy's allocation collects
        self.handler = None
        self.values = {}
        self.buffers = {}
        self.adv = None  # what it advertises now (advertising data, scan response)
        self.data = (None, None)  # what it was given to advertise
        self.advertised = 0  # gap_advertise calls
        self.meanwhile = None  # called once inside the next gap_advertise
        self.notified = []  # (conn, bytes)
        self.closed = []
        self.full = False
        self.accept = -1  # NimBLE: how many more it takes before it refuses (-1: any number)
        self.services = None

    # the API the firmware uses
    def active(self, on=None):
        return True

    def config(self, *names, **settings):
        if names:
            return {"mac": (0, MAC), "mtu": 247}[names[0]]
        return None

    def irq(self, handler):
        self.handler = handler

    def gatts_register_services(self, services):
        self.services = services
        return ((self.TX, self.RX),)

    def gatts_set_buffer(self, handle, size, append=False):
        self.buffers[handle] = (size, append)

    def gatts_read(self, handle):
        value = self.values.get(handle, b"")
        if self.buffers.get(handle, (0, False))[1]:
            self.values[handle] = b""
        return value

    def gatts_notify(self, conn, handle, data=None):
        if self.full or self.accept == 0:
            raise OSError(12)
        self.accept -= 1
        assert handle == self.TX
        if self.btstack and (self.queued or not self.acl):
            self.queued.append((conn, bytes(data)))
            self.free -= self.cost(len(data)) - self.garbage  # (a collection frees garbage)
            self.garbage = 0
            self.queued_most = max(self.queued_most, len(self.queued))
            return
        self.acl -= 1
        self.notified.append((conn, bytes(data)))

    def heap(self):
        return self.free

    def gap_advertise(self, interval_us, adv_data=None, resp_data=None, connectable=True):
        self.advertised += 1  # (each call is HCI commands the stack waits for)
        # None keeps what was given before, as MicroPython documents it.
        self.data = (adv_data or self.data[0], resp_data or self.data[1])
        self.adv = None if interval_us is None else self.data
        if self.meanwhile is not None:  # what the stack takes in while it waits (IRQs too)
            meanwhile, self.meanwhile = self.meanwhile, None
            meanwhile()

    def gap_disconnect(self, conn):
        self.closed.append(conn)
        return True

    # the radio
    def connect(self, conn, addr, addr_type=1):
        self.adv = None  # a peripheral stops advertising when a central connects
        self.handler(_CONNECT, (conn, addr_type, memoryview(addr)))

    def drop(self, conn, addr, addr_type=1):
        # btstack forgets the connection's queued copies without freeing them: their heap is
        # lost until the board restarts (MicroPython v1.28.0).
        self.queued = [(c, d) for c, d in self.queued if c != conn]
        self.handler(_DISCONNECT, (conn, addr_type, memoryview(addr)))

    def write(self, conn, data):
        size, append = self.buffers[self.RX]
        old = self.values.get(self.RX, b"") if append else b""
        self.values[self.RX] = (old + data)[:size]
        self.handler(_WRITE, (conn, self.RX))

    def mtu(self, conn, mtu):
        self.handler(_MTU, (conn, mtu))

    def complete(self, n):
        """The controller sent `n` packets: the buffers go to queued copies first."""
        for _ in range(n):
            if self.queued:
                conn, data = self.queued.pop(0)
                self.notified.append((conn, data))
                self.free += self.cost(len(data))
            else:
                self.acl += 1

    def take(self, conn):
        """Notifications to `conn` since last time, as (packets, lines)."""
        packets = [d for c, d in self.notified if c == conn]
        self.notified = [(c, d) for c, d in self.notified if c != conn]
        data = b"".join(packets)
        lines = [line + b"\n" for line in data.split(b"\n")[:-1]]
        return packets, lines


class Out:
    def __init__(self):
        self.lines = []

    def write(self, buf, n):  # (a MicroPython stream's write(buf, max_len))
        self.lines.append(bytes(buf[:n]))


class Rig:
    def __init__(self, pad=None, stack=None):
        self.usb_out = Out()
        self._stdin = open("/dev/null", "rb")
        self.app = App(FakePixels(HOLES), self._stdin, self.usb_out, PROFILES["sim"])
        self.ble = FakeBLE(btstack=stack == "btstack")
        self.pad = pad
        self.restarts = 0
        self.link = self.app.add_ble(self.ble, pad, FakeUUID, stack, self.ble.heap, self.restart)
        self.name = self.app.ctx.ble_name.decode()

    def restart(self):
        self.restarts += 1

    def send(self, conn, data, pieces=1):
        step = max(1, (len(data) + pieces - 1) // pieces)
        for i in range(0, len(data), step):
            self.ble.write(conn, data[i : i + step])
        assert self.link.service()
        return self.ble.take(conn)[1]

    def close(self):
        self._stdin.close()


def pad_packet(button, pressed):
    data = bytearray(b"!B" + str(button).encode() + (b"1" if pressed else b"0"))
    data.append(checksum(data, 4))
    return bytes(data)


# --- advertising -------------------------------------------------------------------------------


def test_advertising_carries_the_service_and_the_name():
    rig = Rig()
    try:
        assert rig.name == "Cribboard-71A3"
        adv, resp = rig.ble.adv
        assert len(adv) <= 31 and len(resp) <= 31
        assert adv[:3] == b"\x02\x01\x06"
        assert adv[3:5] == b"\x11\x07" and adv[5:21] == NUS_ADV
        assert NUS_ADV == b"\x9e\xca\xdc\x24\x0e\xe5\xa9\xe0\x93\xf3\xa3\xb5\x01\x00\x40\x6e"
        assert adv[21:23] == b"\x09\x08" and adv[23:31] == b"Cribboar"  # the start of the name
        assert resp == b"\x0f\x09Cribboard-71A3"
        service = rig.ble.services[0]
        assert service[0].value == "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
        assert [c[0].value[:8] for c in service[1]] == ["6e400003", "6e400002"]
        assert rig.ble.buffers[FakeBLE.RX] == (256, True)  # enlarged, appending
        assert advertising_payloads(b"Crib")[0][21:] == b"\x05\x09Crib"  # a short name fits whole
    finally:
        rig.close()


def test_advertising_resumes_after_a_disconnect_and_stops_when_full():
    rig = Rig()
    try:
        most = rig.link.max_centrals
        assert most == 4 and rig.link.stack == "nimble"  # (no blestack module: not rp2)
        for conn in range(1, most + 1):
            rig.ble.connect(conn, PHONE[:5] + bytes((conn,)))
            rig.link.service()
            # NimBLE stops advertising at each connect: the board starts again while it can
            assert (rig.ble.adv is not None) == (conn < most), conn
            assert rig.link.advertising == (conn < most)
        rig.ble.connect(9, LAPTOP)  # one too many: closed at once
        rig.link.service()
        assert rig.ble.closed == [9] and rig.ble.adv is None
        rig.ble.drop(2, PHONE[:5] + b"\x02")
        rig.link.service()
        assert rig.ble.adv is not None  # a slot is free again: found again
        assert len(rig.app.ctx.links) == 1 + most - 1
    finally:
        rig.close()


def test_advertising_is_started_again_only_when_the_stack_stopped_it():
    # NimBLE stops advertising at a connect, not at a disconnect: a central that leaves while a
    # slot was free costs no HCI commands (a burst of them, waited for while centrals come and
    # go, ran MicroPython's NimBLE out of event buffers on the unix port: a crash).
    rig = Rig()
    try:
        adv = rig.ble.adv
        calls = rig.ble.advertised
        rig.ble.connect(1, PHONE)
        rig.link.service()
        assert rig.ble.advertised == calls + 1 and rig.ble.adv == adv  # the data kept
        rig.ble.drop(1, PHONE)
        rig.link.service()
        assert rig.ble.advertised == calls + 1 and rig.link.advertising
    finally:
        rig.close()


def test_a_central_that_connects_while_advertising_starts_stops_it_again():
    # The stack runs the connect's IRQ while it waits inside gap_advertise: the connection
    # stopped the advertising just started, and the board starts it again (a slot is free).
    rig = Rig()
    try:
        rig.ble.connect(1, PHONE)
        rig.ble.meanwhile = lambda: rig.ble.connect(2, LAPTOP)
        rig.link.service()
        rig.link.service()
        assert rig.link.connected() == 2 and rig.ble.adv is not None and rig.link.advertising
    finally:
        rig.close()


def test_btstack_takes_one_central_and_never_claims_to_advertise_meanwhile():
    rig = Rig(stack="btstack")
    try:
        assert rig.link.max_centrals == 1 and rig.link.advertising
        rig.ble.connect(1, PHONE)
        rig.link.service()
        assert rig.ble.adv is None and not rig.link.advertising
        rig.ble.connect(2, LAPTOP)  # (btstack would not let it come: closed if it did)
        rig.link.service()
        assert rig.ble.closed == [2]
        rig.ble.write(1, b"#1 hello\n#2 health\n")
        assert rig.link.service()
        hello, health = rig.ble.take(1)[1]
        assert b" bmax=1" in hello
        assert b" bconn=1 badv=0 " in health
        rig.ble.drop(1, PHONE)
        rig.link.service()
        assert rig.ble.adv is not None and rig.link.advertising
    finally:
        rig.close()


# --- lines in, notifications out ------------------------------------------------------------

NO_MATCH = b" gn=1 m=0 mk=0 mg=0 mn=0\n"  # a state's end: the board's first game, no match


def test_lines_arrive_in_writes_of_any_size_and_replies_are_split_to_20_bytes():
    rig = Rig()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        lines = rig.send(1, b"#1 hello\n#2 ping\n", pieces=7)
        assert lines[0].startswith(b"#1 ok proto=1.4 ") and b" ble=Cribboard-71A3" in lines[0]
        assert lines[1] == b"#2 ok\n"
        rig.ble.write(1, b"#3 st\r\n")
        rig.link.service()
        packets, lines = rig.ble.take(1)
        assert lines == [
            b"#3 ok r=0 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=0 x2=0 gn=1 m=0 mk=0 mg=0"
            b" mn=0\n"
        ]
        assert max(len(p) for p in packets) == 20 and len(packets) == 5
        lines = rig.send(1, b"#4 frame\n")
        assert len(lines[0]) > 700
        assert rig.send(1, b"x" * 100 + b"\n", pieces=9) == [b"err too_long line too long\n"]
    finally:
        rig.close()


def test_input_lost_in_the_middle_of_a_line_skips_that_line_and_says_busy():
    rig = Rig()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        ring = RX_RING_SHARED  # (four centrals: a ring each)
        rig.ble.buffers[rig.ble.RX] = (4 * ring, True)  # a stack's buffer larger than the ring
        lines = ring // 9 + 10
        rig.ble.write(1, b"#a1 ping\n" * lines)  # more than the ring holds before the task runs
        for _ in range(lines):
            rig.link.service()
        got = rig.ble.take(1)[1]
        whole = (ring - 1) // 9  # the ring holds all but a byte; no resend memory
        assert got[:whole] == [b"#a1 ok\n"] * whole
        assert got[whole:] == [b"err busy input overflow: lines lost\n"]
        # What follows the loss up to a newline is skipped: it may be the end of any line.
        assert rig.send(1, b"a1 ping\n#b2 ping\n") == [b"#b2 ok\n"]
        assert rig.send(1, b"\n#b3 ping\n") == [b"#b3 ok\n"]
    finally:
        rig.close()


def test_pegs_pipelined_on_a_slow_link_need_no_resend():
    # A central writes 70 pegs at once (NimBLE: four centrals, a ring of RX_RING_SHARED each);
    # the link takes one notification per turn of the task: the ring holds what the queue
    # cannot answer yet, so no input is lost.
    rig = Rig()
    try:
        rig.app.ctx.admission.set_open(True)
        rig.ble.connect(1, PHONE)
        rig.link.service()
        rig.ble.take(1)
        for i in range(70):
            rig.ble.write(1, b"#p%d peg 0 1\n" % i)
        data = b""
        for _ in range(5000):
            rig.ble.accept = 1  # one more notification, then the stack refuses (OSError 12)
            rig.link.service()
            data += b"".join(rig.ble.take(1)[0])
            if data.count(b" ok r=") == 70:
                break
        got = [line + b"\n" for line in data.split(b"\n")[:-1]]
        replies = [line for line in got if line.startswith(b"#p")]
        assert replies == [b"#p%d ok r=%d\n" % (i, i + 1) for i in range(70)]
        assert not [line for line in got if line.startswith(b"err")]
        assert rig.app.ctx.game.front[0] == 70 and rig.link.lost() == 0
    finally:
        rig.close()


def test_a_line_too_long_under_load_gets_its_one_too_long():
    # The central's queue is nearly full (a frame the link has not taken yet): a 10 KB line is
    # still read to its end as it comes, and answered once, when there is room.
    rig = Rig()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        rig.ble.full = True
        rig.ble.write(1, b"#f1 frame\n")
        rig.link.service()
        assert rig.link.centrals[0].room() < HANDLE_ROOM  # the frame waits
        for _ in range(10000 // 200):
            rig.ble.write(1, b"#L1 " + b"x" * 196)
            rig.link.service()
        rig.ble.write(1, b"\n#p2 ping\n")
        rig.link.service()
        rig.ble.full = False
        for _ in range(5):
            rig.link.service()
        got = rig.ble.take(1)[1]
        assert [line[:12] for line in got] == [b"#f1 ok scale", b"#L1 err too_", b"#p2 ok\n"]
        assert got[1] == b"#L1 err too_long line too long\n" and rig.link.lost() == 0
    finally:
        rig.close()


def test_a_central_that_comes_back_gets_its_remembered_replies():
    rig = Rig()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        bad = b"#z1 err bad_arg bad argument\n"
        assert rig.send(1, b"#z1 peg 0 1 2 3 4\n") == [bad]
        rig.ble.drop(1, PHONE)
        rig.link.service()
        rig.ble.connect(2, LAPTOP)  # another central: a slot of its own, its own memory
        rig.ble.connect(3, PHONE)  # the same phone again: its slot and its memory
        rig.link.service()
        assert rig.send(3, b"#z1 peg 0 1\n") == [bad]  # answered from memory, not applied
        assert rig.send(2, b"#z1 peg 0 1\n")[0].startswith(b"#z1 err denied")
    finally:
        rig.close()


def _resend_after_others(stack, others):
    """PHONE (admitted) pegs, leaves; `others` centrals come and go, each taking a slot and
    sending; PHONE comes back and resends its peg: answered from memory, not applied again."""
    rig = Rig(stack=stack)
    try:
        board = rig.app.ctx.game
        rig.ble.connect(1, PHONE)
        rig.link.service()
        rig.app.ctx.admission.admit(rig.app.ctx.links[-1])
        assert rig.send(1, b"#k1 peg 0 5\n")[0] == b"#k1 ok r=1\n"
        rig.ble.drop(1, PHONE)
        rig.link.service()
        for k in range(others):  # each takes the one slot (btstack) or every slot in turn
            address = bytes((0xC0, 0, 0, 0, k >> 8, k & 255))
            rig.ble.connect(2 + k, address)
            rig.link.service()
            assert rig.send(2 + k, b"#k1 bad\n") == [b"#k1 err unknown unknown command\n"]
            rig.ble.drop(2 + k, address)
            rig.link.service()
        rig.ble.connect(1, PHONE)
        rig.link.service()
        assert rig.send(1, b"#k1 peg 0 5\n") == [b"#k1 ok r=1\n"]
        assert board.front[0] == 5
    finally:
        rig.close()


def test_a_resend_after_another_central_took_the_slot_is_not_applied_twice():
    # btstack takes one central: a second phone takes the slot PHONE left.
    _resend_after_others("btstack", 1)
    # NimBLE takes four: all four taken by others since.
    _resend_after_others("nimble", 4)


def test_strangers_coming_and_going_never_push_out_an_admitted_centrals_memory():
    _resend_after_others("btstack", 40)
    _resend_after_others("nimble", 40)


def test_a_central_back_on_the_same_handle_before_the_task_ran_loses_nothing():
    # The stack reuses the handle of a link it just lost (Bumble's controller gives the lowest
    # free one), and NimBLE still advertises, so the central is back before the task ran.
    rig = Rig()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        rig.ble.drop(1, PHONE)
        rig.ble.connect(1, PHONE)
        rig.ble.write(1, b"#r1 ping\n")
        assert rig.link.service()
        assert rig.ble.take(1)[1] == [b"#r1 ok\n"]
    finally:
        rig.close()


def test_notifications_follow_the_exchanged_mtu():
    rig = Rig()
    try:
        rig.ble.connect(1, PHONE)
        rig.ble.mtu(1, 100)
        rig.link.service()
        rig.ble.write(1, b"#1 hello\n")
        rig.link.service()
        packets, lines = rig.ble.take(1)
        assert [len(p) for p in packets[:-1]] == [97] * (len(packets) - 1)
        assert lines[0].startswith(b"#1 ok proto=")
    finally:
        rig.close()


def test_a_central_whose_notifications_the_stack_never_takes_is_let_go_whole():
    rig = Rig()
    clock = Clock()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        rig.ble.accept = 5  # the frame's first five pieces go, then the stack refuses them all
        rig.ble.write(1, b"#f1 frame\n")
        while not rig.link.service():
            clock.now += 1
            assert clock.now <= STALL_MS + 1
        assert clock.now == STALL_MS and rig.ble.closed == [1]  # refused for 5 s: let go
        assert rig.link.lost() == 1
        rig.ble.accept = -1
        rig.ble.write(1, b"#2 ping\n")  # until the disconnect arrives, nothing more is sent
        assert rig.link.service()
        assert len(rig.ble.take(1)[0]) == 5
        rig.ble.drop(1, PHONE)
        rig.ble.connect(2, PHONE)  # back: the link starts afresh
        rig.link.service()
        assert rig.send(2, b"#3 ping\n") == [b"#3 ok\n"]
    finally:
        clock.close()
        rig.close()


def test_a_notification_the_stack_cannot_take_is_sent_later():
    rig = Rig()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        rig.ble.full = True
        rig.ble.write(1, b"#1 ping\n")
        assert not rig.link.service()  # the task sleeps a little and tries again
        rig.ble.full = False
        assert rig.link.service()
        assert rig.ble.take(1)[1] == [b"#1 ok\n"]
    finally:
        rig.close()


class Clock:
    """ticks_ms for the link, moved by the test (blelink's waits without waiting)."""

    def __init__(self):
        self.now = 0
        self.real = blelink.ticks_ms
        blelink.ticks_ms = self

    def __call__(self):
        return self.now

    def close(self):
        blelink.ticks_ms = self.real


def test_btstack_holds_at_most_held_max_of_a_stalled_link_and_then_lets_it_go():
    rig = Rig(stack="btstack")
    clock = Clock()
    try:
        rig.ble.connect(1, PHONE)
        rig.ble.mtu(1, 100)
        rig.link.service()
        rig.ble.acl = 2  # then the controller sends nothing more: the link stalls
        rig.ble.write(1, b"#1 frame\n")  # 757 bytes: 8 notifications at MTU 100, then small
        queued_at = []
        while not rig.link.service():
            if len(rig.ble.queued) > len(queued_at):
                queued_at.append(clock.now)
            clock.now += 1
            assert clock.now < 10 * STALL_MS
        queued_at.append(clock.now)
        gaps = [b - a for a, b in zip(queued_at, queued_at[1:])]
        assert gaps == [1, 2, 4, 16, 64, 256, 1024, 4096]  # 5.5 s in all
        assert rig.ble.queued_most == len(rig.ble.queued) == QUEUED_MAX
        assert rig.ble.closed == [1]  # let go: it comes back and resends
        # The first three queued pieces are whole (97 bytes); then small ones, which cost little.
        assert [len(d) for c, d in rig.ble.queued] == [97] * 3 + [PROBE] * (QUEUED_MAX - 3)
        cost = 3 * FakeBLE.cost(97) + (QUEUED_MAX - 3) * FakeBLE.cost(PROBE)
        assert rig.link.queued_most == QUEUED_MAX and rig.link.queued_most_bytes == cost
        assert rig.link.lost() == 1
        rig.ble.write(1, b"#2 ping\n")  # (until the disconnect arrives) nothing more is handed
        assert rig.link.service() and len(rig.ble.queued) == QUEUED_MAX
        # The connection ends: what btstack queued stays on the heap, and the board counts it.
        free = rig.ble.free
        rig.ble.drop(1, PHONE)
        rig.link.service()
        assert rig.link.kept == cost and rig.ble.free == free
    finally:
        clock.close()
        rig.close()


def test_btstack_counts_a_copy_whole_when_its_allocation_collected_garbage():
    # The heap ran out as btstack copied the notification: the collection it ran freed garbage,
    # so the free heap dropped by less than the copy. It still counts at what a copy costs, and
    # what the central leaves behind is never counted short.
    rig = Rig(stack="btstack")
    clock = Clock()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        rig.ble.acl = 1
        rig.ble.garbage = FakeBLE.cost(PROBE) - 16  # the first queued copy reads as 16 bytes
        rig.ble.write(1, b"#1 st\n")
        assert not rig.link.service() and len(rig.ble.queued) == 1
        assert rig.link.centrals[0].queued_bytes == FakeBLE.cost(PROBE)
        rig.ble.drop(1, PHONE)
        rig.link.service()
        assert rig.link.kept == FakeBLE.cost(PROBE)
    finally:
        clock.close()
        rig.close()


def test_btstack_settles_with_an_empty_notification_what_it_held_at_a_queues_end():
    # A reply whose last pieces were queued, then nothing more to send: an empty notification
    # after the wait tells whether they went; a central that leaves then leaves nothing behind.
    rig = Rig(stack="btstack")
    clock = Clock()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        rig.ble.acl = 4
        rig.ble.write(1, b"#1 st\n")  # 5 notifications (protocol 1.4's state): the last queued
        assert not rig.link.service() and len(rig.ble.queued) == 1
        rig.ble.complete(4)  # the controller sends them all and has buffers again
        clock.now += 1
        while not rig.link.service():
            clock.now += 1
        assert rig.ble.take(1)[0][-1] == b""  # the empty one, which went straight out
        assert rig.link.centrals[0].queued == 0
        rig.ble.drop(1, PHONE)
        rig.link.service()
        assert rig.link.kept == 0
    finally:
        clock.close()
        rig.close()


def test_btstack_restarts_once_gone_centrals_left_too_much_behind():
    rig = Rig(stack="btstack")
    clock = Clock()
    try:
        conn = 0
        while rig.link.kept < KEPT_MOST:
            assert rig.link.advertising and rig.restarts == 0
            conn += 1
            rig.ble.connect(conn, PHONE)
            rig.link.service()
            rig.ble.acl = 0  # a stalled link
            rig.ble.write(conn, b"#1 hello\n")
            rig.link.service()
            clock.now += 100  # three queued, and the central vanishes
            rig.link.service()
            rig.link.service()
            rig.ble.drop(conn, PHONE)
            rig.link.service()
            assert rig.link.connected() == 0
        # No more centrals; nobody connected: the board restarts (the app saves on the way).
        assert not rig.link.advertising and rig.ble.adv is None and rig.restarts == 1
    finally:
        clock.close()
        rig.close()


def test_btstack_does_not_restart_while_a_central_is_connected():
    rig = Rig(stack="btstack")
    try:
        rig.link.kept = KEPT_MOST  # (as gone centrals left it)
        rig.ble.connect(1, PHONE)  # came just before the board stopped advertising
        rig.link.service()
        assert rig.send(1, b"#1 health\n")[0].split(b" bkept=")[1].startswith(b"%d " % KEPT_MOST)
        assert rig.restarts == 0 and rig.ble.adv is None
        rig.ble.drop(1, PHONE)
        rig.link.service()
        assert rig.restarts == 1
    finally:
        rig.close()


def test_btstack_carries_on_once_its_held_notifications_went():
    rig = Rig(stack="btstack")
    clock = Clock()
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        rig.ble.acl = 1
        rig.ble.write(1, b"#1 hello\n#2 frame\n")
        while not rig.link.service():
            clock.now += 1
            rig.ble.complete(1)  # one packet a millisecond
        assert rig.ble.closed == []
        rig.ble.complete(len(rig.ble.queued))  # the last queued ones go
        hello, frame = rig.ble.take(1)[1]
        assert hello.startswith(b"#1 ok proto=") and frame.startswith(b"#2 ok scale=")
        # The board counts what it handed since one last went straight out: at least what the
        # stack queued.
        assert 1 <= rig.ble.queued_most <= rig.link.queued_most < QUEUED_MAX
        rig.ble.acl = 1000
        clock.now += STALL_MS  # (the board waits before the next, not knowing they went)
        health = rig.send(1, b"#3 health\n")[0]
        assert b" bheld=%d bheap=" % rig.link.queued_most in health
        assert b" bkept=0 " in health
    finally:
        clock.close()
        rig.close()


def two_centrals_in_open_mode(rig):
    """Open mode, a phone and a laptop connected, what that sent taken: the links start quiet."""
    rig.app.ctx.admission.set_open(True)
    rig.ble.connect(1, PHONE)
    rig.ble.connect(2, LAPTOP)
    rig.link.service()
    rig.app.dispatcher.publish_if_changed()  # (`! admit`: open mode)
    rig.link.service()
    rig.ble.notified = []
    rig.usb_out.lines = []


def test_every_change_reaches_usb_and_every_central():
    rig = Rig()
    try:
        two_centrals_in_open_mode(rig)
        event = b"! st r=1 t=121 n=2 d=0 w=-1 x=0 f=5,0 b=0,0 g=0,0 q=0,0 u=1 x2=0" + NO_MATCH
        assert rig.send(1, b"#a peg 0 5\n") == [b"#a ok r=1\n", event]
        assert rig.ble.take(2)[1] == [event]
        assert rig.usb_out.lines == [event]
    finally:
        rig.close()


def test_requests_written_together_get_their_replies_then_one_event():
    # A central that sends several requests in one write: its replies, then the state once
    # (one notification's worth where twenty would have queued), on every link.
    rig = Rig()
    try:
        two_centrals_in_open_mode(rig)
        event = b"! st r=2 t=121 n=2 d=0 w=-1 x=0 f=5,3 b=0,0 g=0,0 q=0,0 u=2 x2=0" + NO_MATCH
        got = rig.send(1, b"#a peg 0 5\n#b peg 1 3\n")
        assert got == [b"#a ok r=1\n", b"#b ok r=2\n", event]
        assert rig.ble.take(2)[1] == [event]
        assert rig.usb_out.lines == [event]
        # While the other central asks for an event after every request: one per request.
        assert rig.send(2, b"every 1\n") == [b"ok every=1\n"]
        got = rig.send(1, b"#c peg 0 1\n#d peg 0 1\n")
        assert [line.split(b" r=")[0] for line in got] == [b"#c ok", b"! st", b"#d ok", b"! st"]
        # It leaves: what it asked for goes with it.
        rig.ble.drop(2, LAPTOP)
        rig.link.service()
        assert len(rig.send(1, b"#e peg 0 1\n#f peg 0 1\n")) == 3  # two replies, one event
    finally:
        rig.close()


# --- admission ------------------------------------------------------------------------------


def test_a_central_is_refused_until_a_tap_of_deal_admits_it_and_then_remembered():
    rig = Rig()
    try:
        admission = rig.app.ctx.admission
        rig.ble.connect(1, PHONE)
        rig.link.service()
        assert rig.send(1, b"#r st\n")[0].startswith(b"#r ok r=0 ")
        assert rig.send(1, b"#p peg 0 5\n") == [b"#p " + DENIED]
        assert rig.app.ctx.game.front[0] == 0 and admission.calling()
        assert admission.take_tap()  # the deal button
        rig.app.dispatcher.publish_if_changed()
        rig.link.service()
        assert rig.ble.take(1)[1] == [b"! admit open=0 you=1 admitted=1\n"]
        assert rig.send(1, b"#p peg 0 5\n")[0] == b"#p ok r=1\n"
        rig.ble.drop(1, PHONE)
        rig.link.service()
        rig.ble.connect(4, PHONE)  # the same device again: admitted at once
        rig.ble.connect(5, LAPTOP)  # another one: not
        rig.link.service()
        assert rig.send(4, b"admit\n") == [b"ok open=0 you=1 admitted=1\n"]
        assert rig.send(5, b"admit\n") == [b"ok open=0 you=0 admitted=1\n"]
        assert rig.send(5, b"undo\n") == [DENIED]
        rig.ble.drop(5, LAPTOP)  # the refused central leaves: a tap admits nobody
        rig.link.service()
        assert not admission.calling() and not admission.take_tap()
    finally:
        rig.close()


def _check_admissions_survive(place, damage):
    """A keeper at `place` (a path or a Ring) keeps the list and open mode; `damage()` spoils
    what it wrote."""

    class Link:
        trusted = False
        address = b"\x01" + PHONE

    first = Admission()
    assert not first.keep(AdmitRecords(place))  # nothing saved yet
    first.admit(Link())
    first.set_open(True)
    again = Admission()
    assert again.keep(AdmitRecords(place)) and again.open and again.knows(b"\x01" + PHONE)
    assert not again.knows(b"\x00" + PHONE)  # another address type: another device
    for i in range(10):  # at most 8 remembered: the oldest go first
        link = Link()
        link.address = b"\x00\x00\x00\x00\x00\x00" + bytes((i,))
        again.admit(link)
    assert again.count == 8 and not again.knows(b"\x01" + PHONE)
    damage()  # a damaged record: nobody admitted, closed
    third = Admission()
    assert not third.keep(AdmitRecords(place)) and third.count == 0 and not third.open


def test_admitted_devices_and_open_mode_survive_a_restart_in_a_file():
    path = _temp_dir() + "/cribboard-admit-%d.dat" % ticks_ms()

    def damage():
        with open(path, "r+b") as f:
            f.seek(9)
            f.write(b"\xff")

    try:
        _check_admissions_survive(path, damage)
    finally:
        import os

        for name in (path, path + ".tmp"):
            try:
                os.remove(name)
            except OSError:
                pass


def test_admitted_devices_and_open_mode_survive_a_restart_in_a_ring():
    flash = NorFlash(count=2)

    def damage():
        for i in range(len(flash.data)):
            if flash.data[i] == 0x41:  # "A" of every b"ADMT": no record reads back
                flash.data[i] = 0x40

    _check_admissions_survive(Ring(flash, 0, 2), damage)


def _temp_dir():
    try:
        import tempfile
    except ImportError:  # MicroPython
        return "/tmp"
    return tempfile.gettempdir()


# --- the phone's control pad ----------------------------------------------------------------


def test_bluefruit_packets_press_pad_buttons_and_bad_checksums_are_refused():
    pad = Pad()
    rig = Rig(pad)
    try:
        rig.ble.connect(1, PHONE)
        rig.link.service()
        assert pad_packet(1, True) == b"!B11:" and pad_packet(7, False) == b"!B705"
        assert rig.send(1, pad_packet(1, True)) == [DENIED]  # not admitted: nothing pressed
        assert pad.pin("A+").value() == 1
        assert rig.send(1, pad_packet(1, False)) == []  # a release is not refused again
        rig.app.ctx.admission.take_tap()
        rig.app.dispatcher.publish_if_changed()
        rig.link.service()
        assert rig.ble.take(1)[1] == [b"! admit open=0 you=1 admitted=1\n"]
        assert rig.send(1, pad_packet(3, True)) == []
        assert pad.pin("B+").value() == 0 and pad.pin("A+").value() == 1
        assert rig.send(1, b"!B31" + b"\x00") == [b"err bad_line bad checksum\n"]
        assert rig.send(1, b"!B3x" + bytes((checksum(b"!B3x", 4),))) == [
            b"err bad_line bad button packet\n"
        ]
        colour = bytearray(b"!C\x10\x20\x30")
        colour.append(checksum(colour, 5))
        # packets and lines mixed in one write; the checksum may be a newline
        assert rig.send(1, bytes(colour) + b"#1 ping\n" + pad_packet(8, True), pieces=3) == [
            b"#1 ok\n"
        ]
        assert pad.pin("deal").value() == 0
        assert rig.send(1, b"!x\n") == [b"err unknown unknown command\n"]
        assert rig.send(1, b"ping !B\n") == [b"err bad_arg bad argument\n"]  # not at a line start
        rig.ble.drop(1, PHONE)  # a central that leaves lets go of what it pressed
        rig.link.service()
        sleep_ms(LATCH_MS + 5)
        assert pad.pin("B+").value() == 1 and pad.pin("deal").value() == 1
    finally:
        rig.close()


def test_a_pad_tap_shorter_than_the_debounce_is_not_lost():
    pin = VirtualPin()
    button = Button(EitherPin(VirtualPin(), pin))
    pin.press()
    pin.release()  # the release arrives in the same connection event
    events = []
    start = ticks_ms()
    while ticks_ms() - start < LATCH_MS + 60:
        event = button.update(ticks_ms())
        if event != B.NONE:
            events.append(event)
        sleep_ms(5)
    assert events == [B.PRESS, B.TAP]


def test_the_pad_maps_to_the_panel_buttons():
    pad = Pad()
    for button, name in (
        (1, "A+"),
        (2, "A-"),
        (3, "B+"),
        (4, "B-"),
        (5, "C+"),
        (6, "C-"),
        (7, "deal"),
        (8, "deal"),
    ):
        assert pad.set(button, True)
        assert pad.pin(name).value() == 0, (button, name)
        pad.pins[name]._down = False
    assert not pad.set(9, True) and not pad.set(0, True)


def test_a_tap_of_deal_admits_instead_of_its_usual_action():
    class Link:
        trusted = False
        address = b"\x01" + PHONE

    class Pin:
        level = 1

        def value(self):
            return self.level

    admission = Admission()
    deal = Pin()
    from cribcore.state import GameState

    board = GameState()
    panel = Panel(board, {"deal": Button(deal)}, None, admission)
    link = Link()
    now = 1000
    admission.request(link, now)

    def tap(now):
        deal.level = 0
        for _ in range(20):
            now += 5
            panel.update(now)
        deal.level = 1
        for _ in range(20):
            now += 5
            panel.update(now)
        return now

    now = tap(now)
    assert link.trusted and board.dealer == 0  # admitted; the deal did not pass
    now = tap(now)
    assert board.dealer == 1  # nobody waits: the usual action
    admission.request(Link(), now)
    now = tap(now + 31000)  # the window has closed
    assert board.dealer == 0


def test_the_win_hole_calls_while_a_device_waits_and_drawing_allocates_nothing():
    import sys

    from cribcore.layout import WIN_HOLE
    from cribcore.render import CALL_FLASH_MS, Renderer
    from cribcore.state import GameState

    board = GameState()
    renderer = Renderer(FakePixels(HOLES))
    renderer.calling = True
    at = 3 * WIN_HOLE
    renderer.draw(board, 0)
    assert bytes(renderer.frame[at : at + 3]) == b"\xff\xff\xff" and renderer.animating
    renderer.draw(board, CALL_FLASH_MS + 10)  # between the two flashes: dark
    assert bytes(renderer.frame[at : at + 3]) == b"\x00\x00\x00"
    renderer.draw(board, 2 * CALL_FLASH_MS + 10)
    assert bytes(renderer.frame[at : at + 3]) == b"\xff\xff\xff"
    if sys.implementation.name == "micropython":
        import micropython

        renderer.render(board, 5)
        micropython.heap_lock()
        try:
            for t in range(0, 3000, 50):
                renderer.render(board, t)
        finally:
            micropython.heap_unlock()
