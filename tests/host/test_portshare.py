"""One board's port shared by several cribboard processes (cribboard.portshare): the first to
open it owns it, the others ride on its connection through a Unix socket in the private
runtime directory; every reply reaches its asker, every event every process, nothing is split.
The virtual board stands in for a USB board (its pty is a serial port to the host)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cribboard import portshare
from cribboard.api import Board, LinkEvent
from cribboard.errors import CribboardError
from cribboard.sharing import SharedTransport
from cribboard.virtual import VirtualBoard
from support import EventLog, Spawn, running_bridge, state_event

CLI = [sys.executable, "-m", "cribboard.cli"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=30)


def test_peg_while_watch_runs_rides_on_its_connection(vboard: VirtualBoard, spawn: Spawn) -> None:
    watcher = spawn(
        [*CLI, "--port", vboard.port, "watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stdout is not None and watcher.stderr is not None
        assert "watching" in watcher.stderr.readline()  # it owns the port now
        for expected in (1, 2, 3):
            pegged = cli("--port", vboard.port, "peg", "blue", "1")
            assert pegged.returncode == 0, pegged.stderr
            assert f"blue    {expected:>3}" in pegged.stdout
            event = json.loads(watcher.stdout.readline())
            assert event["type"] == "state", event
            assert event["state"]["front"] == [expected, 0], event
        # What needs the port to itself is refused at once, saying who has it.
        deploy = cli("--port", vboard.port, "deploy")
        assert deploy.returncode == 1
        assert deploy.stderr.strip() == (
            f"cribboard: port {vboard.port} in use by cribboard watch (pid {watcher.pid}): "
            "stop it first"
        )
    finally:
        watcher.send_signal(signal.SIGINT)
        out, err = watcher.communicate(timeout=10)
    assert '"link"' not in out and "Traceback" not in err


async def test_the_bridge_and_the_command_line_share_a_port(vboard: VirtualBoard) -> None:
    async with running_bridge(vboard.port) as bridge:
        assert bridge.url
        pegged = await asyncio.to_thread(cli, "--port", vboard.port, "peg", "orange", "4")
        assert pegged.returncode == 0, pegged.stderr
        status = await asyncio.to_thread(cli, "--port", vboard.port, "status", "--json")
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["state"]["front"] == [0, 4]


async def test_the_owner_leaving_hands_the_port_to_a_rider(vboard: VirtualBoard) -> None:
    owner = await Board.open(vboard.port, reconnect=False)
    rider = await Board.open(vboard.port, timeout=3.0)
    log = EventLog.of(rider)
    owner_log = EventLog.of(owner)
    await rider.peg(0, 2)  # the reply comes back to the rider; the owner sees the change
    await owner_log.wait(state_event(lambda s: s.front == [2, 0]))
    await owner.close()
    await log.wait(lambda e: e == LinkEvent("back"))
    assert portshare.holder_of(vboard.port) == portshare.Holder(os.getpid(), portshare.owner_label)
    third = await Board.open(vboard.port)  # rides on the new owner
    try:
        await third.peg(1, 3)
        await log.wait(state_event(lambda s: s.front == [2, 3]))
        assert (await rider.state()).front == [2, 3]
    finally:
        await third.close()
        await rider.close()
    assert portshare.holder_of(vboard.port) is None


async def test_a_riders_lines_are_checked_before_the_board_gets_them(
    vboard: VirtualBoard,
) -> None:
    owner = await Board.open(vboard.port)
    try:
        _lock, _setup, path = portshare._paths(vboard.port)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        reader, writer = await asyncio.open_unix_connection(str(path))
        # Ctrl-C would stop the firmware's app at MicroPython's prompt; a line longer than the
        # board takes, a line that is no request: none of them reaches the board.
        writer.write(b"\x03\x03\r\n" + b"peg 0 1" * 100 + b"\n" + b"\x04\nhello there\n")
        writer.write(b"#zz peg 0 5\n")
        await writer.drain()
        while (line := await asyncio.wait_for(reader.readline(), 5)) and not line.startswith(
            b"#zz "
        ):
            pass
        assert line.startswith(b"#zz ok"), line
        writer.close()
        await owner.ping()  # the app still runs
        state = await owner.state()
        assert state.front == [5, 0] and state.rev == 1
    finally:
        await owner.close()


def test_rider_line_ok() -> None:
    ok = portshare.rider_line_ok
    assert ok(b"peg 0 5") and ok(b"#a1 st") and ok(b"hello")
    assert not ok(b"") and not ok(b"\x03") and not ok(b"peg 0 5\x04") and not ok(b"rm -rf")
    assert not ok(b"#" + b"a" * 20 + b" st") and not ok(b"# st") and not ok(b"st " * 30)


async def test_a_runtime_dir_others_can_enter_is_refused(
    vboard: VirtualBoard, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = Path(tempfile.mkdtemp(prefix="crt"))
    (base / "cribboard").mkdir(mode=0o755)
    os.chmod(base / "cribboard", 0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    with pytest.raises(CribboardError, match="only you may enter"):
        await Board.open(vboard.port)


def test_a_links_files_are_named_by_its_key_readably_and_never_alike() -> None:
    lock, setup, sock = portshare._paths_of("/dev/ttyACM0")
    assert (lock.name, setup.name, sock.name) == (
        "port-%2Fdev%2FttyACM0.lock",
        "port-%2Fdev%2FttyACM0.setup",
        "port-%2Fdev%2FttyACM0.sock",
    )
    assert portshare._paths_of("ble:AA:BB@hci0")[2].name == "port-ble%3AAA%3ABB%40hci0.sock"
    keys = ["/tmp/a.b", "/tmp/a.c", "/tmp/a/b", "/tmp/a%2Fb", "/tmp/a-b", "/tmp/a_b", "/tmp/\xe9"]
    assert len({portshare._paths_of(key)[2] for key in keys}) == len(keys)


def test_a_key_too_long_for_a_socket_is_named_by_its_digest() -> None:
    long_keys = ["/tmp/" + "x" * 200, "/tmp/" + "x" * 199 + "y"]
    socks = [portshare._paths_of(key)[2] for key in long_keys]
    assert socks[0] != socks[1]
    for sock in socks:
        assert sock.name.startswith("port-#") and len(os.fsencode(sock)) < 108


@pytest.mark.parametrize("named", ["TMPDIR", "TEMP", "TMP"])
def test_the_temporary_directory_is_found_as_tempfile_finds_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, named: str
) -> None:
    from cribboard.rundir import temporary_dir

    for name in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.setenv(name, str(tmp_path / "absent"))
    monkeypatch.setattr(tempfile, "tempdir", None)  # (tempfile keeps what it found)
    assert temporary_dir() == tempfile.gettempdir()
    monkeypatch.setenv(named, str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert temporary_dir() == tempfile.gettempdir() == str(tmp_path)


def test_a_stranger_cannot_ride(vboard: VirtualBoard, spawn: Spawn) -> None:
    """The owner checks who connects: a process of another user is closed on at once."""
    if os.getuid() != 0:
        pytest.skip("needs root to connect as another user")
    owner = spawn(
        [*CLI, "--port", vboard.port, "watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stderr is not None and "watching" in owner.stderr.readline()
        _lock, _setup, path = portshare._paths(vboard.port)
        for folder in (path.parent, path.parent.parent):  # let the stranger reach the socket
            os.chmod(folder, 0o711)
        os.chmod(path, 0o666)
        script = (
            "import os, socket, sys\n"
            "os.setuid(65534)\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            f"s.connect({str(path)!r})\n"
            "try:\n"
            "    s.sendall(b'#qq st\\n')\n"
            "    sys.stdout.write(repr(s.recv(100)))\n"
            "except ConnectionError:  # reset, or a broken pipe\n"
            "    sys.stdout.write('reset')\n"
        )
        stranger = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=10
        )
        assert stranger.stdout in ("b''", "reset"), stranger  # closed on, no reply
    finally:
        for folder in (path.parent, path.parent.parent):
            os.chmod(folder, 0o700)
        owner.send_signal(signal.SIGINT)
        owner.communicate(timeout=10)


def test_only_a_local_path_is_shared() -> None:
    assert not portshare.shareable("loop://")
    assert not portshare.shareable("socket://127.0.0.1:9")
    assert not portshare.shareable("/nonexistent/tty")


async def test_a_request_in_flight_when_the_owner_leaves_is_answered(
    vboard: VirtualBoard,
) -> None:
    """The owner passes a rider's peg to the board and leaves before the reply reaches the
    rider: the rider (no reconnecting asked) opens the port itself, sends the same request
    again, and gets the board's remembered reply; the peg counts once."""
    owner = await Board.open(vboard.port, reconnect=False)
    rider = await Board.open(vboard.port, reconnect=False, timeout=5.0)
    transport = owner._client._transport
    assert isinstance(transport, SharedTransport) and transport._server is not None
    server = transport._server
    forward = server._write_line

    def forward_then_leave(line: bytes) -> None:
        forward(line)
        if b" peg " in line:
            server.broadcast = lambda data: None  # type: ignore[method-assign]  # reply lost
            asyncio.get_running_loop().create_task(owner.close())

    server._write_line = forward_then_leave
    try:
        rev = await rider.peg(0, 5)
        state = await rider.state()
        assert state.front == [5, 0] and state.rev == rev == 1
        assert portshare.holder_of(vboard.port) is not None  # the rider owns it now
    finally:
        await rider.close()
        await owner.close()
