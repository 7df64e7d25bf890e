"""The bench step: the controller, the buffer and only the first few LEDs of the chain, before
all of them are soldered. The firmware always sends the whole chain's data (121 LEDs: it makes
`neopixel.NeoPixel(pin, HOLES)` in `cribfw/app.py`); a WS2812 keeps the first 24 bits that reach
its DIN and passes the rest on from DOUT, so a short chain shows the first LEDs' colours and the
rest of the data leaves the last LED's DOUT for nothing. The LEDs never answer, so the firmware
cannot tell and runs as on a full board.

`ShortChain` is that behaviour as a pixel object for the firmware's own renderer; `bench_steps`
plays the guide's commands on the firmware's board state and says what the short chain shows.
"""

from __future__ import annotations

from collections.abc import Callable

from cribcore import layout, render
from cribcore.state import GameState

BENCH_LEDS = layout.GROUP
"""The bench chain: LED 1..5, the first group of five holes of row A outer."""
PLAYERS = ("blue", "orange", "purple")  # the command line's names for players 0, 1, 2


class ShortChain:
    """The first `leds` LEDs of a WS2812 chain, fed what the firmware writes for the whole
    chain (`buf`, as `neopixel.NeoPixel` holds it: GRB, 3 bytes an LED)."""

    ORDER = (1, 0, 2, 3)

    def __init__(self, leds: int, sent: int = layout.HOLES) -> None:
        self.buf = bytearray(3 * sent)
        self.bpp = 3
        self.shown = [(0, 0, 0)] * leds
        """What each LED of the chain shows, as (red, green, blue)."""

    def write(self) -> None:
        """The data goes out once along the chain: each LED takes its 24 bits and passes the
        rest on; what is left after the last LED goes nowhere."""
        data = bytes(self.buf)
        for led in range(len(self.shown)):
            green, red, blue = data[3 * led : 3 * led + 3]
            self.shown[led] = (red, green, blue)


def describe(shown: list[tuple[int, int, int]]) -> str:
    """`LED 3 blue, LED 5 dim blue`: the lit LEDs, by the player colour (or white) they show;
    dim when well under the brightest."""
    brightest = max((max(rgb) for rgb in shown), default=0)
    lit = []
    for led, rgb in enumerate(shown, 1):
        if max(rgb) == 0:
            continue
        dim = "dim " if 2 * max(rgb) < brightest else ""
        lit.append(f"LED {led} {dim}{_colour(rgb)}")
    return ", ".join(lit) or "nothing"


def _colour(rgb: tuple[int, int, int]) -> str:
    known = {name: render.FRONT_RGB[p] for p, name in enumerate(PLAYERS)}
    known["white"] = (255, 255, 255)

    def distance(name: str) -> float:
        peak, ref = max(rgb), known[name]
        ref_peak = max(ref)
        return sum(abs(c / peak - r / ref_peak) for c, r in zip(rgb, ref))

    return min(known, key=distance)


def bench_steps(leds: int = BENCH_LEDS) -> list[tuple[str, str]]:
    """(command, what the first `leds` LEDs show) for the bench step's commands, played on the
    firmware's board state and renderer."""
    chain = ShortChain(leds)
    renderer = render.Renderer(chain)
    board = GameState()
    steps: list[tuple[str, str]] = [("cribboard test", _self_test(chain, renderer, leds))]

    def step(command: str, change: Callable[[], None]) -> None:
        change()
        renderer.render(board, 0)
        beyond = _lit_beyond(renderer.frame, leds)
        extra = f" (a full board also lights {beyond})" if beyond else ""
        steps.append((command, describe(chain.shown) + extra))

    step("cribboard new", lambda: board.new_game(121, 2))
    step("cribboard peg blue 3", lambda: board.peg(0, 3))
    step("cribboard peg blue 2", lambda: board.peg(0, 2))
    step("cribboard peg orange 4", lambda: board.peg(1, 4))
    return steps


def _lit_beyond(frame: bytearray, leds: int) -> str:
    """The LEDs past the bench chain that the frame lights: `LED 117, LED 121`."""
    lit = sorted(
        layout.LED_OF_HOLE[hole] + 1
        for hole in range(layout.HOLES)
        if any(frame[3 * hole : 3 * hole + 3])
    )
    return ", ".join(f"LED {led}" for led in lit if led > leds)


def _self_test(chain: ShortChain, renderer: render.Renderer, leds: int) -> str:
    """The self-test lights the chain's LEDs one at a time, all 121 steps of it."""
    order = []
    dark_steps = 0
    for step in range(layout.HOLES):
        renderer.draw_chain_test(step)
        renderer.show()
        lit = [led for led, rgb in enumerate(chain.shown, 1) if max(rgb)]
        if lit:
            order += lit
        else:
            dark_steps += 1
    lights = ", ".join(f"LED {led}" for led in order)
    return (
        f"{lights} light white one after another; then {dark_steps} steps light nothing (their "
        "LEDs are not there yet); then the game is back"
    )


def bench_markdown(leds: int = BENCH_LEDS) -> str:
    """The README's table of what the bench chain shows."""
    out = [f"| type | the first {leds} LEDs show |", "| --- | --- |"]
    out += [f"| `{command}` | {shows} |" for command, shows in bench_steps(leds)]
    return "\n".join(out)
