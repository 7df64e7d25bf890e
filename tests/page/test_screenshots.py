"""The README's pictures (docs/images/, `make screenshots`) are what the programs show now: the
terminal picture byte for byte; the page, which Chromium draws differently from machine to
machine, by what it showed (its text and lit holes) and its source files' digests."""

from __future__ import annotations

import os

import pytest
from PIL import Image

from cribboard.virtual import VirtualBoard
from cribdev.screenshots import IMAGES
from cribdev.screenshots.ansi import draw_terminal, last_screen
from cribdev.screenshots.make import (
    HISTORY_RECORD,
    PAGE_RECORD,
    TERMINAL_PNG,
    history_record,
    page_record,
    terminal_png,
)
from cribdev.screenshots.page import CHROMIUM

STALE = "is stale: run `make screenshots` and commit docs/images/"


def test_terminal_text_is_drawn_in_its_colours() -> None:
    image = draw_terminal(last_screen("old\x1b[H\x1b[2Jab \x1b[38;2;255;0;0m●\x1b[0m c"), 10)
    colours = {colour for _, colour in image.getcolors(1 << 16) or []}
    assert any(r > 200 and g < 60 and b < 60 for r, g, b in colours)  # the red dot
    assert image.height < 2 * image.width  # one line: the old screen was cleared


async def test_the_terminal_picture_is_up_to_date(vboard: VirtualBoard) -> None:
    png, front = await terminal_png(vboard.port)
    assert front[:2] == [96, 55]
    assert png == (IMAGES / TERMINAL_PNG).read_bytes(), f"docs/images/{TERMINAL_PNG} {STALE}"
    with Image.open(IMAGES / TERMINAL_PNG) as picture:
        assert picture.width >= 80 * 8  # 80 columns


@pytest.mark.skipif(
    not os.access(CHROMIUM, os.X_OK),
    reason=f"no {CHROMIUM}: `make browser` installs Debian's chromium",
)
async def test_the_page_picture_is_up_to_date(vboard: VirtualBoard) -> None:
    _, front = await terminal_png(vboard.port)  # the same scene on the board
    record = await page_record(vboard.port, front, None)
    assert record == (IMAGES / PAGE_RECORD).read_text(), f"docs/images/page.png {STALE}"


@pytest.mark.skipif(
    not os.access(CHROMIUM, os.X_OK),
    reason=f"no {CHROMIUM}: `make browser` installs Debian's chromium",
)
async def test_the_history_picture_is_up_to_date(vboard: VirtualBoard) -> None:
    record = await history_record(vboard.port, None)
    assert record == (IMAGES / HISTORY_RECORD).read_text(), f"docs/images/history.png {STALE}"
