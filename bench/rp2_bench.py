"""The emulated RP2040 board (cribboard.virtual.rp2board): how fast it boots, runs and answers.

Runs MicroPython's stock RPI_PICO image (firmware/ports/rp2/images/, or $CRIBBOARD_RP2_IMAGES)
in rp2040js and prints figures only; nothing here asserts speed (the emulator's speed depends
on the machine and its load).

1. Power-on to the REPL banner on the pty: emulated ms (the clock when the banner arrives) and
   wall seconds (from RP2Board.start()).
2. Emulated CPU cycles per wall second: a busy loop in MicroPython, and the board idle at the
   REPL (paced: never faster than real time).
3. `mpremote connect PORT exec "print(1+1)"` round trip (process start included), and a raw
   REPL exec over pyserial (one link for many commands).
4. Restart (power cycle) and watchdog reset (`machine.reset()`) to the banner again.

    .venv/bin/python bench/rp2_bench.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import serial

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from cribboard.virtual.rp2board import STOCK_IMAGE, RP2Board, emulator_missing, images_dir
from rp2support import BANNER, RawRepl, read_until  # tests/rp2support.py

MPREMOTE_RUNS = 5
RAW_RUNS = 20
BUSY_LOOP = (
    "t = time.ticks_ms()\nfor i in range(100_000): pass\nprint(time.ticks_diff(time.ticks_ms(), t))"
)


def main() -> None:
    missing = emulator_missing()
    if missing:
        sys.exit(f"rp2_bench: {missing}")
    image = images_dir() / STOCK_IMAGE
    with tempfile.TemporaryDirectory() as scratch:
        wall = time.monotonic()
        board = RP2Board(image, flash=Path(scratch) / "flash.bin").start()
        try:
            link = serial.Serial(board.port, timeout=0.2)
            read_until(link, BANNER)
            banner_wall = time.monotonic() - wall
            banner_ms = board.clock().nanos / 1e6
            link.close()
            print(f"power-on to banner: {banner_ms:.1f} ms emulated, {banner_wall:.2f} s wall")
            print("  (a fresh flash: the first boot formats the file system)")

            repl = RawRepl(board.port)
            repl.enter()
            repl.exec("import time")
            before, wall = board.clock(), time.monotonic()
            ticks = int(repl.exec(BUSY_LOOP))
            spent = time.monotonic() - wall
            cycles = board.clock().cycles - before.cycles
            print(
                f"busy loop: {cycles / spent / 1e6:.1f} M emulated cycles per wall s "
                f"({ticks} ms on the board's clock in {spent:.2f} s wall)"
            )
            before, wall = board.clock(), time.monotonic()
            time.sleep(1.0)
            idle = (board.clock().nanos - before.nanos) / 1e9 / (time.monotonic() - wall)
            print(f"idle at the REPL: {idle:.2f} emulated s per wall s (paced to at most 1)")

            rounds = []
            for _ in range(RAW_RUNS):
                wall = time.monotonic()
                repl.exec("print(1+1)")
                rounds.append(time.monotonic() - wall)
            print(f"raw REPL exec over pyserial: median {statistics.median(rounds) * 1e3:.0f} ms")
            repl.close()

            rounds = []
            for _ in range(MPREMOTE_RUNS):
                wall = time.monotonic()
                subprocess.run(
                    [sys.executable, "-m", "mpremote", "connect", board.port, "exec", "print(1+1)"],
                    capture_output=True,
                    timeout=30,
                    check=True,
                )
                rounds.append(time.monotonic() - wall)
            print(f"mpremote exec round trip: median {statistics.median(rounds):.2f} s")

            with serial.Serial(board.port, timeout=0.2) as link:
                before, wall = board.clock(), time.monotonic()
                board.restart()
                read_until(link, BANNER)
                print(
                    f"restart (power cycle) to banner: {time.monotonic() - wall:.2f} s wall, "
                    f"{(board.clock().nanos - before.nanos) / 1e6:.0f} ms emulated"
                )
                repl = RawRepl(board.port)
                repl.enter()
                boots = board.boots
                before, wall = board.clock(), time.monotonic()
                repl.start("import machine\nmachine.reset()\n")
                board.wait_boot(after=boots)
                read_until(repl.link, BANNER)
                print(
                    f"machine.reset() to banner: {time.monotonic() - wall:.2f} s wall, "
                    f"{(board.clock().nanos - before.nanos) / 1e6:.0f} ms emulated"
                )
                repl.close()
        finally:
            board.stop()


if __name__ == "__main__":
    main()
