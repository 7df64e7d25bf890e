"""The bridge's examples run for real against the virtual board: examples/curl.sh with curl, the
Node client (examples/*.mjs, Node's built-ins only), and the snippets of docs/bridge.md."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from test_bridge import running_bridge

from cribboard.bridge.server import Bridge
from cribboard.virtual import VirtualBoard

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DOC = ROOT / "docs" / "bridge.md"
DOC_URL = "http://127.0.0.1:8321"

CURL = shutil.which("curl")
NODE = shutil.which("node")
needs_curl = pytest.mark.skipif(CURL is None, reason="no curl: `make browser` installs it")
needs_node = pytest.mark.skipif(NODE is None, reason="no node (Node.js 18 or later)")


@pytest.fixture
async def bridge(vboard: VirtualBoard) -> AsyncIterator[Bridge]:
    async with running_bridge(vboard.port) as b:
        yield b


async def run(
    *args: str, env: dict[str, str] | None = None, timeout: float = 20.0, cwd: Path = ROOT
) -> tuple[int, str, str]:
    """Run a program without blocking the event loop (the bridge runs on it)."""
    process = await asyncio.create_subprocess_exec(
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def board_state(bridge: Bridge) -> dict[str, object]:
    async with aiohttp.ClientSession() as session:
        async with session.get(
            bridge.url + "api/state",
            headers={"Authorization": f"Bearer {bridge.token}"} if bridge.token else None,
        ) as response:
            assert response.status == 200
            return await response.json()  # type: ignore[no-any-return]


def base(bridge: Bridge) -> str:
    return bridge.url.rstrip("/")


def doc_block(tag: str) -> str:
    """The code block after `<!-- tested: TAG -->` in docs/bridge.md."""
    match = re.search(rf"<!-- tested: {tag} -->\n```\w*\n(.*?)```", DOC.read_text(), re.S)
    assert match, f"no block tagged {tag} in {DOC}"
    return match.group(1)


# --- curl ------------------------------------------------------------------------------------


@needs_curl
async def test_curl_script(bridge: Bridge) -> None:
    code, out, err = await run(
        "bash",
        str(EXAMPLES / "curl.sh"),
        env={"CRIBBOARD_URL": base(bridge), "CRIBBOARD_TOKEN": ""},
    )
    assert code == 0, err
    replies = [json.loads(line) for line in out.splitlines()]
    assert [r.get("state", r)["front"] for r in replies] == [
        [0, 0],
        [5, 0],
        [5, 12],
        [5, 0],
        [5, 0],
    ]
    assert replies[-1]["dealer"] == 1
    state = await board_state(bridge)
    assert (state["front"], state["dealer"]) == ([5, 0], 1)


@needs_curl
async def test_curl_script_with_a_token(vboard: VirtualBoard) -> None:
    async with running_bridge(vboard.port, host="0.0.0.0", token="tok3n-for-curl") as bridge:
        url = {"CRIBBOARD_URL": base(bridge)}
        code, out, err = await run(
            "bash", str(EXAMPLES / "curl.sh"), env={**url, "CRIBBOARD_TOKEN": ""}
        )
        assert code != 0 and "unauthorized" in out
        code, out, err = await run(
            "bash", str(EXAMPLES / "curl.sh"), env={**url, "CRIBBOARD_TOKEN": "tok3n-for-curl"}
        )
        assert code == 0, err
        assert (await board_state(bridge))["front"] == [5, 0]


@needs_curl
async def test_curl_lines_in_the_docs(bridge: Bridge) -> None:
    script = doc_block("curl").replace(DOC_URL, base(bridge))
    code, out, err = await run("bash", "-euo", "pipefail", "-c", script)
    assert code == 0, err
    replies, decoder, at = [], json.JSONDecoder(), 0  # curl adds no newline after a reply
    while at < len(out.rstrip()):
        reply, at = decoder.raw_decode(out, at)
        replies.append(reply)
    assert len(replies) == 4
    assert replies[-1]["front"] == [5, 0]
    assert (await board_state(bridge))["front"] == [5, 0]


@needs_curl
async def test_curl_lines_that_repeat_safely(bridge: Bridge) -> None:
    script = doc_block("curl-repeat").replace(DOC_URL, base(bridge))
    code, out, err = await run("bash", "-euo", "pipefail", "-c", script)
    assert code == 0, err
    replies, decoder, at = [], json.JSONDecoder(), 0
    while at < len(out.rstrip()):
        reply, at = decoder.raw_decode(out, at)
        replies.append(reply)
    assert replies[0] == replies[1] and replies[0]["state"]["front"] == [6, 0]
    assert replies[2]["error"] == "stale"
    assert (await board_state(bridge))["front"] == [6, 0]


# --- Node ------------------------------------------------------------------------------------


@needs_node
async def test_node_peg(bridge: Bridge) -> None:
    env = {"CRIBBOARD_URL": base(bridge), "CRIBBOARD_TOKEN": ""}
    code, out, err = await run(str(NODE), "examples/peg.mjs", "1", "6", env=env)
    assert code == 0, err
    assert out.strip() == "front pegs: 0 6  (back: 0 0)"
    code, out, err = await run(str(NODE), "examples/peg.mjs", "blue", "29", env=env)
    assert (code, out.strip()) == (0, "front pegs: 29 6  (back: 0 0)"), err
    code, out, err = await run(str(NODE), "examples/peg.mjs", "0", "30", env=env)
    assert code != 0 and "bad_points: points must be 1..29" in err
    assert (await board_state(bridge))["front"] == [29, 6]


@needs_node
async def test_node_watch(bridge: Bridge) -> None:
    """examples/watch.mjs prints the events a peg from elsewhere causes (its WebSocket is the
    minimal one on node:http when Node has no WebSocket of its own)."""
    process = await asyncio.create_subprocess_exec(
        str(NODE),
        "examples/watch.mjs",
        "2",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "CRIBBOARD_URL": base(bridge)},
    )
    assert process.stderr is not None
    assert await asyncio.wait_for(process.stderr.readline(), 10) == b"subscribed\n"
    async with aiohttp.ClientSession() as session:
        for player, points in ((0, 3), (1, 4)):
            async with session.post(
                bridge.url + "api/peg", json={"player": player, "points": points}
            ) as response:
                assert response.status == 200
    out, err = await asyncio.wait_for(process.communicate(), 10)
    assert process.returncode == 0, err
    messages = [json.loads(line) for line in out.decode().splitlines()]
    states = [m["state"]["front"] for m in messages if m["type"] == "state"]
    assert states == [[0, 0], [3, 0], [3, 4]]
    assert messages[0]["type"] == "boards"


@needs_node
async def test_node_lines_in_the_docs(bridge: Bridge, tmp_path: Path) -> None:
    script = tmp_path / "peg.mjs"
    script.write_text(doc_block("node").replace(DOC_URL, base(bridge)))
    code, out, err = await run(str(NODE), str(script))
    assert (code, out.strip()) == (0, "[ 5, 0 ]"), err
    assert (await board_state(bridge))["front"] == [5, 0]
