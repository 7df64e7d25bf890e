"""Fixtures and helpers of the tests on the emulated RP2040 board (cribboard.virtual.rp2board):
a factory that starts boards on an rp2 image with a fresh flash file, the raw REPL over the
board's pty and mpremote with a timeout.

Images come from firmware/ports/rp2/images/ ($CRIBBOARD_RP2_IMAGES names another directory).
The tests skip, saying so, only when the emulator is not installed (make emulator).
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import serial

from cribboard.virtual.rp2board import (
    FIRMWARE_IMAGE,
    NANOS_PER_CYCLE,
    STOCK_IMAGE,
    RP2Board,
    emulator_missing,
    images_dir,
)
from cribcore.layout import HOLES, LED_OF_HOLE

_missing = emulator_missing()
needs_emulator = pytest.mark.skipif(_missing is not None, reason=f"{_missing}")

RAW_PROMPT = b"raw REPL; CTRL-B to exit\r\n>"
BANNER = b'Type "help()" for more information.\r\n>>> '


def rp2_image(name: str = STOCK_IMAGE) -> Path:
    """An rp2 image by name; a missing one fails the test (it belongs in the repository)."""
    path = images_dir() / name
    if not path.is_file():
        pytest.fail(f"rp2 image {path} not found (build it with firmware/ports/rp2/build.py)")
    return path


BoardFactory = Callable[..., RP2Board]


@pytest.fixture
def rp2_boards(tmp_path: Path) -> Iterator[BoardFactory]:
    """Start emulated boards: ``start(image=None, flash=None, **options) -> RP2Board``.

    `image` defaults to the stock MicroPython image (a name in the images directory or a
    path); `flash` to a fresh flash file in the test's tmp_path. Every board is stopped after
    the test. Options are :class:`RP2Board`'s (pace, edge_pins, symbols, ...).
    """
    started: list[RP2Board] = []

    def start(
        image: str | Path | None = STOCK_IMAGE, flash: Path | None = None, **options: Any
    ) -> RP2Board:
        if isinstance(image, str):
            image = rp2_image(image)
        if flash is None:
            flash = tmp_path / f"flash-{len(started)}.bin"
        board = RP2Board(image, flash=flash, **options)
        started.append(board)
        return board.start()

    try:
        yield start
    finally:
        for board in started:
            board.stop()


@pytest.fixture
def rp2_board(rp2_boards: BoardFactory) -> RP2Board:
    """An emulated Pico on the stock MicroPython image with a fresh flash file."""
    return rp2_boards()


@pytest.fixture
def rp2_firmware_board(rp2_boards: BoardFactory) -> RP2Board:
    """An emulated Pico on the image with the cribboard firmware frozen in, fresh flash."""
    return rp2_boards(FIRMWARE_IMAGE)


def mpremote(port: str, *args: str, timeout: float = 30) -> str:
    """Run mpremote on the port (it reads /dev/pts paths without a timeout); its stdout."""
    result = subprocess.run(
        [sys.executable, "-m", "mpremote", "connect", port, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, f"mpremote {args}: {result.stderr.strip()}"
    return result.stdout


def read_until(link: serial.Serial, marker: bytes, timeout: float = 20.0) -> bytes:
    """Read from the link until `marker` has arrived; everything read."""
    data = bytearray()
    deadline = time.monotonic() + timeout
    while not data.endswith(marker):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {marker!r} within {timeout:g} s; got {bytes(data)!r}")
        data += link.read(1)
    return bytes(data)


def deliver(pico: RP2Board, link: serial.Serial, data: bytes, since: int = 0) -> None:
    """With the chip halted and the trace on: write `data` on `link` and wait until its bytes
    are at the chip's USB port (the trace's `usb_out` entries from index `since` end with them).
    They reach it at the halted moment: a request that comes exactly when the caller chose."""
    link.write(data)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        entries, _ = pico.trace_log(since)
        if b"".join(chunk for _, what, chunk in entries if what == "usb_out").endswith(data):
            return
        time.sleep(0.002)
    raise TimeoutError(f"{data!r} never reached the chip")


def first_bit(pico: RP2Board, since: int, after: int) -> int:
    """Run the halted chip on from cycle `after` until an LED frame's first bit is on GPIO 16
    (its edges from index `since`); that bit's cycle. The chip is left halted within 20 us
    after it."""
    cycle = pico.run_until(after + 100_000).cycles  # (a peg's frame starts about 1.2 ms in)
    for _ in range(2_000):
        edges = pico.edges(16, since=since).edges
        rises = [nanos for nanos, level in edges if level == 1 and nanos >= after * NANOS_PER_CYCLE]
        if rises:
            return rises[0] // NANOS_PER_CYCLE
        cycle = pico.run_until(cycle + 2_500).cycles  # 20 us on
    raise AssertionError("no LED frame after the request")


class RawRepl:
    """MicroPython's raw REPL over a board's pty, as mpremote drives it, without its start-up
    cost: one link for many commands."""

    def __init__(self, port: str) -> None:
        self.link = serial.Serial(port, timeout=0.2)

    def enter(self, timeout: float = 20.0) -> None:
        """Interrupt whatever runs and enter the raw REPL (no soft reset)."""
        self.link.write(b"\r\x03\x03\x01")
        read_until(self.link, RAW_PROMPT, timeout)

    def start(self, code: str, timeout: float = 20.0) -> None:
        """Send code to run; the caller reads its output (see :meth:`finish`)."""
        self.link.write(code.encode() + b"\x04")
        answer = read_until(self.link, b"OK", timeout)
        assert answer == b"OK", f"raw REPL answered {answer!r}"

    def finish(self, timeout: float = 20.0) -> str:
        """The output of the code started, raising AssertionError on a traceback."""
        out = read_until(self.link, b"\x04", timeout)[:-1]
        err = read_until(self.link, b"\x04", timeout)[:-1]
        read_until(self.link, b">", timeout)
        assert not err, err.decode(errors="replace")
        return out.decode()

    def exec(self, code: str, timeout: float = 20.0) -> str:
        """Run code; its printed output."""
        self.start(code)
        return self.finish(timeout)

    def close(self) -> None:
        self.link.close()


class ProtocolLink:
    """The board's line protocol over a plain serial link: requests and their replies, the
    events (``! ...`` lines) kept in order as they come."""

    # `timeout`: how long a silent board may take over one line before the test calls it
    # stopped (a bound, never a pause: a line that comes ends the wait). The emulated chip on a
    # busy 2-core machine can take several seconds over a line its real twin sends in 5 ms.
    def __init__(self, port: str, timeout: float = 20.0) -> None:
        self.link = serial.Serial(port, timeout=timeout)
        self.events: list[bytes] = []
        self.other: list[bytes] = []  # anything else: REPL output, a banner

    def readline(self) -> bytes:
        line = self.link.readline()
        if not line.endswith(b"\n"):
            raise TimeoutError(f"no whole line from the board; got {line!r}")
        return line

    def request(self, line: bytes) -> bytes:
        """Send one request line; its reply (events read meanwhile go to `events`)."""
        self.link.write(line)
        return self.reply()

    def reply(self) -> bytes:
        """The next reply line (``ok ...``, ``err ...``, with or without an id)."""
        while True:
            got = self.readline()
            if got.startswith(b"! "):
                self.events.append(got)
            elif got.startswith((b"ok", b"err", b"#")):
                return got
            else:
                self.other.append(got)

    def wait_up(self) -> bytes:
        """Ping until the app answers (it may still be starting); the reply to hello."""
        deadline = time.monotonic() + 60  # a bound for a board that never starts
        self.link.write(b"#up ping\n")
        while True:
            got = self.link.readline()
            if got == b"#up ok\n":
                return self.request(b"hello\n")
            if time.monotonic() > deadline:
                raise TimeoutError("the app never answered")
            if not got:
                self.link.write(b"#up ping\n")
            elif got.startswith(b"! "):
                self.events.append(got)

    def wait_event(self, match: Callable[[bytes], bool]) -> bytes:
        """The first event, kept or to come, that `match` accepts (taken out of `events`)."""
        while True:
            for event in self.events:
                if match(event):
                    self.events.remove(event)
                    return event
            got = self.readline()
            if got.startswith(b"! "):
                self.events.append(got)
            else:
                self.other.append(got)

    def close(self) -> None:
        self.link.close()


def fields(line: bytes) -> dict[str, str]:
    """The ``key=value`` fields of a protocol line."""
    return dict(word.partition("=")[::2] for word in line.decode().split() if "=" in word)


def frame_reply_on_the_wire(link: ProtocolLink) -> bytes:
    """The `frame` reply (hole order, before brightness, with its scale) as the wire carries
    it: chain order, scaled (RGB)."""
    reply = dict(field.split(b"=", 1) for field in link.request(b"frame\n").split()[1:])
    scale, rgb = int(reply[b"scale"]), bytes.fromhex(reply[b"rgb"].decode())
    assert 0 < scale <= 256 and len(rgb) == 3 * HOLES
    shown = bytearray(3 * HOLES)
    for hole in range(HOLES):
        led = LED_OF_HOLE[hole]
        for c in range(3):
            shown[3 * led + c] = rgb[3 * hole + c] * scale >> 8
    return bytes(shown)


# --- power cuts during saves ---------------------------------------------------------------

NEXT_OP_WINDOW = 20_000 * 125  # cycles (20 ms) within which a save's next flash operation comes
RESENDS_APPLIED = 3  # cuts whose move is resent when the cut took it (all when it came back)


@dataclass
class CutTally:
    """What the power cuts hit and what the board restored."""

    cuts: int = 0
    where: dict[str, int] = field(default_factory=dict)  # erase, program, after the save
    restored: dict[str, int] = field(default_factory=dict)  # the move, or the state before
    sources: dict[str, int] = field(default_factory=dict)  # the hello's store= field
    lost_seconds: float = 0.0  # worst time from a lost move's acknowledgment to the cut
    # The move resent after the power came back: answered (its id came back with its change)
    # or applied (the cut took both); once in all, every time.
    resent: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def add(table: dict[str, int], key: str) -> None:
        table[key] = table.get(key, 0) + 1

    def text(self) -> str:
        return (
            f"{self.cuts} cuts; in {self.where}; restored {self.restored}; store "
            f"{self.sources}; the move resent after the cut: {self.resent}, applied once every "
            f"time; oldest acknowledged change lost: 1 move back at most, "
            f"{self.lost_seconds:.3f} s (emulated) before the cut"
        )


NEW_GAME_ST = (
    b"ok r=0 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=0 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
)


def game_key(st_reply: bytes) -> dict[str, str]:
    """The saved fields of a state reply (`st`): all but its revision."""
    return {k: v for k, v in fields(st_reply).items() if k != "r"}


def random_move(rng: random.Random, state: dict[str, str]) -> bytes:
    """A move a game could have next (never a win: a won game's frame animates)."""
    fronts = [int(v) for v in state["f"].split(",")]
    target = int(state["t"])
    if max(fronts) > target - 14 or rng.random() < 0.05:
        return b"new\n"
    roll = rng.random()
    if roll < 0.1:
        return b"undo\n"
    if roll < 0.15:
        return b"deal\n"
    return b"peg %d %d\n" % (rng.randrange(2), rng.randint(1, 12))


def cut_during_a_save(
    pico: RP2Board, link: ProtocolLink, rng: random.Random, tally: CutTally, go_on: float
) -> None:
    """Make a move, stop the chip at the first flash operation of the save that follows, cut
    the power at a random cycle of that operation or of a later one of the same save (going on
    to the next one with probability `go_on`; past the last one, after the save), power on and
    check what the store restored: the state before the move or the one after, both of which
    the host saw acknowledged, never another (the rule of tests/firmware/test_power_cut.py, exact here
    since the save that was cut is known). Then the host sends the move again, the same line
    with the same id, as after a reply it never saw: the board applies it once in all, whether
    its change came back (its id saved with it: every such cut) or not (the first
    RESENDS_APPLIED such cuts)."""
    before = game_key(link.request(b"st\n"))
    pico.break_on_flash("any")
    after = before
    attempt = 0
    while after == before:  # a move that changes the game (undo may have nothing to undo)
        attempt += 1
        line = b"#c%dm%d " % (tally.cuts, attempt) + random_move(rng, before)
        reply = link.request(line)
        acked = pico.clock().cycles  # (the chip runs on: the move was acknowledged by now)
        after = game_key(link.request(b"st\n"))
        assert reply.startswith(line.split(b" ")[0] + b" ok") or after == before, reply
    op: dict[str, Any] | None = pico.wait_halted(timeout=60)["flash_op"]
    while op is not None and rng.random() < go_on:
        pico.break_on_flash("any")
        until = max(pico.clock().cycles, op["end_cycle"]) + NEXT_OP_WINDOW
        op = pico.flash_op() if pico.run_until(until).cycles < until else None
    if op is None:
        tally.add(tally.where, "after")
        cut = pico.power_cut()
    else:
        tally.add(tally.where, op["kind"])
        cut = pico.power_cut(at_cycle=rng.randint(op["start_cycle"] + 1, op["end_cycle"]))
    cut_cycle = int(cut.get("cycles", acked))
    tally.cuts += 1
    link.events.clear()  # the events of the chip that is gone
    pico.power_on()
    hello = fields(link.wait_event(lambda event: event.startswith(b"! hello ")))
    restored = game_key(link.request(b"st\n"))
    assert restored in (before, after), f"restored {restored}; before {before}, after {after}"
    tally.add(tally.sources, hello["store"])
    tally.add(tally.restored, "the move" if restored == after != before else "before it")
    if restored == before != after:
        lost_s = (cut_cycle - acked) * NANOS_PER_CYCLE / 1e9
        tally.lost_seconds = max(tally.lost_seconds, lost_s)
    # A new game only while nothing was ever saved: "fresh", or "fresh-corrupt" when the cut
    # left part of the first save.
    assert hello["store"] in ("saved", "backup", "fresh", "fresh-corrupt"), hello
    if hello["store"].startswith("fresh"):
        assert restored == game_key(NEW_GAME_ST), restored
    if op is None:
        assert restored == after and hello["store"] == "saved", (hello, restored, after, before)
    if restored != after and tally.resent.get("applied", 0) >= RESENDS_APPLIED:
        return  # (enough shown: each costs a save and a power cycle more)
    again = link.request(line)
    assert again.startswith(line.split(b" ")[0] + b" ok"), (line, again)
    resent = game_key(link.request(b"st\n"))
    assert resent == after, f"{line!r} resent: {resent}; restored {restored}, after {after}"
    tally.add(tally.resent, "answered" if restored == after else "applied")
    if restored != after:
        # Applied now: saved, then the power cycled, so that the next cut begins, as every one
        # does, from a board whose state is on its flash and whose ring wrote nothing since.
        pico.break_on_flash("any")  # (armed anew: a break left from before the cut would stop it)
        pico.wait_halted(timeout=60)  # its save's first step (a second after the change)
        pico.resume()
        while fields(link.request(b"health\n"))["saves"] == "0":
            pass  # (the save's steps are written: a request each)
        pico.restart()
        link.events.clear()
        link.wait_event(lambda event: event.startswith(b"! hello "))
        assert game_key(link.request(b"st\n")) == after


# --- free heap while the app runs --------------------------------------------------------------

# The app started as main.py starts it, with one more task that notes the free heap (after a
# collection) as it goes: FREE[0] once the app is up (its first tick), FREE[1] the latest.
_HEAP_PROBE = """\
import gc
gc.threshold(4096)
import cribfw.app as m
FREE = [0, 0]
_init = m.App.__init__
def _probed(self, *args):
    _init(self, *args)
    async def probe(app):
        import asyncio
        while True:
            gc.collect()
            FREE[1 if FREE[0] else 0] = gc.mem_free()
            await asyncio.sleep_ms(200)
    self.tasks.append(probe)
m.App.__init__ = _probed
m.main()
"""

HEAP_FLOOR = 100_000
"""Free heap (bytes) the RPI_PICO must keep with the app running, after boot and after a whole
game: measured 205 KB with the frozen image (211 KB before its 6 KB pystack), 134 KB with the
.mpy files deployed on stock MicroPython (166 KB before the hot path was native code, which stock
MicroPython loads into its heap; bench/rp2_bench.py prints them; before the app dropped
its tasks at a Ctrl-C the probe counted a stopped app's heap too: 205 and 163 KB). The floor keeps
room for an MQTT client and its buffers (about 40 KB) twice over, and 34 KB of margin below the
smaller figure."""


def heap_after_boot_and_game(pico: RP2Board) -> tuple[int, int]:
    """Free heap with the app running: once it is up, and after a whole game played over USB
    (120 points in pegs, undos, a win, a new game)."""
    up = ProtocolLink(pico.port)
    try:
        up.wait_up()  # the app started by main.py is up: Ctrl-C stops it, not the boot
    finally:
        up.close()
    repl = RawRepl(pico.port)
    try:
        repl.enter()
        repl.start(_HEAP_PROBE)
        link = ProtocolLink.__new__(ProtocolLink)
        link.link, link.events, link.other = repl.link, [], []
        repl.link.timeout = 10  # a save to littlefs can hold a reply back a while
        link.wait_up()
        for points in (12, 9, 12, 7, 12, 11, 12, 6, 12, 10):
            assert link.request(b"peg 0 %d\n" % points).startswith(b"ok")
            assert link.request(b"peg 1 %d\n" % (points - 3)).startswith(b"ok")
            assert link.request(b"undo\n").startswith(b"ok")
            assert link.request(b"peg 1 %d\n" % (points - 2)).startswith(b"ok")
        assert link.request(b"peg 0 12\n").startswith(b"ok")
        assert link.request(b"frame\n").startswith(b"ok")
        assert link.request(b"new\n").startswith(b"ok")
        pico.run_until(pico.halt().cycles + 2_000 * 125_000)  # 2 s: saved, probed again
        pico.resume()
        repl.link.timeout = 0.2
        repl.link.write(b"\x03")
        read_until(repl.link, b"\x04>")
        after_boot, after_game = (int(v) for v in repl.exec("print(FREE[0], FREE[1])").split())
        return after_boot, after_game
    finally:
        repl.close()
