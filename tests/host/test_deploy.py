"""Deploying changed firmware to the virtual board with `cribboard deploy` and with mpremote, and
seeing the new code run after a reset."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial

from cribboard.api import BoardState, Frame, SyncBoard
from cribboard.deploy import board_files, deploy, plan
from cribboard.firmware_build import MARCH, NO_NATIVE, built_files, native_arch, source_files
from cribboard.paths import firmware_dir, page_files
from cribboard.virtual import VirtualBoard
from cribboard.virtual.interpreter import find_micropython, interpreter_arch
from cribfw.version import FIRMWARE_VERSION


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
    # The modules, and the table page a board with Wi-Fi serves, copied as it is (gzip).
    assert sorted(source) == sorted([*source_files(), *page_files()])
    assert (
        built["web/static/app.js.gz"].read_bytes()
        == page_files()["web/static/app.js.gz"].read_bytes()
    )


def mpy_arch(path: Path) -> int:
    """The native architecture in a .mpy file's header (0: bytecode only)."""
    header = path.read_bytes()[:4]
    assert header[:2] == b"M\x06", header  # .mpy version 6 (MicroPython 1.23 and later)
    return (header[2] >> 2) & 0x2F


# The modules with native functions (`@micropython.native` or `.viper`), as a board's flash
# holds them.
NATIVE_MODULES = {
    board_path[: -len(".py")] + ".mpy"
    for board_path, path in source_files().items()
    if re.search(rb"\n[ ]*@micropython\.(native|viper)\n", path.read_bytes())
}


def test_the_boards_architecture_is_read_from_its_mpy_value() -> None:
    # sys.implementation._mpy: the .mpy version, then the feature byte (sub-version, arch << 2),
    # then, on RISC-V, the extensions (py/persistentcode.h, py/modsys.c).
    assert native_arch(6 | (3 | 2 << 2) << 8) == 2  # the unix port on x86-64
    assert native_arch(6 | (3 | 4 << 2) << 8) == 4 and MARCH[4] == "armv6m"  # RP2040
    assert native_arch(6 | (3 | 7 << 2) << 8) == 7 and MARCH[7] == "armv7emsp"  # RP2350
    assert native_arch(6 | (3 | 10 << 2) << 8) == 10 and MARCH[10] == "xtensawin"  # ESP32-S3
    assert native_arch(6 | (3 | 11 << 2) << 8 | 0x3 << 16) == 11  # RP2350 RISC-V (extensions)
    assert native_arch(6 | 3 << 8) == NO_NATIVE  # no native emitter (the unix port on arm64)
    assert native_arch(6 | (3 | 12 << 2) << 8) == NO_NATIVE  # rv64imc: mpy-cross has no emitter
    assert native_arch(6 | (3 | 13 << 2) << 8) == NO_NATIVE  # one mpy-cross cannot compile for
    assert native_arch(None) == NO_NATIVE  # no _mpy: loads no .mpy at all


def test_the_virtual_boards_files_carry_native_code_for_its_interpreter() -> None:
    assert {"cribcore/protocol.mpy", "cribfw/dispatch.mpy"} <= NATIVE_MODULES
    arch = interpreter_arch(find_micropython())
    assert arch in MARCH, "the unix port here has no native emitter: the test needs x86-64"
    built = built_files(arch=arch)
    for board_path, path in built.items():
        if board_path.endswith(".mpy"):
            expected = arch if board_path in NATIVE_MODULES else NO_NATIVE
            assert mpy_arch(path) == expected, board_path


def test_the_firmware_compiles_for_every_architecture_a_board_may_report() -> None:
    # An ESP32-S3 (xtensawin), an RP2350 (armv7emsp), a stock RP2040 (armv6m), ...
    for arch in MARCH:
        assert mpy_arch(built_files(arch=arch)["cribfw/dispatch.mpy"]) == arch, MARCH[arch]


def test_a_board_without_a_native_emitter_gets_plain_bytecode_or_source() -> None:
    for board_path, path in built_files(arch=NO_NATIVE).items():
        if board_path.endswith(".mpy"):
            assert mpy_arch(path) == NO_NATIVE, board_path
    source = built_files(compiled=False, arch=NO_NATIVE)
    emitters = ("@micropython.native", "@micropython.viper")
    decorated = [
        board_path
        for board_path, path in source.items()
        if board_path.endswith(".py")
        and any(line.strip() in emitters for line in path.read_text().splitlines())
    ]
    assert decorated == []
    # The line numbers stay those of the firmware's source (tracebacks point at the right line).
    original = source_files()["cribcore/protocol.py"].read_text().splitlines()
    stripped = source["cribcore/protocol.py"].read_text().splitlines()
    assert len(stripped) == len(original)
    changed = [a for a, b in zip(original, stripped, strict=True) if a != b]
    assert changed == [line for line in original if line.strip() in emitters]
    assert any(line.strip() == "@micropython.viper" for line in changed)


def _play(port: str) -> tuple[BoardState, Frame]:
    with SyncBoard.open(port, timeout=5.0) as board:
        board.new_game(121, 2)
        board.peg(0, 29)
        board.peg(1, 12)
        board.peg(0, 29)  # the second lap: the track glows
        board.set_pegs(1, 60, 48)
        board.set_pending(1, 3)
        board.undo()
        return board.state(), board.frame()


def test_a_board_without_a_native_emitter_plays_as_one_with_native_code(
    vboard: VirtualBoard,
) -> None:
    """The firmware built as for a board without a native emitter (all bytecode) boots and
    answers exactly as the native build does."""
    with VirtualBoard(native=False) as plain:
        assert plain.port
        bytecode = _play(plain.port)
    assert _play(vboard.port) == bytecode
    assert bytecode[0].front == [58, 12] and bytecode[0].pending == [0, 0]


SOURCE_DEPLOY_HEAP = "144wK"


@pytest.fixture
def stock() -> Iterator[VirtualBoard]:
    """A board running stock MicroPython (nothing frozen in its image, no app yet), with room
    for a source deploy, which compiles every module on the board (about 136 KB with Bluetooth;
    the heap a bytecode deploy needs is held by tests/ble/test_ble.py and tests/host/test_host_e2e.py)."""
    with VirtualBoard(stock=True, heap=SOURCE_DEPLOY_HEAP) as board:
        yield board


@pytest.fixture
def deployed(stock: VirtualBoard) -> VirtualBoard:
    """A stock MicroPython board with this firmware deployed on its flash, running."""
    deploy(stock.port, progress=lambda _line: None)
    return stock


def test_deploy_puts_the_whole_firmware_on_a_stock_board_and_it_runs(stock: VirtualBoard) -> None:
    seen: list[str] = []
    copied = deploy(stock.port, progress=seen.append)
    assert sorted(copied) == sorted(built_files())
    assert seen[-2:] == [
        f"copied {len(copied)} files",
        f"board reset: firmware {FIRMWARE_VERSION} is running",
    ]
    with SyncBoard.open(stock.port, timeout=5.0) as board:
        # Stock MicroPython: no boot guard, so the game is kept in files on its file system.
        assert board.hello.fields.get("store") == "fresh" and "fs" not in board.hello.fields
    assert plan(stock.port).copy == []
    # The board said which machine code it runs: its files carry native code for it.
    hashes, arch = board_files(stock.port)
    assert arch == interpreter_arch(find_micropython()) and arch in MARCH
    assert mpy_arch(built_files(arch=arch)["cribfw/dispatch.mpy"]) == arch


def test_deploy_on_a_cribboard_image_puts_a_newer_firmware_over_the_frozen_one(
    vboard: VirtualBoard, tmp_path: Path
) -> None:
    assert len(plan(vboard.port).copy) == len(built_files())  # the flash itself starts empty
    deploy(vboard.port, root=changed_firmware(tmp_path, "9.9.0"), progress=lambda _line: None)
    with SyncBoard.open(vboard.port, timeout=5.0) as board:
        assert board.hello.firmware == "9.9.0" and board.hello.fields.get("fs") == "ok"


def test_cribboard_deploy_copies_only_what_changed(deployed: VirtualBoard, tmp_path: Path) -> None:
    vboard = deployed
    fresh = plan(vboard.port)  # the board carries this firmware already
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


def test_deploy_creates_new_folders(deployed: VirtualBoard, tmp_path: Path) -> None:
    vboard = deployed
    tree = changed_firmware(tmp_path, "9.9.2")
    (tree / "extras").mkdir()
    (tree / "extras" / "__init__.py").write_text("NOTE = 'deployed'\n")
    seen: list[str] = []
    copied = deploy(vboard.port, root=tree, progress=seen.append)
    assert sorted(copied) == ["cribfw/version.mpy", "extras/__init__.mpy"]
    assert seen[:2] == ["[1/2] cribfw/version.mpy", "[2/2] extras/__init__.mpy"]
    assert firmware_version(vboard.port) == "9.9.2"


def test_mpremote_copy_then_soft_reset_runs_the_new_code(
    deployed: VirtualBoard, tmp_path: Path
) -> None:
    vboard = deployed
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


def test_source_deploy_replaces_bytecode_and_back(deployed: VirtualBoard, tmp_path: Path) -> None:
    """--source puts .py files on the board and removes the .mpy they replace (and the other
    way round), so no stale module can shadow or outlive the deployed one."""
    vboard = deployed
    tree = changed_firmware(tmp_path, "9.9.4")
    seen: list[str] = []
    deploy(vboard.port, root=tree, compiled=False, progress=seen.append)
    assert "removed cribfw/app.mpy" in seen and "[1/" in seen[0]
    assert firmware_version(vboard.port) == "9.9.4"
    back = plan(vboard.port, tree)
    assert "cribfw/app.py" in back.remove and ("cribfw/app.mpy",) == tuple(
        p for p, _ in back.copy if p == "cribfw/app.mpy"
    )
