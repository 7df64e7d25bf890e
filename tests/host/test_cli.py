"""The `cribboard` command line against the virtual board, as a user would run it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from cribboard.cli import main
from cribboard.virtual import VirtualBoard, VirtualControl
from support import Spawn

CLI = [sys.executable, "-m", "cribboard.cli"]


def run(
    *args: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_a_game_pegged_from_the_command_line(
    vboard: VirtualBoard, capsys: pytest.CaptureFixture[str]
) -> None:
    port = ["--port", vboard.port]
    assert main([*port, "peg", "blue", "12"]) == 0
    assert main([*port, "peg", "orange", "29"]) == 0
    assert main([*port, "peg", "a", "4"]) == 0
    out = capsys.readouterr().out
    assert "blue     16  (back  12)" in out and "orange   29  (back   0)" in out
    assert main([*port, "undo"]) == 0
    assert main([*port, "set", "1", "50", "40"]) == 0
    assert main([*port, "dealer"]) == 0
    assert main([*port, "status", "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    status = json.loads(out)
    assert status["state"]["front"] == [12, 50] and status["state"]["back"] == [0, 40]
    assert status["state"]["dealer"] == 1 and status["board"] == "sim"
    assert len(bytes.fromhex(status["frame"])) == 3 * 121
    assert main([*port, "new", "--target", "61"]) == 0
    assert main([*port, "status", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "game to 61" in out and "blue      0" in out
    assert main([*port, "bright", "77"]) == 0
    assert capsys.readouterr().out.strip() == "77"
    assert main([*port, "test"]) == 0
    assert "self-test running" in capsys.readouterr().out


def test_status_draws_the_board(vboard: VirtualBoard, capsys: pytest.CaptureFixture[str]) -> None:
    main(["--port", vboard.port, "set", "0", "70", "65"])
    capsys.readouterr()
    assert main(["--port", vboard.port, "status", "--no-color"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split(maxsplit=2)[2] for line in lines[:5] if "win" not in line]
    assert len(rows) == 4 and all(len(r.replace(" ", "")) == 30 for r in rows)
    assert [line[:8] for line in lines[:5]] == [
        "blue   >",
        "blue   <",
        "     win",
        "orange <",
        "orange >",
    ]
    # second lap: blue's two rows glow (':'), with the front (B) and back (b) pegs on them
    assert rows[0].count(":") + rows[1].count(":") == 58
    assert "B" in rows[0] and "b" in rows[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (["peg", "blue", "30"], "points must be 1..29"),
        (["peg", "green", "3"], "unknown player 'green'"),
        (["peg", "0", "x"], "points must be a whole number"),
        (["new", "--target", "100"], "invalid choice"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_arguments_give_one_line_and_a_nonzero_exit(args: list[str], message: str) -> None:
    result = run("--port", "/dev/null", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cribboard: ") and message in lines[0]


def test_a_board_refusal_is_one_line(vboard: VirtualBoard) -> None:
    result = run("--port", vboard.port, "undo")
    assert result.returncode == 1
    assert result.stderr.strip() == "cribboard: board refused: nothing to undo (nothing_to_undo)"


def test_a_reader_that_goes_away_ends_the_command_quietly(vboard: VirtualBoard) -> None:
    # `cribboard status --json | head -c 300`: the pipe's reader gone before the output comes.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [*CLI, "--port", vboard.port, "status", "--json"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=30,
        )
    finally:
        os.close(write_end)
    assert result.stderr == ""  # no traceback, no "Exception ignored"
    assert result.returncode == 141  # as a shell reports a process SIGPIPE ended


def test_no_board_says_how_to_start_the_virtual_one() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CRIBBOARD_PORT"}
    result = run("status", env=env)
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1
    assert "no board found" in result.stderr and "cribboard virtual" in result.stderr


def test_a_port_that_does_not_exist(tmp_path: Path) -> None:
    result = run("--port", str(tmp_path / "ttyNONE"), "status")
    assert result.returncode == 1
    assert (
        result.stderr == f"cribboard: cannot open {tmp_path / 'ttyNONE'}: there is no such port\n"
    )


def test_a_file_that_is_not_a_serial_port() -> None:
    result = run("peg", "blue", "12", "--port", "/dev/null")
    assert result.returncode == 1
    assert result.stderr == "cribboard: /dev/null is not a serial port\n"


def test_global_options_after_the_command(
    vboard: VirtualBoard, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["peg", "blue", "12", "--port", vboard.port, "--timeout", "3"]) == 0
    assert "blue     12" in capsys.readouterr().out
    # after the command wins over before it, as the later of two options does
    assert main(["--port", "/dev/null", "status", "--no-color", "--port", vboard.port]) == 0
    assert "game to 121" in capsys.readouterr().out
    assert main(["--port", vboard.port, "undo"]) == 0  # before the command, as ever


def test_port_from_the_environment(vboard: VirtualBoard) -> None:
    result = run("peg", "1", "6", env={**os.environ, "CRIBBOARD_PORT": vboard.port})
    assert result.returncode == 0 and "orange    6" in result.stdout


def next_event(lines: IO[str], kind: str) -> dict[str, Any]:
    """The next event of type `kind` a `watch --json` prints."""
    while True:
        line = lines.readline()
        assert line, f"watch stopped before a {kind} event"
        event: dict[str, Any] = json.loads(line)
        if event["type"] == kind:
            return event


def test_watch_prints_events_as_they_come(vboard: VirtualBoard, spawn: Spawn) -> None:
    watcher = spawn(
        [*CLI, "--port", vboard.port, "watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stderr is not None and watcher.stdout is not None
        assert "watching" in watcher.stderr.readline()
        # A change the watcher did not make: the board restarts (reset from the side channel).
        with VirtualControl(vboard.control) as sim:
            sim.reset()
        # The restart's own events, in order. A slow reboot may come with others first: the
        # link's `lost` and `back` (the client's heartbeat) and the state it read again.
        # Typed, in the bridge's shape (`"front": [0, 0]`), not the protocol's `"f": "0,0"`.
        hello = next_event(watcher.stdout, "hello")
        assert hello["fields"]["board"] == "sim"
        state = next_event(watcher.stdout, "state")["state"]
        assert state["rev"] == 0 and state["front"] == [0, 0] and state["winner"] is None
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=10)
    assert watcher.returncode in (0, 130)


def test_sim_prints_its_port_first_and_runs_until_interrupted(spawn: Spawn) -> None:
    sim = spawn([*CLI, "virtual"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert sim.stdout is not None
        port = sim.stdout.readline().strip()
        assert port.startswith("/dev/") and os.path.exists(port)
        assert sim.stdout.readline().startswith("control: ")
        result = run("--port", port, "peg", "0", "3")
        assert result.returncode == 0, result.stderr
        assert sim.poll() is None
    finally:
        sim.send_signal(signal.SIGINT)
        sim.wait(timeout=10)
    assert sim.returncode == 0


def test_sim_stock_is_stock_micropython_until_deploy_puts_the_firmware_on(spawn: Spawn) -> None:
    assert run("virtual", "--stock", "--firmware", "x").returncode == 2
    sim = spawn(
        [*CLI, "virtual", "--stock"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert sim.stdout is not None
        port = sim.stdout.readline().strip()
        sim.stdout.readline()  # control: ...
        listing = subprocess.run(
            [
                sys.executable,
                "-m",
                "mpremote",
                "connect",
                port,
                "exec",
                "import os, sys;print(os.listdir('/'), 'cribboot' in sys.modules)",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert listing.stdout.strip() == "[] False", listing  # no firmware, no boot guard
        assert run("--port", port, "deploy").returncode == 0
        result = run("--port", port, "peg", "0", "3")
        assert result.returncode == 0, result.stderr
    finally:
        sim.send_signal(signal.SIGINT)
        sim.wait(timeout=10)


def test_demo_pegs_a_whole_game_and_exits() -> None:
    result = run("demo", "--delay", "0", "--seed", "7", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "virtual board on /dev/" in result.stderr
    final = result.stdout.strip().splitlines()
    summary = [line for line in final[-4:] if "won" in line]
    assert len(summary) == 1 and " 121 " in summary[0]


def test_demo_scores_stop_at_the_target() -> None:
    """Seed 2's last count overshoots 121 by one: the player reads 121, as the board shows."""
    result = run("--lang", "en", "demo", "--delay", "0", "--seed", "2", timeout=60)
    assert result.returncode == 0, result.stderr
    totals = [int(total) for total in re.findall(r"pegs \d+[^:\n]*: (\d+)", result.stdout)]
    assert totals and max(totals) == 121
    assert "orange wins with 121; blue 110" in result.stdout


def test_sim_show_draws_the_board_as_it_changes(spawn: Spawn) -> None:
    sim = spawn(
        [*CLI, "virtual", "--show"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert sim.stdout is not None
        port = sim.stdout.readline().strip()
        sim.stdout.readline()
        assert run("--port", port, "peg", "0", "1").returncode == 0
        pictures: list[list[str]] = []
        while not pictures or pictures[-1][0][9] == ".":  # until blue's peg lights hole 1
            pictures.append([sim.stdout.readline().rstrip("\n") for _ in range(6)])
            assert len(pictures) < 10, pictures
        rows = pictures[-1]
        assert rows[2] == "     win b" and rows[0].startswith("blue   > B . . . .")
    finally:
        sim.send_signal(signal.SIGINT)
        sim.wait(timeout=10)


def test_an_unknown_option_points_to_the_commands_own_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["status", "--jsn"]) == 2
    assert capsys.readouterr().err == (
        "cribboard: unrecognized arguments: --jsn (see cribboard status --help)\n"
    )


def test_list_shows_a_running_sim_marked_virtual(spawn: Spawn) -> None:
    env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/cribboard-bus"}
    sim = spawn([*CLI, "virtual"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert sim.stdout is not None
        port = sim.stdout.readline().strip()
        listed = run("list", env=env)
        assert listed.returncode == 0, listed.stderr
        assert f"{port}  sim  firmware " in listed.stdout
        assert f"(virtual: cribboard virtual, pid {sim.pid})" in listed.stdout
        assert "no boards found" not in listed.stderr
    finally:
        sim.send_signal(signal.SIGINT)
        sim.wait(timeout=10)
    listed = run("list", env=env)  # the sim stopped: its file went with it
    assert port not in listed.stdout and "no boards found" in listed.stderr


def test_a_sim_killed_outright_or_a_forged_file_is_not_listed() -> None:
    from cribboard.rundir import runtime_dir
    from cribboard.virtual.registry import running_sims

    folder = runtime_dir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = folder / "sim-1.json"
    stale.write_text(json.dumps({"port": "/dev/null", "pid": int(dead.stdout), "kind": "unix"}))
    forged = [
        folder / "sim-2.json",
        folder / "sim-3.json",
        folder / "sim-4.json",
    ]
    forged[0].write_text("{" * 5000)
    forged[1].write_text(json.dumps({"port": ["/dev/null"], "pid": os.getpid()}))
    forged[2].write_text(json.dumps({"port": "/dev/null\x1b[2J", "pid": os.getpid()}))
    assert running_sims() == []
    assert not stale.exists()  # removed: its process is gone
    for path in forged:
        path.unlink()
