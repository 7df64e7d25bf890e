"""The game outlives the app: with no board plugged in, `keep` (`make run`) and `play` start
the saved virtual board, whose flash lives in the user's state directory; its game survives
`q`, a Ctrl-C and a new run, which goes on with it and says so (`--new` for a fresh one); the
app says where the game is kept when it ends. Two apps started at once never share the flash.
Each test runs the real command line with XDG_STATE_HOME and XDG_RUNTIME_DIR of its own."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from cribboard.paths import state_dir
from cribboard.virtual import VirtualBoard
from cribboard.virtual.errors import FlashInUse
from cribboard.virtual.saved import SAVED_FLASH
from support import Spawn

CLI = [sys.executable, "-m", "cribboard.cli"]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of a user with nothing plugged in: a state directory and a runtime
    directory of their own (a short path: Unix sockets live there)."""
    runtime = tempfile.mkdtemp(prefix="crt")
    env = {k: v for k, v in os.environ.items() if k != "CRIBBOARD_PORT"}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_RUNTIME_DIR=runtime, COLUMNS="200")
    yield env
    subprocess.run(["rm", "-rf", runtime], check=False)


def read_until(stream: IO[str], pattern: str) -> str:
    """The first line the program writes that matches `pattern` (failing at its end)."""
    seen = []
    while not re.search(pattern, line := stream.readline()):
        assert line, f"{pattern!r} never came: {seen[-5:]}"
        seen.append(line)
    return line


def flash_of(env: dict[str, str]) -> Path:
    return Path(env["XDG_STATE_HOME"]) / "cribboard" / SAVED_FLASH


def keep(env: dict[str, str], typed: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "keep", *args], input=typed, capture_output=True, text=True, timeout=60, env=env
    )


def test_the_state_directory_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert state_dir() == tmp_path / "state" / "cribboard" and state_dir().is_dir()
    assert state_dir().stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")  # the XDG rules: absolute only
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_dir() == tmp_path / "home" / ".local" / "state" / "cribboard"


def test_a_game_survives_q_ctrl_c_and_a_new_run(home: dict[str, str], spawn: Spawn) -> None:
    """Played, q, run again: the game goes on (it was 0-0 on a virtual board that died with
    the app). A Ctrl-C right after a peg keeps that peg too (the board saves a quiet second
    after a change: the app ends its board as a board's app ends, saving first)."""
    flash = flash_of(home)
    first = keep(home, "12\nb5\nq\n")
    assert first.returncode == 0, first.stderr
    assert "no board found on USB" in first.stdout and "new game to 121" in first.stdout
    assert first.stdout.rstrip().endswith(
        f"the game is kept in {flash}: `cribboard keep` goes on with it"
    )
    app = spawn(
        [*CLI, "keep"],
        env=home,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert app.stdin is not None and app.stdout is not None
    started = read_until(app.stdout, "going on with the game on the board|new game to")
    assert "going on with the game on the board: blue 5, orange 12;" in started
    app.stdin.write("o3\n")
    app.stdin.flush()
    read_until(app.stdout, r"orange\s+15\s+\(back\s+12\)")
    app.send_signal(signal.SIGINT)  # at once: the board has not saved it yet
    assert app.wait(timeout=30) == 130
    assert (
        app.stdout.read()
        .rstrip()
        .endswith(f"\nthe game is kept in {flash}: `cribboard keep` goes on with it")
    )
    again = keep(home, "q\n")
    assert again.returncode == 0, again.stderr
    assert "going on with the game on the board: blue 5, orange 15" in again.stdout
    fresh = keep(home, "q\n", "--new")
    assert "new game to 121" in fresh.stdout and "going on" not in fresh.stdout


def test_play_goes_on_with_the_saved_game_and_q_says_where_it_is(home: dict[str, str]) -> None:
    """`cribboard play`'s q said "the board keeps the score" of a board that died with it."""
    flash = flash_of(home)
    assert keep(home, "b25\no20\nq\n").returncode == 0
    played = subprocess.run(
        [*CLI, "play", "--seed", "3"],
        input="q\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=home,
    )
    assert played.returncode == 0, played.stderr
    assert "going on with the game on the board: blue 25, orange 20" in played.stdout
    assert played.stdout.rstrip().endswith(
        f"you left the game\nthe game is kept in {flash}: `cribboard play` goes on with it"
    )
    fresh = subprocess.run(
        [*CLI, "play", "--seed", "3", "--new"],
        input="q\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=home,
    )
    assert "going on" not in fresh.stdout and "cut for deal" in fresh.stdout


def test_two_apps_started_at_once_share_no_flash(home: dict[str, str], spawn: Spawn) -> None:
    """Started together, one starts the saved board and keeps it; the other finds it running
    (it never starts a second board on the same flash) and is refused, naming the first."""
    apps = [
        spawn(
            [*CLI, "keep"],
            env=home,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outcomes = []
    for app in apps:
        assert app.stdout is not None and app.stderr is not None
        first = app.stdout.readline()
        if first.startswith("playing on"):
            outcomes.append(("keeps", app))
        else:
            outcomes.append(("refused", app))
    kinds = sorted(kind for kind, _ in outcomes)
    assert kinds == ["keeps", "refused"]
    keeper = next(app for kind, app in outcomes if kind == "keeps")
    refused = next(app for kind, app in outcomes if kind == "refused")
    assert refused.wait(timeout=30) == 1
    assert refused.stderr is not None
    message = refused.stderr.read().strip()
    assert re.fullmatch(
        r"cribboard: the board on /dev/pts/\d+ is kept by cribboard keep "
        rf"\(pid {keeper.pid}\): go on there, or follow it here with `cribboard watch`",
        message,
    ), message
    assert keeper.stdin is not None
    keeper.stdin.write("q\n")
    keeper.stdin.flush()
    assert keeper.wait(timeout=30) == 0


def test_a_virtual_board_never_shares_its_flash(tmp_path: Path) -> None:
    flash = tmp_path / "board.flash"
    with VirtualBoard(flash=flash):
        with pytest.raises(FlashInUse, match="is in use by another virtual board"):
            VirtualBoard(flash=flash).start()


def test_the_deal_goes_on_where_it_was(home: dict[str, str], spawn: Spawn) -> None:
    """q in the middle of the show, then a new run: the next hand to count, the starter and
    his heels are as the table left them (the board keeps the scores and the dealer)."""
    first = keep(home, "s JD\n12\nq\n")
    assert first.returncode == 0, first.stderr
    again = keep(home, "j\n8\nq\n")
    assert "the deal goes on where it was: blue's hand counts next" in again.stdout
    assert "starter JD" in again.stdout
    assert "his heels were pegged in this deal already" in again.stdout  # once a deal
    assert re.search(r"blue\s+10\s+\(back\s+2\)", again.stdout)  # the 8 went to blue's hand
    # a board that no longer looks as the table left it: the deal starts again
    sim = spawn([*CLI, "virtual", "--flash", str(flash_of(home))], env=home, stdout=subprocess.PIPE)
    assert sim.stdout is not None and sim.stdout.readline()
    pegged = subprocess.run([*CLI, "peg", "orange", "1"], env=home, capture_output=True)
    assert pegged.returncode == 0, pegged.stderr
    sim.send_signal(signal.SIGINT)
    assert sim.wait(timeout=30) == 0
    moved = keep(home, "q\n")
    assert "blue 10, orange 13" in moved.stdout and "goes on where it was" not in moved.stdout


def test_a_damaged_table_file_is_ignored(tmp_path: Path) -> None:
    from cribboard.api import BoardState
    from cribboard.play.tablefile import load_table, save_table
    from cribboard.rules import STANDARD, parse_card
    from cribboard.rules.scorekeeping import Turn

    state = BoardState(7, 121, 2, 0, None, "playing", [5, 9], [0, 3], [0, 0], [0, 0], 2, False)
    path = tmp_path / "table.json"
    turn = Turn(dealer=0, deal_no=3, step=2, starter=parse_card("JD"), heels=True, shown=True)
    save_table(path, "board", STANDARD, state, turn)
    assert load_table(path, "board", STANDARD, state) == turn
    assert load_table(path, "another", STANDARD, state) is None
    moved = BoardState(8, 121, 2, 0, None, "playing", [6, 9], [5, 3], [0, 0], [0, 0], 3, False)
    assert load_table(path, "board", STANDARD, moved) is None
    text = path.read_text()
    for damaged in (
        text.replace('"step": 2', '"step": 99'),
        text.replace('"shown": true', '"shown": "yes"'),
        text.replace('"JD"', '"ZZ"'),
        text.replace('"heels": true', '"heels": 1'),
        text[:40],
        "[" * 20000,
    ):
        path.write_text(damaged)
        assert load_table(path, "board", STANDARD, state) is None
