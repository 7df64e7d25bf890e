"""`make bench`, Bluetooth on the real stacks: the firmware on MicroPython's own `bluetooth`
module (btstack and NimBLE builds, firmware/ports/unix/bin) reached by a Bumble central over the
virtual radio (cribdev.bumbleradio). Prints figures only, per stack:

1. Connect: the central's connect (it waits for the next advertisement: Bumble's timer makes the
   100 ms interval 160 ms; btstack resumes advertising by itself when a central leaves, and
   Bumble sends the first advertisement of a resumed one at once) and connect + service
   discovery + subscribe.
2. A peg's round trip: `#id peg 0 1` written, its reply back (median and p90 of 100, each run;
   the median of several runs too), on an admitted central; and the notifications one peg brings
   (the reply and the `! st` event, or the brief `! p` with `brief 1`) at MTU 23 and 247.
3. The heap, after a garbage collection the board runs when asked (the virtual board's side
   channel, `VirtualControl.heap`: the firmware otherwise collects only when its heap runs out, so
   `health`'s figure cannot show a leak): with nobody connected, at the start, after 100 pegs
   from a central and after centrals let go on stalled links (below). A leak shows as the
   figure going down and staying down.
4. A paced link (one packet per 5 ms from 8 buffers): 100 pegs pipelined ten at a time, with
   their events, and what the stack queued on the board's heap meanwhile (`health` bheld, bheap:
   btstack's copies; NimBLE refuses instead); then 100 pegs written in one burst (1.4 KB): the
   board's input overflows (`err busy`, resent) and resends per peg.
5. Centrals let go on stalled links (the paced link stops with a frame on its way, the board
   gives the central up): seconds each, and what the board counts as left behind (`bkept`:
   btstack's copies MicroPython never frees) against the heap it lost.
(The virtual link has no connection interval: a radio adds 7.5-50 ms per exchange.)

    .venv/bin/python bench/ble_real_bench.py [--runs N] [--stalls N]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bumble.device import Peer

from blereal import STACKS, WAIT, Nus  # tests/blereal.py
from cribboard.api import Board
from cribboard.virtual import VirtualControl
from cribdev.bumbleradio import RadioBoard, VirtualRadio

CONNECTS = 10
PEGS = 100
RUNS = 3  # runs of the round trip, each on a board of its own
STALLS = 4  # centrals let go on stalled links, per stack


def _fields(line: bytes) -> dict[str, str]:
    return dict(re.findall(r"(\w+)=(\S+)", line.decode()))


async def _heap(board: RadioBoard) -> int:
    """The board's free heap after a collection it runs now (the side channel)."""
    with VirtualControl(board.control) as sim:
        return (await asyncio.to_thread(sim.heap))["free"]


async def _notifications_per_peg(nus: Nus, ident: bytes) -> int:
    before = len(nus.packets)
    await nus.request(ident + b" peg 0 1\n")
    await nus.expect(lambda line: line.startswith(b"! "))
    return len(nus.packets) - before


async def _round_trips(nus: Nus) -> list[float]:
    await nus.request(b"#n1 new 121 2\n")
    trips = []
    for i in range(PEGS):
        started = time.perf_counter()
        await nus.request(b"#r%d peg 0 1\n" % i)
        trips.append(time.perf_counter() - started)
    return sorted(trips)


async def bench_stack(stack: str, runs: int, stalls: int) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    async with VirtualRadio() as radio:
        board = await radio.start_board(stack)
        connects, opens = [], []
        for _ in range(CONNECTS):
            central = await radio.add_central()
            await board.controller.wait_advertising(True)
            started = time.perf_counter()
            connection = await central.connect(board.address)
            connects.append(time.perf_counter() - started)
            await connection.disconnect()
        for _ in range(CONNECTS):
            central = await radio.add_central()
            await board.controller.wait_advertising(True)
            started = time.perf_counter()
            nus = await Nus.open(central, board)
            opens.append(time.perf_counter() - started)
            await nus.close()
        rows.append(("connect (median)", f"{statistics.median(connects) * 1000:.0f} ms"))
        rows.append(("connect + discover + subscribe", f"{statistics.median(opens) * 1000:.0f} ms"))
        heaps = [await _heap(board)]
        medians = []
        async with await Board.open(board.virtual.port, timeout=5.0) as usb:
            await usb.set_open(True)
            await board.controller.wait_advertising(True)
            nus = await Nus.open(await radio.add_central(), board)
            await nus.request(b"#n0 new 121 2\n")
            rows.append(
                ("notifications per peg, MTU 23", str(await _notifications_per_peg(nus, b"#q1")))
            )
            await nus.request(b"#b1 brief 1\n")
            rows.append(("  with brief 1", str(await _notifications_per_peg(nus, b"#q2"))))
            await nus.request(b"#b2 brief 0\n")
            await Peer(nus.connection).request_mtu(247)
            rows.append(
                ("notifications per peg, MTU 247", str(await _notifications_per_peg(nus, b"#q3")))
            )
            trips = await _round_trips(nus)
            medians.append(statistics.median(trips))
            rows.append(
                (
                    f"peg round trip ({PEGS}), median / p90",
                    f"{medians[0] * 1000:.1f} / {trips[int(len(trips) * 0.9)] * 1000:.1f} ms",
                )
            )
            await nus.close()
            await usb.set_open(False)
        heaps.append(await _heap(board))
    for _ in range(runs - 1):  # (a board of its own each: the spread between runs)
        async with VirtualRadio() as radio:
            board = await radio.start_board(stack)
            async with await Board.open(board.virtual.port, timeout=5.0) as usb:
                await usb.set_open(True)
                await board.controller.wait_advertising(True)
                nus = await Nus.open(await radio.add_central(), board)
                medians.append(statistics.median(await _round_trips(nus)))
                await nus.close()
                await usb.set_open(False)
    if runs > 1:
        rows.append(
            (
                f"  median of each of {runs} runs",
                " / ".join(f"{m * 1000:.1f}" for m in sorted(medians)) + " ms",
            )
        )
    async with VirtualRadio() as radio:
        rows += await _paced(radio, stack)
        rows += await _stalls(radio, stack, stalls, heaps)
    return rows


async def _paced(radio: VirtualRadio, stack: str) -> list[tuple[str, str]]:
    board = await radio.start_board(stack, pace_ms=5, acl_buffers=8)
    async with await Board.open(board.virtual.port, timeout=5.0) as usb:
        await usb.set_open(True)
        nus = await Nus.open(await radio.add_central(), board)
        await nus.request(b"#n0 new 121 2\n")
        started = time.perf_counter()
        for batch in range(PEGS // 10):
            ids = [b"#p%d" % (batch * 10 + i) for i in range(10)]
            await nus.write(b"".join(ident + b" peg 0 1\n" for ident in ids))
            for ident in ids:
                await nus.expect(lambda line, ident=ident: line.startswith(ident + b" "))
        elapsed = time.perf_counter() - started
        health = _fields(await nus.request(b"#h2 health\n"))
        overflows, resends = await _burst(nus)
        await nus.close()
        await usb.set_open(False)
    return [
        (f"paced link: {PEGS} pegs pipelined, per peg", f"{elapsed / PEGS * 1000:.1f} ms"),
        (
            "  queued by the stack at most (bheld / bheap)",
            f"{health['bheld']} notifications / {health['bheap']} bytes",
        ),
        (
            f"  {PEGS} pegs in one burst: input overflows / resends per peg",
            f"{overflows} / {resends / PEGS:.2f}",
        ),
    ]


async def _burst(nus: Nus) -> tuple[int, int]:
    """100 pegs in one write burst; what the board could not take is resent (after a ping that
    says every earlier reply is in) until each has its reply. Returns (overflows, resends)."""
    ids = [b"#u%d" % i for i in range(PEGS)]
    answered: set[bytes] = set()
    await nus.write(b"".join(ident + b" peg 1 1\n" for ident in ids))
    overflows = resends = 0
    sync: bytes | None = None
    while len(answered) < PEGS:
        line = await nus.next_line()
        ident = line.split(b" ", 1)[0]
        if ident in ids:
            answered.add(ident)
        elif line.startswith(b"err busy"):
            overflows += 1
            sync = b"#y%d" % overflows
            await nus.write(b"\n" + sync + b" ping\n")
        elif ident == sync:
            sync = None
            missing = [i for i in ids if i not in answered]
            resends += len(missing)
            await nus.write(b"".join(i + b" peg 1 1\n" for i in missing))
    return overflows, resends


async def _stalls(
    radio: VirtualRadio, stack: str, count: int, heaps: list[int]
) -> list[tuple[str, str]]:
    """Centrals let go on stalled links, one at a time; the heap after a collection before and
    after, beside the heap after the round trips (`heaps`: at the start, after the pegs)."""
    board = await radio.start_board(stack, pace_ms=5, acl_buffers=8)
    controller = board.controller

    async def health() -> dict[str, str]:
        await controller.wait_advertising(True)
        nus = await Nus.open(await radio.add_central(), board)
        try:
            await nus.request(b"#f0 frame\n")  # (every reply made once)
            return _fields(await nus.request(b"#h0 health\n"))
        finally:
            await nus.close()

    # Every slot taken once first (a slot's queue is made when a central first takes it).
    most = {"btstack": 1, "nimble": 4}[stack]
    warm = []
    for _ in range(most):
        await controller.wait_advertising(True)
        warm.append(await Nus.open(await radio.add_central(), board))
    for nus in warm:
        await nus.close()
    before = await health()
    start = await _heap(board)
    seconds = []
    for _ in range(count):
        await controller.wait_advertising(True)
        nus = await Nus.open(await radio.add_central(), board)
        controller.stall(True)
        started = time.perf_counter()
        await nus.write(b"#f1 frame\n")
        await asyncio.wait_for(asyncio.shield(nus.gone), WAIT)
        seconds.append(time.perf_counter() - started)
        controller.stall(False)
        await nus.close()
    after = await health()
    lost = start - await _heap(board)
    kept = int(after["bkept"]) - int(before["bkept"])
    return [
        (
            "heap after a collection: start / after the pegs",
            f"{heaps[0]} / {heaps[1]} bytes",
        ),
        (
            f"{count} centrals let go on stalled links, each after",
            f"{statistics.median(seconds):.1f} s (median)",
        ),
        (
            "  heap they left: lost / counted (bkept)",
            f"{lost} / {kept} bytes ({lost // max(count, 1)} each)",
        ),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="round-trip runs per stack")
    parser.add_argument("--stalls", type=int, default=STALLS, help="centrals let go per stack")
    args = parser.parse_args(argv if argv is not None else [])
    print("\nBluetooth on the real stacks: a Bumble central, the firmware on btstack and NimBLE")
    for stack in STACKS:
        try:
            rows = asyncio.run(bench_stack(stack, args.runs, args.stalls))
        except FileNotFoundError as error:
            print(f"   skipped: {error}")
            return
        print(f" {stack}:")
        for what, figure in rows:
            print(f"   {what:<62}{figure}")


if __name__ == "__main__":
    main(sys.argv[1:])
