"""`make bench`: run the core benchmark on the real MicroPython interpreter and print a report.

Runs bench/core_bench.py on MicroPython's unix port (MICROPYPATH = firmware, tests/core), then
finds the smallest `-X heapsize` in which the core's MicroPython tests still pass, with the core
compiled to .mpy as `cribboard deploy` puts it on a board and from source. Prints figures
only: nothing here asserts speed (the unix port on a desktop is far faster than a board's MCU).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
from cribboard.virtual.interpreter import find_micropython
from link_bench import mp_env  # bench/link_bench.py

FRAMES = 2000
SCORES = 5000
HOLES = 121
WIRE_US_PER_LED = 30  # WS2812: 24 bits at 1.25 us
WIRE_US = HOLES * WIRE_US_PER_LED
TARGET_US = WIRE_US // 10
CORE_TESTS = ["test_layout", "test_state", "test_render", "mp_no_alloc"]
HEAP_STEPS = list(range(8, 65, 4))  # in wK: K words, scaled to 32-bit words (1wK = 4 KB there)

Figures = dict[str, list[list[str]]]


def run_mp(
    exe: Path,
    args: list[str],
    heap_wk: int | None = None,
    timeout: float = 60,
    firmware: Path = ROOT / "firmware",
) -> subprocess.CompletedProcess[str]:
    opts = ["-X", f"heapsize={heap_wk}wK"] if heap_wk else []
    return subprocess.run(
        [str(exe), *opts, *args],
        capture_output=True,
        text=True,
        env=mp_env(firmware),
        timeout=timeout,
        cwd=ROOT,
    )


def run_bench(exe: Path) -> Figures:
    result = run_mp(exe, [str(ROOT / "bench" / "core_bench.py"), str(FRAMES), str(SCORES)])
    figures: Figures = {}
    for line in result.stdout.splitlines():
        key, *values = line.split()
        figures.setdefault(key, []).append(values)
    if result.returncode != 0 or "done" not in figures:
        sys.exit(
            f"core_bench.py failed (exit {result.returncode}):\n{result.stdout}{result.stderr}"
        )
    return figures


def tests_pass(exe: Path, heap_wk: int, firmware: Path) -> tuple[bool, str]:
    """Run the core tests in a heap of `heap_wk`, the core from `firmware`; (passed, why not)."""
    result = run_mp(
        exe, [str(ROOT / "tests" / "core" / "mprun.py"), *CORE_TESTS], heap_wk, firmware=firmware
    )
    out = result.stdout + result.stderr
    passed = result.returncode == 0 and "FAIL" not in result.stdout
    if passed:
        return True, ""
    lines = out.strip().splitlines()
    where = [ln.strip() for ln in lines if ln.strip().startswith("File ")]
    why = lines[-1] if lines else f"exit {result.returncode}"
    if where:
        why += f"  (at {where[-1]})"
    return False, why


def heap_bytes(exe: Path, heap_wk: int) -> int:
    result = run_mp(exe, ["-c", "import gc; print(gc.mem_free() + gc.mem_alloc())"], heap_wk)
    return int(result.stdout.strip())


def find_heap_floor(
    exe: Path, firmware: Path
) -> tuple[dict[int, bool], int | None, int | None, str]:
    """Coarse scan of HEAP_STEPS, then 1wK steps below the smallest passing step.

    Returns (coarse results, smallest coarse step from which all larger steps pass,
    smallest size in 1wK steps, why the size just below that failed)."""
    coarse: dict[int, bool] = {}
    reasons: dict[int, str] = {}
    for wk in HEAP_STEPS:
        coarse[wk], reasons[wk] = tests_pass(exe, wk, firmware)
    floor = None
    for wk in reversed(HEAP_STEPS):
        if not coarse[wk]:
            break
        floor = wk
    if floor is None:
        return coarse, None, None, reasons[HEAP_STEPS[-1]]
    exact = floor
    why = reasons.get(floor - 4, "")
    for wk in range(floor - 1, max(floor - 4, 0), -1):
        ok, reason = tests_pass(exe, wk, firmware)
        if not ok:
            why = reason
            break
        exact = wk
    return coarse, floor, exact, why


def stats_row(name: str, values: list[str]) -> str:
    n, median, p99, worst, best = (int(v) for v in values)
    return f"   {name:<8}{median:>7} us{p99:>7} us{worst:>7} us{best:>7} us   ({n} samples)"


def per_op(values: list[str], what: str) -> str:
    n, extra, base = (int(v) for v in values)
    return (
        f"{extra / n:g} bytes per {what}   ({extra} bytes over {n}, loop baseline "
        f"{base} bytes subtracted)"
    )


def main() -> None:
    started = time.monotonic()
    exe = find_micropython()
    version = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, timeout=30
    ).stdout.strip()
    fig = run_bench(exe)
    word = int(fig["word_bytes"][0][0])

    print("cribboard core benchmark")
    print(f"interpreter: {version}")
    print(f"   ({exe}; {word * 8}-bit words. Times are this host's unix port, not a board's MCU)")

    print(
        f"\n1. Frame time: busy two-player board (second lap glowing, skunk lines, blinking "
        f"preview), {FRAMES} frames"
    )
    print(f"   {'':<8}{'median':>10}{'p99':>10}{'worst':>10}{'best':>10}")
    for key in ("render", "draw", "show"):
        print(stats_row(key, fig[key][0]))
    render_median = int(fig["render"][0][1])
    verdict = "within" if render_median <= TARGET_US else "OVER"
    print(
        f"   target: render < {TARGET_US} us (10% of {HOLES} LEDs x {WIRE_US_PER_LED} us = "
        f"{WIRE_US} us WS2812 wire time)"
    )
    print(
        f"   median render = {100 * render_median / TARGET_US:.0f}% of target, "
        f"{100 * render_median / WIRE_US:.1f}% of wire time: {verdict} target on this host"
    )
    print(
        f"   timer overhead (ticks_us pair): median {fig['timer'][0][1]} us; last frame lit "
        f"{fig['frame_lit'][0][0]} holes, est. {fig['frame_estimated_ma'][0][0]} mA"
    )

    print(
        f"\n2. Score time ({SCORES} Board.peg calls, an undo after every 8th, "
        f"{fig['score_games'][0][0]} games finished)"
    )
    print(f"   {'':<8}{'median':>10}{'p99':>10}{'worst':>10}{'best':>10}")
    for key in ("peg", "undo"):
        print(stats_row(key, fig[key][0]))

    print("\n3. Heap allocated per operation (gc disabled, gc.mem_alloc() before/after)")
    print(f"   render: {per_op(fig['alloc_render'][0], 'frame')}")
    print(f"   score:  {per_op(fig['alloc_score'][0], 'score')}")

    print(f"\n4. Heap in use (gc.collect(); gc.mem_alloc(); {word}-byte words)")
    for name, size in fig["import"]:
        print(f"   import {name:<18}{int(size):>7} bytes")
    print(f"   {'core total':<25}{int(fig['import_total'][0][0]):>7} bytes")
    print(f"   {'Board()':<25}{int(fig['obj_board'][0][0]):>7} bytes  (incl. the undo ring)")
    print(
        f"   {'Renderer(pixels)':<25}{int(fig['obj_renderer'][0][0]):>7} bytes  "
        f"(pixel buffer not counted)"
    )
    print(
        f"   {'heap in use after both':<25}{int(fig['heap_in_use'][0][0]):>7} bytes  "
        f"(whole interpreter + bench)"
    )

    print(f"\n5. Smallest heap for the core's MicroPython tests ({' '.join(CORE_TESTS)})")
    from cribboard import firmware_build
    from cribboard.virtual.interpreter import interpreter_arch

    for label, firmware in (
        ("core as .mpy (as deployed)", firmware_build.build(arch=interpreter_arch(str(exe)))),
        ("core from source", ROOT / "firmware"),
    ):
        coarse, floor, exact, why = find_heap_floor(exe, firmware)
        print(f"   {label}:")
        print("     " + "  ".join(f"{wk}wK:{'ok' if ok else 'FAIL'}" for wk, ok in coarse.items()))
        if floor is None or exact is None:
            print(f"     no size up to {HEAP_STEPS[-1]}wK passes: {why}")
            continue
        print(
            f"     smallest in steps of 4wK: {floor}wK; in steps of 1wK: {exact}wK "
            f"= {exact} KB on a 32-bit board ({heap_bytes(exe, exact)} bytes of heap here)"
        )
        if why:
            print(f"     at {exact - 1}wK: {why}")
        if any(coarse[wk] for wk in HEAP_STEPS if wk < floor):
            print("     note: a smaller size passed too: passing is not monotonic (fragmentation)")

    print(f"\n(benchmark took {time.monotonic() - started:.1f} s)")

    print()
    from link_bench import main as link_bench  # bench/link_bench.py: host <-> virtual board

    link_bench()
    print()
    from cli_bench import main as cli_bench  # bench/cli_bench.py: the command line's start

    cli_bench([])

    from flash_bench import main as flash_bench  # bench/flash_bench.py: the store on flash

    flash_bench()
    from keeper_bench import main as keeper_bench  # bench/keeper_bench.py: a shared board

    keeper_bench([])
    from record_bench import main as record_bench  # bench/record_bench.py: the record of games

    record_bench([])
    from history_bench import main as history_bench  # bench/history_bench.py: its finished games

    history_bench()
    from bridge_bench import main as bridge_bench  # bench/bridge_bench.py: cribboard serve

    bridge_bench()
    from ble_bench import main as ble_bench  # bench/ble_bench.py: the board over Bluetooth LE

    ble_bench()
    from ble_real_bench import main as ble_real_bench  # the firmware on btstack and NimBLE

    ble_real_bench()
    print()
    from show_bench import main as show_bench  # bench/show_bench.py: the show against PyPI peers

    show_bench()
    print()
    from hall_bench import main as hall_bench  # bench/hall_bench.py: the club hall over MQTT

    hall_bench()
    print()
    from remote_bench import (
        main as remote_bench,
    )  # bench/remote_bench.py: cribboard remote

    remote_bench()
    print()
    from hall_firmware_bench import main as hall_firmware_bench  # a Wi-Fi board's own client

    hall_firmware_bench()
    print()
    from web_bench import main as web_bench  # bench/web_bench.py: the board's own page

    web_bench()
    print()
    from rp2_bench import main as rp2_bench  # bench/rp2_bench.py: the emulated Pico

    rp2_bench()
    print()
    from rp2_hotpath_bench import main as hotpath_bench  # from a peg to the light, in cycles

    hotpath_bench([])


if __name__ == "__main__":
    main()
