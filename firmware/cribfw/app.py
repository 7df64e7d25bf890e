# The firmware app: main() builds the hardware objects from the board profile; App wires the
# game, renderer, context, dispatcher and links from objects passed in, and runs the asyncio tasks.

try:
    import micropython
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

import sys

from cribcore.files import HALL_CONFIG
from cribcore.history import History
from cribcore.layout import HOLES
from cribcore.render import Renderer
from cribcore.state import GameState
from cribfw.buttons import Button
from cribfw.clock import ticks_diff, ticks_ms
from cribfw.context import Context
from cribfw.dispatch import Dispatcher
from cribfw.irqflag import irq_flag
from cribfw.panel import Panel
from cribfw.usblink import UsbLink
from cribfw.version import FIRMWARE_VERSION

FRAME_MS = 20  # render tick while something animates (a change is shown at once)
BUTTON_MS = 5  # how often buttons without interrupts are read
# How often buttons with interrupts are read at least while one is touched: their edges are
# timed by the interrupt, so a press or release seen this late is still taken at its debounce's
# end (this is for noticing it; the task wakes exactly when something is due).
TOUCHED_MS = 10
SELFTEST_MS_PER_LED = 25  # the self-test walks the chain in about three seconds


class App:
    """The running board. `ctx` (cribfw.context.Context) owns what requests, buttons and tasks
    change; tasks are coroutine functions taking the app; each change, from any task, is pushed
    to the links by dispatcher.publish_if_changed(). `buttons` maps button names (see
    cribfw.panel) to Button objects; none on a bare strip. `cribio` is a cribboard image's C
    module for stdin and stdout (see cribfw/usblink.py), or None."""

    def __init__(self, pixels, stdin, stdout, profile, buttons=None, cribio=None):
        self.profile = profile
        renderer = Renderer(pixels, budget_ma=profile.budget_ma)
        game = GameState()
        self.ctx = Context(game, renderer, profile.name, FIRMWARE_VERSION)
        # The finished games, kept with the game (cribfw/gamerecord.py), on the board's clock.
        game.keep_history(History(uptime=self.ctx.uptime))
        self.dispatcher = Dispatcher(self.ctx)
        self.cribio = cribio
        self.usb = UsbLink(stdin, stdout, self.dispatcher, cribio)
        self.dispatcher.add_link(self.usb)
        # What the LEDs show: the game's and the settings' revisions of the last frame drawn,
        # the animation clock's start, and the self-test's start (-1: none running).
        self.shown_rev = -1
        self.shown_settings = -1
        self.started_ms = ticks_ms()
        self.selftest_from = -1
        # A change reaches the LEDs as soon as the requests that came together are handled,
        # not at the render task's next tick; `frame` reads what the LEDs show.
        self.dispatcher.show = self.show_changes
        self.ctx.refresh = self.show_changes
        self.tasks = [render_task]
        self.panel = None
        self.hall = None  # cribfw.hall.HallClient, on a board that reports to a club hall
        # (cribfw/hallstart.py adds it)
        if buttons:
            self.panel = Panel(
                self.ctx.game, buttons, self.dispatcher.announce_button, self.ctx.admission
            )
            self.tasks.append(buttons_task)

    def add_ble(self, ble, pad=None, uuid=None, stack=None, heap=None, restart=None):
        """Serve the protocol over Bluetooth LE too: `ble` is a bluetooth.BLE(); `pad` the Pad
        whose virtual pins the buttons read (a phone's control pad); `uuid` the UUID class
        (default bluetooth.UUID); `stack` the Bluetooth stack's name (cribfw/stacklimits.py);
        `heap` the free heap on btstack (default gc.mem_free) and `restart` what restarts the
        board when btstack kept too much of gone centrals (machine.soft_reset; cribfw/blelink.py)."""
        from cribfw.blelink import BleLink

        link = BleLink(ble, self.dispatcher, self.ctx.admission, pad, uuid, stack, heap, restart)
        self.ctx.attach_ble(link, link.start().encode())
        self.tasks.append(link.run)
        return link

    @micropython.native
    def show_changes(self):
        """Draw and show the game now if it or the LED settings changed since the last frame
        (not while the self-test walks the chain)."""
        ctx = self.ctx
        if self.selftest_from >= 0 or ctx.selftest_requested:
            return
        if ctx.game.rev != self.shown_rev or ctx.settings_rev != self.shown_settings:
            self.render(ticks_diff(ticks_ms(), self.started_ms))

    @micropython.native
    def render(self, t_ms):
        """Draw the game at animation time `t_ms` and write it to the LEDs."""
        ctx = self.ctx
        self.shown_rev = ctx.game.rev
        self.shown_settings = ctx.settings_rev
        ctx.t_ms = t_ms
        renderer = ctx.renderer
        renderer.draw(ctx.game, t_ms)  # (as renderer.render, without the call around them)
        renderer.show()

    async def run(self):
        """Run the app's tasks until one fails (its error ends run), as asyncio.gather would;
        without gather, whose module would cost a small board's heap."""
        import asyncio

        self.dispatcher.announce()
        _boot_up()  # the board came up: the boot guard stands down
        main = asyncio.current_task()
        failed = []

        async def guarded(task):
            try:
                await task(self)
            except Exception as err:  # noqa: BLE001 (any failure stops the app, reported)
                failed.append(err)
                if main is not None:
                    main.cancel()

        for task in self.tasks:
            asyncio.create_task(guarded(task))
        try:
            await self.usb.run()
        except asyncio.CancelledError:
            if failed:
                raise failed[0]
            raise


async def render_task(app):
    """The render tick: uptime, the animations (blink, pulse, a device calling), the self-test,
    and any change no link has shown yet (a timer's, a Bluetooth request's)."""
    import asyncio

    ctx = app.ctx
    renderer = ctx.renderer
    admission = ctx.admission
    last = ticks_ms()
    while True:
        now = ticks_ms()
        ctx.tick(ticks_diff(now, last))
        last = now
        t_ms = ticks_diff(now, app.started_ms)
        ctx.t_ms = t_ms
        calling = admission.calling(now)
        if calling != renderer.calling:
            renderer.calling = calling  # a refused Bluetooth device waits for a tap of deal
            app.shown_rev = -1
        if ctx.selftest_requested:
            ctx.selftest_requested = False
            app.selftest_from = t_ms
        if app.selftest_from >= 0:
            led = (t_ms - app.selftest_from) // SELFTEST_MS_PER_LED
            if led < HOLES:
                renderer.draw_chain_test(led)
                renderer.show()
                await asyncio.sleep_ms(FRAME_MS)
                continue
            app.selftest_from = -1
            app.shown_rev = -1  # back to the game
        game = ctx.game
        history = game.history
        if (game.winner >= 0) != (history.won_at >= 0):
            # When the game was won, in the board's life (-1 again once its win is undone)
            history.won_at = history.life() if game.winner >= 0 else -1
        if (
            game.rev != app.shown_rev
            or ctx.settings_rev != app.shown_settings
            or renderer.animating
        ):
            app.render(t_ms)
        await asyncio.sleep_ms(FRAME_MS)


async def buttons_task(app):
    """Reads the buttons and shows what they did. Where every pin has interrupts it sleeps while
    the buttons rest, until an edge; while anything is going on (a debounce, a hold, a count
    waiting to commit) it reads them every TOUCHED_MS at most, and exactly when the next of those
    is due, so a press is taken the moment it has lasted the debounce. Pins without interrupts
    are read every BUTTON_MS."""
    import asyncio

    panel = app.panel
    dispatcher = app.dispatcher
    # The virtual board's pins call their handlers inside a task: an Event serves there, and
    # a ThreadSafeFlag would keep the unix port's poll from blocking.
    wake = irq_flag(asyncio, app.cribio, panel.irq_in_task())
    sleeps = panel.watch(wake)  # False: a pin without interrupts, so polled all the time
    most = TOUCHED_MS if sleeps else BUTTON_MS
    while True:
        wake.clear()  # edges from here on wake the wait below; earlier ones are read now
        panel.update(ticks_ms())
        app.show_changes()  # the LEDs first: a press reaches them soonest
        dispatcher.publish_if_changed()  # and every host at once
        due = panel.due_in(ticks_ms())
        if due < 0 and sleeps:
            await wake.wait()  # every button rests: nothing to read until an edge
        elif due < 0 or due > most:
            await asyncio.sleep_ms(most)
        else:
            await asyncio.sleep_ms(due)


def main():
    import asyncio

    # asyncio loads its stream and event modules when first asked for them: now, while the heap
    # is whole (the USB link, the buttons and Bluetooth wait on its Events).
    asyncio.StreamReader  # noqa: B018
    asyncio.Event  # noqa: B018

    import machine

    from cribcore.profiles import detect

    profile = detect()
    pixels = _strip(machine.Pin(profile.led_pin, machine.Pin.OUT))
    ble = _bluetooth()
    pad = None
    if ble is not None:
        from cribfw.pad import Pad

        pad = Pad()  # a phone's control pad presses the same buttons
    buttons = _buttons(profile, pad)
    app = App(pixels, sys.stdin.buffer, sys.stdout.buffer, profile, buttons, _cribio())
    app.ctx.uid = "".join("%02X" % b for b in machine.unique_id()).encode()
    admitted = _attach_storage(app, profile)
    web = _start_web(app)
    if ble is not None or web is not None:
        from cribfw.admitfile import AdmitRecords

        app.ctx.admission.keep(AdmitRecords(admitted))
    if ble is not None:
        try:
            app.add_ble(ble, pad, restart=machine.soft_reset)
        except OSError:
            pass  # the radio did not come up: the board works over USB alone
    if _exists("/" + HALL_CONFIG):
        from cribfw.hallstart import join_hall

        join_hall(app)  # (nothing of the hall client is loaded on a board without one)
    deal = buttons.get("deal")
    if deal is not None and deal.pressed_now():
        app.ctx.selftest_requested = True  # deal held at power-on: the wiring self-test
    import gc

    gc.threshold(-1)  # loaded (see main.py): collect only when the heap runs out again
    status = None
    if profile.status_led is not None:
        status = machine.Pin(profile.status_led, machine.Pin.OUT)
        status.value(1)  # lit while the app runs
    # asyncio's queues are the interpreter's: a Ctrl-C leaves the stopped app's tasks in them
    # (its USB reader still waiting on stdin), and a main() run again from the REPL would serve
    # each line from one app or the other. A fresh loop before and after drops them.
    asyncio.new_event_loop()
    try:
        asyncio.run(app.run())
    finally:
        asyncio.new_event_loop()
        _boot_up()  # ended in Python (an error, a Ctrl-C): not a crash; the REPL follows
        _save_now(app.ctx)
        if status is not None:
            status.value(0)


def _start_web(app):
    """The board's own page: over Wi-Fi on a board with it, on the host's loopback on the
    virtual board when its launcher asks; None elsewhere (nothing of it loaded)."""
    try:
        import network
    except ImportError:
        network = None
        import os

        if app.profile.name != "sim" or not getattr(os, "getenv", lambda _: None)(
            "CRIBBOARD_SIM_WEB"
        ):
            return None  # (the virtual board serves it when its launcher names a port)
    from cribfw.webstart import start_web

    return start_web(app, network)


def _strip(pin):
    """The LED chain: sent by PIO and DMA where the chip has them (rp2), else by `neopixel`."""
    try:
        from cribfw.ws2812_rp2 import PioStrip
    except ImportError:  # no rp2 module: an ESP32-S3 (its neopixel frees the CPU too), the
        # virtual board
        import neopixel

        return neopixel.NeoPixel(pin, HOLES)
    return PioStrip(pin, HOLES)


def _buttons(profile, pad):
    """The board's buttons by name; with a control pad, each also pressed from a phone."""
    import machine

    buttons = {}
    for name in profile.buttons:
        # Buttons close to ground: inputs with the internal pull-ups, pressed = 0.
        pin = machine.Pin(profile.buttons[name], machine.Pin.IN, machine.Pin.PULL_UP)
        buttons[name] = Button(pin if pad is None else pad.either(pin, name))
    if pad is not None:
        for name in pad.pins:
            if name not in buttons:
                buttons[name] = Button(pad.pins[name])
    return buttons


def _attach_storage(app, profile):
    """Restores the saved game, shown from the first frame, and keeps saving it: in the raw flash
    region of a cribboard image, else in files. Returns where the admitted devices are kept (a
    Ring, or a file's path)."""
    from cribfw import store
    from cribfw.ring import Ring

    boot = _boot()  # what a cribboard image's boot found (None on stock MicroPython)
    state_ring = admit_ring = None
    if boot is not None:
        app.ctx.boot_fs = boot.fs.encode()
        app.ctx.boot_failed = boot.failed
        if boot.state is not None and boot.admitted is not None:
            state_ring = Ring(*boot.state)
            admit_ring = Ring(*boot.admitted)
    files = store.attach(app, "/", profile.name == "sim", state_ring)
    return admit_ring if admit_ring is not None else files + "/admitted.dat"


def _save_now(ctx):
    """A change still in the save's quiet second is kept too when the app ends."""
    if ctx.store is not None:
        try:
            ctx.store.save(ctx.game, ctx.renderer)
        except (OSError, MemoryError):
            pass


def _boot():
    """This start's cribboot.Boot: a cribboard image's boot script made it (and loaded the
    module); None on stock MicroPython, where the module is not loaded for nothing."""
    guard = sys.modules.get("cribboot")
    return guard.current if guard is not None else None


def _boot_up():
    boot = _boot()
    if boot is not None:
        boot.up()


def _exists(path):
    import os

    try:
        os.stat(path)
        return True
    except OSError:
        return False


def _cribio():
    """A cribboard image's C module for stdin and stdout (cribio), or None."""
    try:
        import cribio
    except ImportError:
        return None
    return cribio


def _bluetooth():
    """The board's BLE object, or None on a build without Bluetooth."""
    try:
        import bluetooth
    except ImportError:
        return None
    try:
        return bluetooth.BLE()
    except (OSError, AttributeError):
        return None
