"""The picture of the finished board: the walnut top panel with its holes, lit by the
firmware's renderer with a game in progress, the buttons and the USB-C cable (needs Pillow)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cribboard.hardware.case import CASE, Case
from cribboard.hardware.power import NullPixels
from cribcore import layout, render
from cribcore.state import GameState

PNG_PX_PER_MM = 4
_PNG_MARGIN_MM = 10
_SUPERSAMPLE = 2


def sample_game() -> GameState:
    """The game the picture shows: orange on its second lap (the home-stretch glow), blue
    trailing behind the double-skunk line, orange dealing."""
    board = GameState(2, 121)
    board.set_pegs(0, 37, 31)
    board.set_pegs(1, 72, 64)
    board.set_dealer(1)
    return board


def _hue(rgb: tuple[int, int, int]) -> tuple[tuple[int, int, int], float]:
    """An LED's frame colour as (its hue at full strength, how bright it looks 0..1): the eye
    sees dim light brighter than its share of current, so faint glows stay visible."""
    peak = max(rgb)
    if peak == 0:
        return ((0, 0, 0), 0.0)
    r, g, b = (int(round(255 * c / peak)) for c in rgb)
    return ((r, g, b), (peak / 255) ** 0.5)


def _mix(a: Sequence[int], b: Sequence[int], t: float) -> tuple[int, int, int]:
    r, g, bl = (int(round(x + (y - x) * t)) for x, y in zip(a, b))
    return (r, g, bl)


def board_png(path: Path, case: Case = CASE) -> None:
    """Draw the finished board, lit with a game in progress, from the layout and the renderer."""
    try:
        from PIL import Image
    except ImportError as err:  # Pillow is the hardware extra's (the test extra has it too)
        raise SystemExit(
            "the board picture needs Pillow: pip install 'cribboard[hardware]'"
        ) from err
    canvas = _Canvas(case)
    image = _wood(canvas)
    image = _leds(canvas, image)
    _controls(canvas, image)
    width, height = canvas.size
    final = image.resize((width // _SUPERSAMPLE, height // _SUPERSAMPLE), Image.Resampling.LANCZOS)
    final.save(path, format="PNG", optimize=False)


class _Canvas:
    """Board millimetres to the supersampled picture's pixels."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.scale = PNG_PX_PER_MM * _SUPERSAMPLE
        self.margin = _PNG_MARGIN_MM
        self.size = (
            (case.width_mm + 2 * self.margin) * self.scale,
            (case.height_mm + 2 * self.margin) * self.scale,
        )

    def px(self, x: float, y: float) -> tuple[float, float]:
        return ((x + self.margin) * self.scale, (y + self.margin) * self.scale)

    def circle(self, draw: Any, x: float, y: float, r: float, **kw: Any) -> None:
        cx, cy = self.px(x, y)
        s = self.scale
        draw.ellipse((cx - r * s, cy - r * s, cx + r * s, cy + r * s), **kw)


def _wood(canvas: _Canvas) -> Any:
    """The table, the board's shadow on it, and the board: walnut with a grain."""
    from PIL import Image, ImageDraw, ImageFilter

    px, size, s = canvas.px, canvas.size, canvas.scale
    width, height = canvas.case.width_mm, canvas.case.height_mm
    image = Image.new("RGB", size, (236, 233, 228))
    shadow = Image.new("L", size, 0)
    ImageDraw.Draw(shadow).rounded_rectangle(
        (*px(1.5, 2.5), *px(width + 1.5, height + 2.5)), radius=4 * s, fill=110
    )
    shadow = shadow.filter(ImageFilter.GaussianBlur(2.5 * s))
    image.paste((120, 110, 100), (0, 0), shadow)
    wood = Image.new("RGB", size, (122, 84, 56))
    grain = ImageDraw.Draw(wood)
    rng = random.Random(6)
    for _ in range(140):
        y0 = rng.uniform(-5, height + 5)
        amp, phase, period = rng.uniform(0.3, 2.0), rng.uniform(0, 6.3), rng.uniform(60, 220)
        shade = rng.randint(-22, 12)
        colour = (106 + shade, 71 + shade, 46 + shade)
        points = []
        for i in range(0, width + 11, 5):
            points.append(px(i - 5, y0 + amp * math.sin(phase + i * 6.283 / period)))
        grain.line(points, fill=colour, width=max(1, int(rng.uniform(0.15, 0.6) * s)))
    mask = Image.new("L", size, 0)
    ImageDraw.Draw(mask).rounded_rectangle((*px(0, 0), *px(width, height)), radius=4 * s, fill=255)
    image.paste(wood, (0, 0), mask)
    ImageDraw.Draw(image).rounded_rectangle(
        (*px(0, 0), *px(width, height)), radius=4 * s, outline=(70, 46, 30), width=int(0.8 * s)
    )
    return image


def _leds(canvas: _Canvas, image: Any) -> Any:
    """Every hole with its LED, lit by the firmware's renderer, and their glow on the wood."""
    from PIL import Image, ImageChops, ImageDraw, ImageFilter

    renderer = render.Renderer(NullPixels())
    renderer.draw(sample_game(), 0)
    frame = renderer.frame
    draw = ImageDraw.Draw(image)
    glow = Image.new("RGB", canvas.size, (0, 0, 0))
    glow_draw = ImageDraw.Draw(glow)
    circle = canvas.circle
    r_hole = canvas.case.hole_mm / 2
    for hole in range(layout.HOLES):
        x, y = canvas.case.hole_xy(hole)
        rgb = (frame[3 * hole], frame[3 * hole + 1], frame[3 * hole + 2])
        circle(draw, x, y, r_hole + 0.45, fill=(48, 32, 22))
        if rgb == (0, 0, 0):
            circle(draw, x, y, r_hole, fill=(196, 192, 184))
            circle(draw, x - 0.6, y - 0.6, r_hole * 0.45, fill=(214, 211, 204))
            continue
        hue, level = _hue(rgb)
        lens = _mix((196, 192, 184), hue, 0.2 + 0.8 * level)
        circle(draw, x, y, r_hole, fill=lens)
        circle(draw, x, y, r_hole * 0.5, fill=_mix(lens, (255, 255, 255), 0.45 * level))
        circle(glow_draw, x, y, r_hole * (1.0 + 2.0 * level), fill=_mix((0, 0, 0), hue, level))
    glow = glow.filter(ImageFilter.GaussianBlur(1.6 * canvas.scale))
    return ImageChops.screen(image, glow)


def _controls(canvas: _Canvas, image: Any) -> None:
    """The two-player build's buttons and the USB-C socket with its cable."""
    from PIL import ImageDraw

    draw = ImageDraw.Draw(image)
    caps = {"A": (40, 90, 200), "B": (235, 110, 20), "C": (170, 40, 150), "d": (235, 235, 230)}
    for name, (x, y) in canvas.case.button_positions().items():
        if name.startswith("C"):
            continue  # the picture shows a two-player build
        cap = caps[name[0]]
        canvas.circle(draw, x, y, 5.2, fill=(60, 60, 60))
        canvas.circle(draw, x, y, 4.3, fill=cap)
        canvas.circle(draw, x - 1.2, y - 1.2, 1.6, fill=tuple(min(255, c + 50) for c in cap))
    usb_y, s = canvas.case.usb_y_mm, canvas.scale
    cx, cy = canvas.px(-canvas.margin, usb_y)
    draw.rounded_rectangle(
        (cx, cy - 1.6 * s, *canvas.px(0, usb_y + 1.6)), radius=1.2 * s, fill=(70, 70, 74)
    )
    draw.rounded_rectangle(
        (*canvas.px(-4, usb_y - 3), *canvas.px(0.6, usb_y + 3)), radius=1 * s, fill=(40, 40, 44)
    )
