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

Then the cribboard image (the firmware frozen into RPI_PICO), in emulated CPU cycles at 125 MHz
(the clock the emulator and MicroPython's RPI_PICO run at):

5. One frame's render (the renderer drawing a mid-game state into the pixel buffer, brightness
   and current limiter included; time.ticks_us() around Renderer.render with the LED write left
   out) against the frame's time on the wire (GPIO 16's edges, first rise to last fall: 121 LEDs
   of 24 bits at 1.25 us, about 3.6 ms) and the whole neopixel write call.
6. A peg from the USB packet in to the reply out: the chip halted, the request queued at its USB
   port, then run in steps of 0.05 ms until the reply has reached the host.
7. Power-on to the restored game's first frame on the LED wire.
8. Free heap with the app running (after boot, after a whole game), frozen and deployed.
9. Image sizes (from the images' provenance files).

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
import json
import shutil

from cribboard.virtual.rp2board import (
    FIRMWARE_IMAGE,
    NANOS_PER_CYCLE,
    STOCK_IMAGE,
    RP2Board,
    emulator_missing,
    images_dir,
)
from cribboard.virtual.ws2812 import decode_ws2812
from rp2support import (  # tests/rp2support.py
    BANNER,
    ProtocolLink,
    RawRepl,
    heap_after_boot_and_game,
    read_until,
)
from support import wait_saved_sync  # tests/support.py

MHZ = 1e9 / NANOS_PER_CYCLE / 1e6  # 125
RENDERS = 50
PEG_RUNS = 10
PEG_STEP = 6_250  # cycles: 0.05 ms

# Run on the board (raw REPL, the app stopped): a mid-game state rendered RENDERS times with
# the LED write left out, then the neopixel write alone; microseconds on the board's timer.
RENDER_TIMING = """import time, machine, neopixel
from cribcore.render import Renderer
from cribcore.state import GameState
class Quiet(neopixel.NeoPixel):
    def write(self):
        pass
board = GameState()
for p, n in ((0, 12), (1, 9), (0, 29), (1, 24), (0, 17), (1, 20), (0, 29), (1, 8)):
    board.peg(p, n)
renderer = Renderer(Quiet(machine.Pin(16), 121), budget_ma=400)
renderer.render(board, 0)
t = time.ticks_us()
for i in range(%d):
    renderer.render(board, i * 20)
render_us = time.ticks_diff(time.ticks_us(), t) / %d
strip = neopixel.NeoPixel(machine.Pin(16), 121)
strip.buf[:] = renderer.pixels.buf
t = time.ticks_us()
strip.write()
write_us = time.ticks_diff(time.ticks_us(), t)
print(render_us, write_us)
""" % (RENDERS, RENDERS)

MPREMOTE_RUNS = 5
RAW_RUNS = 20
BUSY_LOOP = (
    "t = time.ticks_ms()\nfor i in range(100_000): pass\nprint(time.ticks_diff(time.ticks_ms(), t))"
)


def main() -> None:
    missing = emulator_missing()
    if missing:
        print(f"rp2_bench: skipped: {missing}")
        return
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
    firmware_figures()


def firmware_figures() -> None:
    """Figures of the cribboard firmware on the emulated Pico (items 5-9 above)."""
    print("\nthe cribboard firmware on the emulated Pico (cycles at 125 MHz):")
    with tempfile.TemporaryDirectory() as scratch:
        flash = Path(scratch) / "pico.flash"
        with RP2Board(images_dir() / FIRMWARE_IMAGE, flash=flash, pace=0) as pico:
            link = ProtocolLink(pico.port)
            link.wait_up()
            peg_cycles = []
            for run in range(PEG_RUNS):
                peg_cycles.append(peg_round_trip(pico, link, b"#b%d peg %d 3\n" % (run, run % 2)))
            print(
                f"  peg, USB packet in to reply out: median {statistics.median(peg_cycles):,.0f} "
                f"cycles = {statistics.median(peg_cycles) / MHZ / 1000:.2f} ms "
                f"(range {min(peg_cycles):,}-{max(peg_cycles):,}; 0.05 ms steps)"
            )
            fronts = [int(v) for v in link.request(b"st\n").split(b" f=")[1].split()[0].split(b",")]
            wait_saved_sync(flash, lambda game: game.front[:2] == fronts, timeout=30)
            link.events.clear()
            since = pico.edges(16).next
            pico.restart()
            boot = pico.wait_boot(after=pico.boots - 1)
            link.wait_event(lambda event: event.startswith(b"! hello "))
            first = first_frame_after(pico, since, boot["nanos"])
            time.sleep(0.2)  # the whole frame on the wire
            edges = pico.edges(16, since=since).edges
            frames = decode_ws2812([e for e in edges if e[0] >= first])
            wire_ns = frame_wire_ns([e for e in edges if e[0] >= first])
            print(
                f"  power-on to the restored game's first LED frame: "
                f"{(first - boot['nanos']) // NANOS_PER_CYCLE:,} cycles = "
                f"{(first - boot['nanos']) / 1e6:.1f} ms to its first bit, "
                f"{(first + wire_ns - boot['nanos']) / 1e6:.1f} ms to its last "
                f"({len(frames[0].data) // 3} LEDs)"
            )
            link.close()
            repl = RawRepl(pico.port)
            repl.enter()
            render_us, write_us = (float(v) for v in repl.exec(RENDER_TIMING).split())
            repl.close()
            print(
                f"  one frame's render (draw, brightness, limiter; no LED write): "
                f"{render_us * MHZ:,.0f} cycles = {render_us / 1000:.2f} ms"
            )
            print(
                f"  the frame on the wire: {wire_ns // NANOS_PER_CYCLE:,} cycles = "
                f"{wire_ns / 1e6:.2f} ms; the neopixel write call {write_us / 1000:.2f} ms "
                f"(interrupts off): render / wire = {render_us * 1000 / wire_ns:.2f}"
            )
        with RP2Board(
            images_dir() / FIRMWARE_IMAGE, flash=Path(scratch) / "h.flash", pace=0
        ) as pico:
            boot_free, game_free = heap_after_boot_and_game(pico)
            print(
                f"  free heap, frozen image: {boot_free:,} B after boot, {game_free:,} B after a game"
            )
        stock_flash = Path(scratch) / "stock.flash"
        with RP2Board(images_dir() / STOCK_IMAGE, flash=stock_flash, pace=0) as pico:
            subprocess.run(
                [sys.executable, "-m", "cribboard.cli", "--port", pico.port, "deploy"],
                capture_output=True,
                timeout=300,
                check=True,
            )
        shutil.copy(stock_flash, Path(scratch) / "stock2.flash")
        with RP2Board(
            images_dir() / STOCK_IMAGE, flash=Path(scratch) / "stock2.flash", pace=0
        ) as pico:
            boot_free, game_free = heap_after_boot_and_game(pico)
            print(
                f"  free heap, .mpy deployed on stock MicroPython: {boot_free:,} B after boot, "
                f"{game_free:,} B after a game"
            )
    for name in (
        STOCK_IMAGE,
        FIRMWARE_IMAGE,
        "cribboard-RPI_PICO_W.uf2",
        "cribboard-RPI_PICO2_W.uf2",
    ):
        record = json.loads((images_dir() / f"{name}.json").read_text())
        heap = record.get("gc_heap", {}).get("bytes")
        print(
            f"  {name}: firmware {record['firmware_bin']['bytes']:,} B "
            f"(UF2 {record['uf2']['bytes']:,} B), file system "
            f"{record['flash']['storage_length'] // 1024} KiB, GC heap {heap:,} B"
            if heap
            else f"  {name}: firmware {record['firmware_bin']['bytes']:,} B"
        )


def frame_wire_ns(edges: list[tuple[int, int]]) -> int:
    """First rise to last fall of the first frame in `edges` (the frame ends at a 50 us gap)."""
    last_fall = edges[0][0]
    for (nanos, level), following in zip(edges, edges[1:]):
        if level == 0:
            if following[0] - nanos >= 50_000:
                return nanos - edges[0][0]
            last_fall = nanos
    return last_fall - edges[0][0]


def peg_round_trip(pico: RP2Board, link: ProtocolLink, request: bytes) -> int:
    """Cycles from a request queued at the halted chip's USB port to its reply at the host.

    The chip runs in steps of PEG_STEP cycles; after each, the host waits (wall time) for what
    the relay may still be carrying, so a reply is counted in the step that produced it."""
    link.request(b"#syn ping\n")  # nothing of an earlier request left on the way
    time.sleep(0.05)
    link.link.reset_input_buffer()
    start = pico.halt().cycles
    link.link.write(request)
    link.link.flush()
    time.sleep(0.05)  # the relay hands the bytes to the emulator; the chip is halted
    now = start
    while True:
        now = pico.run_until(now + PEG_STEP).cycles
        time.sleep(0.02)
        if link.link.in_waiting or now - start > 50 * 125_000:
            break
    pico.resume()
    reply = link.reply()
    assert reply.split()[1] == b"ok", reply
    return now - start


def first_frame_after(pico: RP2Board, since: int, after_nanos: int, timeout: float = 30.0) -> int:
    """The emulated time (ns) of the first LED bit after `after_nanos`, waiting for it."""
    deadline = time.monotonic() + timeout
    while True:
        for nanos, level in pico.edges(16, since=since).edges:
            if level == 1 and nanos > after_nanos:
                return nanos
        if time.monotonic() > deadline:
            raise TimeoutError("no LED frame after the restart")
        time.sleep(0.05)


if __name__ == "__main__":
    main()
