"""The bridge and the record of games (cribboard.bridge.records): the boards it serves are
recorded as keep's are (one game, with keep's notes, when both follow a board; the same game
after the bridge restarts), the page names the players, and the record is read over HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import jsonschema
import pytest

from cribboard.api import Board
from cribboard.boardid import board_identity
from cribboard.bridge.openapi import openapi_document
from cribboard.bridge.server import Bridge
from cribboard.play.scorekeeper import Scorekeeper
from cribboard.record.store import Record
from cribboard.recorder import Recording
from cribboard.virtual import VirtualBoard
from support import next_message, running_bridge, wait_bridge_state


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        yield session


async def call(
    http: aiohttp.ClientSession, bridge: Bridge, method: str, path: str, body: Any = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    async with http.request(method, bridge.url + path.lstrip("/"), data=data) as response:
        return response.status, await response.json()


async def win(http: aiohttp.ClientSession, bridge: Bridge, player: int) -> None:
    while True:
        status, reply = await call(
            http, bridge, "POST", "api/peg", {"player": player, "points": 29}
        )
        assert status == 200, reply
        if reply["state"]["winner"] is not None:
            return


async def test_a_game_keep_drives_and_the_bridge_follows_is_one_game(
    vboard: VirtualBoard, tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    path = tmp_path / "record.sqlite"
    async with running_bridge(vboard.port, record_path=path) as bridge:
        async with await Board.open(vboard.port, timeout=3.0) as board:
            await board.new_game(61, 2)
            await board.set_dealer(0)
            identity = board_identity(vboard.port, board.hello, None)
            recording = Recording(Record.open(path), identity, "keep", say=pytest.fail)
            keeper = Scorekeeper(board, output=lambda text: None, recording=recording)
            await keeper.start()
            for line in ("o3", "12", "b2", "8", "4", "c 5H 5S 5C JD 5D"):
                assert await keeper.handle(line)
            await recording.close()
        await win(http, bridge, 0)  # then the page pegs it to the end
        await wait_bridge_state(bridge, lambda s: s["winner"] == 0)
        assert bridge.records is not None
        await bridge.records.flush()
    with Record.open(path) as record:
        games = record.db.execute("SELECT id, source, winner FROM games").fetchall()
        assert [(source, winner) for _id, source, winner in games] == [("keep", 0)]
        kinds = record.db.execute(
            "SELECT kind, COUNT(*) FROM events WHERE live = 1 GROUP BY kind ORDER BY kind"
        ).fetchall()
        assert dict(kinds) == {"crib": 1, "hand": 3, "peg": 1, "play": 2}  # the page's win


async def test_names_from_the_page_and_the_record_read_over_http(
    vboard: VirtualBoard, tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    path = tmp_path / "record.sqlite"
    async with running_bridge(vboard.port, record_path=path) as bridge:
        assert (await call(http, bridge, "POST", "api/new", {"target": 61, "players": 2}))[0] == 200
        await wait_bridge_state(bridge, lambda s: s["front"] == [0, 0])
        async with http.ws_connect(bridge.url + "api/ws") as ws:
            status, named = await call(http, bridge, "POST", "api/names", {"names": ["Ann", "Bob"]})
            assert status == 200 and named["names"] == ["Ann", "Bob"]
            told = await next_message(ws, lambda m: m["type"] == "names")
            assert told["names"] == ["Ann", "Bob"] and told["board"] == "b1"
        for body, code in (
            ({"names": ["Ann\u202e", "Bob"]}, "bad_name"),  # a direction override
            ({"names": ["\x1b[2J", None]}, "bad_name"),  # an escape that clears a terminal
            ({"names": ["x" * 25, None]}, "bad_name"),
            ({"names": ["Ann", "ann"]}, "bad_name"),
            ({"names": ["Ann", "Bob", "Cy"]}, "bad_name"),  # three for a game of two
            ({"names": "Ann"}, "bad_name"),
            ({"names": [1, 2]}, "bad_name"),
            ({"who": ["Ann"]}, "bad_request"),
        ):
            status, reply = await call(http, bridge, "POST", "api/boards/b1/names", body)
            assert (status, reply["error"]) == (400, code), body
        assert (await call(http, bridge, "GET", "api/names"))[1]["names"] == ["Ann", "Bob"]
        await win(http, bridge, 1)
        await wait_bridge_state(bridge, lambda s: s["winner"] == 1)
        assert bridge.records is not None
        await bridge.records.flush()
        status, history = await call(http, bridge, "GET", "api/history?games=5")
        assert status == 200 and history["finished"] == 1
        bob = next(p for p in history["players"] if p["player"]["name"] == "Bob")
        assert (bob["won"], bob["lost"], bob["skunks_given"]) == (1, 0, 1)
        (game,) = history["games"]
        status, graph = await call(http, bridge, "GET", f"api/history/games/{game['id']}")
        assert status == 200 and graph["scores"][-1] == [0, 61]
        assert (await call(http, bridge, "GET", "api/history/games/999"))[0] == 404
        assert (await call(http, bridge, "GET", "api/history/hands?player=Ann"))[0] == 200
        for bad in (
            "api/history?games=0",
            "api/history?games=x",
            "api/history/hands",
            "api/history/games/-1",
        ):
            assert (await call(http, bridge, "GET", bad))[0] == 400, bad
        status, reply = await call(http, bridge, "GET", "api/history?player=%E2%80%AEx")
        assert (status, reply["error"]) == (400, "bad_name")
        # The replies are as the OpenAPI document says.
        schemas = openapi_document()["components"]["schemas"]

        def check(name: str, value: Any) -> None:
            jsonschema.validate(value, {**schemas[name], "components": {"schemas": schemas}})

        check("History", history)
        check("GameGraph", graph)
        check("HandCounts", (await call(http, bridge, "GET", "api/history/hands?colour=blue"))[1])
        check("Names", (await call(http, bridge, "GET", "api/boards/b1/names"))[1])
        check("Message", told)
        check("Error", reply)


async def test_the_same_game_after_the_bridge_restarts(
    vboard: VirtualBoard, tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    path = tmp_path / "record.sqlite"
    for points in (5, 7):
        async with running_bridge(vboard.port, record_path=path) as bridge:
            await call(http, bridge, "POST", "api/peg", {"player": 0, "points": points})
            await wait_bridge_state(bridge, lambda s, p=points: s["front"][0] >= p)
    with Record.open(path) as record:
        assert record.db.execute("SELECT COUNT(*) FROM games").fetchone() == (1,)
        steps = record.db.execute(
            "SELECT before, after FROM events WHERE live = 1 AND side = 0"
        ).fetchall()
        assert steps[-2:] == [(0, 5), (5, 12)] or steps[-1:] == [(5, 12)]
