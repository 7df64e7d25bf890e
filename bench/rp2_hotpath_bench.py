"""The firmware's hot path on the emulated RP2040, in emulated cycles: from a peg to the light.

Runs the cribboard image (firmware/ports/rp2/images/, or --image) on the emulated Pico at
125 MHz with the harness's trace on (cribboard.virtual.rp2board.RP2Board.trace): every figure
is emulated time from the moment the host's bytes reach the chip's USB port to the USB packet
that completes the reply (or the event), or to the LED frame's first and last bit on GPIO 16.
Requests go one at a time at random 20-80 ms gaps; figures are medians unless said otherwise.
The floor, measured in the same run: MicroPython's stock image echoing one line
(`sys.stdout.write(sys.stdin.readline())`), the same length as a peg.

Then the unix-port virtual board: a request's round trip against a bare echo loop on the same
pty (host clock, not emulated cycles). And, when the build's firmware.elf of the image is at
hand (build/rp2/out/..., from `make rp2-images`), a cycle-stamped trace of one peg through
the USB stack, the line reader, the dispatcher, the reply, the event, the renderer and the wire.

Prints each target, the measured value in cycles and in ms at 125 MHz, the echo and the
ratio; nothing here asserts speed.

    .venv/bin/python bench/rp2_hotpath_bench.py [--image PATH] [--elf PATH] [--pegs N]
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import random
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import serial

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from cribboard.virtual.rp2board import (
    FIRMWARE_IMAGE,
    NANOS_PER_CYCLE,
    STOCK_IMAGE,
    FlashSymbols,
    RP2Board,
    emulator_missing,
    images_dir,
)
from cribcore.profiles import PROFILES
from rp2support import BANNER, RawRepl, deliver, first_bit, read_until  # tests/rp2support.py

MHZ = 1000 // NANOS_PER_CYCLE  # 125
GAP_S = (0.02, 0.08)  # between requests, at random
RESET_NS = 50_000  # a low gap this long ends an LED frame
WIRE_NS = 121 * 24 * 1250  # a frame of 121 LEDs on the wire
ECHO_RUNS = 60
RUNS = 60
PIPELINED = 20
PIPELINED_BURSTS = 15  # bursts of PIPELINED pegs (each one's figures depend on where it falls in
# the USB frames: a reply that would start in a frame's last 200 us waits for the next, TinyUSB's
# workaround for the RP2040's erratum E15)
ANIMATED_PINGS = 60
PRESSES = 20
# A peg that arrives while an LED frame is on the wire: the moments (after the frame's first bit)
# at which it reaches the chip, each in a trial of its own. Before it, another peg came 0.1 ms
# into the wire and was answered (its frame has to wait for the wire): what a host that writes
# each peg as soon as the last reply is read does.
WIRE_MOMENTS_MS = (1.6, 2.0, 2.4, 2.8, 3.2, 3.5)
FIRST_PEG_AT_MS = 0.1
# Trials of each moment, each after a random 20-80 ms gap: where the moment falls in the USB
# frames (TinyUSB's workaround for the RP2040's erratum E15) and whether a task's tick (the
# render task's 20 ms, the store's 50 ms poll) is under way changes from one to the next.
WIRE_TRIALS = 7
STREAM_PEGS = 200  # pegs back to back: each written as soon as the last reply was read
# How long the board was left alone before each stream: a moment (as after any request); just
# past the store's quiet second, when its save is made and its blocks are erased ahead, a poll
# (50 ms) apart (an erase begun before the stream may still hold its first peg); later.
STREAM_QUIET_S = (0.05, 1.1, 1.2)
ERASE_NS = 45_000_000  # a 4 KB block's erase (the harness times it as the Pico's flash does)
ECHO_CODE = "import sys\nwhile True:\n    sys.stdout.write(sys.stdin.readline())\n"
PEG_LINE_LEN = len(b"#p123 peg 0 1\n")
LATEST = 1 << 50  # as `since` of RP2Board.edges: no edges, just the index of the next


def ms(ns: float) -> str:
    return f"{ns / NANOS_PER_CYCLE:>10,.0f} cycles = {ns / 1e6:6.2f} ms"


def median(values: list[int]) -> float:
    return float(statistics.median(values)) if values else float("nan")


@dataclass
class Timed:
    """One request's times (emulated ns from its bytes reaching the chip)."""

    reply: int
    event: int | None = None
    frame_start: int | None = None
    frame_end: int | None = None


class Session:
    """A serial link to an emulated board with the trace on: send lines, time what comes back."""

    def __init__(self, pico: RP2Board, probes: dict[str, int] | None = None) -> None:
        self.pico = pico
        self.link = serial.Serial(pico.port, timeout=10)
        self.trace_next = 0
        pico.trace(True, probes)
        self.entries: list[tuple[int, str, bytes]] = []  # of the last exchange

    def close(self) -> None:
        self.pico.trace(False)
        self.link.close()

    def wait_up(self) -> None:
        """Wait until the app answers (it starts after the boot)."""
        self.link.write(b"#up ping\n")
        while not self.link.readline().startswith(b"#up ok"):
            self.link.write(b"#up ping\n")

    def warm_up(self, pegs: int) -> None:
        """A few pegs at the usual gaps, each awaited to its LED frame."""
        for run in range(pegs):
            self.gap()
            self.request(b"#w%d peg 0 1\n" % run, event=True, frame=True)

    def _read_lines(self, needs: list[bytes]) -> list[bytes]:
        """Lines read until one starting with each of `needs` has come, in that order."""
        lines: list[bytes] = []
        left = list(needs)
        while left:
            line = self.link.readline()
            if not line.endswith(b"\n"):
                raise TimeoutError(f"no {left[0]!r}; got {lines!r} {line!r}")
            lines.append(line)
            if line.startswith(left[0]):
                left.pop(0)
        return lines

    def exchange(
        self, data: bytes, needs: list[bytes], frame: bool = False
    ) -> tuple[int, list[tuple[int, bytes]], tuple[int, int] | None]:
        """Write `data`, read lines until one starting with each of `needs` came; returns
        the time its bytes reached the chip, each line read with the time its last packet
        reached the host, and (with `frame`) the first LED frame's first and last bit after."""
        edges_from = self.pico.edges(16, since=LATEST).next if frame else 0
        self.link.write(data)
        self._read_lines(needs)
        frame_times = self._wait_frame(edges_from) if frame else None
        entries, self.trace_next = self.pico.trace_log(self.trace_next)
        self.entries = entries
        start = next(nanos for nanos, what, _ in entries if what == "usb_out")
        lines: list[tuple[int, bytes]] = []
        pending = b""
        for nanos, what, chunk in entries:
            if what != "usb_in" or nanos < start:
                continue
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                lines.append((nanos - start, line + b"\n"))
        if frame_times is not None:
            frame_times = (frame_times[0] - start, frame_times[1] - start)
        return start, lines, frame_times

    def _wait_frame(self, since: int, timeout_s: float = 20.0) -> tuple[int, int] | None:
        """The first LED frame in the edges from index `since`, once it is whole."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            now = self.pico.clock().nanos  # (first: the edges read next reach at least this far)
            edges = self.pico.edges(16, since=since).edges
            rises = [i for i, (_, level) in enumerate(edges) if level == 1]
            if rises:
                first = rises[0]
                last_fall = None
                for i in range(first, len(edges)):
                    nanos, level = edges[i]
                    if level == 0:
                        following = edges[i + 1][0] if i + 1 < len(edges) else now
                        if following - nanos >= RESET_NS:
                            return edges[first][0], nanos
                        last_fall = nanos
                del last_fall
            time.sleep(0.01)
        return None

    def request(self, line: bytes, event: bool = False, frame: bool = False) -> Timed:
        """One request with an id: its reply, its `! st` event and its LED frame."""
        rid = line.split()[0]
        needs = [rid + b" "] + ([b"! st "] if event else [])
        _, lines, frame_times = self.exchange(line, needs, frame)
        reply = next(t for t, text in lines if text.startswith(rid + b" "))
        timed = Timed(reply)
        if event:
            timed.event = next(t for t, text in lines if text.startswith(b"! st ") and t >= reply)
        if frame_times is not None:
            timed.frame_start, timed.frame_end = frame_times
        return timed

    def gap(self) -> None:
        """A random 20-80 ms of emulated time (the board keeps real time at most)."""
        until = self.pico.clock().nanos + random.uniform(*GAP_S) * 1e9
        while self.pico.clock().nanos < until:
            time.sleep(0.005)


# --- the bare echo ----------------------------------------------------------------------------


def echo_floor(scratch: Path) -> list[int]:
    """MicroPython's stock image echoing a peg-long line: emulated ns, request to echo."""
    with RP2Board(images_dir() / STOCK_IMAGE, flash=scratch / "echo.flash") as pico:
        link = serial.Serial(pico.port, timeout=0.2)
        read_until(link, BANNER)
        link.close()
        repl = RawRepl(pico.port)
        repl.enter()
        repl.start(ECHO_CODE)
        repl.link.close()
        session = Session(pico)
        line = b"e" * (PEG_LINE_LEN - 1) + b"\n"
        times = []
        for run in range(ECHO_RUNS + 5):
            session.gap()
            _, lines, _ = session.exchange(line, [line.rstrip()])
            if run >= 5:  # warmed up
                times.append(next(t for t, text in lines if text.startswith(line.rstrip())))
        session.close()
        return times


# --- the cribboard firmware ---------------------------------------------------------------------


@dataclass
class Figures:
    echo: list[int]
    peg: list[Timed]
    pipelined: list[list[int]]  # of each burst: reply i's time after its bytes reached the chip
    reads: dict[str, list[int]]
    animated: list[int]
    # of each animated ping: a flash erase began after the last ping's reply, before this one's
    animated_erasing: list[bool]
    presses: list[tuple[int, int, int | None]]  # (frame start - debounce end, - event, - read)
    frame_checked: int
    # per moment (ns after the frame's first bit): (the first peg's reply, the measured peg's)
    during_wire: list[tuple[int, int, int]] = field(default_factory=list)
    streams: list[Stream] = field(default_factory=list)


@dataclass
class Stream:
    """Pegs back to back: each reply's time, and the flash operations that began while they
    came (ns after the first peg reached the chip, kind), or in the quiet just before."""

    quiet_s: float
    replies: list[int]
    flash_ops: list[tuple[int, str]]


def pipelined_pegs(tag: bytes) -> tuple[bytes, list[bytes]]:
    """PIPELINED pegs in one write, ids `tag`0, `tag`1, ...; and the replies' starts to wait for."""
    burst = b"".join(b"%s%d peg %d 1\n" % (tag, i, i % 2) for i in range(PIPELINED))
    return burst, [b"%s%d " % (tag, i) for i in range(PIPELINED)]


def firmware_figures(image: Path, scratch: Path, pegs: int, probes: dict[str, int]) -> Figures:
    figures = Figures([], [], [], {}, [], [], [], 0)
    symbols = FlashSymbols.for_image(image)  # (in the image's provenance: no ELF needed)
    probes = {**probes, "flash_erase": symbols.erase, "flash_program": symbols.program}
    with RP2Board(image, flash=scratch / "fw.flash") as pico:
        session = Session(pico, probes)
        session.wait_up()
        session.exchange(b"#n new 121 2\n", [b"#n ", b"! st "])
        for n, (verb, key) in enumerate(
            (
                (b"ping", "ping"),
                (b"st", "st"),
                (b"hello", "hello"),
                (b"health", "health"),
                (b"frame", "frame"),
            )
        ):
            times = []
            for run in range(RUNS):
                session.gap()
                times.append(session.request(b"#r%d%d %s\n" % (n, run, verb)).reply)
            figures.reads[key] = times
        for run in range(pegs):
            session.gap()
            figures.peg.append(
                session.request(b"#p%d peg %d 1\n" % (run, run % 2), event=True, frame=True)
            )
        # (a new game: the pegs so far and the trials' would end one, and a won game's win
        # hole pulses, a frame every 20 ms)
        session.exchange(b"#v new\n", [b"#v ", b"! st "])
        figures.during_wire = pegs_during_the_wire(session)
        for n, quiet_s in enumerate(STREAM_QUIET_S):
            figures.streams.append(back_to_back(session, quiet_s, b"#%c" % (83 + n)))
        # The preview blinks: a frame every 20 ms while pings come.
        session.exchange(b"#a pend 0 5\n", [b"#a ", b"! st "])
        times = []
        for run in range(ANIMATED_PINGS):
            session.gap()
            times.append(session.request(b"#b%d ping\n" % run).reply)
            erasing = any(what == "flash_erase" for _, what, _ in session.entries)
            figures.animated_erasing.append(erasing)
        figures.animated = times
        session.exchange(b"#c pend 0 0\n", [b"#c ", b"! st "])
        try:
            figures.presses = button_presses(session)
        except (RuntimeError, TimeoutError) as error:  # reported with the figures
            print(f"   (the button presses failed: {error})")
        for run in range(PIPELINED_BURSTS):
            # (a new game first: 15 bursts of 20 points would end one; the bursts come last, so the
            # saves of their games fall after the other figures)
            session.exchange(b"#y%d new\n" % run, [b"#y%d " % run, b"! st "])
            session.gap()
            # (each burst its own ids, of the same length: #a0..#a19, #b0.., so none is a resend)
            tag = b"#%c" % (97 + run)
            _, lines, _ = session.exchange(*pipelined_pegs(tag))
            figures.pipelined.append([t for t, text in lines if text.startswith(tag)])
        session.close()
    return figures


def button_presses(session: Session) -> list[tuple[int, int, int | None]]:
    """A+ pressed (no bounce), held 80 ms: its frame's first bit after the debounce's end (the
    press + 20 ms), after the `! st` event the press sent, and after the pin read that took it
    (with probes)."""
    pico = session.pico
    pin = PROFILES["pico"].buttons["A+"]
    debounce_ns = 20 * 1_000_000  # cribfw.buttons.Button.DEBOUNCE_MS
    results = []
    session.exchange(b"#g new 121 2\n", [b"#g ", b"! st "])  # a fresh game for the presses
    for run in range(PRESSES):
        session.gap()
        since = pico.edges(16, since=LATEST).next
        pico.press(pin, ms=80)
        session._read_lines([b"! st "])  # the press's event (a tap's `! btn` may come first)
        frame = session._wait_frame(since)
        entries, session.trace_next = pico.trace_log(session.trace_next)
        press = next(n for n, what, _ in entries if what == "press")
        event = next(n for n, what, _ in entries if what == "usb_in" and n > press)
        if frame is None:
            raise RuntimeError("no frame after the press")
        polls = [n for n, what, _ in entries if what == "pin_value" and n < frame[0]]
        poll = None
        if polls:
            # The read that took the press: the start of the last cluster of pin reads (one
            # read since the buttons task sleeps between edges; seven when it polled them all).
            poll = polls[-1]
            for n in reversed(polls):
                if poll - n > 500_000:
                    break
                poll = n
        results.append(
            (
                frame[0] - (press + debounce_ns),
                frame[0] - event,
                frame[0] - poll if poll is not None else None,
            )
        )
        while pico.pin(pin)["pressed"]:
            time.sleep(0.02)
        session.exchange(b"#z%d pend 0 0\n" % run, [b"#z%d " % run, b"! st "])
    return results


# --- a peg while a frame is on the wire; pegs back to back ---------------------------------------


def in_lines(entries: list[tuple[int, str, bytes]]) -> list[tuple[int, bytes]]:
    """The lines the chip sent, each with the time its last packet reached the host."""
    lines: list[tuple[int, bytes]] = []
    pending = b""
    for nanos, what, chunk in entries:
        if what != "usb_in":
            continue
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            lines.append((nanos, line))
    return lines


def reply_after(entries: list[tuple[int, str, bytes]], rid: bytes) -> int:
    """From request `rid`'s bytes reaching the chip to its reply reaching the host (ns)."""
    sent = next(
        nanos
        for nanos, what, chunk in entries
        if what == "usb_out" and chunk.startswith(rid + b" ")
    )
    return next(nanos for nanos, line in in_lines(entries) if line.startswith(rid + b" ")) - sent


def pegs_during_the_wire(session: Session) -> list[tuple[int, int, int]]:
    """A peg at each of WIRE_MOMENTS_MS into an LED frame's wire, at exactly that emulated
    moment: the chip halted, the peg written, the chip resumed. The frame is a quiet peg's;
    another peg came FIRST_PEG_AT_MS into it and was answered before the measured one came (so
    a change waits for the wire to be free). Returns (moment, the first peg's reply, the
    measured peg's reply) in ns."""
    pico = session.pico
    results = []
    for n, moment in enumerate(m for m in WIRE_MOMENTS_MS for _ in range(WIRE_TRIALS)):
        session.gap()
        since = pico.edges(16, since=LATEST).next
        start = pico.halt()
        quiet, first, measured = b"#wa%d" % n, b"#wb%d" % n, b"#wc%d" % n
        deliver(pico, session.link, quiet + b" peg 0 1\n", session.trace_next)
        bit = first_bit(pico, since, start.cycles)
        pico.run_until(bit + round(FIRST_PEG_AT_MS * 1e6) // NANOS_PER_CYCLE)
        deliver(pico, session.link, first + b" peg 1 1\n", session.trace_next)
        pico.run_until(bit + round(moment * 1e6) // NANOS_PER_CYCLE)
        deliver(pico, session.link, measured + b" peg 0 1\n", session.trace_next)
        pico.resume()
        session._read_lines([quiet + b" ", first + b" ", measured + b" "])
        entries, session.trace_next = pico.trace_log(session.trace_next)
        results.append(
            (round(moment * 1e6), reply_after(entries, first), reply_after(entries, measured))
        )
    return results


def back_to_back(session: Session, quiet_s: float, tag: bytes) -> Stream:
    """STREAM_PEGS pegs, each written as soon as the last reply was read, after a new game and
    `quiet_s` (emulated) with nothing asked."""
    pico = session.pico
    session.exchange(tag + b"n new\n", [tag + b"n ", b"! st "])
    quiet_from = pico.clock().nanos
    while pico.clock().nanos < quiet_from + quiet_s * 1e9:
        time.sleep(0.005)
    ids = [tag + b"%d" % i for i in range(STREAM_PEGS)]
    for i, rid in enumerate(ids):
        session.link.write(rid + b" peg %d 1\n" % (i % 2))
        while True:
            line = session.link.readline()
            if not line.endswith(b"\n"):
                raise TimeoutError(f"no reply to {rid!r}")
            if line.startswith(rid + b" "):
                break
    entries, session.trace_next = pico.trace_log(session.trace_next)
    start = next(
        nanos
        for nanos, what, chunk in entries
        if what == "usb_out" and chunk.startswith(ids[0] + b" ")
    )
    last = max(nanos for nanos, line in in_lines(entries) if line.startswith(ids[-1] + b" "))
    ops = [
        (nanos - start, what.removeprefix("flash_"))
        for nanos, what, _ in entries
        if what in ("flash_erase", "flash_program") and quiet_from <= nanos <= last
    ]
    return Stream(quiet_s, [reply_after(entries, rid) for rid in ids], ops)


# --- the trace of one peg -----------------------------------------------------------------------

PROBES = {
    # name in the trace: symbol in firmware.elf
    "usb_irq": "dcd_rp2040_irq",
    "cdc_rx": "tud_cdc_rx_cb",
    "poll_wake": "poll_poll_internal",
    "stdin_read": "mp_hal_stdin_rx_chr",
    "stdin_line": "cribio_read_ready",
    "stdout_write": "mp_hal_stdout_tx_strn",
    "gc_alloc": "gc_alloc",
    "gc_collect": "gc_collect",
    "py_call": "fun_bc_call",
    "viper_call": "fun_viper_call",
    "bitstream": "machine_bitstream_high_low",
    "dma_config": "rp2_dma_config",
    "pin_value": "machine_pin_value",
    "flash_erase": "flash_range_erase",
}


def probe_addresses(elf: Path) -> dict[str, int]:
    output = subprocess.run(
        ["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    by_symbol = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            by_symbol.setdefault(parts[2], int(parts[0], 16) & ~1)
    return {name: by_symbol[symbol] for name, symbol in PROBES.items() if symbol in by_symbol}


def matching_elf(image: Path, elf: Path | None) -> Path | None:
    """The build's firmware.elf of `image` (its firmware.bin beside it has the image's digest)."""
    record = json.loads(Path(f"{image}.json").read_text())
    candidate = (
        elf or ROOT / "build" / "rp2" / "out" / image.name.removesuffix(".uf2") / "firmware.elf"
    )
    binary = candidate.with_name("firmware.bin")
    if not candidate.is_file() or not binary.is_file():
        return None
    if hashlib.sha256(binary.read_bytes()).hexdigest() != record["firmware_bin"]["sha256"]:
        return None
    return candidate


def print_peg_trace(image: Path, scratch: Path, probes: dict[str, int]) -> None:
    """One peg, cycle-stamped: each run of the same probe collapsed into first time and count."""
    with RP2Board(image, flash=scratch / "trace.flash") as pico:
        session = Session(pico, probes)
        session.wait_up()
        session.warm_up(5)
        session.gap()
        since = pico.edges(16, since=LATEST).next
        timed = session.request(b"#t1 peg 1 2\n", event=True, frame=True)
        entries = session.entries
        edges = pico.edges(16, since=since).edges
        session.close()
    start = next(n for n, what, _ in entries if what == "usb_out")
    rows: list[list[object]] = []
    for nanos, what, data in entries:
        if nanos < start:
            continue
        label = what if what not in ("usb_in", "usb_out") else f"{what} {data!r}"
        if rows and rows[-1][1] == label and what not in ("usb_in", "usb_out"):
            rows[-1][2] = int(str(rows[-1][2])) + 1
            continue
        rows.append([nanos - start, label, 1])
    if edges:
        rows.append([edges[0][0] - start, "GPIO 16: the frame's first bit", 1])
    if timed.frame_end is not None:
        rows.append([timed.frame_end, "GPIO 16: the frame's last bit", 1])
    rows.sort(key=lambda row: int(str(row[0])))
    counts: dict[str, int] = {}
    for nanos, what, _ in entries:
        if nanos >= start and what not in ("usb_in", "usb_out"):
            counts[what] = counts.get(what, 0) + 1
    print(
        "\n   one peg, cycle-stamped (cycles after its bytes reached the chip; x N: N hits in a row)"
    )
    for nanos, label, count in rows[:80]:
        suffix = f" x {count}" if int(str(count)) > 1 else ""
        print(f"   {int(str(nanos)) // NANOS_PER_CYCLE:>9,}  {label}{suffix}")
    if len(rows) > 80:
        print(f"   ... {len(rows) - 80} more")
    print(
        "   hits from the request to the frame's end: "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
    )


PROFILED_PEGS = 30


def function_table(elf: Path) -> tuple[list[int], list[tuple[int, int, str]]]:
    """The ELF's functions sorted by address: (starts, [(start, size, name)])."""
    output = subprocess.run(
        ["arm-none-eabi-nm", "-n", "-S", str(elf)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    functions = []
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            functions.append((int(parts[0], 16) & ~1, int(parts[1], 16), parts[3]))
    return [start for start, _, _ in functions], functions


def by_function(elf: Path, cycles: dict[int, int]) -> dict[str, int]:
    """Cycles by instruction address summed by the function they are in."""
    starts, functions = function_table(elf)
    totals: dict[str, int] = {}
    for address, count in cycles.items():
        i = bisect.bisect_right(starts, address) - 1
        inside = i >= 0 and address < functions[i][0] + max(functions[i][1], 2)
        name = functions[i][2] if inside else "(outside any function)"
        totals[name] = totals.get(name, 0) + count
    return totals


def print_peg_profile(image: Path, scratch: Path, elf: Path, top: int = 25) -> None:
    """Where a peg's cycles go, by C function: the core's cycles while pegs come at the usual
    gaps (reply, event and frame awaited), less those of as long a time with no request (the
    render and button tasks' share)."""
    with RP2Board(image, flash=scratch / "profile.flash") as pico:
        session = Session(pico)
        session.wait_up()
        session.warm_up(3)
        started = pico.clock().nanos
        pico.profile(True)
        for run in range(PROFILED_PEGS):
            session.gap()
            session.request(b"#f%d peg %d 1\n" % (run, run % 2), event=True, frame=True)
        busy = pico.profile_log()
        ended = pico.clock().nanos
        pico.profile(True)
        while pico.clock().nanos < ended + (ended - started):
            time.sleep(0.01)
        idle = pico.profile_log()
        idle_ns = pico.clock().nanos - ended
        pico.profile(False)
        session.close()
    share = (ended - started) / idle_ns
    busy_by, idle_by = by_function(elf, busy), by_function(elf, idle)
    net = {
        name: (busy_by.get(name, 0) - idle_by.get(name, 0) * share) / PROFILED_PEGS
        for name in set(busy_by) | set(idle_by)
    }
    total = sum(net.values())
    print(
        f"\n   where a peg's cycles go, by C function ({PROFILED_PEGS} pegs; the idle tasks' "
        f"share of the same time taken out): {total:,.0f} cycles a peg"
    )
    for name, cycles in sorted(net.items(), key=lambda item: -item[1])[:top]:
        print(f"   {cycles:>9,.0f}  {100 * cycles / total:5.1f}%  {name}")
    idle_ms = idle_ns / 1e6
    print(
        f"   with no request, the tasks (render tick, buttons) take "
        f"{sum(idle.values()) / idle_ms:,.0f} cycles a ms "
        f"({100 * sum(idle.values()) / idle_ms / (1e6 / NANOS_PER_CYCLE):.1f}% of the core)"
    )


def qstr_names(build: Path) -> list[str]:
    """The image's interned names (qstrs) by number, from its build directory: MicroPython's
    own pool (genhdr/qstrdefs.generated.h: QDEF0 entries, then QDEF1), then the frozen
    modules' pool (frozen_content.c)."""
    first: list[str] = []
    second: list[str] = []
    for line in (build / "genhdr" / "qstrdefs.generated.h").read_text().splitlines():
        found = re.match(r'QDEF([01])\(\w+, \d+, \d+, "((?:[^"\\]|\\.)*)"\)', line)
        if found:
            (first if found.group(1) == "0" else second).append(found.group(2))
    frozen = (build / "frozen_content.c").read_text()
    pool = frozen.index("mp_qstr_frozen_const_pool = {")
    strings = frozen.index("{", frozen.index("(qstr_len_t *)", pool)) + 1
    listed = frozen[strings : frozen.index("};", strings)]
    return first + second + re.findall(r'^\s*"((?:[^"\\]|\\.)*)",\s*$', listed, re.M)


def print_lookups(image: Path, scratch: Path, elf: Path, top: int = 12) -> None:
    """Name lookups (MicroPython's mp_map_lookup: an instance's attribute, a class's method, a
    module's global) during a burst of pipelined pegs, by the name looked up: each costs about
    340 cycles on the chip with the division and the attribute code around it."""
    starts, functions = function_table(elf)
    entry = {name: start for start, _, name in functions}
    build = elf.parent
    if "mp_map_lookup" not in entry or not (build / "frozen_content.c").exists():
        print("   (the name lookups need the image's build directory)")
        return
    names = qstr_names(build)
    with RP2Board(image, flash=scratch / "lookups.flash") as pico:
        session = Session(pico, {"lookup+": entry["mp_map_lookup"]})
        session.wait_up()
        session.warm_up(5)
        session.gap()
        _, lines, _ = session.exchange(*pipelined_pegs(b"#k"))
        entries = session.entries
        session.close()
    start = next(nanos for nanos, what, _ in entries if what == "usb_out")
    end = start + max(nanos for nanos, text in lines if text.startswith(b"#k"))
    counts: dict[str, int] = {}
    for nanos, what, data in entries:
        if what == "lookup+" and start <= nanos <= end:
            key = struct.unpack("<5I", data)[1]  # (map, key, ...): a name is a qstr, (q << 3) | 2
            name = names[key >> 3] if key & 7 == 2 and key >> 3 < len(names) else "(not a name)"
            counts[name] = counts.get(name, 0) + 1
    total = sum(counts.values())
    print(
        f"\n   name lookups (mp_map_lookup) while {PIPELINED} pipelined pegs are answered: "
        f"{total / PIPELINED:.1f} a peg; the most looked up:"
    )
    ranked = sorted(counts.items(), key=lambda item: -item[1])[:top]
    print("   " + ", ".join(f"{name} {count / PIPELINED:.1f}" for name, count in ranked))


# --- the unix-port virtual board ------------------------------------------------------------


def virtual_board_ratio(count: int = 400, ble: bool = True) -> tuple[float, float]:
    """Median round trips (ns, host clock) of `#ID ping` to the virtual board (with or without
    its simulated Bluetooth radio) and of a bare echo loop on the same pty path, taken
    alternately."""
    from cribboard.virtual import VirtualBoard
    from link_bench import SWITCH_INTERVAL, Ids, RawLink, raw_echo, raw_ping, write_echo

    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)  # the relay thread shares this process's GIL
    ids = Ids()
    try:
        with (
            tempfile.TemporaryDirectory(prefix="cribboard-echo-") as tmp,
            VirtualBoard(ble=ble) as vb,
            VirtualBoard(firmware=write_echo(tmp)) as echo_vb,
        ):
            link, echo_link = RawLink(vb.port), RawLink(echo_vb.port)
            try:
                line = b"#" + b"e" * (len(f"#{ids()} ping\n") - 7) + b" ping\n"
                board: list[int] = []
                echo: list[int] = []
                for run in range(count + 50):
                    ping_ns, echo_ns = raw_ping(link, ids), raw_echo(echo_link, line)
                    if run >= 50:
                        board.append(ping_ns)
                        echo.append(echo_ns)
            finally:
                link.close()
                echo_link.close()
    finally:
        sys.setswitchinterval(previous)
    return median(board), median(echo)


# --- the report -----------------------------------------------------------------------------


def row(name: str, value: float, echo: float, target: str, met: bool) -> None:
    ratio = value / echo if echo else float("nan")
    print(
        f"   {name:<44} {ms(value)}  {ratio:5.1f}x echo   {target:<26} "
        f"{'met' if met else 'NOT MET'}"
    )


def report_wire_and_streams(figures: Figures, echo: float) -> None:
    """A peg that comes while a frame is on the wire; pegs back to back."""
    moments = sorted({moment for moment, _, _ in figures.during_wire})
    for moment in moments:
        times = [measured for at, _, measured in figures.during_wire if at == moment]
        value = median(times)
        row(
            f"peg {moment / 1e6:.1f} ms into a frame's wire",
            value,
            echo,
            "<= 3x echo",
            value <= 3 * echo,
        )
    if figures.during_wire:
        worst_at, _, worst = max(figures.during_wire, key=lambda trial: trial[2])
        print(
            f"   {f'   worst of all {len(figures.during_wire)}':<44} {ms(worst)}  "
            f"{worst / echo:5.1f}x echo   ({worst_at / 1e6:.1f} ms in)"
        )
        firsts = [first for _, first, _ in figures.during_wire]
        print(
            f"   {f'   (the peg before it, {FIRST_PEG_AT_MS} ms in: median)':<44} "
            f"{ms(median(firsts))}  {median(firsts) / echo:5.1f}x echo"
        )
    for stream in figures.streams:
        replies = stream.replies
        worst = max(replies)
        erases = [at for at, kind in stream.flash_ops if kind == "erase"]
        during = [at for at in erases if at >= 0]
        # A save's own erase (its entry needs a fresh block not erased ahead): its pages follow
        # at once. Ahead of a save, an erase comes only after a quiet second with nothing to
        # save, and a save is due a second after the next change at the earliest.
        programs = [at for at, kind in stream.flash_ops if kind == "program"]
        inline = [at for at in during if any(0 < p - at < ERASE_NS + 5_000_000 for p in programs)]
        value = median(replies)
        print(
            f"   {f'{len(replies)} pegs back to back, {stream.quiet_s:g} s after: median':<44} "
            f"{ms(value)}  {value / echo:5.1f}x echo"
        )
        print(
            f"   {'   worst of them':<44} {ms(worst)}  {worst / echo:5.1f}x echo   "
            f"(peg {replies.index(worst)}); flash erases begun during the stream: {len(during)}"
            + (
                f" ({len(inline)} in a save the 5 s limit forced: changes never paused)"
                if inline
                else ""
            )
            + (
                f", before it (in the quiet): {len(erases) - len(during)}"
                if len(erases) > len(during)
                else ""
            )
            + f"; pages programmed: {sum(kind == 'program' for _, kind in stream.flash_ops)}"
        )


def report(figures: Figures) -> None:
    echo = median(figures.echo)
    echo_ms = echo / 1e6
    print(f"   {'the floor: bare echo of a peg-long line':<44} {ms(echo)}  (stock image, same run)")
    peg = median([t.reply for t in figures.peg])
    row("peg: its reply", peg, echo, "<= 3x echo", peg <= 3 * echo)
    bursts = len(figures.pipelined)
    first = median([replies[0] for replies in figures.pipelined])
    row(
        f"{PIPELINED} pegs pipelined: the first reply", first, echo, "<= 3x echo", first <= 3 * echo
    )
    gaps = [[b - a for a, b in zip(replies, replies[1:])] for replies in figures.pipelined]
    worst_gap = median([max(burst) for burst in gaps])
    row(
        f"{PIPELINED} pegs pipelined: worst reply to reply",
        worst_gap,
        echo,
        "<= 3x echo",
        worst_gap <= 3 * echo,
    )
    every_gap = sorted(gap for burst in gaps for gap in burst)
    print(
        f"      (medians of {bursts} bursts; of all {len(every_gap)} replies to replies: "
        f"median {ms(median(every_gap)).strip()}, worst {ms(every_gap[-1]).strip()})"
    )
    events = [t.event - t.reply for t in figures.peg if t.event is not None]
    event = median(events)
    row("peg: its `! st` event after its reply", event, echo, "<= 0.3 ms", event <= 300_000)
    starts = [t.frame_start for t in figures.peg if t.frame_start is not None]
    ends = [t.frame_end for t in figures.peg if t.frame_end is not None]
    start = median(starts)
    row("peg: its LED frame's first bit", start, echo, "<= 1.5 ms", start <= 1_500_000)
    end = median(ends)
    row("peg: its LED frame's last bit", end, echo, "<= 5.2 ms", end <= 5_200_000)
    worst = max(ends) if ends else float("nan")
    row(f"peg: worst last bit of {len(ends)}", worst, echo, "<= 10 ms", worst <= 10_000_000)
    wire = median([e - s for s, e in zip(starts, ends)])
    print(f"   {'   (the frame on the wire: first to last bit)':<44} {ms(wire)}")
    report_wire_and_streams(figures, echo)
    for verb, factor in (("ping", 2.0), ("st", 3.0)):
        value = median(figures.reads[verb])
        row(verb, value, echo, f"<= {factor:g}x echo", value <= factor * echo)
    for verb in ("hello", "health", "frame"):
        value = median(figures.reads[verb])
        row(verb, value, echo, "<= 1.5 ms", value <= 1_500_000)
    animated = median(figures.animated)
    row(
        "ping during an animation (a frame every 20 ms)",
        animated,
        echo,
        "<= 2x echo",
        animated <= 2 * echo,
    )
    worst_animated = max(figures.animated)
    erasing = figures.animated_erasing[figures.animated.index(worst_animated)]
    print(
        f"   {'   worst of them':<44} {ms(worst_animated)}  {worst_animated / echo:5.1f}x echo"
        + (
            "   (a flash erase began since the last ping: the chip stalls for it)"
            if erasing
            else ""
        )
    )
    if not figures.presses:
        return
    after_debounce = median([p[0] for p in figures.presses])
    after_event = median([p[1] for p in figures.presses])
    polls = [p[2] for p in figures.presses if p[2] is not None]
    row(
        "button: press + 20 ms debounce -> frame",
        after_debounce,
        echo,
        "<= 1.5 ms",
        after_debounce <= 1_500_000,
    )
    worst = max(p[0] for p in figures.presses)
    print(f"   {'   worst of them':<44} {ms(worst)}")
    if polls:
        # The buttons task wakes when the debounce ends and reads the pressed pin alone.
        print(f"   {'   after the read that took the press':<44} {ms(median(polls))}")
    else:
        print("   (no firmware.elf for the image: the read that took the press is not seen)")
    print(f"   {'   after the press event reached the host':<44} {ms(after_event)}")
    del echo_ms


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", type=Path, default=None, help="the cribboard image (UF2)")
    parser.add_argument("--elf", type=Path, default=None, help="its build's firmware.elf")
    parser.add_argument("--pegs", type=int, default=200, help="pegs timed one at a time")
    parser.add_argument("--no-virtual", action="store_true", help="leave out the unix port")
    args = parser.parse_args(argv)
    missing = emulator_missing()
    print("the hot path: from a peg to the light (emulated RP2040 at 125 MHz)")
    if missing:
        print(f"rp2_hotpath_bench: skipped: {missing}")
        return
    image = args.image or images_dir() / FIRMWARE_IMAGE
    elf = matching_elf(image, args.elf)
    probes = probe_addresses(elf) if elf is not None else {}
    print(f"   image {image.name}; medians of {RUNS} (pegs: {args.pegs}) at random 20-80 ms gaps")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        echo = echo_floor(scratch)
        figures = firmware_figures(image, scratch, args.pegs, probes)
        figures.echo = echo
        report(figures)
        if probes and elf is not None:
            print_peg_trace(image, scratch, probes)
            print_peg_profile(image, scratch, elf)
            print_lookups(image, scratch, elf)
        else:
            print("   (the peg's trace needs the image's firmware.elf: make rp2-images)")
    if not args.no_virtual:
        print()
        for ble in (True, False):
            board, echo_ns = virtual_board_ratio(ble=ble)
            ratio = board / echo_ns
            print(
                f"   the unix-port virtual board{'' if ble else ' without its Bluetooth radio'}, "
                f"`#ID ping` round trip (host clock): median {board / 1e3:.0f} us, bare echo on "
                f"the same pty {echo_ns / 1e3:.0f} us: {ratio:.2f}x  "
                f"(target <= 2x: {'met' if ratio <= 2 else 'NOT MET'})"
            )


if __name__ == "__main__":
    main()
