"""The emulated RP2040 board (cribboard.virtual.rp2board): MicroPython's own rp2 image running
in rp2040js, opened over its pty by pyserial and mpremote; its pins, LED data line, watchdog,
flash file and power cuts.

Every mpremote call has a timeout: mpremote reads /dev/pts paths without one.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial

from cribboard.virtual.rp2board import NANOS_PER_CYCLE, FlashSymbols, RP2Board
from cribboard.virtual.ws2812 import decode_ws2812
from rp2support import (
    BANNER,
    BoardFactory,
    RawRepl,
    mpremote,
    needs_emulator,
    read_until,
    rp2_board,
    rp2_boards,
    rp2_image,
)
from support import Spawn

__all__ = ["rp2_board", "rp2_boards"]  # fixtures from rp2support

pytestmark = needs_emulator

ROOT = Path(__file__).resolve().parents[2]
SCRATCH1 = 0x40058000 + 0x10  # a watchdog scratch register applications may use (SDK: 4-7)


@pytest.fixture
def repl(rp2_board: RP2Board) -> Iterator[RawRepl]:
    link = RawRepl(rp2_board.port)
    link.enter()
    yield link
    link.close()


def test_stock_image_boots_to_the_banner_and_mpremote_runs_code(rp2_board: RP2Board) -> None:
    with serial.Serial(rp2_board.port, timeout=0.2) as link:
        shown = read_until(link, BANNER)
    assert b"MicroPython v1.28.0" in shown
    assert b"Raspberry Pi Pico with RP2040" in shown
    assert mpremote(rp2_board.port, "exec", "print(1+1)").strip() == "2"


def test_a_file_written_with_mpremote_is_there_after_a_restart_from_the_flash_file(
    rp2_boards: BoardFactory, tmp_path: Path
) -> None:
    flash = tmp_path / "pico.flash"
    note = tmp_path / "note.txt"
    note.write_text("pegged to 121\n")
    first = rp2_boards(flash=flash)
    mpremote(first.port, "fs", "cp", str(note), ":note.txt")
    first.stop()  # the power goes; the flash file stays

    symbols = FlashSymbols.for_image(rp2_image())
    again = rp2_boards(image=None, flash=flash, symbols=symbols)  # the flash file alone
    assert mpremote(again.port, "fs", "cat", ":note.txt") == "pegged to 121\n"
    again.stop()

    # The whole flash as a BIN image (a flash dump) onto a fresh chip: the same board.
    dump = tmp_path / "dump.bin"
    dump.write_bytes(flash.read_bytes())
    copy = rp2_boards(image=dump, symbols=symbols)
    assert mpremote(copy.port, "fs", "cat", ":note.txt") == "pegged to 121\n"


def test_neopixel_write_on_gpio16_decodes_to_the_grb_bytes(
    rp2_board: RP2Board, repl: RawRepl
) -> None:
    colours = [(255, 0, 0), (0, 128, 0), (1, 2, 3), (0x5A, 0xA5, 0x0F)]
    start = rp2_board.edges(16).next
    repl.exec(
        "import machine, neopixel\n"
        f"np = neopixel.NeoPixel(machine.Pin(16), {len(colours)})\n"
        f"for i, c in enumerate({colours!r}): np[i] = c\n"
        "np.write()\n"
    )
    frames = decode_ws2812(rp2_board.edges(16, since=start).edges)
    assert len(frames) == 1
    frame = frames[0]
    assert frame.data == bytes(byte for r, g, b in colours for byte in (g, r, b))
    # WS2812B: T0H 0.4 us, T1H 0.8 us (each +-150 ns), bit period 1.25 us (+-600 ns).
    print(
        f"\nWS2812 on GPIO 16: T0H {min(frame.zero_high_ns)}-{max(frame.zero_high_ns)} ns, "
        f"T1H {min(frame.one_high_ns)}-{max(frame.one_high_ns)} ns, "
        f"bit period {min(frame.bit_period_ns)}-{max(frame.bit_period_ns)} ns"
    )
    assert all(250 <= t <= 550 for t in frame.zero_high_ns)
    assert all(650 <= t <= 950 for t in frame.one_high_ns)
    assert all(650 <= t <= 1850 for t in frame.bit_period_ns)


def test_the_pio_and_dma_led_driver_sends_its_bits_on_the_emulated_clock(
    rp2_board: RP2Board, repl: RawRepl
) -> None:
    # The firmware's driver (cribfw/ws2812_rp2.py: a PIO state machine fed by DMA) on stock
    # MicroPython: the state machines run on the emulated clock, so the pulses have the widths
    # the program gives them (10 cycles a bit at 8 MHz: T0H 375 ns, T1H 750 ns, 1.25 us a bit).
    driver = (ROOT / "firmware" / "cribfw" / "ws2812_rp2.py").read_text()
    colours = [(255, 0, 0), (0, 128, 0), (1, 2, 3), (0x5A, 0xA5, 0x0F)]
    repl.exec(driver + f"\nimport machine\nstrip = PioStrip(machine.Pin(16), {len(colours)})\n")
    rp2_board.trace(True)
    start = rp2_board.edges(16, since=1 << 50).next
    # Two frames: the second restarts the channel the first one left done.
    for shown in (colours, colours[::-1]):
        repl.exec(
            f"for i, c in enumerate({shown!r}):\n"
            "    strip.buf[3 * i : 3 * i + 3] = bytes((c[1], c[0], c[2]))\n"
            "strip.write()\n"
            "while strip.busy():\n"
            "    pass\n"
        )
    frames = decode_ws2812(rp2_board.edges(16, since=start).edges)
    assert [frame.data for frame in frames] == [
        bytes(byte for r, g, b in shown for byte in (g, r, b)) for shown in (colours, colours[::-1])
    ]
    assert set(frames[0].zero_high_ns) == {375} and set(frames[0].one_high_ns) == {750}
    assert set(frames[0].bit_period_ns) == {1250}
    # The trace saw the raw REPL's bytes go in and its replies come out.
    entries, _ = rp2_board.trace_log()
    assert {what for _, what, _ in entries} >= {"usb_out", "usb_in"}
    assert b"strip.write()" in b"".join(data for _, what, data in entries if what == "usb_out")
    assert [nanos for nanos, _, _ in entries] == sorted(nanos for nanos, _, _ in entries)


def test_frames_written_while_one_goes_out_leave_the_latest_next_on_the_wire(
    rp2_board: RP2Board, repl: RawRepl
) -> None:
    # write() never waits for the wire: a frame written while another goes out waits for it in
    # the second buffer, a later one takes its place, and the timer sends the latest the moment
    # the wire is free. The LEDs get the first frame, then the last, each whole.
    driver = (ROOT / "firmware" / "cribfw" / "ws2812_rp2.py").read_text()
    repl.exec(driver + "\nimport machine\nstrip = PioStrip(machine.Pin(16), 121)\n")
    shown = [bytes((i * 37 + k * 101) % 256 for i in range(3 * 121)) for k in range(4)]
    start = rp2_board.edges(16, since=1 << 50).next
    out = repl.exec(
        f"for frame in {shown!r}:\n"
        "    strip.buf[:] = frame\n"
        "    strip.write()\n"
        "waiting = strip.busy()\n"
        "while strip.busy():\n"
        "    pass\n"
        "print(waiting)\n",
        timeout=60,
    )
    assert out.strip() == "True"
    frames = decode_ws2812(rp2_board.edges(16, since=start).edges)
    assert [frame.data for frame in frames] == [shown[0], shown[-1]]


def test_a_frame_after_the_leds_rested_ten_minutes_goes_out_at_once(
    rp2_board: RP2Board, repl: RawRepl
) -> None:
    # ticks_us() wraps (2**30 us): ten minutes after the last frame, ticks_diff from its start
    # is negative. The driver once read that as the wire still busy, and a write waited out
    # the rest of the period, about eight minutes. (The last frame's start is set ten minutes
    # back: ten emulated minutes of an idle chip take the emulator longer than a test may.)
    driver = (ROOT / "firmware" / "cribfw" / "ws2812_rp2.py").read_text()
    repl.exec(driver + "\nimport machine, time\nstrip = PioStrip(machine.Pin(16), 4)\n")
    start = rp2_board.edges(16, since=1 << 50).next
    out = repl.exec(
        "strip._started = time.ticks_add(time.ticks_add(time.ticks_us(), -300_000_000), "
        "-300_000_000)\n"
        "print(strip.busy())\n"
        "strip.buf[:] = bytes(range(1, 13))\n"
        "strip.write()\n"
        "while strip.busy():\n"
        "    pass\n"
    )
    assert out.strip() == "False"
    frames = decode_ws2812(rp2_board.edges(16, since=start).edges)
    assert [frame.data for frame in frames] == [bytes(range(1, 13))]


def test_a_frame_goes_out_whole_while_the_flash_erases(rp2_board: RP2Board, repl: RawRepl) -> None:
    # On the chip only the CPU waits for a flash erase or program (the SDK runs them from RAM);
    # the state machines and the DMA feeding them from RAM run on. A frame going out as the
    # board's store starts an erase reaches the LEDs whole (the emulator once froze the state
    # machines for the operation: the frame stopped part-way, 45 ms of low line in its middle).
    driver = (ROOT / "firmware" / "cribfw" / "ws2812_rp2.py").read_text()
    repl.exec(driver + "\nimport machine, rp2\nstrip = PioStrip(machine.Pin(16), 121)\n")
    pattern = bytes((i * 37 + 11) % 256 for i in range(3 * 121))
    start = rp2_board.edges(16, since=1 << 50).next
    repl.exec(
        f"strip.buf[:] = {pattern!r}\n"
        "flash = rp2.Flash()\n"
        "last = flash.ioctl(4, 0) - 1\n"  # the partition's last block
        "strip.write()\n"
        "flash.ioctl(6, last)\n"  # its erase, 45 ms, while the frame's 3.6 ms go out
        "while strip.busy():\n"
        "    pass\n",
        timeout=60,
    )
    frames = decode_ws2812(rp2_board.edges(16, since=start).edges)
    assert [frame.data for frame in frames] == [pattern]


def test_a_probe_named_with_a_plus_records_the_calls_arguments(
    rp2_board: RP2Board, repl: RawRepl
) -> None:
    # RP2Board.trace: a probe whose name ends in "+" records r0-r3 and lr at the function's
    # entry. The SDK's flash_range_erase(offset, count), called for two blocks in a row.
    erase = FlashSymbols.for_image(rp2_image()).erase
    rp2_board.trace(True, {"erase+": erase})
    repl.exec(
        "import rp2\nflash = rp2.Flash()\nlast = flash.ioctl(4, 0) - 1\n"
        "flash.ioctl(6, last - 1)\nflash.ioctl(6, last)\n",
        timeout=60,
    )
    entries, _ = rp2_board.trace_log()
    rp2_board.trace(False)
    calls = [struct.unpack("<5I", data) for _, what, data in entries if what == "erase+"]
    assert len(calls) == 2, calls
    (first, first_count, _, _, first_lr), (second, second_count, _, _, second_lr) = calls
    assert first % 4096 == 0 and second == first + 4096  # the offsets of two blocks in a row
    assert first_count == second_count == 4096
    assert first_lr == second_lr and first_lr & 1  # one call site, returned to in Thumb state


def test_watchdog_resets_keep_scratch_and_a_power_cut_clears_it(
    rp2_board: RP2Board, repl: RawRepl
) -> None:
    boots = rp2_board.boots
    repl.start(
        f"import machine\nmachine.mem32[{SCRATCH1:#x}] = 0x0C1B0A2D\n"
        "machine.WDT(timeout=500)\nprint('armed')\n"
    )
    assert repl.finish().strip() == "armed"
    # Left unfed at the REPL, it bites: a new chip from the same flash, the banner again.
    event = rp2_board.wait_boot(after=boots, timeout=30)
    assert (event["cause"], event["reason"]) == ("watchdog", 1)  # REASON.TIMER
    read_until(repl.link, BANNER)
    repl.enter()
    cause = "import machine\nprint(machine.reset_cause() == machine.WDT_RESET)\n"
    scratch = f"print(hex(machine.mem32[{SCRATCH1:#x}]))\n"
    assert repl.exec(cause + scratch).split() == ["True", "0xc1b0a2d"]

    # machine.reset() triggers the watchdog: the chip restarts instead of hanging.
    boots = rp2_board.boots
    repl.start("machine.reset()\n")
    event = rp2_board.wait_boot(after=boots, timeout=30)
    assert (event["cause"], event["reason"]) == ("watchdog", 2)  # REASON.FORCE
    read_until(repl.link, BANNER)
    repl.enter()
    assert repl.exec(cause + scratch).split() == ["True", "0xc1b0a2d"]

    rp2_board.restart()  # a power cut and power on: the scratch registers are gone
    read_until(repl.link, BANNER)
    repl.enter()
    assert repl.exec(cause + scratch).split() == ["False", "0x0"]


def test_a_power_cut_in_a_flash_program_leaves_the_bytes_programmed_so_far(
    rp2_board: RP2Board, repl: RawRepl
) -> None:
    rp2_board.break_on_flash("program")
    repl.start("f = open('cut.bin', 'wb')\nf.write(b'\\x5a' * 2048)\nf.close()\n")
    op = rp2_board.wait_halted()["flash_op"]
    while set(bytes.fromhex(op["data"])) != {0x5A}:  # littlefs programs metadata first
        rp2_board.break_on_flash("program")
        rp2_board.resume()
        op = rp2_board.wait_halted()["flash_op"]
    offset, count = op["offset"], op["count"]
    pattern = bytes.fromhex(op["data"])
    before = rp2_board.flash_path.read_bytes()[offset : offset + count]
    assert before == b"\xff" * count  # littlefs programs erased blocks

    cut = op["start_cycle"] + (op["end_cycle"] - op["start_cycle"]) * 2 // 5
    cut_op = rp2_board.power_cut(at_cycle=cut)["flash_op"]
    # The flash programs its bytes in order at a steady rate (0.4 ms a 256-byte page).
    span = op["end_nanos"] - op["start_nanos"]
    done = (cut * NANOS_PER_CYCLE - op["start_nanos"]) * count // span
    assert 0 < done < count and cut_op["done"] == done
    after = rp2_board.flash_path.read_bytes()[offset : offset + count]
    assert after == pattern[:done] + before[done:]

    rp2_board.power_on()  # littlefs recovers from the cut: the board boots and mounts
    read_until(repl.link, BANNER)
    repl.enter()
    assert repl.exec("import os\nprint(sorted(os.listdir('/')))").strip() in (
        "[]",
        "['cut.bin']",
    )


def test_cribboard_sim_rp2_prints_its_port_first_and_runs_until_interrupted(
    tmp_path: Path, spawn: Spawn
) -> None:
    image = rp2_image()
    flash = tmp_path / "pico.flash"
    command = [sys.executable, "-m", "cribboard.cli", "virtual", "--rp2", "--image", str(image)]
    sim = spawn(
        [*command, "--flash", str(flash)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert sim.stdout is not None
        port = sim.stdout.readline().strip()
        assert port.startswith("/dev/") and os.path.exists(port)
        assert sim.stdout.readline().strip() == f"flash: {flash}"
        assert mpremote(port, "exec", "print(6*7)").strip() == "42"
    finally:
        sim.send_signal(signal.SIGINT)
        sim.wait(timeout=10)
    assert sim.returncode == 0
    assert flash.stat().st_size == 2 * 1024 * 1024
