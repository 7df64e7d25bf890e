"""The pegging buttons on the emulated RP2040 running the cribboard image: presses on the Pico's
real pins (profile "pico": A+ GP2, A- GP3, B+ GP4, deal GP6; buttons to ground), each contact
bouncing a few times, placed in emulated time (the chip halted between edges), peg as the
button table of docs/playing.md says (cribfw/panel.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cribboard.virtual.rp2board import FIRMWARE_IMAGE, RP2Board
from cribcore.profiles import PROFILES
from rp2support import BoardFactory, ProtocolLink, fields, needs_emulator, rp2_boards

__all__ = ["rp2_boards"]  # fixtures from rp2support

pytestmark = needs_emulator

PINS = PROFILES["pico"].buttons
MS = 125_000  # cycles per emulated millisecond
BOUNCE = (0.3, 0.2, 0.4, 0.3)  # ms between a contact's first edges (closed, open, closed, ...)


class Hand:
    """Presses buttons at exact emulated times: the chip halts, a pin changes, it runs on."""

    def __init__(self, pico: RP2Board) -> None:
        self.pico = pico
        self.now = pico.halt().cycles

    def wait(self, ms: float) -> None:
        self.now = self.pico.run_until(self.now + round(ms * MS)).cycles

    def _bounce(self, pin: int, closing: bool) -> None:
        down = closing
        for gap in BOUNCE:
            (self.pico.hold if down else self.pico.release)(pin)
            self.wait(gap)
            down = not down
        (self.pico.hold if closing else self.pico.release)(pin)

    def press(self, name: str, hold_ms: float = 120, then_ms: float = 150) -> None:
        pin = PINS[name]
        self._bounce(pin, closing=True)
        self.wait(hold_ms)
        self._bounce(pin, closing=False)
        self.wait(then_ms)


@pytest.fixture
def pico(rp2_boards: BoardFactory) -> Iterator[RP2Board]:
    yield rp2_boards(FIRMWARE_IMAGE, pace=0)


def state_after(link: ProtocolLink, hand: Hand) -> dict[str, str]:
    hand.pico.resume()
    state = fields(link.request(b"st\n"))
    hand.now = hand.pico.halt().cycles
    return state


def test_bounced_presses_peg_as_the_panel_says(pico: RP2Board) -> None:
    link = ProtocolLink(pico.port)
    try:
        link.wait_up()
        hand = Hand(pico)
        for _ in range(3):
            hand.press("A+")  # +1 each, however the contact bounced
        state = state_after(link, hand)
        assert (state["q"], state["f"]) == ("3,0", "0,0")  # a count of 3, previewed
        taps = [e for e in link.events if e.startswith(b"! btn ")]
        assert taps == [b"! btn n=A+ a=tap\n"] * 3  # one event a press, not one a bounce
        hand.press("deal")  # pegs the waiting count now
        assert state_after(link, hand)["f"] == "3,0"

        hand.press("B+", hold_ms=1000)  # held: +5 at 0.6 s, +5 more at 0.95 s
        assert state_after(link, hand)["q"] == "0,10"
        hand.wait(2600)  # the count pegs itself 2.5 s after the last press
        state = state_after(link, hand)
        assert (state["q"], state["f"], state["b"]) == ("0,0", "3,10", "0,0")

        hand.press("A-", hold_ms=700)  # held with nothing waiting: undo the last move
        assert state_after(link, hand)["f"] == "3,0"
        pico.resume()
    finally:
        link.close()
