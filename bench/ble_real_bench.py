"""`make bench`, Bluetooth on the real stacks: the firmware on MicroPython's own `bluetooth`
module (btstack and NimBLE builds, firmware/ports/unix/bin) reached by a Bumble central over the
virtual radio (cribdev.bumbleradio). Prints figures only, per stack:

1. Connect: the central's connect (it waits for the next advertisement: Bumble's timer makes the
   100 ms interval 160 ms) and connect + service discovery + subscribe.
2. A peg's round trip: `#id peg 0 1` written, its reply back (median and p90), on an admitted
   central; and the notifications one peg brings (the reply and the `! st` event, or the brief
   `! p` with `brief 1`) at MTU 23 and 247.
3. Heap: the firmware's `health` heap (gc.mem_free, no collection forced) with one central
   connected, at start and after 100 pegs.
4. A paced link (one packet per 5 ms from 8 buffers): 100 pegs pipelined ten at a time, with
   their events, and what the stack held on the board's heap meanwhile (`health` bheld, bheap:
   btstack's copies; NimBLE refuses instead).
(The virtual link has no connection interval: a radio adds 7.5-50 ms per exchange.)

    .venv/bin/python bench/ble_real_bench.py
"""

from __future__ import annotations

import asyncio
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bumble.device import Peer

from blereal import STACKS, Nus  # tests/blereal.py
from cribboard.api import Board
from cribdev.bumbleradio import VirtualRadio

CONNECTS = 10
PEGS = 100


def _fields(line: bytes) -> dict[str, str]:
    return dict(re.findall(r"(\w+)=(\S+)", line.decode()))


async def _notifications_per_peg(nus: Nus, ident: bytes) -> int:
    before = len(nus.packets)
    await nus.request(ident + b" peg 0 1\n")
    await nus.expect(lambda line: line.startswith(b"! "))
    return len(nus.packets) - before


async def bench_stack(stack: str) -> list[tuple[str, str]]:
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
        async with await Board.open(board.virtual.port, timeout=5.0) as usb:
            await usb.set_open(True)
            nus = await Nus.open(await radio.add_central(), board)
            heap_start = _fields(await nus.request(b"#h0 health\n"))["heap"]
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
            await nus.request(b"#n1 new 121 2\n")
            trips = []
            for i in range(PEGS):
                started = time.perf_counter()
                await nus.request(b"#r%d peg 0 1\n" % i)
                trips.append(time.perf_counter() - started)
            trips.sort()
            rows.append(
                (
                    f"peg round trip ({PEGS}), median / p90",
                    f"{statistics.median(trips) * 1000:.1f} / {trips[int(len(trips) * 0.9)] * 1000:.1f} ms",
                )
            )
            heap_end = _fields(await nus.request(b"#h1 health\n"))["heap"]
            rows.append(
                ("health heap: one central, start / after pegs", f"{heap_start} / {heap_end} bytes")
            )
            await nus.close()
            await usb.set_open(False)
        rows += await _paced(radio, stack)
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
        await nus.close()
        await usb.set_open(False)
    return [
        (f"paced link: {PEGS} pegs pipelined, per peg", f"{elapsed / PEGS * 1000:.1f} ms"),
        (
            "  held by the stack at most (bheld / bheap)",
            f"{health['bheld']} notifications / {health['bheap']} bytes",
        ),
    ]


def main() -> None:
    print("\nBluetooth on the real stacks: a Bumble central, the firmware on btstack and NimBLE")
    for stack in STACKS:
        try:
            rows = asyncio.run(bench_stack(stack))
        except FileNotFoundError as error:
            print(f"   skipped: {error}")
            return
        print(f" {stack}:")
        for what, figure in rows:
            print(f"   {what:<48}{figure}")


if __name__ == "__main__":
    main()
