# A phone's control pad as board buttons. Adafruit Bluefruit Connect's control pad sends, for each
# press and release, a 5-byte packet on the Nordic UART Service (no newline):
#   b"!B" + button (b"1".."8") + state (b"1" pressed, b"0" released) + checksum
#   checksum = ~(sum of the four bytes before it) & 0xFF
# The BLE link (cribfw/blelink.py) parses the packets; the pad buttons become virtual pins read by
# the same Button and Panel logic as the physical buttons (a pad press and a real press of the same
# name act as one button), so the pad does exactly what the board's buttons do:
#   1 -> A+   2 -> A-   3 -> B+   4 -> B-   5 (up) -> C+   6 (down) -> C-   7 (left), 8 (right) -> deal
#
# A press and its release can arrive within a few ms of each other (one BLE connection event), far
# shorter than the buttons' 20 ms debounce: a pad press holds its pin down for at least LATCH_MS.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


from cribfw.clock import ticks_diff, ticks_ms

LATCH_MS = const(60)  # a pad press reads as pressed at least this long (debounce is 20 ms)
# Bluefruit pad button b"1".."8" -> panel button name
PAD_BUTTONS = ("A+", "A-", "B+", "B-", "C+", "C-", "deal", "deal")
# Bluefruit Connect packets: kind byte -> whole packet length, checksum included. Only "B"
# (buttons) acts; the others (colour picker, sensor streams) are read and ignored.
PACKET_LENGTHS = {66: 5, 67: 6, 81: 19, 65: 15, 71: 15, 77: 15, 76: 15}  # B C Q A G M L


def checksum(data, n):
    """The Bluefruit checksum of data[:n]."""
    total = 0
    for i in range(n):
        total += data[i]
    return ~total & 0xFF


class VirtualPin:
    """A pull-up input pin pressed by software: value() reads 0 while pressed. Like a
    machine.Pin, irq(handler, trigger) has handler(pin) called on its edges: the press, and the
    release once the press has lasted LATCH_MS (at release(), or at the first value() after)."""

    IRQ_FALLING = 4  # (rp2's values; esp32's differ: EitherPin maps them)
    IRQ_RISING = 8

    def __init__(self):
        self._down = False
        self._since = 0
        self._release = False
        self._handler = None
        self._trigger = 0

    def irq(self, handler=None, trigger=12, hard=False):
        self._handler = handler
        self._trigger = trigger

    def press(self):
        was_down = self._down
        self._down = True
        self._release = False
        self._since = ticks_ms()
        if not was_down:
            self._edge(self.IRQ_FALLING)

    def release(self):
        self._release = True  # applied once the press has lasted LATCH_MS
        self.value()

    def value(self):
        if self._release and ticks_diff(ticks_ms(), self._since) >= LATCH_MS:
            self._down = False
            self._release = False
            self._edge(self.IRQ_RISING)
        return 0 if self._down else 1

    def _edge(self, kind):
        if self._handler is not None and self._trigger & kind:
            self._handler(self)


class EitherPin:
    """Two pull-up inputs read as one: pressed when either is (the board's button and the
    phone's pad button of the same name). Its irq arms both: an edge of either calls the
    handler (with the pin that changed)."""

    IRQ_FALLING = 4  # (rp2's values; esp32's differ: EitherPin maps them)
    IRQ_RISING = 8

    def __init__(self, a, b):
        self._a = a
        self._b = b

    @property
    def irq_in_task(self):
        return getattr(self._a, "irq_in_task", False)

    def irq(self, handler=None, trigger=12, hard=False):
        a = self._a
        b = self._b
        falling = a.IRQ_FALLING if trigger & 4 else 0
        a.irq(handler, falling | (a.IRQ_RISING if trigger & 8 else 0))
        b.irq(handler, trigger)

    def value(self):
        return self._a.value() & self._b.value()


class Pad:
    """The virtual pins of the pad buttons, by panel button name."""

    def __init__(self):
        self.pins = {}
        for name in PAD_BUTTONS:
            if name not in self.pins:
                self.pins[name] = VirtualPin()

    def pin(self, name):
        return self.pins.get(name)

    def either(self, pin, name):
        """`pin` (a board button's), or the pad button of that name when pressed."""
        pad = self.pins.get(name)
        return pin if pad is None else EitherPin(pin, pad)

    def set(self, button, pressed):
        """Bluefruit button 1..8 pressed (True) or released; False for another number."""
        if button < 1 or button > len(PAD_BUTTONS):
            return False
        pin = self.pins[PAD_BUTTONS[button - 1]]
        if pressed:
            pin.press()
        else:
            pin.release()
        return True

    def release_all(self):
        for name in self.pins:
            self.pins[name].release()
