# MicroPython only (run by mprun.py): the firmware's buttons task (cribfw/app.py) on the real
# asyncio, with pins that have interrupts: it reads no pin while the buttons rest, takes a press
# (a board's and a phone pad's) and commits it, and sleeps again: no turn of the task at all. And
# the buttons allocate nothing, resting, pressed or interrupted.
import asyncio

import micropython
from test_panel import Flag, IrqPin

from cribcore.state import GameState
from cribfw.app import buttons_task
from cribfw.buttons import Button
from cribfw.pad import EitherPin, VirtualPin
from cribfw.panel import Panel

QUIET_MS = 150  # a stretch with nobody touching a button (its length proves nothing by itself)


class WatchedPin(IrqPin):
    """An IrqPin that says when the panel armed it, and calls its handler as a board's soft IRQ
    does: from outside the task that reads it (here: the test's own task)."""

    def __init__(self, armed):
        super().__init__()
        self.armed = armed

    def irq(self, handler=None, trigger=IrqPin.IRQ_FALLING | IrqPin.IRQ_RISING, hard=False):
        super().irq(handler, trigger, hard)
        self.armed.set()


class Dispatcher:
    """What the task tells the hosts: each change of the game wakes the test."""

    def __init__(self, board):
        self.board = board
        self.rev = board.rev
        self.changed = asyncio.Event()

    def publish_if_changed(self):
        if self.board.rev != self.rev:
            self.rev = self.board.rev
            self.changed.set()


class App:
    def __init__(self, buttons):
        self.board = GameState()
        self.panel = Panel(self.board, buttons)
        self.panel.COMMIT_MS = 200  # (a short pause before a count commits: a quicker test)
        self.dispatcher = Dispatcher(self.board)
        self.cribio = None  # (not a cribboard image: asyncio's ThreadSafeFlag wakes the task)
        self.shown = 0
        self.turned = asyncio.Event()

    def show_changes(self):
        self.shown += 1
        self.turned.set()


async def changed(app):
    app.dispatcher.changed.clear()
    await app.dispatcher.changed.wait()


def reads(pins, app):
    """The pins' reads and the task's turns (each shows the changes once)."""
    return sum(pin.reads for pin in pins), app.shown


async def scenario():
    armed = asyncio.Event()
    pins = [WatchedPin(armed) for _ in range(3)]
    pad = VirtualPin()
    buttons = {
        "A+": Button(EitherPin(pins[0], pad)),
        "B+": Button(pins[1]),
        "deal": Button(pins[2]),
    }
    app = App(buttons)
    task = asyncio.create_task(buttons_task(app))
    try:
        await armed.wait()
        await app.turned.wait()  # the first turn: every pin read once (one may be held already)
        before = reads(pins, app)
        await asyncio.sleep_ms(QUIET_MS)
        assert reads(pins, app) == before, "the task ran while the buttons rest"

        # A press of B+: woken by its edge, taken once it has lasted the debounce.
        others = pins[0].reads + pins[2].reads
        pins[1].set(0)
        await changed(app)
        assert app.board.pending[1] == 1
        pins[1].set(1)
        await changed(app)  # committed COMMIT_MS after the tap
        assert app.board.front[1] == 1 and app.board.pending[1] == 0
        assert pins[0].reads + pins[2].reads == others, "buttons nobody touched were read"
        resting = reads(pins, app)
        await asyncio.sleep_ms(QUIET_MS)
        assert reads(pins, app) == resting, "the task ran on after the count committed"

        # A phone's pad press of A+ (a virtual pin) wakes the task the same way.
        pad.press()
        pad.release()  # (held LATCH_MS all the same)
        await changed(app)
        assert app.board.pending[0] == 1
        await changed(app)
        assert app.board.front[0] == 1
        resting = reads(pins, app)
        await asyncio.sleep_ms(QUIET_MS)
        assert reads(pins, app) == resting
    finally:
        task.cancel()


def test_the_buttons_task_sleeps_at_rest_and_wakes_for_presses():
    asyncio.run(scenario())


class Clock:
    """The time the handlers note (the loop's `now`)."""

    def __init__(self):
        self.now = 0
        self.ms = self.time  # bound once: the handlers call it under the heap lock

    def time(self):
        return self.now * 1000  # (microseconds)


def test_buttons_allocate_nothing_resting_pressed_or_interrupted():
    # The IRQ handlers (a hard interrupt may not allocate), the panel's update and due_in at
    # rest, and a whole press with its tap and commit, on pins with interrupts.
    b = GameState()
    pins = {"A+": IrqPin(), "A-": IrqPin(), "B+": IrqPin(), "B-": IrqPin(), "deal": IrqPin()}
    buttons = {}
    for name in pins:
        buttons[name] = Button(pins[name])
    flag = Flag()
    panel = Panel(b, buttons)
    clock = Clock()
    assert panel.watch(flag, clock.ms)
    panel.update(0)
    panel.due_in(0)
    pin = pins["B+"]
    micropython.heap_lock()
    try:
        for now in range(5, 3200, 5):  # resting, pressed at 200, released at 400, committed
            clock.now = now
            if now == 200:
                pin.set(0)  # the handler runs
            elif now == 400:
                pin.set(1)
            panel.update(now)
            panel.due_in(now)
    finally:
        micropython.heap_unlock()
    assert flag.is_set and b.front[1] == 1 and panel.due_in(3200) == -1
