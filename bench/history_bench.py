"""`make bench`: what the board's own history of finished games costs (protocol 1.4, `hist`).

1. Flash: the game's record (cribfw/gamerecord.py) with a full undo ring, without and with a
   full history (cribcore/history.py): the bytes each game takes, and the record's most
   against the 4 KB block it must fit in.
2. USB: the virtual board (the firmware on MicroPython's unix port, behind a pty) given a full
   history by a host (each game won with `set`, left with `new`), then the whole history read
   with `Board.history()` as the recorder reads it: pages, bytes on the wire and the time, the
   median of RUNS. Over Bluetooth it is the same pages on the NUS link (bench/ble_bench.py has
   that link's own figures).

Prints figures only: nothing here asserts speed.

    .venv/bin/python bench/history_bench.py
"""

from __future__ import annotations

import asyncio
import statistics as stat
import time
from types import SimpleNamespace

from cribboard.api import Board
from cribboard.virtual import VirtualBoard
from cribcore.history import History
from cribcore.limits import HISTORY_KEPT
from cribcore.state import UNDO_DEPTH, GameState
from cribfw.gamerecord import MAX_RECORD, encode

RUNS = 9
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


async def usb_figures() -> None:
    with VirtualBoard() as vboard:
        async with await Board.open(vboard.port, timeout=5.0) as board:
            for _ in range(HISTORY_KEPT):
                await board.set_pegs(0, 121, 120)
                await board.new_game()
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


def main() -> None:
    flash_figures()
    asyncio.run(usb_figures())


if __name__ == "__main__":
    main()
