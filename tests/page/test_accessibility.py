"""The pages for every player, in headless Chromium: the bridge's board page in each language
and the hall's projector page audited by axe-core (pinned in tests/a11y/, `make a11y`) with no
violation of WCAG 2.1 A/AA; a change of score said in an ARIA live region ("orange 5, blue 0")
for a player who cannot see the LEDs; the board's picture described in words; every control
reached and used with the keyboard alone."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from browsersupport import chromium, needs_chromium
from cribboard.bridge.server import Bridge
from cribboard.hall.page import Page
from cribboard.hall.store import Store
from cribboard.record.store import Record
from cribboard.virtual import VirtualBoard
from cribdev.recordgen import play_games
from hallsupport import running_broker, running_director, sim_tables
from support import running_bridge, wait_bridge_state

AXE = Path(__file__).resolve().parents[1] / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
LANGUAGES = ("en", "sv", "nb", "nl")

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    needs_chromium,
    pytest.mark.skipif(not AXE.exists(), reason="no axe-core: `make a11y` installs it (npm ci)"),
]


@pytest.fixture(scope="module")
def vboard(module_vboard: VirtualBoard) -> VirtualBoard:
    return module_vboard


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bridge(module_vboard: VirtualBoard) -> AsyncIterator[Bridge]:
    async with running_bridge(module_vboard.port) as b:
        yield b


async def post(bridge: Bridge, path: str, body: dict[str, Any]) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session:
        async with session.post(bridge.url + path, json=body) as response:
            assert response.status == 200, await response.text()
            return await response.json()  # type: ignore[no-any-return]


async def audit(page: Any) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations on the page as it is, one line each."""
    if not await page.evaluate("typeof axe !== 'undefined'"):
        await page.add_script_tag(path=str(AXE))
    result = await page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", WCAG_21_AA
    )
    assert result["passes"], "axe checked nothing"
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
        for v in result["violations"]
    ]


async def open_board_page(context: Any, bridge: Bridge) -> Any:
    page = await context.new_page()
    page.set_default_timeout(20000)
    await page.goto(bridge.url)
    await page.wait_for_selector("#score-0")
    await page.wait_for_function("document.body.dataset.rev !== undefined")
    return page


async def audit_every_language(page: Any) -> list[str]:
    """The audit in each language of the page's menu (the page changes its words in place)."""
    found = []
    for lang in LANGUAGES:
        await page.select_option("#lang-select", lang)
        await page.wait_for_function("l => document.documentElement.lang === l", arg=lang)
        found += [f"{lang}: {line}" for line in await audit(page)]
    return found


async def test_the_board_page_passes_the_audit_in_every_language(bridge: Bridge) -> None:
    await post(bridge, "api/new", {"target": 121, "players": 2})
    async with chromium(1280, 800) as context:
        page = await open_board_page(context, bridge)
        assert await audit_every_language(page) == []
        # A game under way, with a count being entered, on a phone's screen.
        await post(bridge, "api/peg", {"player": 0, "points": 7})
        await post(bridge, "api/pending", {"player": 1, "points": 3})
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.wait_for_selector("#players .pending:not([hidden])")
        assert await audit_every_language(page) == []
        # In large text, the legend unfolded, a refused count said at the foot of the screen.
        await page.click("#large-text")
        await page.fill('#players .player[data-player="1"] .more input', "30")
        await page.click('#players .player[data-player="1"] .more button')
        await page.wait_for_selector("#log .error")
        assert await page.get_attribute("#legend-box", "open") is not None
        assert await audit_every_language(page) == []
        # The game won: controls disabled, the winner's card shown.
        await post(bridge, "api/set", {"player": 0, "front": 121, "back": 100})
        await page.wait_for_selector("#players .winner:not([hidden])")
        assert await audit_every_language(page) == []
        await post(bridge, "api/new", {"target": 121, "players": 2})


async def test_the_history_and_the_names_pass_the_audit_in_every_language(
    module_vboard: VirtualBoard, tmp_path: Path
) -> None:
    """The record's parts of the page (through a bridge): the players' names unfolded and the
    history with its table, game graph and hand chart, on a phone's screen (the page's other
    tests audit it at a desktop's size too)."""
    path = tmp_path / "record.sqlite"
    with Record.open(path) as record:
        play_games(record, 6, random.Random(4))
        ids = [row[0] for row in record.db.execute("SELECT id FROM games ORDER BY id")]
        record.add_match("gen:board", 1, kind="best_of", length=3, games=ids[:3], winner=0)
    async with running_bridge(module_vboard.port, record_path=path) as bridge:
        async with chromium(412, 915) as context:
            page = await context.new_page()
            page.set_default_timeout(20000)
            await page.goto(bridge.url + "?history")
            await page.wait_for_selector("#game-graph svg")
            await page.wait_for_selector("#hand-chart svg")
            await page.click("#names-title")
            assert await audit_every_language(page) == []


async def test_a_change_of_score_is_said_in_a_live_region(bridge: Bridge) -> None:
    await post(bridge, "api/new", {"target": 121, "players": 2})
    async with chromium(1280, 800, locale="en-US") as context:
        page = await open_board_page(context, bridge)
        region = page.locator("#announce")
        assert await region.get_attribute("aria-live") == "polite"
        assert await region.inner_text() == ""  # opening the page moves nothing
        await post(bridge, "api/peg", {"player": 1, "points": 5})
        await page.wait_for_function("document.querySelector('#announce').textContent !== ''")
        assert await region.text_content() == "orange 5, blue 0"
        await post(bridge, "api/peg", {"player": 0, "points": 12})
        await page.wait_for_function(
            "document.querySelector('#announce').textContent === 'blue 12, orange 5'"
        )
        await post(bridge, "api/set", {"player": 1, "front": 121, "back": 110})
        await page.wait_for_function(
            "document.querySelector('#announce').textContent.startsWith('orange 121, blue 12')"
        )
        said = await region.text_content()
        assert said.startswith("orange 121, blue 12. orange wins"), said
        # Drawn off-screen, not hidden from the accessibility tree.
        box = await region.bounding_box()
        assert box is not None and box["width"] <= 1 and box["height"] <= 1
    async with chromium(1280, 800, locale="nl-NL") as context:
        await post(bridge, "api/new", {"target": 121, "players": 2})
        page = await open_board_page(context, bridge)
        await post(bridge, "api/peg", {"player": 1, "points": 4})
        # In the page's language: Dutch colour words.
        await page.wait_for_function(
            "document.querySelector('#announce').textContent === 'oranje 4, blauw 0'"
        )


async def test_the_board_is_described_in_words(bridge: Bridge) -> None:
    await post(bridge, "api/new", {"target": 121, "players": 2})
    await post(bridge, "api/set", {"player": 0, "front": 72, "back": 60})
    async with chromium(1280, 800, locale="en-US") as context:
        page = await open_board_page(context, bridge)
        assert await page.get_attribute("#board", "role") == "img"
        label = await page.get_attribute("#board", "aria-label")
        assert label == (
            "The board: blue 72, back peg 60, lap 2 of 2; orange 0, back peg 0, lap 1 of 2"
        )


async def test_every_control_works_from_the_keyboard(bridge: Bridge) -> None:
    await post(bridge, "api/new", {"target": 121, "players": 2})
    async with chromium(1280, 800, locale="en-US") as context:
        page = await open_board_page(context, bridge)
        # Everything a mouse can use (each numbered), and what Tab reaches, in turn.
        controls = await page.evaluate(
            """() => [...document.querySelectorAll('button, select, input')]
                .filter((e) => !e.disabled && e.offsetParent !== null
                               && !e.closest('details:not([open])'))  // not folded away
                .map((e, i) => { e.dataset.kbd = i; return i; })"""
        )
        assert len(controls) >= 20  # 2 players x (6 quick pegs + count + Peg), the game's own
        reached: list[int] = []
        for _ in range(len(controls) + 5):
            await page.keyboard.press("Tab")
            focused = await page.evaluate(
                """() => { const e = document.activeElement;
                   return e === document.body || e.dataset.kbd === undefined ? null
                     : [+e.dataset.kbd, getComputedStyle(e).outlineStyle]; }"""
            )
            if focused is None or focused[0] in reached:
                break
            index, outline = focused
            assert outline != "none", f"control {index}: no visible focus"
            reached.append(index)
        assert sorted(reached) == sorted(controls)

        # Orange pegs 2 with Enter on its +2 button, then 9 typed into its Count field.
        await page.focus('button[aria-label="orange pegs 2"]')
        await page.keyboard.press("Enter")
        await wait_bridge_state(bridge, lambda s: s["front"] == [0, 2], 10)
        field = page.locator('#players .player[data-player="1"] .more input')
        await field.focus()
        await page.keyboard.press("Control+A")
        await page.keyboard.type("9")
        await page.keyboard.press("Enter")
        await wait_bridge_state(bridge, lambda s: s["front"] == [0, 11], 10)
        # Space works as a click too: blue's +1.
        await page.focus('button[aria-label="blue pegs 1"]')
        await page.keyboard.press(" ")
        await wait_bridge_state(bridge, lambda s: s["front"] == [1, 11], 10)
        # Undo from the keyboard.
        await page.focus("#undo")
        await page.keyboard.press("Enter")
        await wait_bridge_state(bridge, lambda s: s["front"] == [0, 11], 10)


async def test_the_hall_page_passes_the_audit(tmp_path: Path) -> None:
    """The projector page (English only: the hall's words are not translated yet)."""
    with running_broker(tmp_path / "broker", tables=2) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=3) as director:
                async with sim_tables(broker, 2) as tables, Page(director.view, port=0) as site:
                    director.register(["Ann", "Bob", "Cid", "Dee", "Eve"])
                    report = await director.next_round()
                    await tables[0].peg(0, 7)
                    async with chromium(1920, 1080) as context:
                        page = await context.new_page()
                        page.set_default_timeout(20000)
                        await page.goto(site.url)
                        blue, orange = report.names[1]
                        wanted = f"the board of table 1: {blue} 7, {orange} 0"
                        await page.wait_for_function(
                            "w => [...document.querySelectorAll('.mini-board')]"
                            ".some((s) => s.getAttribute('aria-label') === w)",
                            arg=wanted,
                        )
                        assert await audit(page) == []
                        await tables[0].finish(0, 80)
                        await page.wait_for_function("document.querySelector('.seat.won') !== null")
                        assert await audit(page) == []
                        label = await page.get_attribute(
                            '.table-card[data-table="1"] .mini-board', "aria-label"
                        )
                        assert json.dumps(label).count("wins") == 1, label
