"""A terminal's text, colour codes and all, drawn as a picture: what a terminal with a dark
background shows for it. Only what the project's apps print is understood: 24-bit foreground
colours (`ESC[38;2;R;G;Bm`), the reset (`ESC[0m`), and the clear-screen before each redraw
(only the last screen is drawn)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from cribboard.play.screen import CLEAR

BACKGROUND = (22, 22, 24)
FOREGROUND = (208, 208, 208)
FONT_SIZE = 16
PADDING = 14
LINE_SPACING = 4
_SGR = re.compile(r"\x1b\[([0-9;]*)m")

Colour = tuple[int, int, int]


def terminal_font() -> Path:
    """The monospace font the pictures are drawn with: Fira Code, from the pinned PyPI package
    fontpkg-fira-code (the test extras install it), so every machine draws the same pixels."""
    spec = importlib.util.find_spec("fontpkg_fira_code")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("no Fira Code: install the test extras (make .venv/.installed)")
    return Path(spec.origin).parent / "files" / "FiraCode[wght].ttf"


def last_screen(output: str) -> str:
    """What the terminal shows after `output`: the text after the last clear-screen."""
    return output.rsplit(CLEAR, 1)[-1]


def cells(line: str) -> list[tuple[str, Colour]]:
    """The characters of one line with their colours, escape codes taken out."""
    out: list[tuple[str, Colour]] = []
    colour = FOREGROUND
    at = 0
    for code in _SGR.finditer(line):
        out.extend((char, colour) for char in line[at : code.start()])
        params = code.group(1).split(";")
        if params[:2] == ["38", "2"] and len(params) == 5:
            colour = (int(params[2]), int(params[3]), int(params[4]))
        elif params in (["0"], [""]):
            colour = FOREGROUND
        at = code.end()
    out.extend((char, colour) for char in line[at:])
    return out


def draw_terminal(text: str, columns: int = 80) -> Image.Image:
    """`text` (lines of terminal output) drawn on a terminal of `columns` columns."""
    font = ImageFont.truetype(str(terminal_font()), FONT_SIZE, layout_engine=ImageFont.Layout.BASIC)
    font.set_variation_by_name("Regular")
    width = round(font.getlength("M"))
    ascent, descent = font.getmetrics()
    height = ascent + descent + LINE_SPACING
    lines = text.rstrip("\n").split("\n")
    image = Image.new(
        "RGB", (2 * PADDING + columns * width, 2 * PADDING + len(lines) * height), BACKGROUND
    )
    pen = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        for column, (char, colour) in enumerate(cells(line)):
            if char != " ":
                pen.text(
                    (PADDING + column * width, PADDING + row * height), char, colour, font=font
                )
    return image
