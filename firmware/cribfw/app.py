# The firmware app: main() builds the hardware objects from the board profile; App wires the
# board state, renderer, dispatcher and links from objects passed in, and runs the asyncio tasks.

import sys

from cribcore.layout import HOLES
from cribcore.render import Renderer
from cribcore.state import Board
from cribfw.dispatch import Dispatcher
from cribfw.usblink import UsbLink
from cribfw.version import FIRMWARE_VERSION

FRAME_MS = 20  # render tick while something animates or changed


class App:
    """The running board. Tasks are coroutine functions taking the app; each change to the
    board, from any task, is pushed to the links by dispatcher.publish_if_changed()."""

    def __init__(self, pixels, stdin, stdout, profile):
        self.profile = profile
        self.board = Board()
        self.renderer = Renderer(pixels, budget_ma=profile.budget_ma)
        self.dispatcher = Dispatcher(self.board, self.renderer, profile.name, FIRMWARE_VERSION)
        self.usb = UsbLink(stdin, stdout, self.dispatcher)
        self.dispatcher.add_link(self.usb)
        self.tasks = [render_task]

    async def run(self):
        import asyncio

        self.dispatcher.announce()
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
    start = time.ticks_ms()
    shown_rev = -1
    shown_settings = -1
    while True:
        t_ms = time.ticks_diff(time.ticks_ms(), start)
        dispatcher.t_ms = t_ms
        if board.rev != shown_rev or dispatcher.settings_rev != shown_settings \
                or renderer.animating:
            shown_rev = board.rev
            shown_settings = dispatcher.settings_rev
            renderer.render(board, t_ms)
        await asyncio.sleep_ms(FRAME_MS)


def main():
    import asyncio

    import machine
    import neopixel

    from cribcore.profiles import detect
    from cribfw import store

    profile = detect()
    pixels = neopixel.NeoPixel(machine.Pin(profile.led_pin, machine.Pin.OUT), HOLES)
    app = App(pixels, sys.stdin.buffer, sys.stdout.buffer, profile)
    store.attach(app, "/", profile.name == "sim")  # the saved game, shown from the first frame
    asyncio.run(app.run())
