# A debounced push button that reports taps, long presses and auto-repeat as events. The pin is
# passed in and only ever read with `pin.value()`, so tests and the virtual board hand in
# anything with that method. Timings are class attributes (milliseconds).

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython
    from cribcore.nomicropython import const


from cribfw.clock import ticks_diff

NONE = const(0)
PRESS = const(1)  # went down (debounced)
TAP = const(2)  # released before LONG_MS
LONG = const(3)  # held LONG_MS
REPEAT = const(4)  # still held: every REPEAT_MS after LONG
RELEASE = const(5)  # released after a LONG


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

    def pressed_now(self):
        """The pin's level right now, undebounced (for a check at power-on)."""
        return self._pin.value() == self._active

    @micropython.native
    def held_ms(self, now):
        """How long the button has been held down (0 when up)."""
        return ticks_diff(now, self._down_at) if self.down else 0

    @micropython.native
    def update(self, now):
        """Read the pin at time `now` (ms); returns one event (NONE most of the time)."""
        raw = self._pin.value() == self._active
        if raw != self._raw:
            self._raw = raw
            self._raw_since = now
        elif raw != self.down and ticks_diff(now, self._raw_since) >= self.DEBOUNCE_MS:
            self.down = raw
            if raw:
                self._down_at = now
                self._long = False
                return PRESS
            return RELEASE if self._long else TAP
        if self.down:
            held = ticks_diff(now, self._down_at)
            if not self._long:
                if held >= self.LONG_MS:
                    self._long = True
                    self._next_repeat = self.LONG_MS + self.REPEAT_MS
                    return LONG
            elif held >= self._next_repeat:
                self._next_repeat += self.REPEAT_MS
                return REPEAT
        return NONE
