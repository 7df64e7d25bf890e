# The firmware app: builds the hardware objects from the board profile, then runs the asyncio
# tasks (USB link, renderer). Everything below main() gets its hardware passed in.

import sys

from cribcore.layout import HOLES
from cribcore.render import Renderer
from cribcore.state import Board
from cribfw.dispatch import Dispatcher
from cribfw.usblink import UsbLink
from cribfw.version import FIRMWARE_VERSION

FRAME_MS = 20  # render tick while something animates or changed


async def render_task(board, renderer, dispatcher):
    import asyncio
    import time

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


async def run(board, renderer, dispatcher, links):
    import asyncio

    dispatcher.announce()
    tasks = [asyncio.create_task(link.run()) for link in links]
    tasks.append(asyncio.create_task(render_task(board, renderer, dispatcher)))
    await asyncio.gather(*tasks)


def build(pixels, stdin, stdout, profile):
    """Wire the app from hardware objects that are passed in."""
    board = Board()
    renderer = Renderer(pixels, budget_ma=profile.budget_ma)
    dispatcher = Dispatcher(board, renderer, profile.name, FIRMWARE_VERSION)
    usb = UsbLink(stdin, stdout, dispatcher)
    dispatcher.add_link(usb)
    return board, renderer, dispatcher, [usb]


def main():
    import asyncio

    import machine
    import neopixel

    from cribcore.profiles import detect

    profile = detect()
    pixels = neopixel.NeoPixel(machine.Pin(profile.led_pin, machine.Pin.OUT), HOLES)
    board, renderer, dispatcher, links = build(pixels, sys.stdin.buffer, sys.stdout.buffer,
                                               profile)
    asyncio.run(run(board, renderer, dispatcher, links))
