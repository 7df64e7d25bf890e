"""The hall's projector page in headless Chromium (Debian's /usr/bin/chromium through
Playwright): it shows the standings, the round and every table's board, updates live when a
simulated table pegs, reads at 1920x1080 and fits a phone; `hall page`'s viewer feeds the same
page from the broker alone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio

from browsersupport import chromium, needs_chromium
from cribboard.hall.page import Page
from cribboard.hall.store import Store
from cribboard.hall.view import HallView, follow
from cribcore import layout
from hallsupport import WAIT_S, address, running_broker, running_director, sim_tables

PLAYERS = ["Ann", "Bob", "Cid", "Dee", "Eve"]

pytestmark = needs_chromium


@pytest_asyncio.fixture
async def browser() -> AsyncIterator[Any]:
    async with chromium(1920, 1080) as context:
        yield context


async def open_page(browser: Any, url: str, errors: list[str]) -> Any:
    page = await browser.new_page()
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.set_default_timeout(WAIT_S * 1000)
    await page.goto(url)
    return page


def score(table: int, seat: int) -> str:
    return f'.table-card[data-table="{table}"] .seat[data-seat="{seat}"] .score'


async def test_the_page_shows_the_hall_and_follows_every_peg(browser: Any, tmp_path: Path) -> None:
    errors: list[str] = []
    with running_broker(tmp_path / "broker", tables=2) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=3) as director:
                async with sim_tables(broker, 2) as tables, Page(director.view, port=0) as site:
                    director.register(PLAYERS)
                    report = await director.next_round()
                    await tables[0].finish(0, 80)  # a skunk at table 1
                    page = await open_page(browser, site.url, errors)
                    await page.wait_for_function(
                        "document.querySelectorAll('#standings tbody tr').length === 5"
                    )
                    first = report.names[1][0]
                    await page.wait_for_function(
                        "t => document.querySelector('#standings tbody td.player')"
                        ".textContent === t",
                        arg=first,
                    )
                    assert await page.locator(".table-card").count() == 2
                    pairings = await page.locator("#pairings").inner_text()
                    for blue, orange in report.names.values():
                        assert blue in pairings and orange in pairings
                    assert await page.locator("#bye").inner_text() == f"Bye: {report.bye_name}"
                    card_2 = page.locator('.table-card[data-table="2"]')
                    assert report.names[2][1] in await card_2.inner_text()

                    # Table 2 pegs: its score and its board's lit holes follow.
                    lit_before = await card_2.locator("circle.hole.lit").count()
                    await tables[1].peg(1, 7)
                    await page.wait_for_function(
                        f"document.querySelector('{score(2, 1)}').textContent === '7'"
                    )
                    assert await card_2.locator("circle.hole.lit").count() == lit_before + 1
                    hole = layout.hole_for_score(2, 1, 7, 121)
                    orange = await card_2.locator(f'circle[data-hole="{hole}"]').get_attribute(
                        "data-rgb"
                    )
                    assert orange == "ff6400"  # the firmware's orange front peg

                    # Large type at 1920x1080, nothing wider than the screen.
                    size = await page.eval_on_selector(
                        "#standings td.player", "e => parseFloat(getComputedStyle(e).fontSize)"
                    )
                    assert size >= 26
                    assert await page.evaluate("document.documentElement.scrollWidth") <= 1920
                    await page.screenshot(path=str(tmp_path / "hall-1920.png"))

                    # Table 2's client dies: the card says so.
                    await tables[1].stop()
                    await page.wait_for_function(
                        "document.querySelector('.table-card[data-table=\"2\"]').classList"
                        ".contains('offline')"
                    )

                    # A phone: one column, nothing to scroll sideways.
                    await page.set_viewport_size({"width": 390, "height": 844})
                    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
                    await page.screenshot(path=str(tmp_path / "hall-phone.png"), full_page=True)
                    await page.close()
    assert not errors, errors


async def test_the_page_of_hall_serve_follows_the_broker_as_a_viewer(
    browser: Any, tmp_path: Path
) -> None:
    errors: list[str] = []
    with running_broker(tmp_path / "broker", tables=2) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=3) as director:
                async with sim_tables(broker, 2) as tables:
                    director.register(PLAYERS[:4])
                    await director.next_round()
                    view = HallView("club")
                    connected = asyncio.Event()
                    following = asyncio.create_task(
                        follow(view, address(broker, "viewer"), connected)
                    )
                    try:
                        async with Page(view, port=0) as site:
                            page = await open_page(browser, site.url, errors)
                            await page.wait_for_function(
                                "document.querySelectorAll('.table-card').length === 2"
                            )
                            await tables[0].peg(0, 12)
                            await page.wait_for_function(
                                f"document.querySelector('{score(1, 0)}').textContent === '12'"
                            )
                            await page.close()
                    finally:
                        following.cancel()
    assert not errors, errors
