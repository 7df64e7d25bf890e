"""Deploying changed firmware to the virtual board with `cribboard deploy` and with mpremote, and
seeing the new code run after a reset."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import serial

from cribboard.api import SyncBoard
from cribboard.deploy import plan
from cribboard.firmware_build import built_files, source_files
from cribboard.paths import firmware_dir
from cribboard.virtual import VirtualBoard


def changed_firmware(tmp_path: Path, version: str) -> Path:
    """A copy of the firmware tree whose version is `version`."""
    tree = tmp_path / "firmware"
    shutil.copytree(firmware_dir(), tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "cribfw" / "version.py").write_text(f'FIRMWARE_VERSION = "{version}"\n')
    return tree


def firmware_version(port: str) -> str:
    with SyncBoard.open(port, timeout=5.0) as board:
        return board.hello.firmware


def test_the_firmware_files_leave_out_the_simulator() -> None:
    files = source_files()
    assert "main.py" in files and "cribcore/state.py" in files and "cribfw/app.py" in files
    assert not [p for p in files if p.startswith("sim/") or "__pycache__" in p]


def test_the_board_gets_bytecode_except_main() -> None:
    built = built_files()
    assert "main.py" in built and "cribfw/app.mpy" in built and "cribcore/state.mpy" in built
    assert not [p for p in built if p.endswith(".py") and p != "main.py"]
    assert built["cribfw/app.mpy"].read_bytes()[:1] == b"M"  # the .mpy header
    source = built_files(compiled=False)
    assert sorted(source) == sorted(source_files())


def test_cribboard_deploy_copies_only_what_changed(vboard: VirtualBoard, tmp_path: Path) -> None:
    fresh = plan(vboard.port)  # a fresh virtual board carries this firmware already
    assert fresh.copy == [] and fresh.remove == []
    tree = changed_firmware(tmp_path, "9.9.1")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "cribboard.cli",
            "--port",
            vboard.port,
            "deploy",
            "--firmware",
            str(tree),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == [
        "[1/1] cribfw/version.mpy",
        "copied 1 file",
        "board reset: firmware 9.9.1 is running",
    ]
    assert firmware_version(vboard.port) == "9.9.1"
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "cribboard.cli",
            "--port",
            vboard.port,
            "deploy",
            "--firmware",
            str(tree),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.stdout.strip() == "the board's firmware is up to date"


def test_deploy_creates_new_folders(vboard: VirtualBoard, tmp_path: Path) -> None:
    tree = changed_firmware(tmp_path, "9.9.2")
    (tree / "extras").mkdir()
    (tree / "extras" / "__init__.py").write_text("NOTE = 'deployed'\n")
    from cribboard.deploy import deploy

    seen: list[str] = []
    copied = deploy(vboard.port, root=tree, progress=seen.append)
    assert sorted(copied) == ["cribfw/version.mpy", "extras/__init__.mpy"]
    assert seen[:2] == ["[1/2] cribfw/version.mpy", "[2/2] extras/__init__.mpy"]
    assert firmware_version(vboard.port) == "9.9.2"


def test_mpremote_copy_then_soft_reset_runs_the_new_code(
    vboard: VirtualBoard, tmp_path: Path
) -> None:
    tree = changed_firmware(tmp_path, "9.9.3")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mpremote",
            "connect",
            vboard.port,
            "fs",
            "cp",
            str(tree / "cribfw" / "version.py"),
            ":cribfw/version.py",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    # mpremote leaves the board at the REPL; a soft reset there (Ctrl-D) runs main.py again,
    # as on a real board.
    with serial.Serial(vboard.port, timeout=5) as link:
        link.write(b"\r\x03")  # make sure we are at the friendly REPL
        link.write(b"\x04")
        seen = b""
        while b"! hello " not in seen:
            chunk = link.read_until(b"\n")
            assert chunk, f"no hello after the soft reset: {seen!r}"
            seen += chunk
        assert b"MPY: soft reboot" in seen
        hello = seen[seen.index(b"! hello ") :]
        assert b" fw=9.9.3 " in hello


def test_source_deploy_replaces_bytecode_and_back(vboard: VirtualBoard, tmp_path: Path) -> None:
    """--source puts .py files on the board and removes the .mpy they replace (and the other
    way round), so no stale module can shadow or outlive the deployed one."""
    from cribboard.deploy import deploy

    tree = changed_firmware(tmp_path, "9.9.4")
    seen: list[str] = []
    deploy(vboard.port, root=tree, compiled=False, progress=seen.append)
    assert "removed cribfw/app.mpy" in seen and "[1/" in seen[0]
    assert firmware_version(vboard.port) == "9.9.4"
    back = plan(vboard.port, tree)
    assert "cribfw/app.py" in back.remove and ("cribfw/app.mpy",) == tuple(
        p for p, _ in back.copy if p == "cribfw/app.mpy"
    )
