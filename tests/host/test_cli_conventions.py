"""What users of command-line tools expect: `-v` / `--verbose` on every command (standard
logging to stderr), `--json` for programs, and no secret on the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cribboard.virtual import VirtualBoard
from support import Spawn

CLI = [sys.executable, "-m", "cribboard.cli"]


def run(*words: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *words], capture_output=True, text=True, timeout=60, env=env or dict(os.environ)
    )


def test_verbose_says_what_happens_on_stderr(vboard: VirtualBoard) -> None:
    quiet = run("--port", vboard.port, "status", "--no-color")
    assert quiet.returncode == 0 and quiet.stderr == ""

    info = run("status", "--no-color", "-v", "--port", vboard.port)
    assert info.returncode == 0, info.stderr
    # What a person reads is the same (but for the uptime and the free heap at the end).
    assert info.stdout.splitlines()[:-1] == quiet.stdout.splitlines()[:-1]
    assert f"cribboard: INFO cribboard.client: {vboard.port}: opening" in info.stderr
    assert "firmware" in info.stderr and "protocol 1." in info.stderr
    assert "sent" not in info.stderr

    debug = run("--verbose", "-v", "--port", vboard.port, "status", "--no-color")
    assert debug.returncode == 0, debug.stderr
    assert "cribboard: DEBUG cribboard.client:" in debug.stderr
    assert "sent b'#" in debug.stderr and " ok up=" in debug.stderr


def test_a_quiet_log_passes_its_records_on_once_logging_is_imported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    from cribboard.logsetup import QuietLog

    log = QuietLog("cribboard.quiet")
    with caplog.at_level(logging.DEBUG, logger="cribboard.quiet"):
        log.debug("sent %r", b"#1 ping")
        log.info("opening %s", "/dev/ttyACM0")
    assert [(r.levelname, r.name, r.getMessage()) for r in caplog.records] == [
        ("DEBUG", "cribboard.quiet", "sent b'#1 ping'"),
        ("INFO", "cribboard.quiet", "opening /dev/ttyACM0"),
    ]
    # Each record names the line that logged it, not QuietLog's.
    assert {r.funcName for r in caplog.records} == {
        "test_a_quiet_log_passes_its_records_on_once_logging_is_imported"
    }


def test_verbose_after_a_command_with_a_parser_of_its_own(tmp_path: Path) -> None:
    """`hall` parses the rest of the line itself: -v there is taken too, not refused."""
    result = run("hall", "standings", "-v", "--dir", str(tmp_path / "none"))
    assert "unrecognized" not in result.stderr and "holds no hall" in result.stderr


def test_count_json() -> None:
    result = run("count", "5H", "5S", "5C", "JD", "5D", "--json")
    assert result.returncode == 0, result.stderr
    count = json.loads(result.stdout)
    assert count["hand"] == ["5H", "5S", "5C", "JD"] and count["starter"] == "5D"
    assert count["total"] == 29 and count["crib"] is False
    kinds = [combo["kind"] for combo in count["combos"]]
    assert kinds.count("fifteen") == 8 and kinds.count("pair") == 6 and kinds.count("nobs") == 1
    assert sum(combo["points"] for combo in count["combos"]) == 29
    assert {"kind": "nobs", "points": 1, "cards": ["JD"]} in count["combos"]

    crib = json.loads(run("count", "AH", "2H", "3H", "4H", "5S", "--crib", "--json").stdout)
    assert crib["crib"] is True and crib["total"] == 7  # no flush: the starter is a spade


def test_count_json_bad_cards_is_one_line() -> None:
    result = run("count", "5H", "5S", "ZZ", "--json")
    assert result.returncode != 0 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("cribboard: ")


def test_hall_refuses_a_password_on_the_command_line(tmp_path: Path) -> None:
    result = run(
        "hall",
        "start",
        "--dir",
        str(tmp_path),
        "--broker",
        "mqtt://127.0.0.1:1",
        "--password",
        "s3cret",
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "cribboard: --password would show the password to every user of this computer (ps): "
        "put it in an environment variable and name it with --password-env VAR (or set "
        "$CRIBBOARD_HALL_PASSWORD)"
    ]
    assert not (tmp_path / "director.json").exists()  # nothing started, nothing written


def test_hall_password_env_names_a_variable_that_is_not_set(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_SUCH_VARIABLE"}
    result = run(
        "hall", "page", "--dir", str(tmp_path), "--broker", "mqtt://127.0.0.1:1",
        "--password-env", "NO_SUCH_VARIABLE", env=env,
    )  # fmt: skip
    assert result.returncode != 0
    assert "--password-env NO_SUCH_VARIABLE: that environment variable is not set" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_budget_shows_and_sets_the_led_current_budget(vboard: VirtualBoard) -> None:
    """`cribboard budget` as the maker's guide tells a club-hall board to use it."""
    assert run("--port", vboard.port, "budget").stdout == "400\n"
    assert run("--port", vboard.port, "budget", "380").stdout == "380\n"
    assert run("--port", vboard.port, "budget").stdout == "380\n"
    refused = run("--port", vboard.port, "budget", "50")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "budget must be 150..10000, not 50" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    assert run("--port", vboard.port, "budget").stdout == "380\n"  # nothing changed


def test_list_json(spawn: Spawn) -> None:
    """`list --json`: every board found, a running sim among them, for programs."""
    import signal

    env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/cribboard-bus"}
    sim = spawn([*CLI, "virtual"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert sim.stdout is not None
        port = sim.stdout.readline().strip()
        listed = run("list", "--json", env=env)
        assert listed.returncode == 0, listed.stderr
        found = json.loads(listed.stdout)
        (virtual,) = [b for b in found["boards"] if b["link"] == "virtual"]
        assert virtual["port"] == port and virtual["pid"] == sim.pid
        assert virtual["board"] == "sim" and virtual["problem"] is None
        assert virtual["protocol"].startswith("1.")
        assert found["bluetooth_problem"].startswith("not available")
        assert listed.stderr == ""
    finally:
        sim.send_signal(signal.SIGINT)
        sim.wait(timeout=10)
    after = json.loads(run("list", "--json", env=env).stdout)
    assert all(b.get("port") != port for b in after["boards"])
