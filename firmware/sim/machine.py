# Simulated `machine` module for the virtual board (MicroPython unix port; never deployed).
#
# It stands in for a board's built-in module: the firmware imports `machine` and gets this.
# Buttons are simulated: the launcher's side channel presses and releases pins by name
# (str(pin id)). A button shorts its pin to ground, or to 3V3 when the pin is pulled down.
import time

from simlink import link

PWRON_RESET = 1
HARD_RESET = 2
WDT_RESET = 3
DEEPSLEEP_RESET = 4
SOFT_RESET = 5

_freq = 125_000_000


class Pin:
    """A GPIO pin; inputs read the simulated buttons, outputs remember their value."""

    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    ALT = 3
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8
    # The IRQ handler runs inside the firmware's own steps (see irq), never from an interrupt
    # or another thread: the firmware may wake a task with an asyncio.Event (cribfw/app.py).
    irq_in_task = True

    def __init__(self, id, mode=-1, pull=-1, value=None, **kwargs):
        self._id = id
        self._name = str(id)
        self._mode = Pin.IN
        self._pull = None
        self._out = 0
        self._irq_handler = None
        self._irq_trigger = 0
        self._irq_last = 1
        self.init(mode, pull, value)

    def init(self, mode=-1, pull=-1, value=None, **kwargs):
        """Reconfigure the pin; arguments left at -1/None keep their setting."""
        if mode != -1:
            self._mode = mode
        if pull != -1:
            self._pull = pull
        if value is not None:
            self._out = 1 if value else 0

    def value(self, x=None):
        """Read the pin (no argument) or set an output (with an argument)."""
        if x is not None:
            self._out = 1 if x else 0
            return None
        if self._mode == Pin.OUT:
            return self._out
        return self._read(link.is_down(self._name))

    def _read(self, down):
        if self._pull == Pin.PULL_DOWN:
            return 1 if down else 0
        return 0 if down else 1

    def __call__(self, x=None):
        return self.value(x)

    def on(self):
        self._out = 1

    def off(self):
        self._out = 0

    def high(self):
        self._out = 1

    def low(self):
        self._out = 0

    def toggle(self):
        self._out ^= 1

    def mode(self, mode=None):
        if mode is None:
            return self._mode
        self._mode = mode

    def pull(self, pull=None):
        if pull is None:
            return self._pull
        self._pull = pull

    def irq(self, handler=None, trigger=IRQ_FALLING | IRQ_RISING, hard=False):
        """Call handler(pin) on edges, as a board's soft IRQ does: between two steps of the
        running program. An edge is noticed as soon as the launcher's message comes (a task of
        the running event loop waits for them: simlink.py), or when the firmware reads any pin
        or writes the LEDs, whichever is first."""
        self._irq_handler = handler
        self._irq_trigger = trigger
        self._irq_last = self.value()
        if handler is None:
            link.unwatch_irq(self)
        else:
            link.watch_irq(self)

    def _check_irq(self):
        level = self._read(link._level(self._name))
        if level == self._irq_last:
            return
        self._irq_last = level
        edge = Pin.IRQ_RISING if level else Pin.IRQ_FALLING
        if self._irq_trigger & edge and self._irq_handler is not None:
            self._irq_handler(self)

    def __repr__(self):
        return "Pin(%s, mode=%s)" % (self._name, ("IN", "OUT", "OPEN_DRAIN", "ALT")[self._mode])


class WDT:
    """Watchdog stand-in: accepted and fed, never fires on the virtual board."""

    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout

    def feed(self):
        pass


def reset():
    """Hard reset: the launcher restarts the interpreter, which then runs main.py."""
    # The request must get through (a queue full of LED frames only delays it); without a
    # launcher at all, fall back to a soft reset.
    deadline = time.ticks_add(time.ticks_ms(), 2000)
    while link.connected() and time.ticks_diff(deadline, time.ticks_ms()) > 0:
        if link.request_reset(True):
            while True:
                time.sleep_ms(100)
        time.sleep_ms(5)
    raise SystemExit


def soft_reset():
    """Soft reset, like Ctrl-D at the REPL."""
    raise SystemExit


def bootloader(*args):
    """There is no bootloader on the virtual board: behaves as a hard reset."""
    reset()


def reset_cause():
    import os

    cause = os.getenv("CRIBBOARD_SIM_RESET")
    return SOFT_RESET if cause == "soft" else WDT_RESET if cause == "wdt" else PWRON_RESET


def unique_id():
    """The board's own id: the launcher keeps it in the flash image (cribboard.virtual's
    flashuid); a fixed one without a launcher."""
    import binascii
    import os

    kept = os.getenv("CRIBBOARD_SIM_UID")
    return binascii.unhexlify(kept) if kept else b"\xc7\x1b\xb0\xa2\xd0\x00\x00\x01"


def freq(hz=None):
    global _freq
    if hz is None:
        return _freq
    _freq = hz


def idle():
    time.sleep_ms(1)


def lightsleep(ms=None):
    if ms is not None:
        time.sleep_ms(ms)


def deepsleep(ms=None):
    if ms is not None:
        time.sleep_ms(ms)
    reset()


def disable_irq():
    return 0


def enable_irq(state=0):
    pass
