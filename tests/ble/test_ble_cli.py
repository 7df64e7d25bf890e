"""The cribboard command line over Bluetooth LE: `--ble` with status, peg, watch and admit, and
boards over Bluetooth in `list`, through bleak and the BlueZ front (Bumble's central), against
the firmware on btstack and NimBLE (@on_stacks); the tests without a board need no radio."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest

from blesupport import bluetooth, board_name, needs_dbus, on_stacks, vboard
from cribboard.api import SyncBoard
from cribboard.cli import main
from cribboard.virtual import VirtualBoard
from cribdev.fakebluez import FakeBluetooth
from support import Spawn

__all__ = ["bluetooth", "vboard"]  # fixtures from blesupport
pytestmark = needs_dbus


@on_stacks
def test_cribboard_ble_status_and_peg(
    vboard: VirtualBoard, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not admitted yet: refused, with what to do about it.
    assert main(["--ble", "peg", "blue", "5"]) == 1
    assert "tap the deal button on the board" in capsys.readouterr().err
    # The owner, on USB, opens the board to every Bluetooth device.
    assert main(["--port", vboard.port, "admit", "--open"]) == 0
    assert "open mode: on" in capsys.readouterr().out
    assert main(["--ble", "status"]) == 0
    out = capsys.readouterr().out
    assert "blue" in out.lower() and "0" in out
    assert main(["--ble", board_name(vboard), "peg", "blue", "5"]) == 0
    assert main(["--ble", vboard.ble_address, "peg", "orange", "7"]) == 0
    assert main(["--ble", "--timeout", "3", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert status["port"] == f"ble:{vboard.ble_address}"
    assert status["state"]["front"] == [5, 7]
    with SyncBoard.open(vboard.port) as usb:
        assert usb.state().front == [5, 7]
    assert main(["--ble", "admit"]) == 0
    assert "admitted devices: 0" in capsys.readouterr().out


@on_stacks
def test_list_shows_boards_over_bluetooth(
    vboard: VirtualBoard, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert f"{vboard.ble_address}  {board_name(vboard)}  (Bluetooth LE, -50 dBm; " in out


def test_list_without_a_bluetooth_stack_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/cribboard-bus")
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "Bluetooth: not available (no D-Bus system bus: No such file or directory)"
    ]
    assert main(["--ble", "status"]) == 1
    assert (
        capsys.readouterr().err.strip()
        == "cribboard: Bluetooth is not available: no D-Bus system bus: No such file or directory"
    )


def test_commands_that_need_usb_refuse_ble(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--ble", "deploy"]) == 2  # a usage error, as argparse exits
    assert "deploy needs a USB link" in capsys.readouterr().err


class Lines:
    """A child's pipe read line by line with a timeout (unbuffered, so select() tells)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._data = b""

    def next(self, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._data:
            ready, _, _ = select.select([self._fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, "no output from the watcher"
            chunk = os.read(self._fd, 4096)
            assert chunk, "the watcher ended"
            self._data += chunk
        line, _, self._data = self._data.partition(b"\n")
        return line.decode()


@on_stacks
def test_watch_over_ble(vboard: VirtualBoard, bluetooth: FakeBluetooth, spawn: Spawn) -> None:
    env = dict(os.environ, **bluetooth.environ)
    watcher = spawn(
        [sys.executable, "-m", "cribboard.cli", "--ble", board_name(vboard), "watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        bufsize=0,
    )
    try:
        assert watcher.stderr is not None and watcher.stdout is not None
        out, err = Lines(watcher.stdout.fileno()), Lines(watcher.stderr.fileno())
        # Said once the watcher follows the board's events: the change below reaches it.
        assert err.next().startswith(f"watching ble:{vboard.ble_address}")
        with SyncBoard.open(vboard.port) as usb:  # a change on USB reaches the BLE watcher
            usb.peg(1, 4)
        while True:
            event = json.loads(out.next())
            if event["type"] == "state":
                break
        assert event["state"]["front"] == [0, 4]
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)
        for stream in (watcher.stdout, watcher.stderr):
            if stream is not None:
                stream.close()


@on_stacks
def test_peg_over_ble_rides_on_the_watchers_connection(
    vboard: VirtualBoard, bluetooth: FakeBluetooth, spawn: Spawn
) -> None:
    """A board takes one central: a second command rides on the first one's connection
    (cribboard.portshare), whether it names the board, its address, or neither."""
    env = dict(os.environ, **bluetooth.environ)
    assert main(["--port", vboard.port, "admit", "--open"]) == 0
    watcher = spawn(
        [sys.executable, "-m", "cribboard.cli", "--ble", board_name(vboard), "watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        bufsize=0,
    )
    try:
        assert watcher.stderr is not None and watcher.stdout is not None
        out, err = Lines(watcher.stdout.fileno()), Lines(watcher.stderr.fileno())
        assert err.next().startswith(f"watching ble:{vboard.ble_address}")
        for n, target in enumerate((board_name(vboard), vboard.ble_address, ""), start=1):
            pegged = subprocess.run(
                [sys.executable, "-m", "cribboard.cli", f"--ble={target}", "peg", "blue", "1"],
                capture_output=True,
                text=True,
                env=env,
                timeout=30,
            )
            assert pegged.returncode == 0, pegged.stderr
            assert f"blue    {n:>3}" in pegged.stdout
            event = json.loads(out.next())
            while event["type"] != "state":
                event = json.loads(out.next())
            assert event["state"]["front"] == [n, 0]
    finally:
        watcher.terminate()
        rest, _ = watcher.communicate(timeout=10)
    assert b'"link"' not in rest
