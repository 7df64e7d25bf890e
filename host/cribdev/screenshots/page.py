"""The bridge's page in headless Chromium (Debian's, as the browser tests use it): its picture,
and a record of what it showed that a test can compare on any machine."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from cribboard.bridge.server import STATIC_DIR
from cribboard.web import BOARD_FILES

CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1280, 860  # the browser window, in CSS pixels (one device pixel each)
PAGE_FILES = (
    STATIC_DIR / "index.html",
    STATIC_DIR / "style.css",
    STATIC_DIR / "app.js",
    BOARD_FILES / "board.js",
    STATIC_DIR / "links.js",
)
"""The files that make the page's look: a change to any makes the picture stale."""


def source_digests() -> list[str]:
    """`sha256 FILE DIGEST` for each of the page's files."""
    return [
        f"sha256 {path.name} {hashlib.sha256(path.read_bytes()).hexdigest()}" for path in PAGE_FILES
    ]


async def page_picture(url: str, png: Path | None, front: list[int]) -> str:
    """Open the page at `url` once the board shows scores `front`; save its picture to `png`
    (None: no picture) and return the record of what it showed."""
    import tempfile

    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory(prefix="cribboard-shot-") as profile:
        async with async_playwright() as p:
            context = await p.chromium.launch_persistent_context(
                profile,
                executable_path=CHROMIUM,
                headless=True,
                args=["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"],
                viewport={"width": WIDTH, "height": HEIGHT},
                device_scale_factor=1,
            )
            try:
                page = context.pages[0] if context.pages else await context.new_page()
                await page.goto(url)
                await _settled(page, front)
                if png is not None:
                    await page.screenshot(path=str(png), full_page=True)
                text = await page.evaluate("document.body.innerText")
                lit = await page.evaluate(
                    """() => [...document.querySelectorAll('#board circle.lit')]
                       .map(c => c.dataset.hole + ' ' + c.dataset.rgb)"""
                )
            finally:
                await context.close()
    lines = [
        "# What docs/images/page.png shows (make screenshots writes both; a test compares this)",
        *source_digests(),
        "--- the page's text",
        *[line.rstrip() for line in text.strip().splitlines() if line.strip()],
        "--- the lit holes: hole, RRGGBB",
        *lit,
    ]
    return "\n".join(lines) + "\n"


HISTORY_FILES = (
    STATIC_DIR / "index.html",
    STATIC_DIR / "style.css",
    STATIC_DIR / "records.js",
)
"""The files that make the history's look."""
PHONE = (412, 915)
"""The phone the history is pictured on, in CSS pixels (drawn at two device pixels each)."""


async def history_picture(url: str, png: Path | None) -> str:
    """The page at `url` on a phone, its history unfolded (the latest game's graph, the first
    player's hand counts): save the history's picture to `png` (None: no picture) and return
    the record of what it showed (its text, the graph's lines and the chart's bars)."""
    import tempfile

    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory(prefix="cribboard-shot-") as profile:
        async with async_playwright() as p:
            context = await p.chromium.launch_persistent_context(
                profile,
                executable_path=CHROMIUM,
                headless=True,
                args=["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"],
                viewport={"width": PHONE[0], "height": PHONE[1]},
                device_scale_factor=2,
                locale="en-US",
            )
            try:
                page = context.pages[0] if context.pages else await context.new_page()
                await page.goto(url + "?history")
                await page.wait_for_selector("#game-graph svg polyline")
                await page.wait_for_selector("#hand-chart svg rect")
                if png is not None:
                    await page.locator("#history-box").screenshot(path=str(png))
                text = await page.inner_text("#history-box")
                drawn = await page.evaluate(
                    """() => [
                      ...[...document.querySelectorAll('#game-graph polyline')]
                        .map(l => 'line ' + l.dataset.side + ' ' + l.getAttribute('points')),
                      ...[...document.querySelectorAll('#hand-chart rect.bar')]
                        .map(r => 'bar ' + r.getAttribute('class') + ' ' + r.dataset.count + ' '
                                  + (r.dataset.hands || r.dataset.cribs))]"""
                )
            finally:
                await context.close()
    lines = [
        "# What docs/images/history.png shows (make screenshots writes both; a test compares this)",
        *[
            f"sha256 {path.name} {hashlib.sha256(path.read_bytes()).hexdigest()}"
            for path in HISTORY_FILES
        ],
        "--- the history's text",
        *[line.rstrip() for line in text.strip().splitlines() if line.strip()],
        "--- the graph's lines and the chart's bars",
        *drawn,
    ]
    return "\n".join(lines) + "\n"


async def _settled(page: Any, front: list[int]) -> None:
    await page.wait_for_function(
        "want => want.every((score, p) => "
        "document.querySelector('#score-' + p)?.textContent === String(score))",
        arg=front,
    )
    await page.wait_for_function("document.querySelector('#status').classList.contains('live')")
    await page.wait_for_function("document.querySelectorAll('#board circle.lit').length > 60")
    # Through a bridge the record's parts (records.js, imported once the link is up) show last.
    await page.wait_for_function(
        "!document.querySelector('#names-box').hidden"
        " && !document.querySelector('#history-box').hidden"
    )
