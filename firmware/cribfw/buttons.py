# A debounced push button that reports taps, long presses and auto-repeat as events. The pin is
# passed in and read with `pin.value()`, so tests and the virtual board hand in anything with that
# method. Timings are class attributes (milliseconds).
#
# A pin that has `irq` (machine.Pin on rp2 and esp32, the control pad's pins) can be watched: its
# edges mark the button (`resting` False), note the microsecond they came in and set a flag; a
# button that rests (up, not bouncing, no edge since it was last read) is then not read at all, so
# the buttons cost nothing until someone touches one. Its debounce counts in microseconds from the
# contact's last edge, not from the read that noticed it. asyncio sleeps whole milliseconds: the
# last of them (WAIT_US at most) are waited with sleep_us before the read that ends the debounce,
# once per press or release. `due_in` says when to read it next.

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

    def const(value):  # type: ignore[no-redef]
        return value


from cribfw.clock import sleep_us, ticks_add, ticks_diff, ticks_us

NONE = const(0)
PRESS = const(1)  # went down (debounced)
TAP = const(2)  # released before LONG_MS
LONG = const(3)  # held LONG_MS
REPEAT = const(4)  # still held: every REPEAT_MS after LONG
RELEASE = const(5)  # released after a LONG
# A watched debounce's last microseconds are waited with sleep_us (asyncio sleeps whole ms, and
# a turn of the buttons task takes a good part of one on an RP2040): at most this many.
WAIT_US = const(1500)


class Button:
    DEBOUNCE_MS = 20  # the contact must rest this long in a new state
    LONG_MS = 600
    REPEAT_MS = 350

    def __init__(self, pin, active_low=True):
        self._pin = pin
        self._active = 0 if active_low else 1
        self.down = False  # debounced state
        self._raw = False
        self._raw_since = 0
        self._down_at = 0
        self._long = False
        self._next_repeat = 0
        # Watching (see watch): an edge since the last read, the flag an edge sets, and the
        # IRQ handler, bound once here so that an interrupt allocates nothing.
        self._watched = False
        self._edge = False
        self._edge_us = 0  # when the last edge came
        self._raw_since_us = 0
        self._clock = ticks_us  # (microseconds)
        self._sleep_us = sleep_us
        self._wake = None
        self._on_edge = self._edge_seen
        # Nothing to read until an edge (watched, up and settled): the panel skips the button
        # without a call. Cleared by every edge.
        self.resting = False

    def watch(self, wake, clock=None, sleep=None):
        """Have the pin's edges mark this button and call `wake.set()` (an asyncio
        ThreadSafeFlag or Event); True if the pin has interrupts, False if it must be polled.
        `clock` gives the time of an edge and of a watched debounce in microseconds (default
        ticks_us); `sleep` waits a number of them (default sleep_us)."""
        self._wake = wake
        if clock is not None:
            self._clock = clock
        if sleep is not None:
            self._sleep_us = sleep
        pin = self._pin
        try:
            pin.irq(self._on_edge, pin.IRQ_FALLING | pin.IRQ_RISING)
        except AttributeError:  # a pin without interrupts (only value()): polled
            return False
        self._edge_us = self._clock()
        self._edge = True  # read it once: it may be held already
        self._watched = True
        return True

    def irq_in_task(self):
        """Whether the pin calls its IRQ handler from inside a task (the virtual board's pins),
        where an asyncio.Event serves as the flag, rather than from an interrupt."""
        return getattr(self._pin, "irq_in_task", False)

    def _edge_seen(self, pin):
        # The IRQ handler: allocates nothing (a hard interrupt may not).
        self._edge_us = self._clock()
        self._edge = True
        self.resting = False
        wake = self._wake
        if wake is not None:
            wake.set()

    def pressed_now(self):
        """The pin's level right now, undebounced (for a check at power-on)."""
        return self._pin.value() == self._active

    @micropython.native
    def held_ms(self, now):
        """How long the button has been held down (0 when up)."""
        return ticks_diff(now, self._down_at) if self.down else 0

    @micropython.native
    def update(self, now):
        """Read the pin at time `now` (ms); returns one event (NONE most of the time). A watched
        button that rests is not read."""
        watched = self._watched
        edged = False
        us = 0
        since_us = 0
        if watched:
            if not (self._edge or self._raw or self.down):
                return NONE
            us = self._clock()
            since_us = us
            if self._edge:
                edged = True
                self._edge = False  # (before the read: an edge during it is kept)
                since_us = self._edge_us  # a debounce counts from the contact's last edge
            elif self._raw != self.down:
                left = self.DEBOUNCE_MS * 1000 - ticks_diff(us, self._raw_since_us)
                if 0 < left <= WAIT_US:  # the debounce ends in a moment: read then
                    self._sleep_us(left)
                    us = self._clock()
                    now = ticks_add(now, (left + 999) // 1000)  # (the ms of the read)
        raw = self._pin.value() == self._active
        event = NONE
        if raw != self._raw:
            self._raw = raw
            self._raw_since = now
            self._raw_since_us = since_us
        elif edged and raw != self.down:
            self._raw_since_us = since_us  # it bounced back meanwhile: the debounce starts again
        elif raw != self.down and (
            ticks_diff(us, self._raw_since_us) >= self.DEBOUNCE_MS * 1000
            if watched
            else ticks_diff(now, self._raw_since) >= self.DEBOUNCE_MS
        ):
            self.down = raw
            if raw:
                self._down_at = now
                self._long = False
                event = PRESS
            else:
                event = RELEASE if self._long else TAP
        if event == NONE and self.down:
            held = ticks_diff(now, self._down_at)
            if not self._long:
                if held >= self.LONG_MS:
                    self._long = True
                    self._next_repeat = self.LONG_MS + self.REPEAT_MS
                    event = LONG
            elif held >= self._next_repeat:
                self._next_repeat += self.REPEAT_MS
                event = REPEAT
        if watched:
            # Stored before `_edge` is looked at again: an edge after this clears it itself.
            self.resting = not (raw or self.down)
            if self._edge:
                self.resting = False
        return event

    @micropython.native
    def due_in(self, now):
        """Milliseconds until this button must be read again at the latest: 0 now (an edge
        came), the end of a debounce, the next long press or repeat while held; -1 while it
        rests (up and settled: for a watched button only an edge changes that)."""
        if self._edge:
            return 0
        if self._raw != self.down:
            if self._watched:
                # Whole ms, to wake with between WAIT_US - 1000 and WAIT_US left (asyncio's
                # waits are whole ms, give or take one): update waits the rest.
                left = self.DEBOUNCE_MS * 1000 - ticks_diff(self._clock(), self._raw_since_us)
                due = (left - WAIT_US + 1000) // 1000
            else:
                due = self.DEBOUNCE_MS - ticks_diff(now, self._raw_since)
        elif self.down:
            held = ticks_diff(now, self._down_at)
            due = (self._next_repeat if self._long else self.LONG_MS) - held
        else:
            return -1
        return due if due > 0 else 0
