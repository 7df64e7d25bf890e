"""One truth when several programs share a board: the scorekeeper draws a change made elsewhere
at once, while it waits for a line, and says where it came from as far as the board tells (its
buttons, or another program or a phone); one app keeps a board at a time; with no USB board,
the commands use the virtual board that runs (`cribboard virtual`, or the one `keep` started) and
say so, and name them when several run. The programs are the real command line, with
XDG_STATE_HOME and XDG_RUNTIME_DIR of their own."""

from __future__ import annotations

import asyncio
import os
import pty
import queue
import re
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cribboard.api import Board
from cribboard.play.scorekeeper import Scorekeeper
from cribboard.virtual import VirtualBoard, VirtualControl
from cribcore.profiles import PROFILES
from support import WAIT_S, Spawn

CLI = [sys.executable, "-m", "cribboard.cli"]
PINS = PROFILES["sim"].buttons


@pytest.fixture
def home(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A user with nothing plugged in: state and runtime directories of their own."""
    runtime = tempfile.mkdtemp(prefix="crt")
    env = {k: v for k, v in os.environ.items() if k != "CRIBBOARD_PORT"}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_RUNTIME_DIR=runtime)
    yield env
    subprocess.run(["rm", "-rf", runtime], check=False)


class Terminal:
    """The other end of a program's terminal: what it shows, read as it comes."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.shown = ""

    def wait_for(self, pattern: str) -> str:
        """What the screen shows up to the first text matching `pattern` (waiting for it;
        WAIT_S only bounds a broken test). What follows stays for the next wait."""
        deadline = time.monotonic() + WAIT_S
        while (found := re.search(pattern, self.shown)) is None:
            left = deadline - time.monotonic()
            assert left > 0, f"{pattern!r} never shown: {self.shown[-600:]!r}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    self.shown += os.read(self.master, 65536).decode(errors="replace")
                except OSError:  # the program ended: its terminal is gone
                    raise AssertionError(f"{pattern!r} never shown: {self.shown[-600:]!r}")
        upto, self.shown = self.shown[: found.end()], self.shown[found.end() :]
        return upto

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")


def test_a_keeper_shows_a_peg_from_another_terminal_without_a_keypress(
    home: dict[str, str], spawn: Spawn
) -> None:
    """`keep` waits for a line in its terminal; `cribboard peg orange 3` in another terminal
    finds the virtual board it runs (no --port) and says so; the keeper draws the change at
    once, no key pressed, and says where it came from. Before, it showed the old score until
    the next entry, which said `the board was changed on the board itself`."""
    master, slave = pty.openpty()
    app = spawn(
        [*CLI, "keep"],
        env={**home, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    screen = Terminal(master)
    try:
        screen.wait_for(r"Enter: no names: ")  # who plays, for the record: none said
        screen.type("")
        screen.wait_for(r"\? keys · q quit\s*\n> ")  # the first screen and its prompt
        pegged = subprocess.run(
            [*CLI, "peg", "orange", "3"], env=home, capture_output=True, text=True, timeout=60
        )
        assert pegged.returncode == 0, pegged.stderr
        assert re.fullmatch(
            rf"on the virtual board /dev/pts/\d+ \(cribboard keep, pid {app.pid}\): no board "
            r"found on USB\n",
            pegged.stderr,
        ), pegged.stderr
        drawn = screen.wait_for(r"orange pegs 3: 3 \(from another program or a phone\)")
        assert re.search(r"orange\s+3\s+\(back\s+0\)", drawn)  # the scores drawn with it
        screen.wait_for("\n> ")  # and the prompt again
        screen.type("u")  # the change made elsewhere is a step: u takes it back
        screen.wait_for(r"undone: orange pegs 3: 3 \(from another program or a phone\)")
        screen.type("q")
        assert app.wait(timeout=30) == 0
    finally:
        os.close(master)


async def test_a_change_on_the_boards_buttons_is_said_so(vboard: VirtualBoard) -> None:
    """A count entered on the board's buttons is drawn as it is entered (a press comes before
    its `! btn` event, which the board sends when the button is let go: so far nothing says
    where it came from), and its peg when it commits by itself is the buttons'."""
    lines: queue.Queue[str] = queue.Queue()
    shown: list[str] = []
    drawn = asyncio.Event()

    def output(text: str) -> None:
        shown.append(text)
        drawn.set()

    async def until(check: Callable[[str], object]) -> None:
        async with asyncio.timeout(WAIT_S):
            while not (shown and check(shown[-1])):
                drawn.clear()
                await drawn.wait()

    async with await Board.open(vboard.port) as board:
        await board.new_game(121, 2)
        keeper = Scorekeeper(board, input=lambda prompt: lines.get(), output=output)
        running = asyncio.ensure_future(keeper.run())
        await until(lambda screen: "? keys" in screen)
        with VirtualControl(vboard.control) as sim:
            sim.press(str(PINS["B+"]))
            await until(lambda s: "\norange: 1 pending\n" in s)
            # nothing more pressed: the count commits by itself
            await until(lambda s: re.search(r"orange pegs 1: 1\b.*\(on the board's buttons\)", s))
        lines.put("q")
        assert await running == 0


def test_with_a_sim_running_the_commands_use_it_and_say_so(
    home: dict[str, str], spawn: Spawn
) -> None:
    """`cribboard list` showed the running sim, yet `peg` said "no board found" and `keep`
    started a second virtual board."""
    sim = spawn([*CLI, "virtual"], env=home, stdout=subprocess.PIPE, text=True)
    assert sim.stdout is not None
    port = sim.stdout.readline().strip()
    which = f"the virtual board {port} (cribboard virtual, pid {sim.pid})"
    pegged = subprocess.run(
        [*CLI, "peg", "blue", "3"], env=home, capture_output=True, text=True, timeout=60
    )
    assert pegged.returncode == 0, pegged.stderr
    assert pegged.stderr == f"on {which}: no board found on USB\n"
    kept = subprocess.run(
        [*CLI, "keep"], input="q\n", env=home, capture_output=True, text=True, timeout=60
    )
    assert kept.returncode == 0, kept.stderr
    lines = kept.stdout.splitlines()
    assert lines[0] == f"playing on {which}: no board found on USB"
    assert "going on with the game on the board: blue 3, orange 0" in kept.stdout
    assert f"the game is kept on the virtual board {port} until it stops" in lines[-1]


def test_with_several_sims_running_they_are_named(home: dict[str, str], spawn: Spawn) -> None:
    sims = [spawn([*CLI, "virtual"], env=home, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    ports = []
    for sim in sims:
        assert sim.stdout is not None
        ports.append(sim.stdout.readline().strip())
    for command in (["peg", "blue", "3"], ["keep"]):
        result = subprocess.run(
            [*CLI, *command], input="q\n", env=home, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 1
        message = result.stderr.strip()
        assert message.startswith(
            "cribboard: no board found on USB, and several virtual boards run: "
        ), message
        for sim, port in zip(sims, ports, strict=True):
            assert f"{port} (cribboard virtual, pid {sim.pid})" in message
        assert message.endswith("; choose one with --port") and "\n" not in message


async def test_the_game_against_the_computer_follows_a_change_made_elsewhere(
    vboard: VirtualBoard,
) -> None:
    """`play` too: while the person thinks, a peg from another program is said and drawn at
    once, and the game's score follows the board."""
    import random

    from cribboard.play.driver import GameDriver
    from cribboard.play.players import Computer, HumanTerminal, LeaveGame

    lines: queue.Queue[str] = queue.Queue()
    said: list[str] = []
    told = asyncio.Event()
    loop = asyncio.get_running_loop()

    def say(text: str) -> None:  # (the person's words come from the thread that asks them)
        said.append(text)
        loop.call_soon_threadsafe(told.set)

    async def until(text: str) -> None:
        async with asyncio.timeout(WAIT_S):
            while not any(line.startswith(text) for line in said):
                told.clear()
                await told.wait()

    async with await Board.open(vboard.port) as board, await Board.open(vboard.port) as other:
        human = HumanTerminal("blue", input=lambda prompt: lines.get(), output=say)
        driver = GameDriver(
            board, [human, Computer("orange")], rng=random.Random(1), dealer=0, say=say
        )
        playing = asyncio.ensure_future(driver.play_game())
        await until("blue: your cards")  # asked: the person thinks
        await other.peg(1, 3)
        await until("orange pegs 3: 3 (from another program or a phone)")
        assert driver.game is not None and driver.game.scores == [0, 3]
        lines.put("q")
        with pytest.raises(LeaveGame):
            await playing
