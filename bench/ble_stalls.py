"""`make soak` (bench/soak.py), Bluetooth: centrals let go on stalled links, by the hundred, on
both real stacks (the firmware on MicroPython's own `bluetooth`, btstack and NimBLE, over the
virtual radio: cribdev.bumbleradio).

Each round connects as many centrals as the stack takes (btstack one, NimBLE four), stops the
board's link (its controller takes no more packets) with a frame on its way to each, and waits
until the board has let every one go (docs/protocol.md section 10). Every few let-gos a central
asks `health` and the board's heap is read after a collection (the virtual board's side
channel). Violations: the interpreter died or its watchdog fired; the board stopped advertising
for good; `lost` did not count each let-go once; the heap lost more than the board counts as
kept (`bkept`); a restart that was not the board's own (btstack restarts once `bkept` reaches
KEPT_MOST) or a heap not whole after it.

    .venv/bin/python bench/ble_stalls.py [--stalls N]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "firmware"))

from blereal import STACKS, WAIT, Nus  # tests/blereal.py
from cribboard.virtual import VirtualControl
from cribdev.bumbleradio import RadioBoard, VirtualRadio
from cribfw.blelink import COPY_EXTRA, KEPT_MOST, QUEUED_MAX

MOST = {"btstack": 1, "nimble": 4}
HEAP_NOISE = 512  # how far the heap after a collection moves by itself (tests/ble/test_ble_real.py)
CHECK_EVERY = {"btstack": 2, "nimble": 12}  # let-gos between two readings of health and heap
COPY_MOST = 244 + COPY_EXTRA + 16  # what one queued copy may count at most


@dataclass
class Result:
    stack: str
    stalls: int = 0
    rounds: int = 0
    seconds: float = 0.0
    restarts: int = 0
    heap_low: int = 0  # the lowest heap read (after a collection)
    heap_start: int = 0
    kept_most: int = 0
    violations: list[str] = field(default_factory=list)

    def figures(self) -> list[str]:
        per = self.seconds / max(self.stalls, 1)
        return [
            f"{self.stack}: {self.stalls} centrals let go ({MOST[self.stack]} at a time, "
            f"{self.rounds} rounds), {per:.1f} s each",
            f"  heap after a collection: {self.heap_start} at the start, {self.heap_low} lowest; "
            f"bkept at most {self.kept_most}; restarts (the board's own) {self.restarts}",
        ]


class Stopped(Exception):
    """The board stopped advertising: the rest of the stack's let-gos are given up."""


class _Deaths(logging.Handler):
    """The launcher's word that the interpreter died (a crash, not a restart asked for)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "died" in record.getMessage():
            self.records.append(record.getMessage())


def _fields(line: bytes) -> dict[str, str]:
    return dict(re.findall(r"(\w+)=(\S+)", line.decode()))


class _Run:
    """One stack's board on its own radio, and what was read of it since its last boot."""

    def __init__(self, radio: VirtualRadio, board: RadioBoard, result: Result) -> None:
        self.radio = radio
        self.board = board
        self.result = result
        self.first: dict[str, str] = {}  # health at the boot's baseline
        self.last: dict[str, str] = {}  # health at the last check
        self.heap0 = 0  # the heap at the boot's baseline
        self.in_boot = 0  # let-gos since the boot's baseline

    async def open_one(self) -> Nus:
        try:
            await asyncio.wait_for(self.board.controller.wait_advertising(True), WAIT)
        except TimeoutError:
            console = self.board.virtual.recent_output()[-400:]
            raise Stopped(f"no advertising for {WAIT:.0f} s; console: {console!r}") from None
        return await Nus.open(await self.radio.add_central(), self.board)

    async def heap(self) -> int:
        with VirtualControl(self.board.control) as sim:
            return (await asyncio.to_thread(sim.heap))["free"]

    async def health(self) -> dict[str, str]:
        nus = await self.open_one()
        try:
            await nus.request(b"#f0 frame\n")  # (every reply made once)
            return _fields(await nus.request(b"#h0 health\n"))
        finally:
            await nus.close()

    async def baseline(self) -> None:
        """Every slot taken once (its queue is made then), then health and the heap."""
        warm = [await self.open_one() for _ in range(MOST[self.result.stack])]
        for nus in warm:
            await nus.request(b"#f0 frame\n")
        for nus in warm:
            await nus.close()
        self.first = self.last = await self.health()
        self.heap0 = await self.heap()
        self.in_boot = 0

    async def round(self, count: int) -> None:
        """`count` centrals, their link stopped with a frame on its way: each let go."""
        sessions = [await self.open_one() for _ in range(count)]
        controller = self.board.controller
        controller.stall(True)
        try:
            for nus in sessions:
                await nus.write(b"#f1 frame\n")
            for nus in sessions:
                await asyncio.wait_for(asyncio.shield(nus.gone), 3 * WAIT)
        finally:
            controller.stall(False)
            for nus in sessions:
                await nus.close()
        self.result.stalls += count
        self.result.rounds += 1
        self.in_boot += count

    async def restarted(self) -> None:
        """The board restarted: its own only once what it keeps neared its bound at the last
        check (a reading taken since may be of the new boot: not used)."""
        result = self.result
        result.restarts += 1
        near = KEPT_MOST - (CHECK_EVERY[result.stack] + 2) * QUEUED_MAX * COPY_MOST
        if result.stack != "btstack" or int(self.last["bkept"]) < near:
            result.violations.append(
                f"a restart after {result.stalls} let-gos, bkept {self.last['bkept']} at the "
                "last check (not the board's own)"
            )
        await self.baseline()
        result.heap_low = min(result.heap_low, self.heap0)
        if self.heap0 < result.heap_start - HEAP_NOISE:
            result.violations.append(f"after a restart the heap is {self.heap0}")

    def check(self, reading: dict[str, str], heap: int) -> None:
        result = self.result
        self.last = reading
        result.heap_low = min(result.heap_low, heap)
        result.kept_most = max(result.kept_most, int(reading["bkept"]))
        lost = int(reading["lost"]) - int(self.first["lost"])
        kept = int(reading["bkept"]) - int(self.first["bkept"])
        if lost != self.in_boot:
            result.violations.append(f"lost {lost} after {self.in_boot} let-gos")
        if self.heap0 - heap > kept + HEAP_NOISE:
            result.violations.append(f"heap lost {self.heap0 - heap}, counted {kept}")


async def let_go(stack: str, stalls: int, progress: bool = True) -> Result:
    """`stalls` centrals let go on stalled links, on a board on `stack`."""
    result = Result(stack)
    deaths = _Deaths()
    logging.getLogger("cribboard.virtual").addHandler(deaths)
    started = time.monotonic()
    try:
        async with VirtualRadio() as radio:
            board = await radio.start_board(stack, pace_ms=5, acl_buffers=8)
            run = _Run(radio, board, result)
            try:
                await run.baseline()
                result.heap_start = result.heap_low = run.heap0
                boots = board.virtual.boots
                since = 0  # let-gos since the last check
                while result.stalls < stalls:
                    await run.round(min(MOST[stack], stalls - result.stalls))
                    since += MOST[stack]
                    reading = None
                    if since >= CHECK_EVERY[stack] or result.stalls >= stalls:
                        reading, heap = await run.health(), await run.heap()
                        since = 0
                    if board.virtual.boots != boots:
                        boots = board.virtual.boots
                        await run.restarted()
                    elif reading is not None:
                        run.check(reading, heap)
                        if progress:
                            print(
                                f"{stack}: {result.stalls} let go, heap {heap}, bkept "
                                f"{reading['bkept']}, restarts {result.restarts}",
                                flush=True,
                            )
            except Stopped as stopped:
                result.violations.append(f"after {result.stalls} let-gos: {stopped}")
            if deaths.records or board.virtual.watchdog_resets:
                result.violations.append(
                    f"the interpreter died {len(deaths.records)} times, watchdog resets "
                    f"{board.virtual.watchdog_resets}"
                )
    finally:
        logging.getLogger("cribboard.virtual").removeHandler(deaths)
    result.seconds = time.monotonic() - started
    return result


async def both(stalls: int, stacks: tuple[str, ...] = STACKS) -> list[Result]:
    """The stacks at once (each its own radio and board)."""
    return list(await asyncio.gather(*(let_go(stack, stalls) for stack in stacks)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stalls", type=int, default=300, help="centrals let go per stack")
    parser.add_argument("--stack", choices=STACKS, help="one stack only")
    args = parser.parse_args(argv)
    results = asyncio.run(both(args.stalls, (args.stack,) if args.stack else STACKS))
    for result in results:
        for line in result.figures():
            print(line)
        for violation in result.violations:
            print(f"  VIOLATION: {violation}")
    return 1 if any(result.violations for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
