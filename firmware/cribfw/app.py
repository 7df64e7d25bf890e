# The firmware app: main() builds the hardware objects from the board profile; App wires the
# board state, renderer, dispatcher and links from objects passed in, and runs the asyncio tasks.

import sys

from cribcore.layout import HOLES
from cribcore.render import Renderer
from cribcore.state import GameState
from cribfw.buttons import Button
from cribfw.dispatch import Dispatcher
from cribfw.panel import Panel
from cribfw.usblink import UsbLink
from cribfw.version import FIRMWARE_VERSION

FRAME_MS = 20  # render tick while something animates or changed
BUTTON_MS = 5  # how often the buttons are read
SELFTEST_MS_PER_LED = 25  # the self-test walks the chain in about three seconds


class App:
    """The running board. Tasks are coroutine functions taking the app; each change to the
    board, from any task, is pushed to the links by dispatcher.publish_if_changed().
    `buttons` maps button names (see cribfw.panel) to Button objects; none on a bare strip."""

    def __init__(self, pixels, stdin, stdout, profile, buttons=None):
        self.profile = profile
        self.board = GameState()
        self.renderer = Renderer(pixels, budget_ma=profile.budget_ma)
        self.dispatcher = Dispatcher(self.board, self.renderer, profile.name, FIRMWARE_VERSION)
        self.usb = UsbLink(stdin, stdout, self.dispatcher)
        self.dispatcher.add_link(self.usb)
        self.tasks = [render_task]
        self.panel = None
        self.ble = None  # the Bluetooth link (cribfw.blelink.BleLink) once add_ble() made it
        if buttons:
            self.panel = Panel(
                self.board, buttons, self.dispatcher.announce_button, self.dispatcher.admission
            )
            self.tasks.append(buttons_task)

    def add_ble(self, ble, pad=None):
        """Serve the protocol over Bluetooth LE too: `ble` is a bluetooth.BLE(); `pad` the Pad
        whose virtual pins the buttons read (a phone's control pad)."""
        from cribfw.blelink import BleLink

        link = BleLink(ble, self.dispatcher, pad)
        link.start()
        self.ble = link
        self.tasks.append(link.run)
        return link

    async def run(self):
        import asyncio

        import cribboot

        self.dispatcher.announce()
        cribboot.up()  # the board came up: the boot guard stands down
        tasks = [asyncio.create_task(self.usb.run())]
        for task in self.tasks:
            tasks.append(asyncio.create_task(task(self)))
        await asyncio.gather(*tasks)


async def render_task(app):
    import asyncio
    import time

    board = app.board
    renderer = app.renderer
    dispatcher = app.dispatcher
    admission = dispatcher.admission
    start = time.ticks_ms()
    shown_rev = -1
    shown_settings = -1
    selftest_from = -1
    while True:
        now = time.ticks_ms()
        t_ms = time.ticks_diff(now, start)
        dispatcher.t_ms = t_ms
        calling = admission.calling(now)
        if calling != renderer.calling:
            renderer.calling = calling  # a refused Bluetooth device waits for a tap of deal
            shown_rev = -1
        if dispatcher.selftest_requested:
            dispatcher.selftest_requested = False
            selftest_from = t_ms
        if selftest_from >= 0:
            led = (t_ms - selftest_from) // SELFTEST_MS_PER_LED
            if led < HOLES:
                renderer.draw_chain_test(led)
                renderer.show()
                await asyncio.sleep_ms(FRAME_MS)
                continue
            selftest_from = -1
            shown_rev = -1  # back to the game
        if (
            board.rev != shown_rev
            or dispatcher.settings_rev != shown_settings
            or renderer.animating
        ):
            shown_rev = board.rev
            shown_settings = dispatcher.settings_rev
            renderer.render(board, t_ms)
        await asyncio.sleep_ms(FRAME_MS)


async def buttons_task(app):
    import asyncio
    import time

    panel = app.panel
    dispatcher = app.dispatcher
    while True:
        panel.update(time.ticks_ms())
        dispatcher.publish_if_changed()  # a button's change reaches every host at once
        await asyncio.sleep_ms(BUTTON_MS)


def main():
    import asyncio

    import machine
    import neopixel

    import cribboot
    from cribcore.profiles import detect
    from cribfw import store
    from cribfw.admitfile import AdmitRecords
    from cribfw.ring import Ring

    profile = detect()
    pixels = neopixel.NeoPixel(machine.Pin(profile.led_pin, machine.Pin.OUT), HOLES)
    ble = _bluetooth()
    pad = None
    if ble is not None:
        from cribfw.pad import Pad

        pad = Pad()  # a phone's control pad presses the same buttons
    # Buttons close to ground: inputs with the internal pull-ups, pressed = 0.
    buttons = {}
    for name in profile.buttons:
        pin = machine.Pin(profile.buttons[name], machine.Pin.IN, machine.Pin.PULL_UP)
        buttons[name] = Button(pin if pad is None else pad.either(pin, name))
    if pad is not None:
        for name in pad.pins:
            if name not in buttons:
                buttons[name] = Button(pad.pins[name])
    app = App(pixels, sys.stdin.buffer, sys.stdout.buffer, profile, buttons)
    boot = cribboot.current  # what a cribboard image's boot found (None on stock MicroPython)
    state_ring = admit_ring = None
    if boot is not None:
        app.dispatcher.boot_fs = boot.fs.encode()
        app.dispatcher.boot_failed = boot.failed
        if boot.state is not None and boot.admitted is not None:
            state_ring = Ring(*boot.state)
            admit_ring = Ring(*boot.admitted)
    # The saved game, shown from the first frame: in the image's raw flash region, else in files.
    files = store.attach(app, "/", profile.name == "sim", state_ring)
    if ble is not None:
        keeper = AdmitRecords(admit_ring if admit_ring is not None else files + "/admitted.dat")
        app.dispatcher.admission.keep(keeper)
        try:
            app.add_ble(ble, pad)
        except OSError:
            pass  # the radio did not come up: the board works over USB alone
    deal = buttons.get("deal")
    if deal is not None and deal.pressed_now():
        app.dispatcher.selftest_requested = True  # deal held at power-on: the wiring self-test
    import gc

    gc.threshold(-1)  # loaded (see main.py): collect only when the heap runs out again
    status = None
    if profile.status_led is not None:
        status = machine.Pin(profile.status_led, machine.Pin.OUT)
        status.value(1)  # lit while the app runs
    try:
        asyncio.run(app.run())
    finally:
        cribboot.up()  # ended in Python (an error, a Ctrl-C): not a crash; the REPL follows
        if status is not None:
            status.value(0)


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
