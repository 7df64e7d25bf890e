"""`make soak` (not part of `make test`): the protocol and the store, long and at random.

1. The state-machine test of the protocol model (tests/firmware/test_protocol_model.py) with many more
   examples than `make test` runs.
2. The fuzzer on the virtual board: a million lines (requests a client might send, the
   document's example lines mutated, noise; pipelined in writes of 1 to 30 lines, now and then
   split across writes) over raw pyserial, every line the board writes checked against the
   model of docs/protocol.md (tests/protocol_model.py). A violation is printed with the lines
   that led to it (the first few), counted, and the board and the model start afresh.
3. Power cuts on the virtual board (tests/powercut.py, the rule of tests/firmware/test_power_cut.py): at
   least 1,000 with the store's delays shortened, cuts inside saves (erases, programs: torn
   writes) included, and some at the board's own delays (1 s quiet, 5 s at most), where the
   seconds lost mean what they say.
4. The same on the emulated RP2040 running the cribboard image (tests/rp2support.py: the chip
   stopped at a save's flash operation and the power cut at a random cycle of it), and a shorter
   fuzz run there.
5. Bluetooth on the real stacks (btstack and NimBLE, over the virtual radio): hundreds of
   centrals let go on stalled links, each stack at once (bench/ble_stalls.py): never a crash,
   each let-go counted once, btstack's heap never short of what it counts as kept and whole
   after the restart that bound brings, NimBLE's heap unchanged.

It prints lines per second, violations, restores by source (saved: the newest save, backup,
fresh) and the oldest acknowledged change lost, then a summary table; it exits 1 on any
violation.

    .venv/bin/python bench/soak.py [--lines N] [--cuts N] [--rp2-cuts N] [--rp2-lines N]
                                   [--ble-stalls N] ...
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT / "tests", ROOT / "tests" / "core", ROOT / "firmware"):
    sys.path.insert(0, str(extra))

import fuzzlines
import powercut
from cribboard.virtual import VirtualBoard, VirtualControl
from cribboard.virtual.rp2board import FIRMWARE_IMAGE, RP2Board, emulator_missing, images_dir
from modelcheck import Checker, SerialWire, Violation
from protocol_model import ProtocolModel
from rp2support import CutTally, ProtocolLink, cut_during_a_save, fields

SHOWN_VIOLATIONS = 5


@dataclass
class Stage:
    name: str
    figures: list[str] = field(default_factory=list)
    violations: int = 0
    seconds: float = 0.0
    skipped: str = ""
    errors: list[str] = field(default_factory=list)  # the soak's own failures (a timeout...)


# --- the fuzzer --------------------------------------------------------------------------------


class Board:
    """A board to fuzz: started fresh (a new flash), its USB link checked by a new model."""

    def __init__(self, rp2: bool, directory: Path) -> None:
        self.rp2 = rp2
        self.directory = directory
        self.count = 0
        self.board: VirtualBoard | RP2Board | None = None
        self.checker: Checker | None = None

    def start(self) -> Checker:
        self.stop()
        self.count += 1
        flash = self.directory / f"fuzz-{self.count}.img"
        if self.rp2:
            pico = RP2Board(images_dir() / FIRMWARE_IMAGE, flash=flash, pace=0).start()
            self.board = pico
            up = ProtocolLink(pico.port)
            try:
                up.wait_up()  # the app is up: it answers
            finally:
                up.close()
        else:
            self.board = VirtualBoard(flash=flash).start()
        self.checker = Checker(ProtocolModel())
        self.checker.start_usb("usb", SerialWire(self.board.port))
        return self.checker

    def stop(self) -> None:
        if self.checker is not None:
            self.checker.close()
            self.checker = None
        if self.board is not None:
            self.board.stop()
            self.board = None


def fuzz(name: str, lines: int, seed: int, rp2: bool) -> Stage:
    stage = Stage(name)
    rng = random.Random(seed)
    started = time.monotonic()
    checked = 0
    batches = 0
    with tempfile.TemporaryDirectory(prefix="cribboard-soak-") as tmp:
        board = Board(rp2, Path(tmp))
        checker = board.start()
        try:
            while checked + checker.lines < lines:
                batches += 1
                data = fuzzlines.batch(rng, checker.model.game)
                data += b"#zz%d ping\n" % batches  # the end of the batch: nothing more came
                pieces = rng.choice((1, 1, 1, 1, 2, 3, 7))
                try:
                    checker.send("usb", data, pieces)
                except Violation as violation:
                    stage.violations += 1
                    if stage.violations <= SHOWN_VIOLATIONS:
                        print(f"{name}: VIOLATION {stage.violations}: {violation}", flush=True)
                    checked += checker.lines
                    checker = board.start()  # afresh: the board and the model
                done = checked + checker.lines
                if batches % 2000 == 0:
                    rate = done / (time.monotonic() - started)
                    print(f"{name}: {done} lines, {rate:.0f} lines/s", flush=True)
            checked += checker.lines
        except Exception as error:  # the soak's own machinery failed (a board that won't start)
            stage.errors.append(f"{type(error).__name__}: {error}")
        finally:
            board.stop()
    stage.seconds = time.monotonic() - started
    stage.figures = [
        f"{checked} lines in {batches} writes, {checked / stage.seconds:.0f} lines/s",
        f"restarts after a violation: {stage.violations}",
    ]
    return stage


# --- the model's state machine, longer ---------------------------------------------------------


def state_machine(examples: int) -> Stage:
    stage = Stage("model state machine (virtual board)")
    started = time.monotonic()
    env = dict(os.environ, CRIBBOARD_MODEL_EXAMPLES=str(examples))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"]
        + ["--timeout=7200", "tests/firmware/test_protocol_model.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    stage.seconds = time.monotonic() - started
    summary = [ln for ln in result.stdout.splitlines() if "examples," in ln]
    stage.figures = summary or ["(no figures)"]
    if result.returncode != 0:
        stage.violations = 1
        print(result.stdout[-6000:], result.stderr[-2000:], sep="\n")
    return stage


# --- power cuts --------------------------------------------------------------------------------


def virtual_cuts(cuts: int, timing: powercut.Timing, seed: int) -> Stage:
    label = "shortened" if timing == powercut.SHORT else "the board's own"
    stage = Stage(f"power cuts, virtual board ({label} store delays)")
    tally = powercut.Tally()
    started = time.monotonic()
    saved_env = {k: os.environ.get(k) for k in timing.env()}
    if timing != powercut.BOARD:
        os.environ.update(timing.env())
    with tempfile.TemporaryDirectory(prefix="cribboard-soak-") as tmp:
        image = Path(tmp) / "flash.img"
        try:
            with VirtualBoard(flash=image) as vboard, VirtualControl(vboard.control) as sim:
                link = powercut.Link(vboard.port)
                try:
                    powercut.run_cuts(
                        random.Random(seed), vboard, sim, link, image, tally, cuts, timing
                    )
                finally:
                    link.close()
        except AssertionError as violation:
            stage.violations += 1
            print(f"{stage.name}: VIOLATION: {violation}", flush=True)
        except Exception as error:  # the soak's own machinery failed: not a clean run either
            stage.errors.append(f"{type(error).__name__}: {error}")
        finally:
            for key, value in saved_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    stage.seconds = time.monotonic() - started
    tally.seconds = stage.seconds
    print(tally.text(), flush=True)
    stage.figures = [
        f"{tally.cuts} cuts (store: quiet {timing.quiet_ms} ms, at most {timing.max_ms} ms), "
        f"{tally.moves} moves",
        f"by moment: {powercut.fmt(tally.by_mode)}",
        f"cut a save short on the flash (erase or program torn): {sum(tally.cut_saves.values())}",
        f"aimed at a save's steps (the board stopped there): {powercut.fmt(tally.aimed)}",
        f"restored from: {powercut.fmt(tally.sources)} (saved: the newest save)",
        f"restored the newest acknowledged state {tally.newest}, an older one {tally.older}",
        f"oldest acknowledged change lost: {tally.lost_changes} changes back, "
        f"{tally.lost_seconds:.2f} s before the cut (worst case)",
    ]
    return stage


def rp2_cuts(cuts: int, seed: int) -> Stage:
    stage = Stage("power cuts, emulated RP2040 (cribboard image)")
    started = time.monotonic()
    tally = CutTally()
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="cribboard-soak-") as tmp:
        pico = RP2Board(images_dir() / FIRMWARE_IMAGE, flash=Path(tmp) / "flash.bin", pace=0)
        pico.start()
        link = ProtocolLink(pico.port)
        try:
            assert fields(link.wait_up())["store"] == "fresh"
            for _ in range(cuts):
                cut_during_a_save(pico, link, rng, tally, go_on=0.5)
                if tally.cuts % 100 == 0:
                    print(f"rp2 power cuts: {tally.cuts}", flush=True)
        except AssertionError as violation:
            stage.violations += 1
            print(f"{stage.name}: VIOLATION: {violation}", flush=True)
        except Exception as error:
            stage.errors.append(f"{type(error).__name__}: {error}")
        finally:
            link.close()
            pico.stop()
    stage.seconds = time.monotonic() - started
    print(tally.text(), flush=True)
    stage.figures = [
        f"{tally.cuts} cuts at a random cycle of a save's erase or program, or after it",
        f"where: {powercut.fmt(tally.where)}",
        f"restored from: {powercut.fmt(tally.sources)}; the state: {powercut.fmt(tally.restored)}",
        f"oldest acknowledged change lost: 1 move back at most, {tally.lost_seconds:.3f} s "
        "(emulated) before the cut",
    ]
    return stage


def ble_stalls(stalls: int) -> list[Stage]:
    import asyncio

    from ble_stalls import both  # bench/ble_stalls.py

    started = time.monotonic()
    try:
        results = asyncio.run(both(stalls))
    except FileNotFoundError as missing:  # no interpreter with a real stack
        return [Stage("Bluetooth, centrals let go on stalled links", skipped=str(missing))]
    except Exception as error:
        stage = Stage("Bluetooth, centrals let go on stalled links")
        stage.errors.append(f"{type(error).__name__}: {error}")
        return [stage]
    stages = []
    for result in results:
        stage = Stage(f"Bluetooth ({result.stack}), centrals let go on stalled links")
        stage.seconds = time.monotonic() - started
        stage.figures = result.figures()
        stage.violations = len(result.violations)
        for violation in result.violations:
            print(f"{stage.name}: VIOLATION: {violation}", flush=True)
        stages.append(stage)
    return stages


# --- the whole soak ----------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="fuzz lines, virtual board")
    parser.add_argument("--cuts", type=int, default=1000, help="power cuts, shortened delays")
    parser.add_argument("--board-cuts", type=int, default=100, help="power cuts, board delays")
    parser.add_argument("--examples", type=int, default=500, help="state machine examples")
    parser.add_argument("--rp2-cuts", type=int, default=1000, help="power cuts, emulated RP2040")
    parser.add_argument("--rp2-lines", type=int, default=10_000, help="fuzz lines, RP2040")
    parser.add_argument(
        "--ble-stalls", type=int, default=300, help="Bluetooth centrals let go, per stack"
    )
    parser.add_argument("--seed", type=int, default=20240521)
    args = parser.parse_args()

    started = time.monotonic()
    stages = [
        state_machine(args.examples),
        fuzz("fuzz, virtual board", args.lines, args.seed, rp2=False),
        virtual_cuts(args.cuts, powercut.SHORT, args.seed),
        virtual_cuts(args.board_cuts, powercut.BOARD, args.seed + 1),
    ]
    missing = emulator_missing()
    if missing is None:
        stages.append(rp2_cuts(args.rp2_cuts, args.seed))
        stages.append(fuzz("fuzz, emulated RP2040", args.rp2_lines, args.seed, rp2=True))
    else:
        stages.append(Stage("emulated RP2040", skipped=missing))
    stages += ble_stalls(args.ble_stalls)

    total = time.monotonic() - started
    print(f"\nsoak summary ({datetime.date.today()}, {total / 60:.1f} min)")
    print(f"{'stage':<58} {'violations':>10} {'time':>8}")
    for stage in stages:
        if stage.skipped:
            print(f"{stage.name:<58} {'skipped':>10}          {stage.skipped}")
            continue
        print(f"{stage.name:<58} {stage.violations:>10} {stage.seconds / 60:>6.1f} min")
        for figure in stage.figures:
            print(f"    {figure}")
        for error in stage.errors:
            print(f"    ERROR (the soak stopped this stage): {error}")
    violations = sum(stage.violations for stage in stages)
    errors = sum(len(stage.errors) for stage in stages)
    print(f"violations: {violations}; errors: {errors}")
    return 1 if violations or errors else 0


if __name__ == "__main__":
    sys.exit(main())
