"""The bridge's web page in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright;
`make browser` installs it): the page draws the board, a click pegs on the virtual board, a
button pressed on the virtual board shows on the page, it fits a phone; the page's JavaScript
protocol codec agrees with the Python codec on the shared vectors; the Web Bluetooth mode runs in
Chromium's own Web Bluetooth, through the BlueZ front and a Bumble central, to a virtual board."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import vectors  # tests/core/vectors.py: the protocol's literal vectors
from aiohttp import web

from blesupport import STACKS, StackBoard
from browsersupport import chromium, needs_chromium
from cribboard import wire
from cribboard.api import Board
from cribboard.bridge.export import export
from cribboard.bridge.server import Bridge
from cribboard.virtual import VirtualBoard, VirtualControl
from cribcore import layout
from cribcore.profiles import PROFILES
from cribdev.fakebluez import FakeBluetooth, fake_bluetooth
from support import WAIT_S, raw_exchange, running_bridge, wait_bridge_state

A_PLUS = PROFILES["sim"].buttons["A+"]
PACKET = 20  # BLE bytes per write / notification at the default ATT MTU
# Chromium's own Web Bluetooth, on http://127.0.0.1 (see the Bluetooth note in docs/protocol.md)
WEB_BLUETOOTH_ARGS = ("--enable-experimental-web-platform-features",)
DOC = Path(__file__).resolve().parents[2] / "docs" / "bridge.md"

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    needs_chromium,
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    async with chromium(1280, 800) as context:
        yield context


@pytest_asyncio.fixture(loop_scope="module")
async def page(browser: Any) -> AsyncIterator[Any]:
    page = await browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.set_default_timeout(20000)  # generous: a loaded 2-core CI machine is slow, not broken
    yield page
    await page.close()
    assert not errors, errors


@pytest_asyncio.fixture(loop_scope="module")
async def bridge(vboard: VirtualBoard) -> AsyncIterator[Bridge]:
    """conftest's bridge, on this module's event loop (the browser's)."""
    async with running_bridge(vboard.port) as b:
        yield b


async def board_state(bridge: Bridge) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session:
        async with session.get(bridge.url + "api/state") as response:
            return await response.json()  # type: ignore[no-any-return]


async def wait_state(bridge: Bridge, key: str, value: Any, timeout: float = WAIT_S) -> None:
    await wait_bridge_state(bridge, lambda state: state[key] == value, timeout)


async def open_page(page: Any, url: str) -> None:
    await page.goto(url)
    await page.wait_for_function("document.querySelectorAll('#board circle.hole').length == 121")
    await page.wait_for_selector("#score-0")


def hole_lit(hole: int) -> str:
    return f"document.querySelector('#board [data-hole=\"{hole}\"]').classList.contains('lit')"


# --- the page through the bridge -------------------------------------------------------------


async def test_page_shows_the_board(bridge: Bridge, page: Any) -> None:
    await open_page(page, bridge.url)
    await page.wait_for_function(hole_lit(layout.WIN_HOLE))  # the dealer's glow
    assert await page.inner_text("#score-0") == "0"
    assert await page.inner_text("#score-1") == "0"
    assert await page.locator(".player").count() == 2
    assert "live" in await page.inner_text("#status")
    drawn = await page.evaluate("""() => [...document.querySelectorAll('#board circle.hole')]
        .map(c => [+c.dataset.hole, +c.getAttribute('cx'), +c.getAttribute('cy')])""")
    assert drawn == [[h, *layout.hole_xy_mm(h)] for h in range(layout.HOLES)]


async def test_clicks_drive_the_board(bridge: Bridge, page: Any) -> None:
    await open_page(page, bridge.url)
    await page.click('button[data-player="0"][data-points="3"]')
    await wait_state(bridge, "front", [3, 0])
    await page.wait_for_function("document.querySelector('#score-0').textContent == '3'")
    await page.wait_for_function(hole_lit(layout.hole_for_score(2, 0, 3, 121)))  # the LEDs
    await page.fill('.player[data-player="1"] input', "12")
    await page.click('.player[data-player="1"] .more button')
    await wait_state(bridge, "front", [3, 12])
    await page.wait_for_function("document.querySelector('#score-1').textContent == '12'")
    await page.click("#undo")
    await wait_state(bridge, "front", [3, 0])
    await page.click("#deal")
    await wait_state(bridge, "dealer", 1)
    await page.wait_for_function(
        "!document.querySelector('.player[data-player=\"1\"] .crib').hidden"
    )
    await page.select_option("#target", "61")
    await page.select_option("#player-count", "3")
    await page.click("#new")
    await wait_state(bridge, "players", 3)
    assert (await board_state(bridge))["target"] == 61
    await page.wait_for_function("document.querySelectorAll('.player').length == 3")
    # 30 is more than a count: the page says so, and nothing is sent.
    box = '.player[data-player="0"] input'
    await page.fill(box, "30")
    await page.click('.player[data-player="0"] .more button')
    await page.wait_for_function("document.querySelector('#log .error')")
    assert "a count is 1 to 29, not 30" in await page.inner_text("#log .error")
    # What the bridge or the board refuses, the page says in the board's words.
    refusal = {"error": "game_over", "message": "the game is over: start a new one"}
    await page.route(
        "**/api/**/peg",
        lambda route: route.fulfill(status=409, body=json.dumps(refusal)),
    )
    await page.click('button[data-player="2"][data-points="1"]')
    await page.wait_for_function(
        "document.querySelector('#log .error').textContent.includes('start a new one')"
    )
    await page.unroute("**/api/**/peg")
    assert (await board_state(bridge))["front"] == [0, 0, 0]


async def post(bridge: Bridge, op: str, body: dict[str, Any]) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(bridge.url + "api/" + op, json=body) as response:
            assert response.status == 200, await response.text()


async def test_the_page_says_the_game(bridge: Bridge, page: Any) -> None:
    """What a newcomer needs besides the lights: the lap, the deal, whose count is next, what
    the lights mean, what the number box is for."""
    await post(bridge, "new", {"target": 121, "players": 2})
    await post(bridge, "dealer", {"player": "orange"})
    await post(bridge, "set", {"player": 0, "front": 70, "back": 65})
    await open_page(page, bridge.url)
    await page.wait_for_function("document.querySelector('#score-0').textContent == '70'")
    table = await page.inner_text("#table")
    assert "Deal 1 · orange deals and has the crib · blue leads and counts first" in table
    assert "The show counts blue's hand, orange's hand, then orange's crib" in table
    blue = await page.inner_text('.player[data-player="0"] .meta')
    orange = await page.inner_text('.player[data-player="1"] .meta')
    assert "lap 2 of 2, the last" in blue and "lap 1 of 2 ·" in orange
    legend = await page.inner_text("#legend")
    for words in (
        "front peg",
        "back peg",
        "second lap",
        "skunk line (91)",
        "double skunk line (61)",
    ):
        assert words in legend
    assert await page.get_by_label("Count").count() == 2  # the number box is labelled
    await page.click("#deal")
    await page.wait_for_function("document.querySelector('#table').textContent.includes('Deal 2')")
    assert "blue deals and has the crib · orange leads" in await page.inner_text("#table")
    await page.click("#undo")  # the pass taken back: deal 1 again
    await page.wait_for_function("document.querySelector('#table').textContent.includes('Deal 1')")
    await post(bridge, "new", {"players": 3})
    await page.wait_for_function("document.querySelectorAll('.player').length == 3")
    legend = await page.inner_text("#legend")
    assert "The bottom row counts laps" in legend and "second lap" not in legend


async def test_a_won_game_says_the_last_lap_and_what_to_do(bridge: Bridge, page: Any) -> None:
    """The win hole ends the last lap (not a lap of its own), at 121 and at 61, and the
    table's line says who won and what to press, as a person would."""
    for target, laps in ((121, 2), (61, 1)):
        await post(bridge, "new", {"target": target, "players": 2})
        await post(bridge, "set", {"player": 1, "front": target - 2, "back": target - 4})
        await post(bridge, "peg", {"player": 1, "points": 2})
        await open_page(page, bridge.url)
        await page.wait_for_function(
            f"document.querySelector('#score-1').textContent == '{target}'"
        )
        orange = await page.inner_text('.player[data-player="1"] .meta')
        assert f"lap {laps} of {laps}" in orange, orange
        result = (await board_state(bridge))["result"]
        how = {"skunk": "with a skunk", "double_skunk": "with a double skunk"}[result]
        table = await page.inner_text("#table")
        assert f"orange wins {how}. Press New game to play another." in table, table
    # The number box starts empty: no count is put in the player's mouth.
    assert await page.input_value('.player[data-player="0"] input') == ""


async def test_a_match_started_on_the_page_is_shown_to_its_end(bridge: Bridge, page: Any) -> None:
    """Best of 3 from the page's controls; the table's line says the game of the match and the
    score, then who won the match; End match goes back to one game after another."""
    await post(bridge, "new", {"target": 61, "players": 2})
    await open_page(page, bridge.url)
    await page.select_option("#match-form", "best_of:3")
    await page.check("#match-skunks")
    await page.click("#match-start")
    await wait_bridge_state(bridge, lambda s: (s["match"] or {}).get("length") == 3)
    assert (await board_state(bridge))["skunk_double"] is True
    table = "document.querySelector('#table').textContent"
    await page.wait_for_function(f"{table}.includes('game 1: blue 0, orange 0')")
    assert "match (best of 3, a skunk wins two)" in await page.inner_text("#table")
    await post(bridge, "set", {"player": 0, "front": 59, "back": 55})
    await post(bridge, "peg", {"player": 0, "points": 2})  # a double skunk: two games
    await page.wait_for_function(f"{table}.includes('won by blue: blue 2, orange 0')")
    await page.click("#match-end")
    await wait_bridge_state(bridge, lambda s: s["match"] is None)
    await page.wait_for_function(f"!{table}.includes('match')")
    assert await page.locator("#match-end").is_hidden()


async def test_the_board_is_drawn_before_the_websocket_connects(bridge: Bridge, page: Any) -> None:
    await post(bridge, "new", {"target": 121, "players": 2})
    await post(bridge, "peg", {"player": 0, "points": 7})
    await page.route_web_socket("**/api/ws*", lambda ws: None)  # a WebSocket that never speaks
    await page.goto(bridge.url)
    await page.wait_for_function("document.querySelector('#score-0')?.textContent == '7'")
    await page.wait_for_function(hole_lit(layout.hole_for_score(2, 0, 7, 121)))
    assert "Deal 1" in await page.inner_text("#table")


async def test_a_button_on_the_board_shows_on_the_page(
    bridge: Bridge, vboard: VirtualBoard, page: Any
) -> None:
    await open_page(page, bridge.url)
    with VirtualControl(vboard.control) as sim:
        sim.press(A_PLUS)
    await page.wait_for_function(
        "document.querySelector('#log').textContent.includes('button A+: tap')"
    )
    pending = page.locator('.player[data-player="0"] .pending')
    await pending.wait_for(state="visible")
    assert await pending.inner_text() == "+1 pending"
    # The count commits by itself on the board; the page follows.
    await page.wait_for_function(
        "document.querySelector('#score-0').textContent == '1'", timeout=10000
    )


async def test_fits_a_phone(bridge: Bridge, page: Any) -> None:
    await page.set_viewport_size({"width": 390, "height": 844})
    await open_page(page, bridge.url)
    assert await page.evaluate("document.querySelector('#board').classList.contains('portrait')")
    assert await page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    board = await page.locator("#board").bounding_box()
    assert board["height"] > 2.5 * board["width"]  # standing up
    peg = await page.locator('button[data-player="1"][data-points="6"]').bounding_box()
    assert peg["height"] >= 40 and peg["width"] >= 40  # a finger's worth
    assert peg["x"] + peg["width"] <= 390
    await page.click('button[data-player="1"][data-points="6"]')
    await wait_state(bridge, "front", [0, 6])


PHONE = {"width": 412, "height": 915}


async def in_view(page: Any, selector: str) -> bool:
    """Whether `selector`'s element is drawn inside the window as it is scrolled now."""
    box = await page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"]


async def test_at_the_table_on_a_phone(bridge: Bridge, page: Any) -> None:
    """A count pegged once per tap, a refused one or an undo said where it is seen, the points
    each player still needs, the legend a tap away."""
    await post(bridge, "new", {"target": 121, "players": 2})
    await page.set_viewport_size(PHONE)
    await open_page(page, bridge.url)
    orange = '.player[data-player="1"]'
    assert await page.inner_text(f"{orange} .to-go") == "121 to go"
    await page.fill(f"{orange} input", "12")
    await page.click(f"{orange} .more button")
    await wait_state(bridge, "front", [0, 12])
    await page.wait_for_function(f"document.querySelector('{orange} input').value === ''")
    await page.wait_for_function(
        f"document.querySelector('{orange} .to-go').textContent === '109 to go'"
    )
    await page.click(f"{orange} .more button")  # a second tap: nothing to peg again
    assert "type the count first" in await page.inner_text("#log")
    await page.fill(f"{orange} input", "30")
    await page.click(f"{orange} .more button")
    refused = "orange: a count is 1 to 29, not 30: nothing pegged"
    await page.wait_for_function(
        f"document.querySelector('#log').textContent.includes('{refused}')"
    )
    assert await in_view(page, "#log span.error >> nth=0")
    await page.click("#undo")
    await wait_state(bridge, "front", [0, 0])
    await page.wait_for_function(
        "document.querySelector('#log').textContent.includes('undone: orange back from 12 to 0')"
    )
    assert await in_view(page, "#log span:first-child")
    assert (await board_state(bridge))["front"] == [0, 0]  # refused and undone: nothing pegged
    # The legend: folded away on a phone, unfolded with a tap.
    assert not await page.locator("#legend li").first.is_visible()
    await page.click("#legend-title")
    assert await page.locator("#legend li").first.is_visible()
    assert "front peg" in await page.inner_text("#legend")
    assert await page.evaluate("document.documentElement.scrollWidth <= innerWidth")


async def test_a_win_badge_on_a_phone_is_one_line_beside_a_round_dot(
    bridge: Bridge, page: Any
) -> None:
    await post(bridge, "new", {"target": 121, "players": 2})
    await post(bridge, "set", {"player": 0, "front": 120})
    await post(bridge, "peg", {"player": 0, "points": 1})  # a double skunk: the longest badge
    await page.set_viewport_size(PHONE)
    await open_page(page, bridge.url)
    blue = '.player[data-player="0"]'
    await page.wait_for_selector(f"{blue} .winner:not([hidden])")
    for code in ("en", "sv", "nb", "nl"):
        await page.select_option("#lang-select", code)
        await page.wait_for_function("l => document.documentElement.lang === l", arg=code)
        badge = await page.locator(f"{blue} .winner").bounding_box()
        font = await page.evaluate(
            f"parseFloat(getComputedStyle(document.querySelector('{blue} .winner')).fontSize)"
        )
        dot = await page.locator(f"{blue} .swatch").bounding_box()
        assert badge is not None and dot is not None
        assert badge["height"] < 2.2 * font, f"{code}: the badge wraps"  # one line, its border
        assert abs(dot["width"] - dot["height"]) < 0.5 and dot["width"] >= 10, f"{code}: {dot}"
        assert "to go" not in await page.inner_text(f"{blue} .score")  # the winner needs none
    assert await page.evaluate("document.documentElement.scrollWidth <= innerWidth")


async def test_large_text_is_kept_through_the_language_and_the_next_visit(
    bridge: Bridge, page: Any
) -> None:
    await post(bridge, "new", {"target": 121, "players": 2})
    await page.set_viewport_size(PHONE)
    await open_page(page, bridge.url)
    size = "parseFloat(getComputedStyle(document.querySelector('#score-0')).fontSize)"
    normal = await page.evaluate(size)
    await page.click("#large-text")
    assert await page.get_attribute("#large-text", "aria-pressed") == "true"
    larger = await page.evaluate(size)
    assert larger >= 1.25 * normal
    await page.select_option("#lang-select", "sv")
    await page.wait_for_function("document.documentElement.lang === 'sv'")
    assert await page.evaluate(size) == larger  # the words changed, not their size
    assert await page.inner_text("#large-text") != "Large text"  # said in Swedish
    await page.reload()
    await page.wait_for_selector("#score-0")
    assert await page.evaluate(size) == larger
    assert await page.get_attribute("#large-text", "aria-pressed") == "true"
    assert await page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    await page.click("#large-text")  # and back
    assert await page.evaluate(size) == normal


async def test_the_page_with_a_token(vboard: VirtualBoard, page: Any) -> None:
    """Opened once with ?token=, the page's scripts, API calls and WebSocket carry the token."""
    async with running_bridge(vboard.port, token="page-t0ken") as bridge:
        response = await page.goto(bridge.url)
        assert response.status == 401
        await open_page(page, bridge.url + "?token=page-t0ken")
        assert "live" in await page.inner_text("#status")
        await page.click('button[data-player="1"][data-points="4"]')
        await page.wait_for_function("document.querySelector('#score-1').textContent == '4'")


async def test_websocket_snippet_of_the_docs(bridge: Bridge, page: Any) -> None:
    import re

    snippet = re.search(r"<!-- tested: browser -->\n```js\n(.*?)```", DOC.read_text(), re.S)
    assert snippet
    code = snippet.group(1).replace("ws://127.0.0.1:8321/", bridge.url.replace("http", "ws"))
    await open_page(page, bridge.url)
    logged: list[Any] = []
    state_logged = asyncio.Event()

    async def on_console(message: Any) -> None:
        if message.args:
            logged.append(await message.args[0].json_value())
            if isinstance(logged[-1], dict) and logged[-1].get("type") == "state":
                state_logged.set()

    page.on("console", on_console)
    await page.evaluate(f"() => {{ {code} }}")
    await asyncio.wait_for(state_logged.wait(), WAIT_S)
    assert logged[0]["type"] == "boards"
    assert [m for m in logged if m.get("type") == "state"][0]["state"]["front"] == [0, 0]


# --- the JavaScript codec against the Python codec's vectors ---------------------------------


def _text(data: bytes) -> str:
    return data.decode("latin-1")


async def test_javascript_codec_matches_the_vectors(bridge: Bridge, page: Any) -> None:
    encode = [
        [
            list(args[0:1])
            + [list(args[1]) if len(args) > 1 else [], args[2] if len(args) > 2 else None]
            + [args[3] if len(args) > 3 else None],
            _text(line),
        ]
        for args, line in vectors.ENCODE_VECTORS
    ]
    rejects = [
        [a[0], list(a[1]), a[2], a[3] if len(a) > 3 else None] for a in vectors.ENCODE_REJECTS
    ]
    lines = [_text(line) for line, _, _ in vectors.DECODE_VECTORS]
    lines += [_text(out) for _, outs in vectors.VECTORS for out in outs]
    lines += [_text(out) for step in vectors.TWO_LINKS for out in step[2] + step[3]]
    bad = [_text(line) for line in vectors.DECODE_REJECTS]
    await open_page(page, bridge.url)
    result = await page.evaluate(
        """async ([encode, rejects, lines, bad]) => {
        const { makeCodec } = await import('/static/codec.js');
        const codec = makeCodec(await (await fetch('/protocol.json')).json());
        const tryIt = (f) => { try { return f(); } catch (e) { return {error: e.message}; } };
        return {
          encoded: encode.map(([[verb, args, id, rev]]) => tryIt(() => codec.encodeRequest(verb, args, id, rev))),
          rejected: rejects.map(([verb, args, id, rev]) => tryIt(() => codec.encodeRequest(verb, args, id, rev))),
          decoded: lines.map((l) => tryIt(() => {
            const d = codec.decodeLine(l);
            const state = d.kind === 'err' ? {} : codec.decodeState(d.fields);
            const frame = d.fields.rgb !== undefined ? Array.from(codec.decodeFrame(d.fields.rgb)) : null;
            return [[d.kind, d.requestId, d.name, d.fields, d.code, d.text], state, frame];
          })),
          refused: bad.map((l) => tryIt(() => codec.decodeLine(l))),
        };
    }""",
        [encode, rejects, lines, bad],
    )
    assert result["encoded"] == [line for _, line in encode]
    assert all(set(r) == {"error"} for r in result["rejected"]), result["rejected"]
    expected = []
    for line in lines:
        d = wire.decode_line(line.encode("latin-1"))
        state = {} if d.kind == "err" else wire.decode_state(d.fields)
        frame = list(wire.decode_frame(d.fields["rgb"])) if "rgb" in d.fields else None
        expected.append([[d.kind, d.request_id, d.name, d.fields, d.code, d.text], state, frame])
    assert result["decoded"] == expected
    for (line, want, want_state), (got, got_state, _) in zip(
        vectors.DECODE_VECTORS, result["decoded"]
    ):
        assert (tuple(got), got_state) == (want, want_state), line
    assert all(set(r) == {"error"} for r in result["refused"]), result["refused"]


# --- Web Bluetooth: the page drives a board directly -----------------------------------------


async def serve_exported_page(directory: Path) -> web.AppRunner:
    """The page as a plain static site: no bridge behind it."""
    export(directory)
    app = web.Application()

    async def index(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(directory / "index.html")

    app.router.add_get("/", index)
    app.router.add_static("/", directory)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


async def choose_board(page: Any, name: str) -> list[dict[str, Any]]:
    """Answer Chromium's Bluetooth chooser once, through DevTools (DeviceAccess), with the
    device called `name`; returns the prompts seen. Chromium may announce one prompt twice (as
    devices come and go): answering the same prompt twice crashes it, so each is answered once."""
    cdp = await page.context.new_cdp_session(page)
    prompts: list[dict[str, Any]] = []
    answered: set[str] = set()

    async def prompted(event: dict[str, Any]) -> None:
        prompts.append(event)
        for device in event.get("devices", []):
            if device.get("name") == name and event["id"] not in answered:
                answered.add(event["id"])
                await cdp.send(
                    "DeviceAccess.selectPrompt", {"id": event["id"], "deviceId": device["id"]}
                )

    cdp.on("DeviceAccess.deviceRequestPrompted", prompted)
    await cdp.send("DeviceAccess.enable")
    return prompts


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def web_bluetooth() -> AsyncIterator[tuple[FakeBluetooth, Any]]:
    """The BlueZ front on a private bus, and a Chromium whose own Web Bluetooth uses it:
    Chromium follows DBUS_SYSTEM_BUS_ADDRESS to it (tests/blesupport.py)."""
    with fake_bluetooth(set_environ=False) as bt:
        env = {**os.environ, **bt.environ}
        async with chromium(390, 844, extra_args=WEB_BLUETOOTH_ARGS, env=env) as context:
            yield bt, context


@contextlib.asynccontextmanager
async def board_on_radio(bt: FakeBluetooth, stack: str, tmp_path: Path) -> AsyncIterator[Any]:
    """A board on the front's radio: the firmware on a real stack (btstack, nimble)."""
    real = await asyncio.to_thread(bt.bluez.start_board, stack, tmp_path)
    try:
        yield StackBoard(bt, real)
    finally:
        await asyncio.to_thread(bt.bluez.stop_board, real)


@pytest.mark.parametrize("stack", STACKS)
async def test_web_bluetooth_mode(
    stack: str, web_bluetooth: tuple[FakeBluetooth, Any], tmp_path: Path
) -> None:
    """The page's Web Bluetooth mode in Chromium's own Web Bluetooth, through the BlueZ front's
    Bumble central and the virtual radio, to the board on each stack; the chooser is answered
    through DevTools."""
    bt, context = web_bluetooth
    async with board_on_radio(bt, stack, tmp_path) as vboard:
        name = "Cribboard-" + vboard.ble_address.replace(":", "")[-4:]
        usb = await Board.open(vboard.port)  # the owner lets every device change the board
        try:
            await usb.set_open(True)
        finally:
            await usb.close()
        runner = await serve_exported_page(tmp_path / "site")
        page = await context.new_page()
        page.set_default_timeout(20000)
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        try:
            await web_bluetooth_session(page, runner, vboard, name)
        finally:
            await page.close()
            await runner.cleanup()
        assert not errors, errors


async def web_bluetooth_session(page: Any, runner: web.AppRunner, vboard: Any, name: str) -> None:
    prompts = await choose_board(page, name)
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/"
    await page.goto(url)  # no bridge here: the page says so and offers Bluetooth
    await page.wait_for_function(
        "document.querySelector('#status').textContent.includes('no bridge here')"
    )
    await page.click("#ble")  # a real click: requestDevice needs a user gesture
    await page.wait_for_function(
        f"document.querySelector('#status').textContent.includes('Bluetooth: {name}')"
    )
    assert prompts and all(p["id"] == prompts[0]["id"] for p in prompts)  # one chooser
    await page.wait_for_selector("#score-0")
    await page.wait_for_function(hole_lit(layout.WIN_HOLE))  # the LEDs, from `frame`

    await page.click('button[data-player="0"][data-points="2"]')
    await page.wait_for_function("document.querySelector('#score-0').textContent == '2'")
    led = layout.LED_OF_HOLE[layout.hole_for_score(2, 0, 2, 121)]

    def blue_peg_at_2() -> bytes:
        with VirtualControl(vboard.control) as sim:  # the LEDs the board really lit
            return sim.wait_frame(lambda rgb: rgb[3 * led + 2] > rgb[3 * led] + 20, WAIT_S)

    await asyncio.to_thread(blue_peg_at_2)
    await page.wait_for_function(hole_lit(layout.hole_for_score(2, 0, 2, 121)))

    with VirtualControl(vboard.control) as sim:  # a button on the board reaches the page
        sim.press(PROFILES["sim"].buttons["B+"])
    await page.wait_for_function(
        "document.querySelector('#log').textContent.includes('button B+: tap')"
    )
    await page.click("#undo")
    await page.wait_for_function("document.querySelector('#score-0').textContent == '0'")
    # The page holds one connection (the board says so on USB).
    replies = await asyncio.to_thread(raw_exchange, vboard.port, [b"#c1 health\n"])
    assert any(r.startswith(b"#c1 ok ") and b" bconn=1 " in r for r in replies), replies
