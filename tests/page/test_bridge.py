"""The bridge (`cribboard serve`) against the virtual board: every operation over HTTP, bad
requests, board ids, the WebSocket (two subscribers, buttons, frames), the token off localhost,
CORS, reconnecting, the OpenAPI document and the layout data."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import jsonschema
import pytest
from openapi_spec_validator import validate as validate_openapi

from cribboard import cli
from cribboard.api import Admission, AdmitEvent, ButtonEvent
from cribboard.bridge.openapi import openapi_document, render
from cribboard.bridge.server import Bridge, BridgeConfigError
from cribboard.virtual import VirtualBoard, VirtualControl
from cribboard.web import meta
from cribboard.web.addresses import is_loopback
from cribcore import layout, protocol
from cribcore.profiles import PROFILES
from support import Spawn, next_message, running_bridge

ROOT = Path(__file__).resolve().parents[2]
A_PLUS = PROFILES["sim"].buttons["A+"]  # the sim profile's pin of player A's "+" button


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        yield session


async def call(
    http: aiohttp.ClientSession,
    bridge: Bridge,
    method: str,
    path: str,
    body: Any = None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    async with http.request(
        method, bridge.url + path.lstrip("/"), data=data, headers=headers
    ) as response:
        text = await response.text()
        return response.status, json.loads(text) if text else None


async def get_state(http: aiohttp.ClientSession, bridge: Bridge) -> dict[str, Any]:
    """The game (without the board's health, whose figures move on their own)."""
    status, state = await call(http, bridge, "GET", "api/state")
    assert status == 200, state
    state.pop("health")
    return state  # type: ignore[no-any-return]


# --- the API ---------------------------------------------------------------------------------


async def test_boards_and_state(
    bridge: Bridge, http: aiohttp.ClientSession, vboard: VirtualBoard
) -> None:
    status, boards = await call(http, bridge, "GET", "api/boards")
    assert status == 200
    assert boards == {
        "boards": [
            {
                "id": "b1",
                "port": vboard.port,
                "kind": "usb",
                "connected": True,
                "problem": None,
                "board": "sim",
                "firmware": boards["boards"][0]["firmware"],
                "protocol": f"{protocol.PROTOCOL_MAJOR}.{protocol.PROTOCOL_MINOR}",
                "layout": "crib121",
            }
        ]
    }
    status, state = await call(http, bridge, "GET", "api/state")
    assert state["front"] == [0, 0] and state["target"] == 121 and state["winner"] is None
    # The board's health rides along (its figures move: the heap, the uptime).
    health = state.pop("health")
    assert health["save_errors"] == 0 and health["free_heap"] > 0 and health["saves"] >= 0
    status, same = await call(http, bridge, "GET", "api/boards/b1/state")
    assert status == 200 and set(same.pop("health")) == set(health) and same == state


async def test_every_operation(bridge: Bridge, http: aiohttp.ClientSession) -> None:
    status, reply = await call(http, bridge, "POST", "api/peg", {"player": 0, "points": 12})
    assert status == 200
    assert reply["state"]["front"] == [12, 0] and reply["rev"] == reply["state"]["rev"]
    status, reply = await call(http, bridge, "POST", "api/peg", {"player": "orange", "points": 5})
    assert (status, reply["state"]["front"]) == (200, [12, 5])
    status, reply = await call(
        http, bridge, "POST", "api/set", {"player": 0, "front": 30, "back": 20}
    )
    assert (status, reply["state"]["front"], reply["state"]["back"]) == (200, [30, 5], [20, 0])
    status, reply = await call(http, bridge, "POST", "api/set", {"player": 1, "front": 7})
    assert (status, reply["state"]["front"], reply["state"]["back"]) == (200, [30, 7], [20, 0])
    status, reply = await call(http, bridge, "POST", "api/undo")
    assert (status, reply["state"]["front"]) == (200, [30, 5])
    status, reply = await call(http, bridge, "POST", "api/dealer")
    assert (status, reply["dealer"], reply["state"]["dealer"]) == (200, 1, 1)
    status, reply = await call(http, bridge, "POST", "api/dealer", {"player": "blue"})
    assert (status, reply["dealer"]) == (200, 0)
    status, reply = await call(http, bridge, "POST", "api/pending", {"player": 1, "points": 6})
    assert (status, reply["state"]["pending"]) == (200, [0, 6])
    # The old path, kept for one release, does the same.
    status, reply = await call(http, bridge, "POST", "api/preview", {"player": 0, "points": 3})
    assert (status, reply["state"]["pending"]) == (200, [3, 6])
    status, frame = await call(http, bridge, "GET", "api/frame")
    assert status == 200 and len(frame["rgb"]) == 6 * layout.HOLES
    assert frame["scale"] > 0 and frame["milliamps"] > 0
    hole = layout.hole_for_score(2, 0, 30, 121)
    assert frame["rgb"][6 * hole : 6 * hole + 6] != "000000"  # blue's front peg is lit
    status, reply = await call(http, bridge, "POST", "api/new", {"target": 61, "players": 3})
    assert status == 200
    assert reply["state"]["target"] == 61 and reply["state"]["front"] == [0, 0, 0]
    status, reply = await call(http, bridge, "POST", "api/new")
    assert (status, reply["state"]["target"], reply["state"]["players"]) == (200, 61, 3)
    status, reply = await call(
        http, bridge, "POST", "api/match", {"best_of": 5, "skunk_double": True}
    )
    assert status == 200 and reply["state"]["skunk_double"] is True
    assert reply["state"]["match"] == {
        "kind": "best_of",
        "length": 5,
        "game": 1,
        "number": reply["state"]["match"]["number"],
        "needed": 3,
        "winner": None,
    }
    status, reply = await call(http, bridge, "POST", "api/match", {"end": True})
    assert (status, reply["state"]["match"]) == (200, None)
    # the same operations under the board's id
    status, reply = await call(
        http, bridge, "POST", "api/boards/b1/peg", {"player": 2, "points": 4}
    )
    assert (status, reply["state"]["front"]) == (200, [0, 0, 4])
    assert (await get_state(http, bridge))["front"] == [0, 0, 4]  # the board has it


BAD_REQUESTS: list[tuple[str, str, Any, bytes | None, int, str]] = [
    # method, path, JSON body, raw body, status, error code
    ("POST", "api/peg", None, b"{not json", 400, "bad_json"),
    ("POST", "api/peg", None, b"\xff\xfe", 400, "bad_json"),
    ("POST", "api/peg", [0, 5], None, 400, "bad_request"),
    ("POST", "api/peg", {"player": 0}, None, 400, "bad_request"),
    ("POST", "api/peg", {"points": 5}, None, 400, "bad_request"),
    ("POST", "api/peg", {"player": 0, "points": 5, "extra": 1}, None, 400, "bad_request"),
    ("POST", "api/peg", {"player": 0, "points": "5"}, None, 400, "bad_request"),
    ("POST", "api/peg", {"player": 0, "points": 5.0}, None, 400, "bad_request"),
    ("POST", "api/peg", {"player": 0, "points": True}, None, 400, "bad_request"),
    ("POST", "api/peg", {"player": 0, "points": 10**12}, None, 400, "bad_request"),
    ("POST", "api/peg", {"player": "green", "points": 5}, None, 400, "bad_player"),
    ("POST", "api/peg", {"player": 0, "points": 30}, None, 400, "bad_points"),
    ("POST", "api/peg", {"player": 0, "points": 0}, None, 400, "bad_points"),
    ("POST", "api/peg", {"player": 5, "points": 1}, None, 400, "bad_player"),
    ("POST", "api/set", {"player": 0, "front": 1, "back": 2}, None, 400, "bad_pegs"),
    ("POST", "api/new", {"target": 100}, None, 400, "bad_target"),
    ("POST", "api/new", {"players": 4}, None, 400, "bad_players"),
    ("POST", "api/dealer", {"player": 3}, None, 400, "bad_player"),
    ("POST", "api/pending", {"player": 0, "points": 30}, None, 400, "bad_points"),
    ("POST", "api/undo", {"steps": 2}, None, 400, "bad_request"),
    ("POST", "api/match", {}, None, 400, "bad_request"),
    ("POST", "api/match", {"best_of": 4}, None, 400, "bad_value"),
    ("POST", "api/match", {"first_to": 16}, None, 400, "bad_value"),
    ("POST", "api/match", {"best_of": 3, "first_to": 2}, None, 400, "bad_request"),
    ("POST", "api/match", {"end": 1}, None, 400, "bad_request"),
    ("POST", "api/match", {"best_of": 3, "skunk_double": "yes"}, None, 400, "bad_request"),
    ("POST", "api/undo", None, None, 409, "nothing_to_undo"),
    ("POST", "api/boards/nope/peg", {"player": 0, "points": 5}, None, 404, "no_board"),
    ("GET", "api/boards/nope/state", None, None, 404, "no_board"),
    ("GET", "api/peg", None, None, 405, "method_not_allowed"),
    ("POST", "api/state", None, None, 405, "method_not_allowed"),
    ("GET", "api/nothing", None, None, 404, "not_found"),
    ("POST", "api/peg", None, b"[" * 20000, 413, "too_large"),
]


async def test_errors_say_what_to_send(bridge: Bridge, http: aiohttp.ClientSession) -> None:
    """The messages a developer reads first: players may be named, four players are two
    partnerships, a wrong method says the right one (and Allow carries it)."""
    status, reply = await call(http, bridge, "POST", "api/peg", {"player": True, "points": 2})
    assert status == 400 and reply["error"] == "bad_request"
    assert reply["message"] == (
        "player must be 0, 1, 2 or blue, orange, purple (or a, b, c), not true"
    )
    status, reply = await call(http, bridge, "POST", "api/new", {"players": 4})
    assert status == 400 and reply["error"] == "bad_players"
    assert "two partnerships: ask for players 2" in reply["message"]
    for method, path, allowed in (("GET", "api/peg", "POST"), ("POST", "api/state", "GET")):
        async with http.request(method, bridge.url + path) as response:
            assert response.status == 405 and response.headers["Allow"].startswith(allowed)
            reply = await response.json()
        assert reply == {
            "error": "method_not_allowed",
            "message": f"{method} is not allowed on /{path}: use {allowed}",
        }


async def test_bad_requests_change_nothing(bridge: Bridge, http: aiohttp.ClientSession) -> None:
    before = await get_state(http, bridge)
    for method, path, body, raw, want_status, want_code in BAD_REQUESTS:
        status, reply = await call(http, bridge, method, path, body, raw)
        assert (status, reply["error"]) == (want_status, want_code), (method, path, body, reply)
        assert isinstance(reply["message"], str) and reply["message"]
    assert await get_state(http, bridge) == before


async def test_game_over_is_a_conflict(bridge: Bridge, http: aiohttp.ClientSession) -> None:
    await call(http, bridge, "POST", "api/set", {"player": 0, "front": 119, "back": 110})
    status, reply = await call(http, bridge, "POST", "api/peg", {"player": 0, "points": 2})
    assert status == 200 and reply["state"]["winner"] == 0
    status, reply = await call(http, bridge, "POST", "api/peg", {"player": 1, "points": 2})
    assert (status, reply["error"]) == (409, "game_over")


async def test_a_programs_repeat_counts_once_and_a_stale_change_is_refused(
    bridge: Bridge, http: aiohttp.ClientSession
) -> None:
    """A program's key in the body or in the Idempotency-Key header: its repeat gets the first
    answer and counts once; the key for another change is 422. A change on a board that moved
    on since the program looked (if_front, if_rev) is 409 stale and changes nothing."""
    peg = {"player": 0, "points": 5, "key": "hand-1"}
    first = await call(http, bridge, "POST", "api/peg", peg)
    assert first[0] == 200 and first[1]["state"]["front"] == [5, 0]
    again = await call(http, bridge, "POST", "api/peg", peg)
    assert again == first
    header = {"Idempotency-Key": "hand-1"}
    assert await call(http, bridge, "POST", "api/peg", peg | {"key": None}, headers=header) == first
    status, body = await call(
        http, bridge, "POST", "api/peg", {"player": 1, "points": 5}, headers=header
    )
    assert (status, body["error"]) == (422, "key_reused")
    status, body = await call(http, bridge, "POST", "api/peg", peg | {"key": "two words"})
    assert (status, body["error"]) == (400, "bad_request")
    status, body = await call(
        http, bridge, "POST", "api/peg", {"player": 0, "points": 2, "if_front": 0}
    )
    assert (status, body["error"]) == (409, "stale")
    rev = (await get_state(http, bridge))["rev"]
    status, body = await call(http, bridge, "POST", "api/undo", {"if_rev": rev - 1})
    assert (status, body["error"]) == (409, "stale")
    status, body = await call(http, bridge, "POST", "api/undo", {"if_rev": rev})
    assert status == 200 and body["state"]["front"] == [0, 0]
    status, body = await call(http, bridge, "GET", "api/state", headers=header)
    assert status == 200  # (a reading request ignores the header)


async def test_the_documents_ranges_are_the_boards(
    bridge: Bridge, http: aiohttp.ClientSession
) -> None:
    """Each number's range is in the OpenAPI schema, so a generated client checks it: the
    schema takes a body exactly when the board's range does, at both ends."""
    paths = openapi_document()["paths"]

    def schema(op: str) -> dict[str, Any]:
        body = paths[f"/api/{op}"]["post"]["requestBody"]["content"]["application/json"]
        return body["schema"]  # type: ignore[no-any-return]

    def valid(op: str, body: dict[str, Any]) -> bool:
        try:
            jsonschema.validate(body, schema(op))
        except jsonschema.ValidationError:
            return False
        return True

    peg = schema("peg")["properties"]
    assert (peg["points"]["minimum"], peg["points"]["maximum"]) == (1, 29)
    assert schema("pending")["properties"]["points"]["minimum"] == 0
    assert schema("new")["properties"]["target"]["enum"] == [61, 121]
    for op, field, inside, outside in (
        ("peg", "points", (1, 29), (0, 30)),
        ("pending", "points", (0, 29), (-1, 30)),
    ):
        for points in inside:
            body = {"player": 1, field: points}
            assert valid(op, body), body
            status, reply = await call(http, bridge, "POST", f"api/{op}", body)
            assert status == 200, reply
        for points in outside:
            body = {"player": 1, field: points}
            assert not valid(op, body), body
            status, reply = await call(http, bridge, "POST", f"api/{op}", body)
            assert (status, reply["error"]) == (400, "bad_points"), reply
    for bad in ({"player": 3, "points": 1}, {"player": 0, "points": 1, "if_rev": -1}):
        assert not valid("peg", bad)
        status, _ = await call(http, bridge, "POST", "api/peg", bad)
        assert status == 400
    assert not valid("peg", {"player": 0, "points": 1, "key": "two words"})
    assert not valid("new", {"target": 100}) and valid("new", {"target": 61, "players": 3})
    status, reply = await call(http, bridge, "POST", "api/new", {"target": 100})
    assert (status, reply["error"]) == (400, "bad_target")


async def test_a_board_that_is_not_there(http: aiohttp.ClientSession) -> None:
    async with running_bridge() as bridge, http.ws_connect(bridge.url + "api/ws") as ws:
        bridge.registry.add("/dev/cribboard-nothing-here")
        await next_message(
            ws, lambda m: m["type"] == "boards" and any(b["problem"] for b in m["boards"])
        )
        status, boards = await call(http, bridge, "GET", "api/boards")
        assert status == 200
        [board] = boards["boards"]
        assert board["connected"] is False and board["problem"]
        status, reply = await call(http, bridge, "POST", "api/peg", {"player": 0, "points": 5})
        assert (status, reply["error"]) == (503, "board_unavailable")
    async with running_bridge() as empty:
        status, reply = await call(http, empty, "GET", "api/state")
        assert (status, reply["error"]) == (503, "no_board")


async def test_two_boards_by_id(http: aiohttp.ClientSession) -> None:
    with VirtualBoard() as one, VirtualBoard() as two:
        async with running_bridge(one.port, two.port) as bridge:
            await call(http, bridge, "POST", "api/boards/b2/peg", {"player": 1, "points": 9})
            _, first = await call(http, bridge, "GET", "api/boards/b1/state")
            _, second = await call(http, bridge, "GET", "api/boards/b2/state")
            assert (first["front"], second["front"]) == ([0, 0], [0, 9])


# --- the WebSocket ---------------------------------------------------------------------------


async def test_two_subscribers_both_receive_every_event(
    bridge: Bridge, http: aiohttp.ClientSession, vboard: VirtualBoard
) -> None:
    async with (
        http.ws_connect(bridge.url + "api/ws") as one,
        http.ws_connect(bridge.url + "api/ws") as two,
    ):
        for ws in (one, two):  # the snapshot first
            boards = await next_message(ws, lambda m: True)
            assert boards["type"] == "boards" and boards["boards"][0]["id"] == "b1"
            state = await next_message(ws, lambda m: True)
            assert state["type"] == "state" and state["state"]["front"] == [0, 0]
        status, reply = await call(http, bridge, "POST", "api/peg", {"player": 1, "points": 7})
        assert status == 200
        for ws in (one, two):
            message = await next_message(ws, lambda m: m["type"] == "state")
            assert message["board"] == "b1"
            assert message["state"]["front"] == [0, 7]
            assert message["state"]["rev"] == reply["rev"]
        # a button on the board reaches both, as a button event and the state it changed
        with VirtualControl(vboard.control) as sim:
            sim.press(A_PLUS)
        for ws in (one, two):
            seen: list[dict[str, Any]] = []
            await next_message(
                ws,
                lambda m: (
                    seen.append(m) is None
                    and any(m["type"] == "button" for m in seen)
                    and any(m["type"] == "state" and m["state"]["pending"] == [1, 0] for m in seen)
                ),
            )
            [button] = [m for m in seen if m["type"] == "button"]
            assert (button["board"], button["name"], button["action"]) == ("b1", "A+", "tap")


async def test_frames_on_request(bridge: Bridge, http: aiohttp.ClientSession) -> None:
    async with http.ws_connect(bridge.url + "api/ws?frames=1&board=b1") as ws:
        first = await next_message(ws, lambda m: m["type"] == "frame")
        assert len(first["rgb"]) == 6 * layout.HOLES
        await call(http, bridge, "POST", "api/peg", {"player": 0, "points": 3})
        hole = layout.hole_for_score(2, 0, 3, 121)
        frame = await next_message(
            ws, lambda m: m["type"] == "frame" and m["rgb"][6 * hole : 6 * hole + 6] != "000000"
        )
        assert frame["board"] == "b1" and frame["scale"] > 0
    async with http.ws_connect(bridge.url + "api/ws") as plain:  # no frames unless asked
        await call(http, bridge, "POST", "api/peg", {"player": 0, "points": 1})
        await next_message(plain, lambda m: m["type"] == "state" and m["state"]["front"][0] == 4)
        await call(http, bridge, "POST", "api/peg", {"player": 0, "points": 1})
        while True:
            message = await next_message(plain, lambda m: True)
            assert message["type"] != "frame"
            if message["type"] == "state" and message["state"]["front"][0] == 5:
                break
    status, reply = await call(http, bridge, "GET", "api/ws?board=zz")
    assert (status, reply["error"]) == (404, "no_board")


async def test_reconnects_after_a_board_restart(
    bridge: Bridge, http: aiohttp.ClientSession, vboard: VirtualBoard
) -> None:
    await call(http, bridge, "POST", "api/peg", {"player": 0, "points": 5})
    async with http.ws_connect(bridge.url + "api/ws") as ws:
        with VirtualControl(vboard.control) as sim:
            sim.reset()  # a hard reset: the app starts again, its saved game restored
        await next_message(ws, lambda m: m["type"] == "hello", timeout=10)
        state = await next_message(ws, lambda m: m["type"] == "state", timeout=10)
        assert state["board"] == "b1"
    # The bridge has the restarted board again (a request while it reconnects would wait).
    status, reply = await call(http, bridge, "POST", "api/peg", {"player": 1, "points": 2})
    assert status == 200 and reply["state"]["front"][1] == 2


# --- the token ---------------------------------------------------------------------------------


def test_loopback_names() -> None:
    for host in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2", "app.localhost"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.20", "example.com", ""):
        assert not is_loopback(host), host


def test_another_address_needs_a_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CRIBBOARD_TOKEN", raising=False)
    with pytest.raises(BridgeConfigError, match="token"):
        Bridge([], host="0.0.0.0")
    assert cli.main(["serve", "--http-host", "0.0.0.0", "--port", "/dev/null"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cribboard: binding to 0.0.0.0") and "--token" in err
    assert err.count("\n") == 1


async def test_token_enforced_off_localhost(
    vboard: VirtualBoard, http: aiohttp.ClientSession
) -> None:
    token = "s3cret-t0ken"
    async with running_bridge(vboard.port, host="0.0.0.0", token=token) as bridge:
        bearer = {"Authorization": f"Bearer {token}"}
        peg = {"player": 0, "points": 2}
        for path in ("api/state", "api/boards", "", "static/app.js", "openapi.json", "layout.json"):
            status, reply = await call(http, bridge, "GET", path)
            assert (status, reply["error"]) == (401, "unauthorized"), path
        status, reply = await call(http, bridge, "POST", "api/peg", peg)
        assert (status, reply["error"]) == (401, "unauthorized")
        status, reply = await call(
            http, bridge, "POST", "api/peg", peg, headers={"Authorization": "Bearer wrong"}
        )
        assert status == 401
        status, reply = await call(http, bridge, "POST", f"api/peg?token={token}x", peg)
        assert status == 401
        assert (await call(http, bridge, "GET", "api/state", headers=bearer))[1]["front"] == [0, 0]
        status, reply = await call(http, bridge, "POST", "api/peg", peg, headers=bearer)
        assert (status, reply["state"]["front"]) == (200, [2, 0])
        status, reply = await call(http, bridge, "POST", f"api/peg?token={token}", peg)
        assert (status, reply["state"]["front"]) == (200, [4, 0])
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(bridge.url + "api/ws")
        assert refused.value.status == 401
        async with http.ws_connect(bridge.url + f"api/ws?token={token}") as ws:
            assert (await next_message(ws, lambda m: True))["type"] == "boards"
        # The page opened with ?token= sets a cookie (SameSite=Strict) its scripts then carry.
        # (unsafe=True: keep cookies of an IP address, as browsers do)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.get(bridge.url + f"?token={token}") as page:
                assert page.status == 200 and "<svg" in await page.text()
                cookie = page.cookies["cribboard_token"]
                assert cookie.value == token and cookie["samesite"] == "Strict"
                assert cookie["httponly"]
            async with browser.get(bridge.url + "static/app.js") as script:
                assert script.status == 200
            async with browser.post(bridge.url + "api/peg", json=peg) as response:
                assert response.status == 200
            async with browser.ws_connect(bridge.url + "api/ws") as ws:
                assert (await next_message(ws, lambda m: True))["type"] == "boards"
            # ...but not for a request another web page makes: that needs the token itself.
            async with browser.post(
                bridge.url + "api/peg", json=peg, headers={"Origin": "http://evil.example"}
            ) as response:
                assert response.status == 401
        assert (await call(http, bridge, "GET", "api/state", headers=bearer))[1]["front"] == [6, 0]


async def test_cross_origin(vboard: VirtualBoard, http: aiohttp.ClientSession) -> None:
    origin = {"Origin": "http://game.example:8080"}
    async with running_bridge(vboard.port) as bridge:
        # Without a token, no web page of another origin may drive the board...
        status, reply = await call(http, bridge, "POST", "api/undo", headers=origin)
        assert (status, reply["error"]) == (403, "cross_origin")
        # ...and a loopback bridge answers loopback names only (DNS rebinding).
        status, reply = await call(
            http, bridge, "GET", "api/state", headers={"Host": "evil.example"}
        )
        assert (status, reply["error"]) == (403, "bad_host")
        # The page's own origin is fine.
        host = bridge.url.split("/")[2]
        status, _ = await call(
            http, bridge, "GET", "api/state", headers={"Origin": f"http://{host}"}
        )
        assert status == 200
    async with running_bridge(vboard.port, token="tok") as bridge:
        async with http.options(
            bridge.url + "api/peg",
            headers={
                **origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        ) as pre:
            assert pre.status == 204
            assert pre.headers["Access-Control-Allow-Origin"] == origin["Origin"]
            assert "Authorization" in pre.headers["Access-Control-Allow-Headers"]
        status, reply = await call(
            http,
            bridge,
            "POST",
            "api/peg",
            {"player": 1, "points": 1},
            headers={**origin, "Authorization": "Bearer tok"},
        )
        assert status == 200


# --- the command line --------------------------------------------------------------------------


def test_serve_command(tmp_path: Path, spawn: Spawn) -> None:
    """`cribboard serve --virtual` on all addresses with $CRIBBOARD_TOKEN: prints its address,
    serves, and stops on SIGINT."""
    env = dict(os.environ, CRIBBOARD_TOKEN="token-from-the-env")
    env.pop("CRIBBOARD_PORT", None)
    process = spawn(
        [
            sys.executable,
            "-m",
            "cribboard.cli",
            "serve",
            "--virtual",
            "--http-host",
            "0.0.0.0",
            "--http-port",
            "0",
            "--no-announce",  # never onto this machine's real network (tests/page/test_bridge_lan.py)
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(2)]
        assert lines[0].startswith("board b1: /dev/pts/") and "(virtual)" in lines[0]
        assert lines[1].startswith("cribboard bridge: http://127.0.0.1:")
        url = lines[1].split()[2]
        assert url.endswith("/?token=token-from-the-env")
        base = url.split("?")[0]

        async def check() -> None:
            async with aiohttp.ClientSession() as session:
                async with session.get(base + "api/state") as refused:
                    assert refused.status == 401
                async with session.post(
                    base + "api/peg",
                    json={"player": 0, "points": 3},
                    headers={"Authorization": "Bearer token-from-the-env"},
                ) as r:
                    assert r.status == 200 and (await r.json())["state"]["front"] == [3, 0]

        asyncio.run(check())
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    assert process.returncode == 0, err


# --- documents ---------------------------------------------------------------------------------


async def test_openapi_document(bridge: Bridge, http: aiohttp.ClientSession) -> None:
    status, served = await call(http, bridge, "GET", "openapi.json")
    assert status == 200 and served == openapi_document()
    validate_openapi(served)
    checked_in = (ROOT / "docs" / "openapi.json").read_text()
    assert checked_in == render(), (
        "docs/openapi.json is out of date: python -m cribboard.bridge.openapi > docs/openapi.json"
    )
    # Replies match the document's schemas.
    schemas = served["components"]["schemas"]

    def check(name: str, value: Any) -> None:
        jsonschema.validate(value, {**schemas[name], "components": {"schemas": schemas}})

    check("Boards", (await call(http, bridge, "GET", "api/boards"))[1])
    check("State", (await call(http, bridge, "GET", "api/state"))[1])
    check("Frame", (await call(http, bridge, "GET", "api/frame"))[1])
    check("Change", (await call(http, bridge, "POST", "api/peg", {"player": 0, "points": 1}))[1])
    check("DealerChange", (await call(http, bridge, "POST", "api/dealer"))[1])
    check("Error", (await call(http, bridge, "POST", "api/peg", {"player": 9, "points": 1}))[1])
    async with http.ws_connect(bridge.url + "api/ws?frames=1") as ws:
        for _ in range(3):
            check("Message", await ws.receive_json(timeout=5))
    # Each kind of event as the bridge sends it (the library's shape, with the board's id).
    for event in (ButtonEvent("A+", "hold"), AdmitEvent(Admission(False, True, 2))):
        check("Message", {"board": "b1", **event.to_json()})
    # Every operation of the library's Board is there, for the first board and by id.
    for op in ("state", "frame", "peg", "set", "undo", "new", "dealer", "pending"):
        assert f"/api/{op}" in served["paths"] and f"/api/boards/{{board}}/{op}" in served["paths"]
    # An old path, kept for one release, is marked so; no current one is.
    for path in ("/api/preview", "/api/boards/{board}/preview"):
        assert served["paths"][path]["post"]["deprecated"] is True
    deprecated = [
        p for p, ops in served["paths"].items() for op in ops.values() if "deprecated" in op
    ]
    assert sorted(deprecated) == ["/api/boards/{board}/preview", "/api/preview"]


async def test_layout_and_protocol_data(bridge: Bridge, http: aiohttp.ClientSession) -> None:
    status, data = await call(http, bridge, "GET", "layout.json")
    assert status == 200 and data == meta.layout_json()
    assert len(data["holes"]) == layout.HOLES
    assert (data["width_mm"], data["height_mm"]) == (layout.BOARD_WIDTH_MM, layout.BOARD_HEIGHT_MM)
    for hole in data["holes"]:
        assert (hole["x"], hole["y"]) == layout.hole_xy_mm(hole["id"])
        assert hole["led"] == layout.LED_OF_HOLE[hole["id"]]
    assert data["tracks"]["2"][1] == list(layout.TRACK_2P[1])
    status, proto = await call(http, bridge, "GET", "protocol.json")
    assert status == 200 and proto["verbs"] == [v.decode() for v in protocol.VERBS]
    assert proto["max_line"] == protocol.MAX_LINE and proto["major"] == protocol.PROTOCOL_MAJOR
