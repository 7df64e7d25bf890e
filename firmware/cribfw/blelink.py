# The Bluetooth LE link: the board as a peripheral with the Nordic UART Service (NUS), speaking the
# same line protocol as USB. Built on MicroPython's low-level `bluetooth` module; the BLE object is
# passed in (app.main() makes it), nothing here touches the radio at import.
#
# Service 6e400001-b5a3-f393-e0a9-e50e24dcca9e (cribcore.protocol.NUS_*): the central writes
# requests to 6e400002 (RX: write and write-without-response), the board notifies replies and
# events on 6e400003 (TX: notify, read). Centrals find the characteristics by these UUIDs (and by
# their properties).
#
# Advertising (31 bytes each): the advertising data carries the flags and the complete 128-bit
# service UUID (3 + 18 bytes), so a scanner filtering on the service finds the board without a scan
# request, plus as much of the name as fits (a shortened name); the scan response carries the whole
# name, "Cribboard-XXXX" (the last two bytes of the board's address). Advertising runs whenever a
# connection slot is free: the stack stops it when a central connects, so it is started again
# after a connect, and after a disconnect when it had stopped (all slots taken; btstack, which
# resumes by itself). Only then: each start is HCI commands the stack waits for, taking in the
# controller's events meanwhile, and a burst of them while centrals came and went ran
# MicroPython's NimBLE over an HCI UART (the unix build) out of its 8 event buffers (a NULL
# dereference, or a stack that answered nothing more); the data is given once, None keeps it.
# How many centrals the stack takes at once is the stack's (cribfw/stacklimits.py: one on
# btstack, four on NimBLE); `advertising` is True only while the
# board advertises, which on btstack is never while a central is connected.
#
# Receiving: each connected central is a link of its own (Central: send/recent/trusted/address for
# the dispatcher) with its own LineAssembler, so lines arrive in writes of any size, split or
# several to a write. The RX value buffer is enlarged (gatts_set_buffer, append mode) and read in
# the IRQ handler, which only copies the bytes into that central's ring and wakes the task: the
# value is one for all connections, so it is read at once to know whose bytes they are. All
# protocol handling runs in the asyncio task (service()).
#
# Sending: the dispatcher's lines are queued per central in a bounded queue (whole lines) and the
# task notifies them in pieces of the connection's ATT MTU minus 3: 20 bytes until the central
# exchanges a larger MTU (_IRQ_MTU_EXCHANGED); the board never starts an exchange itself. The
# stacks differ when notifications outpace the link: NimBLE refuses one it cannot queue
# (OSError 12), which stays first in the queue and is tried again 1 ms later, so nothing is lost
# or reordered. btstack never refuses: when the controller has no free buffer, MicroPython copies
# the notification onto the heap (m_tracked_calloc) and btstack sends the copies in order as
# buffers free up, before any new one (att_server's notification requests; MicroPython v1.28.0,
# extmod/btstack/modbluetooth_btstack.c). So a notification that cost no heap went straight out,
# and then btstack queued no copy; one that cost heap is queued (`queued` counts them,
# `queued_bytes` what they cost). The cost is read just before and just after gatts_notify with no
# branch between, and MicroPython runs the stack's scheduled work (which frees sent copies) only
# at branches (and in waits: on a Pico W, to be checked, the CYW43 driver may wait inside a write
# while its Bluetooth core wakes). Below HEAP_GUARD free the heap is collected before a central's
# notifications, so a copy's own allocation does not collect (which would hide its cost); a queued
# copy is counted at no less than its bytes and COPY_EXTRA, what its records take on the unix port
# (less on a 32-bit board), so the count is never short.
# The rule (docs/protocol.md 10): after a queued notification the next waits 1 ms, then longer
# after each further one (QUEUED_WAITS_MS: 1, 2, 4, 16, 64 ... 4096 ms), and from the third on is
# a small one (PROBE bytes: its copy costs little); when QUEUED_MAX are queued, the link has
# carried almost nothing for at least 5.5 s (one that carries a packet every 300 ms has long
# caught up with the controller's buffers and what is queued) and the board lets the central go.
# So btstack never queues more than QUEUED_MAX notifications of a central. (The first wait is
# short because btstack on the unix port queues the second of any two notifications handed
# together: its HCI UART takes the next packet only after its 1 ms poll.) A link that needed a
# long wait starts its next wait a step lower (`start_level`), so a slow link is not probed from
# 1 ms again each time. (`queued` counts what was handed since one last went straight out: at least
# what btstack still has queued. A queue that empties while some are queued is followed, after the
# same wait, by an empty notification, which tells whether they went.)
# What btstack has queued for a central when its connection ends is never freed: MicroPython
# v1.28.0 drops the connection's notification requests with the connection, and the copies stay on
# its list of tracked allocations until the board restarts (the heap then runs out and the
# interpreter dereferences the NULL a failed copy returned). The board counts what each central
# leaves behind (`kept`: at most what it queued, QUEUED_MAX small copies) and when that reaches
# KEPT_MOST it stops taking centrals and, once none is connected, restarts (`restart`: main()
# passes machine.soft_reset; the app saves the game on the way out): nothing else gives the heap
# back. NimBLE keeps nothing: it frees what it queued with the connection.
# Giving up never cuts a line short on a link that goes on: a central the board gives up (btstack:
# QUEUED_MAX queued; NimBLE: refused for STALL_MS without a break) is disconnected, counted in
# `lost`, and its lines still waiting go with the connection; a host reassembles afresh on each
# one.
# A central's input is read byte by byte into its line; a line's end (or a control pad packet)
# waits while its queue has less room than the longest reply (the frame), so a central's own
# replies are never dropped: what it sends meanwhile waits in its input ring (RX_RING, about 140
# pegs, for a lone central; RX_RING_SHARED each where the stack takes four), and when that
# overflows the lost lines are answered `err busy input overflow`. A line too
# long is read to its end whatever the room, so it gets its one `too_long`. An event that does not
# fit a central's queue (another link's change) is dropped whole and `err busy output full` follows
# once the queue has drained.
#
# Bluefruit Connect's control pad packets (cribfw/pad.py) are read out of the same byte stream: a
# "!" at the start of a line begins a packet of the length its kind byte gives (no newline); a bad
# checksum is answered `err bad_line bad checksum`. Pad presses count only from a central that
# may change the board (cribfw/admission.py); otherwise they are refused like a request.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


import gc

from cribcore.protocol import NUS_RX, NUS_SERVICE, NUS_TX
from cribfw.admission import ADDR_LEN
from cribfw.clock import ticks_diff, ticks_ms
from cribfw.irqflag import irq_flag
from cribfw.linebuffer import LineAssembler
from cribfw.pad import PACKET_LENGTHS, checksum
from cribfw.replies import SPARE_BOOKS
from cribfw.stacklimits import BTSTACK, max_centrals, stack_name

_IRQ_CENTRAL_CONNECT = const(1)
_IRQ_CENTRAL_DISCONNECT = const(2)
_IRQ_GATTS_WRITE = const(3)
_IRQ_MTU_EXCHANGED = const(21)
_FLAG_READ = const(0x0002)
_FLAG_WRITE_NO_RESPONSE = const(0x0004)
_FLAG_WRITE = const(0x0008)
_FLAG_NOTIFY = const(0x0010)


def _uuid_bytes(text):
    """A 128-bit UUID as advertised: its 16 bytes, least significant first."""
    digits = text.replace("-", "")
    return bytes(int(digits[i : i + 2], 16) for i in range(len(digits) - 2, -1, -2))


NUS_ADV = _uuid_bytes(NUS_SERVICE)
NAME_PREFIX = "Cribboard-"

MAX_CENTRALS = const(4)  # the most any stack takes at once (besides USB): stacklimits.py
DEFAULT_MTU = const(23)  # ATT MTU before any exchange: 20 bytes per notification
PREFERRED_MTU = const(247)  # offered when a central starts an MTU exchange
RX_BUFFER = const(256)  # the RX value: bytes appended between two reads
RX_RING = const(2048)  # received bytes not yet handled: a lone central's (about 140 pegs)
RX_RING_SHARED = const(1024)  # each central's where the stack takes several (NimBLE: four)
OUT_SIZE = const(1024)  # per central: lines waiting to be notified
HANDLE_ROOM = const(800)  # a central's line ends are handled while this much is free (frame: 757)
ADV_INTERVAL_US = const(100000)
RETRY_MS = const(1)  # after the stack refused a notification
STALL_MS = const(5000)  # NimBLE: refused this long without a break, the central is let go
QUEUED_MAX = const(9)  # btstack: the most notifications of a central it may queue on the heap
# btstack: the waits after a queued notification, one more queued each (5.5 s in all)
QUEUED_WAITS_MS = (1, 2, 4, 16, 64, 256, 1024, 4096)
PROBE = const(20)  # btstack: the most bytes notified while three or more are queued (small copies)
HEAP_GUARD = const(8192)  # btstack: below this free, the heap is collected before notifying
COPY_EXTRA = const(76)  # btstack: a queued copy's records (64-bit; a 32-bit port's cost less)
KEPT_MOST = const(16384)  # btstack: heap left behind by gone centrals before the board restarts

_PACKET_MAX = const(19)
_LEVEL_MOST = const(7)  # btstack: QUEUED_WAITS_MS's last: the longest wait (4096 ms)
_EMPTY = b""  # an empty notification: whether btstack still has any queued (module comment)
_NO_QUEUE = bytearray(0)
_BANG = const(33)


def _no_heap():
    return 0


def advertising_payloads(name):
    """(advertising data, scan response) for `name` (bytes, at most 29)."""
    adv = bytearray(b"\x02\x01\x06")  # flags: LE general discoverable, no BR/EDR
    adv += bytes((1 + len(NUS_ADV), 0x07)) + NUS_ADV  # complete list of 128-bit services
    room = 31 - len(adv) - 2
    if room > 0:
        short = name[:room]
        adv += bytes((1 + len(short), 0x09 if len(short) == len(name) else 0x08)) + short
    resp = bytes((1 + len(name), 0x09)) + name  # complete local name
    return bytes(adv), resp


def board_name(mac):
    """The name a board advertises: the prefix and the last two bytes of its address."""
    return NAME_PREFIX + "%02X%02X" % (mac[-2], mac[-1])


class Central:
    """One connected central: a link for the dispatcher. Fields the IRQ handler writes are
    marked; everything else belongs to the task."""

    def __init__(self, owner):
        self._owner = owner
        self.busy = False  # IRQ: the slot holds a connection (the task frees it)
        self.conn = -1  # IRQ
        self.address = bytearray(ADDR_LEN)  # IRQ: address type + 6 bytes
        self.mtu = DEFAULT_MTU  # IRQ
        self.joined = False  # IRQ: connected, not yet taken up by the task
        self.left = False  # IRQ: disconnected, not yet taken up by the task
        self.rx = bytearray(owner.ring)
        self.rx_head = 0  # task
        self.rx_tail = 0  # IRQ
        self.rx_cut = -1  # IRQ: where input was lost (the ring was full); -1: none
        self.live = False  # a link of the dispatcher
        self.trusted = False
        self.brief = False  # it asked for brief events (`brief 1`)
        self.every = False  # it asked for an event after every request (`every 1`)
        self.overflows = 0  # times its input ring overflowed (lines lost)
        self.pressed = False  # it pressed a pad button
        # Its sender's remembered replies (cribfw/replies.py), the board's, kept by address:
        # a central that comes back finds them, whatever slot it takes.
        self.recent = None
        self.lines = LineAssembler(
            self, owner.dispatcher.handle_line, owner.dispatcher.line_too_long
        )
        self.packet = bytearray(_PACKET_MAX)
        self.packet_n = 0  # bytes of a Bluefruit packet read so far (0: not in one)
        self.packet_len = 0
        # The queue is made when a central first takes the slot (by the task, not the IRQ): a
        # stack that takes four centrals costs heap only for those that came.
        self.out = _NO_QUEUE
        self.out_view = memoryview(_NO_QUEUE)
        self.out_start = 0
        self.out_end = 0
        self.dropped = 0  # lines that did not fit in the queue, and links given up
        self.owe_busy = False  # lines were dropped: `err busy` once the queue has drained
        self.refused = False  # NimBLE: the last notification was refused ...
        self.refused_from = 0  # ... and refused since then, without a break
        self.queued = 0  # btstack: notifications it queued (since one last went straight out)
        self.queued_bytes = 0  # the heap they cost
        self.queued_from = 0  # when the last of them was handed
        self.level = 0  # btstack: the wait after the last queued is QUEUED_WAITS_MS[level]
        self.start_level = 0  # btstack: the level a wait starts at (what this link needed last)
        self.cut = False  # let go by the board (its link stalled): nothing more is sent

    def reset(self):
        if not len(self.out):
            self.out = bytearray(OUT_SIZE)
            self.out_view = memoryview(self.out)
        self.brief = False
        self.every = False
        self.lines.reset()
        self.packet_n = 0
        self.packet_len = 0
        self.out_start = self.out_end = 0
        self.owe_busy = False
        self.refused = False
        self.queued = self.queued_bytes = 0
        self.level = self.start_level = 0
        self.cut = False
        self.pressed = False  # (the IRQ emptied the input ring when the central connected)

    # --- the dispatcher's side ---------------------------------------------------------------

    def send(self, buf, n):
        """Queue one line (buf[:n]) to be notified; dropped whole when there is no room."""
        if not self.live:
            return
        end = self.out_end
        if end + n > OUT_SIZE:
            self._compact()
            end = self.out_end
            if end + n > OUT_SIZE:
                self.dropped += 1
                self.owe_busy = True
                return
        out = self.out
        for i in range(n):
            out[end + i] = buf[i]
        self.out_end = end + n
        self._owner.wake()

    def room(self):
        """Bytes the queue can still take."""
        return OUT_SIZE - (self.out_end - self.out_start)

    def _compact(self):
        out = self.out
        start = self.out_start
        n = self.out_end - start
        for i in range(n):
            out[i] = out[start + i]
        self.out_start = 0
        self.out_end = n

    # --- bytes in ------------------------------------------------------------------------------

    def take(self, c):
        """One received byte: part of a Bluefruit packet, or of a protocol line."""
        if self.packet_n:
            self.packet[self.packet_n] = c
            self.packet_n += 1
            if self.packet_n == 2:
                length = PACKET_LENGTHS.get(c)
                if length is None:  # "!" and something else: an ordinary (bad) line
                    self.packet_n = 0
                    self.lines.feed_byte(_BANG)
                    self.lines.feed_byte(c)
                    return
                self.packet_len = length
            elif self.packet_n == self.packet_len:
                n = self.packet_n
                self.packet_n = 0
                self._owner.packet(self, self.packet, n)
            return
        if c == _BANG and self.lines.n == 0 and not self.lines.discarding:
            self.packet[0] = c  # requests never start with "!": a Bluefruit packet
            self.packet_n = 1
            return
        self.lines.feed_byte(c)


class BleLink:
    """The NUS peripheral and its connected centrals.

    ble: a `bluetooth.BLE()` (or anything with its methods); dispatcher: the board's Dispatcher;
    admission: who may change the board (cribfw.admission); pad: the Pad whose virtual pins the
    panel reads (None: pad packets do nothing); uuid: the UUID class (default `bluetooth.UUID`);
    stack: the Bluetooth stack's name (default: cribfw.stacklimits.stack_name()); heap: on
    btstack, a function giving the free heap in bytes (default gc.mem_free), which tells what the
    stack kept of a notification; restart: on btstack, what restarts the board once gone centrals
    left KEPT_MOST bytes behind (main() passes machine.soft_reset; None: it is not restarted)."""

    def __init__(
        self,
        ble,
        dispatcher,
        admission,
        pad=None,
        uuid=None,
        stack=None,
        heap=None,
        restart=None,
    ):
        self.ble = ble
        self.dispatcher = dispatcher
        self.admission = admission
        self.pad = pad
        self._uuid = uuid
        self.stack = stack or stack_name()
        self.max_centrals = min(max_centrals(self.stack), MAX_CENTRALS)
        if self.stack != BTSTACK:
            heap = _no_heap  # NimBLE keeps nothing on the heap: it refuses instead
        elif heap is None:
            heap = gc.mem_free if hasattr(gc, "mem_free") else _no_heap
        self._heap = heap
        self._restart = restart
        self._copies = self.stack == BTSTACK  # the stack queues copies on the heap (module note)
        self.queued_most = 0  # the most notifications btstack queued for one central at once
        self.queued_most_bytes = 0  # the most heap they cost at once
        self.kept = 0  # btstack: the heap gone centrals left behind (at most; never freed)
        # (The input rings are made at once: the IRQ fills a central's from its first write.)
        self.ring = RX_RING if self.max_centrals == 1 else RX_RING_SHARED
        self.centrals = [Central(self) for _ in range(self.max_centrals)]
        dispatcher.ctx.books.most += self.max_centrals + SPARE_BOOKS
        self.name = b""
        self._tx = -1
        self._rx = -1
        self._adv = b""
        self._resp = b""
        self._reject = -1  # IRQ: a connection beyond the stack's limit, to be closed
        self._advertise_due = False
        self._stopped = False  # IRQ: a connection stopped the stack's advertising since
        self._flag = None  # what wakes the task, once run() started
        self.advertising = False

    def start(self):
        """Switch the radio on, register the service and advertise; returns the name."""
        ble = self.ble
        uuid = self._uuid
        if uuid is None:
            import bluetooth

            uuid = bluetooth.UUID
        ble.active(True)
        try:
            ble.config(mtu=PREFERRED_MTU)
        except (ValueError, OSError):
            pass  # a stack without the setting keeps its own
        name = board_name(ble.config("mac")[1])
        try:
            ble.config(gap_name=name)
        except (ValueError, OSError):
            pass
        self.name = name.encode()
        service = (
            uuid(NUS_SERVICE),
            (
                (uuid(NUS_TX), _FLAG_READ | _FLAG_NOTIFY),
                (uuid(NUS_RX), _FLAG_WRITE | _FLAG_WRITE_NO_RESPONSE),
            ),
        )
        ((self._tx, self._rx),) = ble.gatts_register_services((service,))
        ble.gatts_set_buffer(self._rx, RX_BUFFER, True)
        self._adv, self._resp = advertising_payloads(self.name)
        ble.irq(self._irq)
        self._advertise()
        return name

    # --- IRQ: copy and wake, nothing else ----------------------------------------------------

    def _irq(self, event, data):
        if event == _IRQ_GATTS_WRITE:
            conn, handle = data
            if handle == self._rx:
                value = self.ble.gatts_read(handle)  # append mode: read clears it
                central = self._central(conn)
                if central is not None and central.rx_cut < 0:
                    # (After a loss, everything is dropped until the task has reached it.)
                    ring = central.rx
                    size = len(ring)
                    tail = central.rx_tail
                    cut = -1
                    for c in value:
                        nxt = (tail + 1) % size
                        if nxt == central.rx_head:
                            cut = tail
                            break
                        ring[tail] = c
                        tail = nxt
                    central.rx_tail = tail
                    central.rx_cut = cut
        elif event == _IRQ_CENTRAL_CONNECT:
            conn, addr_type, addr = data
            # A free slot, one whose queue was made if any (no heap taken for a new one).
            slot = None
            for central in self.centrals:
                if not central.busy and (slot is None or len(central.out)):
                    slot = central
            for central in self.centrals:
                if central is slot:
                    central.conn = conn
                    central.address[0] = addr_type
                    for i in range(6):
                        central.address[1 + i] = addr[i]
                    central.mtu = DEFAULT_MTU
                    central.rx_head = central.rx_tail = 0  # the slot is free: the task is done
                    central.rx_cut = -1
                    central.left = False
                    central.joined = True
                    central.busy = True
                    break
            else:
                self._reject = conn
            self._advertise_due = True  # the stack stopped advertising for this connection
            self._stopped = True
        elif event == _IRQ_CENTRAL_DISCONNECT:
            central = self._central(data[0])
            if central is not None:
                central.left = True
            self._advertise_due = True
        elif event == _IRQ_MTU_EXCHANGED:
            central = self._central(data[0])
            if central is not None:
                central.mtu = data[1]
        self.wake()

    def _central(self, conn):
        # Not one that left: the stack may give a new connection the same handle before the
        # task has freed the old one's slot (NimBLE, advertising while a central is connected).
        for central in self.centrals:
            if central.busy and not central.left and central.conn == conn:
                return central
        return None

    def wake(self):
        if self._flag is not None:
            self._flag.set()

    # --- the task --------------------------------------------------------------------------

    async def run(self, app=None):
        """The BLE task (for App.tasks)."""
        import asyncio

        # The IRQ handler wakes the task. A stack calls it from the scheduler (rp2, the unix
        # builds) or from its own thread (NimBLE on an ESP32), where only a ThreadSafeFlag (or
        # a cribboard image's native one: cribfw/irqflag.py) may be set. On MicroPython's unix
        # port that flag, having no file descriptor, makes each wait of the event loop, even
        # the zero-length one before every task it runs, a poll(2) in 1 ms steps that only a
        # ready descriptor cuts short (extmod/modselect.c, v1.28.0). The virtual board's radio calls the handler from the firmware's own calls,
        # inside a task (`irq_in_task`, firmware/sim/bluetooth.py): there an Event serves,
        # cleared before each service() so a wake during it is kept, and no wait is lengthened.
        in_task = getattr(self.ble, "irq_in_task", False)
        flag = irq_flag(asyncio, getattr(app, "cribio", None), in_task)
        self._flag = flag
        flag.set()
        while True:
            await flag.wait()
            if in_task:
                flag.clear()  # (a ThreadSafeFlag clears itself)
            if not self.service():
                await asyncio.sleep_ms(RETRY_MS)  # the stack's queue was full
                flag.set()

    def service(self):
        """Everything the IRQs and the dispatcher left to do; False if a notification has to
        wait for the stack."""
        done = True
        if self._reject >= 0:
            conn = self._reject
            self._reject = -1
            self.ble.gap_disconnect(conn)
        for central in self.centrals:
            if central.left and central.live:
                central.left = False  # gone: freed before any newcomer is taken up
                self._leave(central)
        if self._advertise_due and not self._advertise_now():
            done = False
        for central in self.centrals:
            if central.joined:
                central.joined = False
                self._join(central)
            if central.left:
                central.left = False
                self._leave(central)
                self._advertise_due = True  # (it came and went: its slot is free again)
                continue
            if central.live:
                head = central.rx_head
                self._receive(central)
                if central.rx_head != head:
                    self.dispatcher.input_done()  # what its requests changed: one event
                # (Flushed here, each central after its own input. With all flushed after every
                # central's input, a NimBLE board on the unix port was not found again after a
                # central vanished in most runs of test_ble_real beside a busy CPU; why is not
                # understood yet.)
                if not self._flush(central):
                    done = False
                elif central.rx_head != central.rx_tail:
                    self.wake()  # input waited for room in the queue: there is room now
        if self._advertise_due and not self._advertise_now():
            done = False
        if self.kept >= KEPT_MOST and self._restart is not None and not self.connected():
            # Gone centrals left all the heap they may: only a restart gives it back (module
            # comment). Nobody is connected and no more are taken; the app saves on the way.
            self._restart()
        return done

    def _advertise_now(self):
        # Before any request is read (health's badv says what the stack does now) and again
        # after: a connect can come while the stack starts advertising (NimBLE runs its events
        # while it waits for the controller), and its IRQ asks again.
        self._advertise_due = False
        return self._advertise()  # False: tried again after a moment

    def _join(self, central):
        central.reset()
        central.trusted = self.admission.knows(central.address)
        central.recent = self.dispatcher.ctx.books.join(central.address, self.admission.knows)
        central.live = True
        self.dispatcher.add_link(central)

    def _leave(self, central):
        if central.queued:
            # What btstack still had queued for it stays on the heap for good (module comment).
            self.kept += central.queued_bytes
            central.queued = central.queued_bytes = 0
        central.live = False
        self.dispatcher.remove_link(central)
        central.recent.live -= 1
        self.admission.forget(central)
        if central.pressed and self.pad is not None:
            self.pad.release_all()
        central.trusted = False
        central.out_start = central.out_end = 0
        central.busy = False  # last: the IRQ may now reuse the slot

    def _receive(self, central):
        ring = central.rx
        size = len(ring)
        head = central.rx_head
        while True:
            if head == central.rx_cut:
                # Input was lost here: the line it cut is skipped to its end, the central told.
                central.lines.skip_line()
                central.packet_n = 0
                central.overflows += 1
                self.dispatcher.send_error(central, b"busy", b"input overflow: lines lost")
                central.rx_cut = -1  # the IRQ takes input again
            if head == central.rx_tail:
                break
            c = ring[head]
            if (c == 10 or central.packet_n) and central.room() < HANDLE_ROOM:
                break  # what may be answered waits until the queue has room for any reply
            head = (head + 1) % size
            central.rx_head = head
            central.take(c)

    def _flush(self, central):
        size = central.mtu - 3
        heap = self._heap
        guard = self._copies  # btstack: the heap to be checked before the first notification
        while central.out_start < central.out_end or central.queued:
            if central.cut:
                central.out_start = central.out_end  # let go: nothing more is sent
                break
            start = central.out_start
            n = central.out_end - start
            if n > size:
                n = size
            queued = central.queued
            if queued:
                # btstack has some queued: wait for the link to send them, then a small one (or,
                # the queue empty, an empty one) tells whether they went (module comment).
                if ticks_diff(ticks_ms(), central.queued_from) < QUEUED_WAITS_MS[central.level]:
                    return False
                if queued > 2 and n > PROBE:
                    n = PROBE
            piece = central.out_view[start : start + n] if n else _EMPTY
            if guard:
                guard = False
                if heap() < HEAP_GUARD:
                    gc.collect()  # (a queued copy's allocation must not collect: module comment)
            try:
                # (No branch between the two readings: the stack's scheduled work cannot run.)
                free = heap()
                self.ble.gatts_notify(central.conn, self._tx, piece)
                after = heap()
            except OSError:
                # NimBLE's queue is full: tried again shortly; given up after STALL_MS.
                now = ticks_ms()
                if not central.refused:
                    central.refused = True
                    central.refused_from = now
                elif ticks_diff(now, central.refused_from) >= STALL_MS:
                    self._let_go(central)
                    continue
                return False
            central.refused = False
            central.out_start = start + n
            if self._copies:
                if free != after:
                    self._queued(central, free - after, n)
                elif central.queued:
                    # It went straight out: none queued. The next wait starts a level lower than
                    # this one (a slow link's waits are not started from the shortest again).
                    central.queued = central.queued_bytes = 0
                    central.start_level = central.level - 1 if central.level else 0
        central.out_start = central.out_end = 0
        if central.owe_busy and not central.cut:
            central.owe_busy = False
            self.dispatcher.send_error(central, b"busy", b"output full: lines lost")
            return self._flush(central)
        return True

    def _queued(self, central, spent, n):
        """btstack copied a notification of `n` bytes onto the heap (spent: the heap that cost,
        as read; counted at no less than such a copy costs: module comment)."""
        central.queued += 1
        if central.queued == 1:
            central.level = central.start_level
        elif central.level < _LEVEL_MOST:
            central.level += 1
        most = (n + COPY_EXTRA + 15) & ~15
        central.queued_bytes += spent if spent > most else most
        central.queued_from = ticks_ms()
        if central.queued > self.queued_most:
            self.queued_most = central.queued
        if central.queued_bytes > self.queued_most_bytes:
            self.queued_most_bytes = central.queued_bytes
        if central.queued >= QUEUED_MAX:
            # Its link carried almost nothing for seconds: let it go (it reconnects and
            # resends).
            self._let_go(central)

    def _let_go(self, central):
        """Give up on a central whose link does not carry what it is given: disconnected, never
        a line cut short on a link that goes on (module comment)."""
        central.cut = True
        central.dropped += 1
        central.out_start = central.out_end
        try:
            self.ble.gap_disconnect(central.conn)
        except OSError:
            pass

    def lost(self):
        """Lines lost on Bluetooth since the board started (the health report): replies and
        events a central's queue could not take, input that overflowed."""
        total = 0
        for central in self.centrals:
            total += central.dropped + central.overflows
        return total

    def connected(self):
        """Centrals connected now."""
        n = 0
        for central in self.centrals:
            if central.busy:
                n += 1
        return n

    def _advertise(self):
        """Advertise while a slot is free (the stack stopped at the last connect); False when the
        stack refused (tried again shortly)."""
        free = self.connected() < self.max_centrals and self.kept < KEPT_MOST
        try:
            if self.kept >= KEPT_MOST:
                self.ble.gap_advertise(None)  # no more centrals until the restart
            elif free:
                if self.advertising and not self._stopped:
                    return True  # (still advertising: a central left, none came)
                # Cleared before the start: a connect while the stack starts (its IRQ can run
                # meanwhile) stops it again and says so.
                self._stopped = False
                # The data once; after that None keeps it (fewer HCI commands, each of which
                # the stack waits for: module comment).
                adv, resp = self._adv, self._resp
                self.ble.gap_advertise(ADV_INTERVAL_US, adv_data=adv, resp_data=resp)
                self._adv = self._resp = None
            elif self.stack != BTSTACK:
                self.ble.gap_advertise(None)
            # (btstack holds advertising back by itself while its one central is connected and
            # resumes when it leaves; told to stop, it raced the next start and stayed silent.)
        except OSError:
            self.advertising = False
            self._advertise_due = True
            return False
        self.advertising = free
        return True

    # --- Bluefruit Connect packets ------------------------------------------------------------

    def packet(self, central, data, n):
        dispatcher = self.dispatcher
        if checksum(data, n - 1) != data[n - 1]:
            dispatcher.send_error(central, b"bad_line", b"bad checksum")
            return
        if data[1] != 66:  # not "B": colour picker, sensor streams: nothing to do
            return
        state = data[3]
        if state != 48 and state != 49:
            dispatcher.send_error(central, b"bad_line", b"bad button packet")
            return
        pressed = state == 49
        if not self.admission.may_change(central):
            if pressed:
                dispatcher.deny(central)
            return
        if self.pad is not None and self.pad.set(data[2] - 48, pressed):
            central.pressed = True
