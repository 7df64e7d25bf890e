"""The page in Norwegian in headless Chromium (Debian's /usr/bin/chromium through Playwright,
a browser of its own whose language is Norwegian bokmål): it speaks the browser's language,
its menu switches it to Dutch and back without reloading the board, and the choice is
remembered for the next visit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from browsersupport import chromium, needs_chromium
from cribboard.bridge.server import Bridge
from cribboard.virtual import VirtualBoard
from support import running_bridge

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    needs_chromium,
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def norwegian(module_vboard: VirtualBoard) -> AsyncIterator[tuple[Any, Bridge]]:
    """A browser context whose language is nb-NO, and a bridge on the virtual board."""
    async with (
        running_bridge(module_vboard.port) as bridge,
        chromium(1280, 800, locale="nb-NO") as context,
    ):
        yield context, bridge


async def text(page: Any, selector: str) -> str:
    return str(await page.text_content(selector))


async def test_the_page_speaks_norwegian_then_dutch_from_its_menu(
    norwegian: tuple[Any, Bridge],
) -> None:
    context, bridge = norwegian
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.set_default_timeout(20000)
    await page.goto(bridge.url)
    await page.wait_for_function("document.querySelectorAll('#board circle.hole').length == 121")
    await page.wait_for_selector("#score-0")
    assert await page.evaluate("navigator.language") == "nb-NO"

    # Norwegian, from the browser's language
    await page.wait_for_function("document.querySelector('#undo').textContent == 'Angre'")
    assert await page.evaluate("document.documentElement.lang") == "nb"
    assert await page.input_value("#lang-select") == "nb"
    assert await text(page, "#new") == "Nytt parti"
    assert await text(page, ".player .name") == "blå"
    assert "hånden til" in await text(page, "#table")
    assert "cribben til" in await text(page, "#table")
    assert "Sterkt: den fremste pinnen" in await text(page, "#legend")
    await page.wait_for_function("document.querySelector('#status').textContent == 'tilkoblet'")
    assert "2 spillere" in await text(page, "#player-count")

    # a peg from the page, then Dutch from the menu: the words change, the board does not
    await page.click("#players .player[data-player='1'] .pegs button[data-points='5']")
    await page.wait_for_function("document.querySelector('#score-1').textContent == '5'")
    await page.evaluate("window.__sameBoard = document.querySelector('#board circle.hole')")
    await page.select_option("#lang-select", "nl")
    await page.wait_for_function("document.querySelector('#undo').textContent == 'Ongedaan maken'")
    assert await page.evaluate("document.documentElement.lang") == "nl"
    assert await text(page, ".player .name") == "blauw"
    assert "de hand van" in await text(page, "#table")
    assert "Fel: de voorste pin" in await text(page, "#legend")
    assert await text(page, "#status") == "verbonden"
    assert "achter" in await text(page, "#players .player[data-player='1'] .meta")
    assert await text(page, "#score-1") == "5"
    assert await page.evaluate(
        "document.querySelector('#board circle.hole') === window.__sameBoard"
    )
    label = await page.get_attribute("#players .pegs button", "aria-label")
    assert label == "blauw scoort 1"

    # back to Norwegian, and the choice is remembered for the next visit
    await page.select_option("#lang-select", "nb")
    await page.wait_for_function("document.querySelector('#undo').textContent == 'Angre'")
    assert await page.evaluate("localStorage.getItem('cribboard.lang')") == "nb"
    await page.select_option("#lang-select", "nl")
    await page.wait_for_function("document.querySelector('#undo').textContent == 'Ongedaan maken'")
    await page.reload()
    await page.wait_for_selector("#score-0")
    await page.wait_for_function("document.querySelector('#undo').textContent == 'Ongedaan maken'")
    assert await page.input_value("#lang-select") == "nl"
    await page.evaluate("localStorage.removeItem('cribboard.lang')")
    await page.close()
    assert not errors, errors
