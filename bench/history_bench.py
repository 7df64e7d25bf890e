"""`make bench`: what the board's own history of finished games costs (protocol 1.4, `hist`).

1. Flash: the game's record (cribfw/gamerecord.py) with a full undo ring, without and with a
   full history (cribcore/history.py): the bytes each game takes, and the record's most
   against the 4 KB block it must fit in.
2. USB: the virtual board (the firmware on MicroPython's unix port, behind a pty) given a full
   history by a host (each game won with `set`, left with `new`), then the whole history read
   with `Board.history()` as the recorder reads it: pages, bytes on the wire and the time, the
   median of RUNS.
3. Bluetooth: the same full history read by a central over NUS (Bumble's host on the virtual
   radio) from the board on each real stack (btstack, NimBLE in MicroPython's unix port), at
   the default MTU and at 247: notifications and the time, the median of BLE_RUNS.

Prints figures only: nothing here asserts speed.

    .venv/bin/python bench/history_bench.py
"""

from __future__ import annotations

import asyncio
import re
import statistics as stat
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from cribboard.api import Board
from cribboard.virtual import VirtualBoard
from cribcore.history import History
from cribcore.limits import HISTORY_KEPT
from cribcore.state import UNDO_DEPTH, GameState
from cribfw.gamerecord import MAX_RECORD, encode

RUNS = 9
BLE_RUNS = 5
SETTINGS = SimpleNamespace(brightness=128, budget_ma=400)  # the renderer's saved settings
BLOCK = 4096


def flash_figures() -> None:
    board = GameState()
    board.keep_history(History())
    for i in range(UNDO_DEPTH):
        board.peg(i % 2, 1)
    empty = len(encode(board, SETTINGS, 1))
    for _ in range(HISTORY_KEPT):
        board.set_pegs(0, 121, 120)
        board.new_game()
    for i in range(UNDO_DEPTH):
        board.peg(i % 2, 1)
    full = len(encode(board, SETTINGS, 1))
    print("history: flash")
    print(f"  bytes a finished game      {(full - empty) / HISTORY_KEPT:8.0f}")
    print(f"  a full history ({HISTORY_KEPT} games)  {full - empty:8d} bytes")
    print(f"  the record, full undo ring {empty:8d} bytes without, {full} with it")
    print(f"  the record's most          {MAX_RECORD:8d} bytes of a {BLOCK} byte block")


async def _fill(board: Board) -> None:
    """A full history: each game won with `set`, left with `new`."""
    for _ in range(HISTORY_KEPT):
        await board.set_pegs(0, 121, 120)
        await board.new_game()


async def usb_figures() -> None:
    with VirtualBoard() as vboard:
        async with await Board.open(vboard.port, timeout=5.0) as board:
            await _fill(board)
            pages = 0
            wire = 0
            start = 0
            while True:
                reply = await board._client.request("hist", start)
                pages += 1
                # the reply line as sent: "ok", each field and each entry, a space between
                wire += len("ok\n") + sum(len(k) + len(v) + 2 for k, v in reply.fields.items())
                wire += sum(len(word) + 1 for word in reply.words)
                start = int(reply.fields.get("next", "0"))
                if not start:
                    break
            times = []
            for _ in range(RUNS):
                began = time.perf_counter()
                history = await board.history()
                times.append(time.perf_counter() - began)
                assert history is not None and len(history.entries) == HISTORY_KEPT
    print("history: read over USB (the virtual board)")
    print(f"  {HISTORY_KEPT} games in {pages} pages, {wire} bytes of replies")
    print(f"  on Bluetooth at the default MTU: {-(-wire // 20)} notifications of 20 bytes")
    print(f"  the whole history          {stat.median(times) * 1000:8.1f} ms (median of {RUNS})")


async def _read_over_nus(nus: Any, run: int) -> int:
    """The whole history read page by page as a central reads it; the pages."""
    start, pages = 0, 0
    while True:
        reply = await nus.request(b"#h%dp%d hist %d\n" % (run, pages, start))
        pages += 1
        found = re.search(rb" next=(\d+)", reply)
        start = int(found.group(1)) if found else 0
        if not start:
            return pages


async def ble_figures() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from bumble.device import Peer

    from blereal import STACKS, Nus  # tests/blereal.py
    from cribdev.bumbleradio import VirtualRadio

    print("history: read over Bluetooth (the real stacks on the virtual radio)")
    for stack in STACKS:
        async with VirtualRadio() as radio:
            board = await radio.start_board(stack)
            async with await Board.open(board.virtual.port, timeout=5.0) as usb:
                await _fill(usb)
            await board.controller.wait_advertising(True)
            nus = await Nus.open(await radio.add_central(), board)
            try:
                for mtu in (23, 247):
                    if mtu != 23:
                        await Peer(nus.connection).request_mtu(mtu)
                    times, packets, pages = [], 0, 0
                    for run in range(BLE_RUNS):
                        before = len(nus.packets)
                        began = time.perf_counter()
                        pages = await _read_over_nus(nus, run)
                        times.append(time.perf_counter() - began)
                        packets = len(nus.packets) - before
                    print(
                        f"  {stack:8s} MTU {mtu:3d}: {pages} pages, {packets} notifications,"
                        f" {stat.median(times) * 1000:6.1f} ms (median of {BLE_RUNS})"
                    )
            finally:
                await nus.close()


def main() -> None:
    flash_figures()
    asyncio.run(usb_figures())
    asyncio.run(ble_figures())


if __name__ == "__main__":
    main()
