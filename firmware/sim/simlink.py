# The virtual board's link to its launcher (MicroPython, unix port only; never deployed).
#
# The launcher and this module exchange datagrams over AF_UNIX sockets whose paths come from
# the environment. Datagrams keep message boundaries, so a frame is never half-sent and a
# non-blocking send either delivers a whole message or fails with EAGAIN.
#
# board -> launcher:  b"H" hello (link up)        b"B" boot done (about to run boot.py)
#                     b"F" + bpp + pixel bytes (GRB[W] order)
#                     b"R" hard reset request     b"S" soft reset request
#                     b"X <value>" the scratch register is set (it survives a watchdog reset)
#                     b"W <ms>" the watchdog is armed for ms (0: stopped)
#                     b"k <gen> <kind> <block> <index> <total>" stopped at a flash point (below)
#                     b"M <free> <alloc>" the heap after a collection (the answer to G)
# launcher -> board:  b"D <pin> <ms>" press pin for ms (-1: hold until released)
#                     b"U <pin>" release pin
#                     b"K <gen> <n>" stop at the n-th flash point from now (-1: run on)
#                     b"K <gen> <n> <kind>" stop at the start of the n-th flash operation of
#                     a kind (erase, program, any) from now
#                     b"G" collect garbage and say what the heap holds (a leak shows there)
# Flash points (for power-cut tests): simflash.py calls flash_point() before each 256-byte step
# of an erase or a program and once at its end (index == total). Armed, the board stops there,
# says where (k) and waits, doing nothing else, for the next K (or the kill that is the cut):
# the test can cut the power at an exact step of a save, however busy the machine is.
# Bluetooth LE (the simulated radio): messages starting with b"b", both ways; see bluetooth.py.
import os
import select
import socket
import struct
import sys
import time

_HELD = -1
_WATCH_MS = (
    5  # while a button's level is due to change by itself, messages are looked for this often
)
_UP_MS = 60  # up this long between two presses of a button: past the firmware's debounce (20 ms)
_MAX_MESSAGE = 520  # the longest from the launcher: a BLE write of 512 bytes and its header


def _sockaddr(path):
    # The unix port takes raw struct sockaddr bytes; BSD/macOS put a length byte first.
    raw = path.encode() + b"\0"
    if sys.platform == "darwin":
        return bytes((len(raw) + 2, socket.AF_UNIX)) + raw
    return struct.pack("<H", socket.AF_UNIX) + raw


class Link:
    """The board end of the side channel; inert when not started by the launcher."""

    def __init__(self, launcher_path, board_path):
        self._sock = None
        self._launcher = None
        self.ble = None  # the simulated bluetooth.BLE, once the firmware made one
        self._unsent = []  # (key, message): control messages waiting for room in the socket
        self._polling = False
        self._pending_ms = {}  # pin name -> press length, not yet seen by the firmware
        self._down_until = {}  # pin name -> ticks deadline, or _HELD
        self._queued_ms = {}  # pin name -> presses sent while the last was not over
        self._up_since = {}  # pin name -> ticks when the firmware saw the last press end
        self._unsent_frame = None
        self._last_poll = time.ticks_ms() - 1
        self._irq_pins = []
        self._watched_loop = None  # the event loop (its IO queue) a watcher task serves
        self._break = None  # flash points to pass before stopping (None: not armed)
        self._break_gen = 0
        self._break_kind = None  # count only starts of operations of this kind (b"any": all)
        if not launcher_path or not board_path:
            return
        try:
            os.remove(board_path)  # left over if this module was imported before
        except OSError:
            pass
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.bind(_sockaddr(board_path))
            sock.setblocking(False)
        except OSError as err:
            print("simlink: side channel unavailable:", err)
            return
        self._sock = sock
        # One recv() per datagram: a stream read (readinto) would run several datagrams
        # together. The poll says whether one is waiting, without raising EAGAIN every time.
        self._poller = select.poll()
        self._poller.register(sock, select.POLLIN)
        self._launcher = _sockaddr(launcher_path)
        self.send(b"H")

    def send(self, message):
        """Send one datagram without blocking; return False if it could not go now."""
        if self._sock is None:
            return False
        try:
            self._sock.sendto(message, self._launcher)
            return True
        except OSError:
            return False

    def send_control(self, message, key):
        """Send a message that must arrive (advertising, the GATT table): when the socket is
        full it is retried at the next poll, in order; a newer message with the same `key`
        replaces a waiting one."""
        if key is not None:
            self._unsent = [m for m in self._unsent if m[0] != key]
        if self._unsent or not self.send(message):
            self._unsent.append((key, message))

    def send_frame(self, message):
        # A frame the launcher's queue could not take is retried at the next poll, so the
        # latest picture always arrives even after a burst.
        if self.send(message):
            self._unsent_frame = None
        else:
            self._unsent_frame = message

    def poll(self, now_anyway=False):
        """Take in button messages; cheap (at most one syscall per millisecond, unless
        `now_anyway`)."""
        now = time.ticks_ms()
        if (now == self._last_poll and not now_anyway) or self._sock is None or self._polling:
            return
        self._last_poll = now
        self._polling = True  # an IRQ handler run from here must not poll again
        try:
            while self._unsent and self.send(self._unsent[0][1]):
                self._unsent.pop(0)
            if self._unsent_frame is not None:
                self.send_frame(self._unsent_frame)
            while self._waiting():
                message = self._sock.recv(_MAX_MESSAGE)
                if not message:
                    break
                self._handle(message)
            for pin in self._irq_pins:
                pin._check_irq()
        finally:
            self._polling = False

    def _waiting(self):
        for _ in self._poller.ipoll(0):
            return True
        return False

    def flash_point(self, kind, block, index, total):
        """Before step `index` of the `total` steps of a flash operation (`kind` b"erase" or
        b"program" of absolute `block`), and at its end (index == total): stop here if armed."""
        if self._sock is None:
            return
        while self._waiting():  # an arm sent just before this point counts (no rate limit)
            self._handle(self._sock.recv(_MAX_MESSAGE))
        counting = self._break_kind
        if counting is not None and (index or counting not in (b"any", kind)):
            return  # counting operations: only the first point of one of the kind counts
        while self._break == 0:
            self.send(b"k %d %s %d %d %d" % (self._break_gen, kind, block, index, total))
            self._break = -2  # stopped: only the next K goes on
            while self._break == -2:
                self._poller.poll(-1)
                self._handle(self._sock.recv(_MAX_MESSAGE))
            if self._break_kind is not None:
                return  # armed for operations: they count from the next one on
        if self._break is not None:
            self._break -= 1

    def _handle(self, message):
        if message[:1] == b"b":
            if self.ble is not None:
                self.ble._radio(message)  # the simulated radio's IRQs, as the scheduler runs them
            return
        parts = message.decode().split()
        if len(parts) == 3 and parts[0] == "D":
            ms = int(parts[2])
            name = parts[1]
            if ms < 0:
                self._down_until[name] = _HELD
                self._pending_ms.pop(name, None)
                self._queued_ms.pop(name, None)
            elif name in self._pending_ms or name in self._down_until or self._just_up(name):
                # A finger presses again only once the button is up: a press sent before the
                # firmware saw the last one end, or before it saw the button up long enough to
                # debounce (a busy board), waits for it, never merges with it.
                self._queued_ms.setdefault(name, []).append(ms)
            else:
                self._pending_ms[name] = ms
        elif len(parts) in (3, 4) and parts[0] == "K":
            self._break_gen = int(parts[1])
            n = int(parts[2])
            self._break = n if n >= 0 else None
            self._break_kind = parts[3].encode() if len(parts) == 4 else None
        elif parts == ["G"]:
            import gc

            gc.collect()
            self.send(b"M %d %d" % (gc.mem_free(), gc.mem_alloc()))
        elif len(parts) == 2 and parts[0] == "U":
            self._down_until.pop(parts[1], None)
            self._pending_ms.pop(parts[1], None)
            self._queued_ms.pop(parts[1], None)

    def _just_up(self, name):
        up_since = self._up_since.get(name)
        return up_since is not None and time.ticks_diff(time.ticks_ms(), up_since) < _UP_MS

    def is_down(self, name):
        """True while the simulated button on pin `name` is pressed."""
        self.poll()
        return self._level(name)

    def _level(self, name):
        # A press starts when the firmware first looks, so a busy firmware never misses it.
        now = time.ticks_ms()
        queued = self._queued_ms.get(name)
        if queued and name not in self._down_until and name not in self._pending_ms:
            # The next press, once the firmware has seen the button up long enough to debounce.
            up_since = self._up_since.get(name)
            if up_since is None or time.ticks_diff(now, up_since) >= _UP_MS:
                self._pending_ms[name] = queued.pop(0)
        ms = self._pending_ms.pop(name, None)
        if ms is not None:
            self._down_until[name] = time.ticks_add(now, ms)
        deadline = self._down_until.get(name)
        if deadline is None:
            return False
        if deadline == _HELD or time.ticks_diff(deadline, now) > 0:
            return True
        del self._down_until[name]
        self._up_since[name] = now
        return False

    def watch_irq(self, pin):
        if pin not in self._irq_pins:
            self._irq_pins.append(pin)
        self._start_watcher()

    def _start_watcher(self):
        # A board's pin interrupt comes when the edge does, even while the firmware sleeps in
        # asyncio's wait (nothing reading a pin, nothing written to the LEDs). Here a task of
        # the running event loop waits for the launcher's messages and takes them in as they
        # come, edges and radio events alike. One per event loop (a new loop drops the tasks).
        if self._sock is None:
            return
        import asyncio
        from asyncio import core

        if self._watched_loop is core._io_queue:
            return
        self._watched_loop = core._io_queue
        asyncio.create_task(self._watch(core._io_queue))

    async def _watch(self, queue):
        import asyncio
        from asyncio import core

        while queue is core._io_queue:
            wait = self._next_change_ms()
            if wait < 0:
                yield queue.queue_read(self._sock)  # as asyncio's own streams wait
            else:
                # A timed press ends, or a press waiting for the button to have been up long
                # enough starts, at a time of its own: its edge comes then, as on a board
                # (and messages meanwhile wait _WATCH_MS at most).
                await asyncio.sleep_ms(min(wait, _WATCH_MS))
            self.poll(True)

    def _next_change_ms(self):
        """Milliseconds until a watched button's level changes by itself (-1: none will)."""
        now = time.ticks_ms()
        soonest = -1
        for pin in self._irq_pins:
            name = pin._name
            deadline = self._down_until.get(name)
            if deadline is not None:
                if deadline != _HELD:
                    soonest = _sooner(soonest, time.ticks_diff(deadline, now))
            elif self._queued_ms.get(name):
                up_since = self._up_since.get(name)
                wait = 0 if up_since is None else time.ticks_diff(up_since, now) + _UP_MS
                soonest = _sooner(soonest, wait)
        return soonest

    def unwatch_irq(self, pin):
        if pin in self._irq_pins:
            self._irq_pins.remove(pin)

    def connected(self):
        """True when the launcher started this board (the side channel exists)."""
        return self._sock is not None

    def scratch(self):
        """The watchdog scratch register as the launcher kept it over the last reset."""
        return int(os.getenv("CRIBBOARD_SIM_SCRATCH") or "0")

    def set_scratch(self, value):
        self.send(b"X %d" % value)

    def watchdog(self, ms):
        """Arm the launcher's watchdog for `ms` (0 stops it): if the interpreter is still busy
        then (a crash or a hang), the launcher restarts it as a watchdog reset."""
        self.send(b"W %d" % ms)

    def request_reset(self, hard):
        """Ask the launcher to restart the interpreter; True if the request went out."""
        return self.send(b"R" if hard else b"S")


def _sooner(soonest, wait):
    wait = max(0, wait)
    return wait if soonest < 0 else min(soonest, wait)


link = Link(os.getenv("CRIBBOARD_SIM_LINK"), os.getenv("CRIBBOARD_SIM_BOARD"))
