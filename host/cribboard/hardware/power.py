"""The power budget: the LED current of the brightest frame a game can show, at the default
brightness and at full brightness through the firmware's limiter, computed with the firmware's own
renderer (`cribcore.render`)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from cribboard.hardware.boards import BOARD_INFO
from cribcore import layout, limits, render
from cribcore.profiles import PROFILES
from cribcore.state import GameError, GameState


class NullPixels:
    """Just enough of neopixel.NeoPixel for the renderer (writes go nowhere)."""

    ORDER = (1, 0, 2, 3)

    def __init__(self) -> None:
        self.buf = bytearray(3 * layout.HOLES)
        self.bpp = 3

    def write(self) -> None:
        pass


@dataclass(frozen=True)
class PowerFigures:
    budget_ma: int  # default LED budget of the supported boards
    ma_per_led: int  # the estimate's full-white draw of one LED
    idle_ma: int  # all LEDs dark
    brightest_sum: int  # channel values of the brightest game frame found (before scaling)
    brightest_state: str  # which state that is
    default_ma: int  # that frame at the default brightness, through the limiter
    default_scale: int
    full_natural_ma: int  # that frame at brightness 255 with no limiter
    full_ma: int  # ... and through the default limiter
    full_scale: int
    white_natural_ma: int  # every LED full white at brightness 255, no limiter
    white_ma: int  # ... through the default limiter
    selftest_ma: int  # the wiring self-test: one LED lit white at the default brightness


def _states() -> Iterator[tuple[GameState, int, str]]:
    """Game states that can be reached, with an animation time: a broad search for the brightest
    frame. Two players: every pair of scores. Three players: every combination of scores near
    the lap and skunk lines. Back pegs one or 29 behind; counts of 1 or 29 pending (every mix
    of them for three players; the pending count drawn, its blink on); a won game at the peak of the winner's pulse."""
    pulse_peak = render.PULSE_MS // 2
    keys = (0, 1, 2, 29, 30, 31, 32, 59, 60, 61, 62, 89, 90, 91, 92, 119, 120, 121)
    for players in (2, 3):
        for target in limits.TARGETS:
            scores = range(target + 1) if players == 2 else [k for k in keys if k <= target]
            count_sets = (
                [(1, 1), (29, 29)] if players == 2 else list(itertools.product((1, 29), repeat=3))
            )
            for fronts in itertools.product(scores, repeat=players):
                for gap in (1, 29):
                    board = GameState(players, target)
                    try:
                        for p, front in enumerate(fronts):
                            if front:
                                board.set_pegs(p, front, max(0, front - gap))
                    except GameError:
                        continue
                    text = (
                        f"{players} players, {target} game, scores "
                        + ", ".join(str(f) for f in fronts)
                        + f" (back pegs {gap} behind)"
                    )
                    if board.winner != -1:
                        yield board, pulse_peak, text
                        continue
                    for counts in count_sets:
                        for p, count in enumerate(counts):
                            board.set_pending(p, count)
                        yield (
                            board,
                            0,
                            text + ", counts " + ", ".join(str(c) for c in counts) + " pending",
                        )


@functools.cache
def power_figures() -> PowerFigures:
    """The power budget, computed with the firmware's own renderer and limiter."""
    budget = PROFILES["pico2w"].budget_ma
    renderer = render.Renderer(NullPixels(), budget_ma=budget)
    best_sum, best_board, best_t, best_text = -1, GameState(), 0, ""
    for board, t, text in _states():
        renderer.draw(board, t)
        total = sum(renderer.frame)
        if total > best_sum:
            best_sum, best_t, best_text = total, t, text
            best_board = GameState(board.players, board.target)  # a copy: the search reuses boards
            for p in range(board.players):
                if board.front[p]:
                    best_board.set_pegs(p, board.front[p], board.back[p])
            for p in range(board.players):
                if board.pending[p]:
                    best_board.set_pending(p, board.pending[p])

    def shown(brightness: int, budget_ma: int) -> tuple[int, int]:
        r = render.Renderer(NullPixels(), budget_ma=budget_ma, brightness=brightness)
        r.draw(best_board, best_t)
        r.show()
        return int(r.estimated_ma), int(r.scale)

    default_ma, default_scale = shown(render.DEFAULT_BRIGHTNESS, budget)
    full_natural, _ = shown(limits.MAX_BRIGHTNESS, limits.MAX_BUDGET_MA)
    full_ma, full_scale = shown(255, budget)
    white = render.Renderer(NullPixels(), budget_ma=budget, brightness=255)
    white.load_frame(bytes([255] * (3 * layout.HOLES)))
    white.show()
    idle = render.DEFAULT_IDLE_MA * layout.HOLES
    selftest = render.Renderer(NullPixels(), budget_ma=budget)
    selftest.draw_chain_test(0)
    selftest.show()
    return PowerFigures(
        budget_ma=budget,
        ma_per_led=render.DEFAULT_MA_PER_LED,
        idle_ma=idle,
        brightest_sum=best_sum,
        brightest_state=best_text,
        default_ma=default_ma,
        default_scale=default_scale,
        full_natural_ma=full_natural,
        full_ma=full_ma,
        full_scale=full_scale,
        white_natural_ma=render.DEFAULT_MA_PER_LED * layout.HOLES + idle,
        white_ma=int(white.estimated_ma),
        selftest_ma=int(selftest.estimated_ma),
    )


USB_PORT_MA = 500
"""What a USB 2.0 port gives."""


def selftest_markdown(p: PowerFigures) -> str:
    """Step 8's reading on a USB power meter, from the same figures as the power table."""
    lit = p.selftest_ma - p.idle_ma
    low = min(info.draw.running for info in BOARD_INFO.values())
    high = max(info.draw.running for info in BOARD_INFO.values())
    return (
        f"A USB power meter should read about {p.selftest_ma + low}-{p.selftest_ma + high} mA "
        f"during the test: {p.idle_ma} mA for the {layout.HOLES} LEDs' own idle draw, {lit} mA for "
        f"the one lit white, and the controller's {low}-{high} mA (the table in step 9). Far "
        f"more means a short or a wrong part: unplug and check step 7."
    )


def _round_down(value: int, step: int = 10) -> int:
    return value // step * step


def board_draw_markdown(p: PowerFigures) -> str:
    """The whole board from the USB port, per controller: its own draw (Wi-Fi too) plus the
    LEDs' estimate, against a USB 2.0 port's 500 mA."""
    rows = [
        "| controller | its own draw | board at the default brightness | board at worst (LEDs at "
        f"the {p.budget_ma} mA budget) | with Wi-Fi, power saving off (club hall) |",
        "| --- | --- | --- | --- | --- |",
    ]
    notes = []
    for info in BOARD_INFO.values():
        draw = info.draw
        typical = draw.running + p.default_ma
        worst = draw.running + p.budget_ma
        if draw.wifi:
            wifi_worst = worst + draw.wifi
            fits = _round_down(USB_PORT_MA - draw.running - draw.wifi)
            verdict = "within" if wifi_worst <= USB_PORT_MA else "**over**"
            wifi = (
                f"+{draw.wifi} mA (peaks {draw.wifi_peak} mA): {wifi_worst} mA at worst, "
                f"{verdict} {USB_PORT_MA} mA"
            )
            if wifi_worst > USB_PORT_MA:
                notes.append(
                    f"- {info.title}: in the club hall on a {USB_PORT_MA} mA port, lower the LED "
                    f"budget to {fits} mA (`cribboard budget {fits}`) or use a 1 A charger."
                )
        else:
            wifi = "no Wi-Fi"
        rows.append(f"| {info.title} | {draw.running} mA | {typical} mA | {worst} mA | {wifi} |")
    rows.append("")
    rows.append(
        "A controller's own draw is an allowance to plan with, not a measurement: the upper end "
        "of its chips' published typical figures, rounded up. Read your board's with the LEDs "
        "dark (`cribboard bright 0`) on a USB power meter; subtract "
        f"{p.idle_ma} mA for the LEDs' idle draw."
    )
    rows.extend(["", *notes] if notes else [])
    return "\n".join(rows)


def power_markdown(p: PowerFigures) -> str:
    return "\n".join(
        [
            "| case | LED current (estimate) |",
            "| --- | --- |",
            f"| all {layout.HOLES} LEDs dark (idle draw, {render.DEFAULT_IDLE_MA} mA each) | {p.idle_ma} mA |",
            f"| brightest game frame, default brightness {render.DEFAULT_BRIGHTNESS} "
            f"(scale {p.default_scale}/256) | **{p.default_ma} mA** (limiter not needed) |",
            f"| same frame at brightness 255, no limiter | {p.full_natural_ma} mA |",
            f"| same frame at brightness 255, default {p.budget_ma} mA budget "
            f"(scale {p.full_scale}/256) | **{p.full_ma} mA** |",
            f"| every LED full white, no limiter (the firmware never draws this) | "
            f"{p.white_natural_ma} mA |",
            f"| every LED full white, default budget | {p.white_ma} mA |",
            "",
            f"The brightest game frame found: {p.brightest_state} (channel values add up to "
            f"{p.brightest_sum} before brightness). Estimate: channel sum x scale/256 x "
            f"{p.ma_per_led} mA / 765 + {render.DEFAULT_IDLE_MA} mA x {layout.HOLES} LEDs, as in "
            "`cribcore/render.py`.",
        ]
    )
