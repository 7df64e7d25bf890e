"""The record of games on the bridge's page, in headless Chromium at a phone's size: the game
graph read back from the SVG's own data (its lines' points against its axis's labels) is the
record's scores deal by deal, the hand chart's bars are the player's counts, the players' names
typed in the page's fields go to the record and onto the cards (a hostile one refused whole).
(A board serving its own page keeps no record and shows none of it: tests/page/test_board_page.py.)"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from browsersupport import chromium, needs_chromium
from cribboard.bridge.server import Bridge
from cribboard.record.stats import Who, finished_games, game_graph, hand_counts
from cribboard.record.store import Record
from cribboard.virtual import VirtualBoard
from cribdev.recordgen import play_games
from support import running_bridge

PHONE = (412, 915)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), needs_chromium]


@pytest.fixture(scope="module")
def record_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("record") / "record.sqlite"
    with Record.open(path) as record:
        play_games(record, 8, random.Random(11))
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bridge(module_vboard: VirtualBoard, record_path: Path) -> AsyncIterator[Bridge]:
    async with running_bridge(module_vboard.port, record_path=record_path) as running:
        yield running


async def open_history(context: Any, bridge: Bridge) -> Any:
    page = await context.new_page()
    page.set_default_timeout(20000)
    await page.goto(bridge.url + "?history")
    await page.wait_for_selector("#score-0")
    await page.wait_for_selector("#game-graph svg")
    await page.wait_for_selector("#hand-chart svg")
    return page


# Reads the game graph as a person would, from what is drawn: each y label's value at its
# height (a line through them), then each line's points turned back into scores.
READ_GRAPH = """() => {
  const svg = document.querySelector('#game-graph svg');
  const ticks = [...svg.querySelectorAll('text.tick.y')].map(t =>
    [Number(t.dataset.value), Number(t.getAttribute('y')) - 4]);
  const [v0, y0] = ticks[0], [v1, y1] = ticks[ticks.length - 1];
  const value = (y) => v0 + (y - y0) * (v1 - v0) / (y1 - y0);
  const lines = [...svg.querySelectorAll('polyline.score-line')].map(line =>
    line.getAttribute('points').trim().split(' ').map(p => Math.round(value(Number(p.split(',')[1])))));
  return { game: Number(svg.dataset.game), lines, label: svg.getAttribute('aria-label') };
}"""


async def test_the_game_graph_and_the_hand_chart_are_the_records(
    bridge: Bridge, record_path: Path
) -> None:
    with Record.open(record_path) as record:
        games = finished_games(record, 20)
        graphs = {g.id: game_graph(record, g.id) for g in games}
        counts = hand_counts(record, Who("Bob"))
    async with chromium(*PHONE) as context:
        page = await open_history(context, bridge)
        for game in (games[0], games[-1]):  # the latest, shown first, and one picked
            await page.select_option("#game-pick", str(game.id))
            await page.wait_for_function(
                f"document.querySelector('#game-graph svg')?.dataset.game === '{game.id}'"
            )
            drawn = await page.evaluate(READ_GRAPH)
            graph = graphs[game.id]
            assert graph is not None
            for side in range(2):
                assert drawn["lines"][side] == [row[side] for row in graph.scores]
            assert f"#{game.id}" in drawn["label"] and str(graph.game.front[0]) in drawn["label"]
        # The whole chart fits the phone's width: no sideways scrolling for it.
        width = await page.evaluate(
            "document.querySelector('#game-graph svg').getBoundingClientRect().width"
        )
        assert 300 <= width <= PHONE[0]
        # The hand chart: Bob's counts.
        await page.select_option("#hand-pick", "n:Bob")
        await page.wait_for_function(
            "document.querySelector('#hand-chart svg')?.getAttribute('aria-label').startsWith('Bob')"
        )
        bars = await page.evaluate(
            """() => [...document.querySelectorAll('#hand-chart rect.bar')].map(r =>
                 [r.classList.contains('hand') ? 'hand' : 'crib', Number(r.dataset.count),
                  Number(r.dataset.hands || r.dataset.cribs), Number(r.getAttribute('height'))])"""
        )
    hands = {count: n for kind, count, n, _h in bars if kind == "hand"}
    cribs = {count: n for kind, count, n, _h in bars if kind == "crib"}
    assert hands == {p: n for p, n in enumerate(counts.hands) if n}
    assert cribs == {p: n for p, n in enumerate(counts.cribs) if n}
    # Each bar's height is its number on one scale.
    scales = {round(height / n, 3) for _kind, _count, n, height in bars}
    assert len(scales) == 1


async def test_names_typed_on_the_page(bridge: Bridge, record_path: Path) -> None:
    async with chromium(*PHONE) as context:
        page = await context.new_page()
        page.set_default_timeout(20000)
        await page.goto(bridge.url)
        await page.wait_for_selector("#names-fields input", state="attached")
        await page.click("#names-title")
        await page.fill("#names-fields input[data-seat='0']", "Ann  Marie")
        await page.fill("#names-fields input[data-seat='1']", "Bob")
        await page.click("#names-save")
        await page.wait_for_function(
            "document.querySelector('#players .name').textContent === 'Ann Marie (blue)'"
        )
        assert bridge.records is not None
        entry = bridge.registry.get(None)
        assert entry is not None
        assert (await bridge.records.names(entry))["names"] == ["Ann Marie", "Bob"]
        await page.fill("#names-fields input[data-seat='1']", "Bob\u202eevil")
        await page.click("#names-save")
        await page.wait_for_selector("#log .error")
        assert "U+202E" in await page.inner_text("#log .error")
        assert (await bridge.records.names(entry))["names"] == ["Ann Marie", "Bob"]


async def test_a_name_typed_while_the_save_is_answered_stays_as_typed(bridge: Bridge) -> None:
    """The save's answer can come after the bridge's own `names` message (on the WebSocket):
    a name typed again in between stays in its field, and saving it says what is wrong with
    it, rather than the fields being made again from the names kept."""
    async with chromium(*PHONE) as context:
        page = await context.new_page()
        page.set_default_timeout(20000)
        held: list[Any] = []
        answered = asyncio.Event()

        async def hold_the_first_answer(route: Any) -> None:
            if route.request.method != "POST" or held:
                await route.continue_()
                return
            held.append(await route.fetch())  # the bridge has kept the names and said so
            await answered.wait()
            await route.fulfill(response=held[0])

        await page.route("**/names", hold_the_first_answer)
        await page.goto(bridge.url)
        await page.wait_for_selector("#names-fields input", state="attached")
        await page.click("#names-title")
        await page.fill("#names-fields input[data-seat='0']", "Cleo")
        await page.fill("#names-fields input[data-seat='1']", "Dan")
        await page.click("#names-save")
        await page.wait_for_function(  # the bridge's `names` message, before the answer
            "document.querySelector('#players .name').textContent === 'Cleo (blue)'"
        )
        await page.fill("#names-fields input[data-seat='1']", "Dan\u202eevil")
        answered.set()
        await page.wait_for_selector("#log >> text=names kept for the record")
        assert held, "the save's answer was not held"
        field = "#names-fields input[data-seat='1']"
        assert await page.input_value(field) == "Dan\u202eevil"
        await page.click("#names-save")
        await page.wait_for_selector("#log .error")
        assert "U+202E" in await page.inner_text("#log .error")
