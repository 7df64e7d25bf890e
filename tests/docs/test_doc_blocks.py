"""Every code block of the README and the guides in docs/ is tested as written: each says how in
a `<!-- tested: HOW -->` line above it, and a block without one fails here. The references whose
blocks are the protocol's or the broker's own lines, or a diagram, are not guides (REFERENCES).

- `python`: run as a script, the board it opens being a virtual board ($CRIBBOARD_PORT);
- `shell`: run line by line in bash against a virtual board, its example ports (`/dev/ttyACM0`,
  `/dev/pts/7`) and the bridge's address (`127.0.0.1:8321`, `192.168.1.20:8321`) put as this
  machine's (a bridge on the network announces nothing on it here: `--no-announce`); a command that runs until stopped (`sim`, `serve`, `watch`) runs until its first
  line says it is up and stops at the end of the block, the others must succeed. `shell, with
  the bridge of the block above` runs while that block's bridge still serves;
- `reply (peg)`, `reply (error)`, `reply (websocket)`: what the bridge answers, compared with
  what it answers now;
- `curl`, `node`, `browser`: run by tests/page/test_bridge_examples.py and tests/page/test_bridge_browser.py;
- `parsed only: WHY`: needs what a test does not have (a Bluetooth board, a Pico in BOOTSEL
  mode, a broker on the internet): each cribboard line is read by the command line's own parser,
  each make line by `make -n`, Python compiled, the rest checked by `bash -n`, so that a command
  or an option the docs name and the program no longer has fails."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from cribboard import cli
from cribboard.api import ButtonEvent
from cribboard.virtual import VirtualBoard
from support import WAIT_S, running_bridge

ROOT = Path(__file__).resolve().parents[2]
REFERENCES = {"architecture.md", "mqtt.md", "protocol.md", "record.md", "rp2-emulator.md"}
REFERENCES |= {"translating.md", "virtual-board.md"}
"""The documents in docs/ whose blocks are not a reader's commands: every other one is a guide."""
GUIDES = tuple(sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in REFERENCES))
DOCS = (ROOT / "README.md", *GUIDES)
BIN = Path(sys.executable).parent
RUN_ELSEWHERE = {
    "curl": "test_bridge_examples.py",
    "curl-repeat": "test_bridge_examples.py",
    "node": "test_bridge_examples.py",
    "browser": "test_bridge_browser.py",
}
UP = {"virtual": "/dev/", "serve": "cribboard bridge: http", "watch": "watching"}
"""The commands that run until stopped, and what their output says once they are up."""


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    how: str
    text: str

    def __str__(self) -> str:
        return f"{self.doc.name}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for doc in DOCS:
        lines = doc.read_text().split("\n")
        inside = None
        for number, line in enumerate(lines, 1):
            if line.startswith("```") and inside is None:
                inside = number
            elif line.startswith("```"):
                tag = re.fullmatch(r"<!-- tested: (.*) -->", lines[inside - 2])
                text = "\n".join(lines[inside : number - 1]) + "\n"
                found.append(Block(doc, inside, tag.group(1) if tag else "", text))
                inside = None
    return found


BLOCKS = blocks()


def kind(block: Block) -> str:
    return block.how.split(":")[0].split(",")[0].strip()


def of_kind(name: str) -> list[Block]:
    return [b for b in BLOCKS if kind(b) == name]


def test_every_block_says_how_it_is_tested() -> None:
    known = {"python", "shell", "reply (peg)", "reply (error)", "reply (websocket)"}
    known |= {"parsed only", *RUN_ELSEWHERE}
    for block in BLOCKS:
        assert kind(block) in known, f"{block}: no <!-- tested: HOW --> above it"
        if kind(block) == "parsed only":
            assert len(block.how) > len("parsed only: ") + 10, f"{block}: say why it is not run"
    for how, test in RUN_ELSEWHERE.items():
        if of_kind(how):
            assert f"tested: {how}" in next((ROOT / "tests").rglob(test)).read_text() or (
                f'doc_block("{how}")' in next((ROOT / "tests").rglob(test)).read_text()
            ), f"{how}: {test} runs no such block"


# --- run as written ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vboard(module_vboard: VirtualBoard) -> VirtualBoard:
    return module_vboard


@pytest.fixture
def env(vboard: VirtualBoard, tmp_path: Path) -> dict[str, str]:
    """The docs' reader's environment: the virtual board is the board found."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "CRIBBOARD_PORT": vboard.port,
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }


@pytest.mark.parametrize("block", of_kind("python"), ids=str)
def test_python_block(block: Block, env: dict[str, str], tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(block.text)
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=WAIT_S
    )
    assert done.returncode == 0, f"{block}: {done.stderr}"
    assert done.stdout.strip(), f"{block} printed nothing"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def commands(text: str, vboard: VirtualBoard, http_port: int) -> list[str]:
    """A shell block's commands, one a line, put on this machine: the bridge the block talks to
    (its `8321`) listens on `http_port`, any other bridge it starts on a free port."""
    text = text.replace("\\\n", " ").replace(".venv/bin/", f"{BIN}/")
    for port in ("/dev/pts/7", "/dev/ttyACM0", "/dev/ttyACM1"):
        text = text.replace(port, vboard.port)
    text = text.replace("192.168.1.20", "127.0.0.1").replace("8321", str(http_port))
    lines = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if re.search(r"\bcribboard serve\b", line) and "--http-port" not in line:
            line = f"{line.split('#')[0]} --http-port {http_port}"
            http_port = free_port()  # a second bridge listens on a port of its own
            if "--http-host" in line:  # never onto this machine's real network (test_bridge_lan.py)
                line += " --no-announce"
        lines.append(line)
    return lines


class Shell:
    """Runs a shell block's lines as a reader would, in order, keeping `export`s."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = dict(env)
        self.running: list[subprocess.Popen[str]] = []

    def run(self, line: str) -> None:
        command = next((c for c in UP if re.search(rf"\bcribboard( .*)? {c}\b", line)), None)
        if command is None and not line.startswith("make run"):
            done = subprocess.run(
                ["bash", "-c", f"{line}\nenv -0"],
                env=self.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=WAIT_S * 3,
                cwd=ROOT,
            )
            assert done.returncode == 0, f"{line!r} failed: {done.stderr}"
            if line.startswith("export "):
                pairs = (entry.split("=", 1) for entry in done.stdout.split("\0") if "=" in entry)
                self.env.update(dict(pairs))
            return
        if command is None:  # make run: the scorekeeper, which leaves at the end of its input
            done = subprocess.run(
                ["bash", "-c", line],
                env=self.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=WAIT_S * 3,
                cwd=ROOT,
            )
            assert done.returncode == 0, f"{line!r} failed: {done.stderr}"
            return
        process = subprocess.Popen(
            ["bash", "-c", f"exec {line}"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
            start_new_session=True,
        )
        self.running.append(process)
        said = []
        assert process.stdout is not None
        for out in process.stdout:
            said.append(out)
            if UP[command] in out:
                return
        raise AssertionError(f"{line!r} ended before it was up: {''.join(said)}")

    def stop(self) -> None:
        for process in reversed(self.running):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGINT)
            process.communicate(timeout=WAIT_S)
            assert process.returncode in (0, 130), f"{process.args}: {process.returncode}"
        self.running.clear()


@contextlib.contextmanager
def shell(env: dict[str, str]) -> Iterator[Shell]:
    runner = Shell(env)
    try:
        yield runner
    finally:
        for process in runner.running:  # a failure: leave nothing running
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        runner.stop()


def shell_runs() -> list[list[Block]]:
    """The shell blocks, each with those that run while it serves (`with the bridge of the
    block above`)."""
    runs: list[list[Block]] = []
    for block in of_kind("shell"):
        if "the block above" in block.how:
            runs[-1].append(block)
        else:
            runs.append([block])
    return runs


@pytest.mark.parametrize("run", shell_runs(), ids=lambda run: str(run[0]))
def test_shell_block(run: list[Block], vboard: VirtualBoard, env: dict[str, str]) -> None:
    http_port = free_port()
    with shell(env) as runner:
        for block in run:
            for line in commands(block.text, vboard, http_port):
                runner.run(line)
        runner.stop()


# --- what the bridge answers ------------------------------------------------------------------


def reply_block(name: str) -> list[dict[str, object]]:
    (block,) = of_kind(f"reply ({name})")
    return [json.loads(line) for line in block.text.splitlines()]


async def test_the_replies_shown_are_the_bridges(vboard: VirtualBoard) -> None:
    async with running_bridge(vboard.port) as bridge, aiohttp.ClientSession() as http:
        await bridge.registry.wait_connected()
        url = bridge.url + "api/"
        async with http.post(url + "new", json={"target": 121, "players": 2}):
            pass
        async with http.post(url + "dealer", json={"player": 0}):
            pass
        async with http.ws_connect(url + "ws?board=b1") as ws:
            async with http.post(url + "peg", json={"player": 0, "points": 5}) as response:
                pegged = await response.json()
            async with http.post(url + "peg", json={"player": 0, "points": 30}) as response:
                refused = await response.json()
            seen: dict[str, dict[str, object]] = {}
            while "state" not in seen or seen["state"]["state"]["front"] != [5, 0]:  # type: ignore[index]
                message = await ws.receive_json(timeout=WAIT_S)
                seen[message["type"]] = message

    def counted_from_a_fresh_board(reply: dict[str, object]) -> dict[str, object]:
        state = reply["state"]
        assert isinstance(state, dict)
        # (and its own number for the game: 1 on a board never played before)
        return {**reply, "rev": 0, "state": {**state, "rev": 0, "undo": 0, "game": 1}}

    (shown,) = reply_block("peg")
    assert counted_from_a_fresh_board(shown) == counted_from_a_fresh_board(pegged)
    assert reply_block("error") == [refused]
    state, button = reply_block("websocket")
    assert state.keys() == seen["state"].keys()
    assert state["state"].keys() == seen["state"]["state"].keys()  # type: ignore[union-attr]
    assert button == {"type": "button", "board": "b1", **ButtonEvent("A+", "tap").to_json()}


# --- what cannot run here ---------------------------------------------------------------------


@pytest.mark.parametrize("block", of_kind("parsed only"), ids=str)
def test_parsed_only_block(block: Block, capsys: pytest.CaptureFixture[str]) -> None:
    if block.text.lstrip().startswith("async ") or "import " in block.text:
        compile(block.text, str(block), "exec", flags=0x2000)  # top-level await allowed
        return
    for line in block.text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        program = Path(words[0]).name
        if program == "cribboard":
            try:
                args, rest = cli.parse(words[1:])
            except SystemExit:
                raise AssertionError(f"{block}: {line!r}: {capsys.readouterr().err}") from None
            assert not rest, f"{block}: {line!r} has words cribboard does not take: {rest}"
        elif program == "make":
            done = subprocess.run(["make", "-n", *words[1:]], cwd=ROOT, capture_output=True)
            assert done.returncode == 0, f"{block}: {line!r}: {done.stderr!r}"
        else:
            done = subprocess.run(["bash", "-n", "-c", line], capture_output=True)
            assert done.returncode == 0, f"{block}: {line!r}: {done.stderr!r}"


# --- the Python examples the guides name ----------------------------------------------------


def test_the_python_examples_peg_and_watch(env: dict[str, str]) -> None:
    examples = ROOT / "examples"
    watch = subprocess.Popen(
        [sys.executable, str(examples / "watch.py"), "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watch.stderr is not None and watch.stdout is not None
        assert watch.stderr.readline() == "subscribed\n"
        now = json.loads(watch.stdout.readline())["state"]["front"]
        pegged = subprocess.run(
            [sys.executable, str(examples / "peg.py"), "orange", "6"],
            env=env,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert pegged.returncode == 0, pegged.stderr
        assert pegged.stdout.startswith(f"front pegs: {now[0]} {now[1] + 6}  (back: ")
        out, err = watch.communicate(timeout=WAIT_S)  # one change, then it ends
        assert watch.returncode == 0, err
        changed = json.loads(out.splitlines()[-1])
        assert changed["type"] == "state" and changed["state"]["front"] == [now[0], now[1] + 6]
    finally:
        watch.kill()
        watch.wait()
