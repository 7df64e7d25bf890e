"""`make bench`, second part: the link benchmark (host <-> virtual board over the pty).

Runs the real firmware (firmware/) on MicroPython's unix port behind a VirtualBoard and talks to
it over pyserial on the pty, the path a USB board takes. Prints figures only: nothing here
asserts speed (a desktop's unix port, pty and relay thread are not a board's MCU and USB CDC).

1. Round trip: `#ID ping` and `#ID peg 0 5` / `#ID undo` (each also pushes a `! st` event, read
   too), (a) raw: pyserial opens the port and writes, the reply is read with select + os.read
   on the port's fd (the least host overhead), (b) through the library: `Board.ping()`,
   `Board.peg()` / `Board.undo()` in one asyncio loop.
2. Baseline: the same round trip to a bare MicroPython echo loop on the same pty path.
3. Sustained score commands per second, pipelined and one at a time.
4. Bytes on the wire per typical request, reply and event; whether a request fits one 20-byte
   BLE packet.
5. Heap: the firmware serving requests in -X heapsize=68wK, and the heap the app's objects use.

    .venv/bin/python bench/link_bench.py
"""

from __future__ import annotations

import asyncio
import math
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path

import serial

ROOT = Path(__file__).resolve().parents[1]
from cribboard.api import Board
from cribboard.clientcore import base36
from cribboard.virtual import VirtualBoard
from cribboard.virtual.interpreter import find_micropython
from cribcore.layout import HOLES

ROUND_TRIPS = 2000  # a p99 of 1000 samples is the 10th worst: too noisy to compare
WARM_UP = 50
PIPELINED = 2000
SMALL_HEAP = "68wK"
BLE_PACKET = 20  # bytes of a BLE notification/write at the default ATT MTU
READ_TIMEOUT = 5.0
PROBE_TIMEOUT = 20.0
# The launcher's relay thread runs in this process and shares its GIL with the measuring thread.
# With CPython's default 5 ms switch interval, a request that meets the relay handling an LED
# frame (after every state change) waits up to 5 ms for the GIL: a host artifact, not the link.
SWITCH_INTERVAL = 0.0002

# The baseline board's whole flash: read stdin as the firmware does (select.poll on stdin, read
# the ready bytes one at a time) and write each completed line back.
ECHO_MAIN = """\
import select
import sys

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer
poll = select.poll()
poll.register(stdin, select.POLLIN)
one = bytearray(1)
line = bytearray(64)
n = 0
while True:
    poll.poll(-1)
    while poll.poll(0):
        if stdin.readinto(one):
            line[n] = one[0]
            n += 1
            if one[0] == 10 or n == 64:
                stdout.write(line, 0, n)
                n = 0
"""

# Builds the app as firmware/cribfw/app.py main() does (App, or build() before it), with
# tests/core/checks.py FakePixels in place of the LED strip, runs its tasks for a moment and
# reports the heap in use.
HEAP_PROBE = """\
import gc
import sys

def heap():
    gc.collect()
    return gc.mem_alloc()

m0 = heap()
from checks import FakePixels
m1 = heap()
import asyncio
m2 = heap()
from cribcore.layout import HOLES
from cribcore.profiles import detect
import cribfw.app as app
m3 = heap()
profile = detect()
if hasattr(app, "App"):
    the_app = app.App(FakePixels(HOLES), sys.stdin.buffer, sys.stdout.buffer, profile)
    running = the_app.run
else:  # the earlier shape: build() and run()
    parts = app.build(FakePixels(HOLES), sys.stdin.buffer, sys.stdout.buffer, profile)
    running = lambda: app.run(*parts)
m4 = heap()

async def probe():
    asyncio.create_task(running())
    await asyncio.sleep_ms(100)
    m5 = heap()
    print("probe", m0, m1, m2, m3, m4, m5, gc.mem_alloc() + gc.mem_free())

asyncio.run(probe())
"""


# --- helpers --------------------------------------------------------------------------------


class Ids:
    """Fresh request ids of 6 base-36 characters, as the library sends them."""

    def __init__(self) -> None:
        self.n = 36**5 + int(time.time()) % 1000 * 1000

    def __call__(self) -> str:
        self.n += 1
        return base36(self.n)


def stats(ns: list[int]) -> tuple[float, float, float]:
    """(median, p99, worst) in microseconds."""
    s = sorted(ns)
    return (s[len(s) // 2] / 1000, s[math.ceil(0.99 * len(s)) - 1] / 1000, s[-1] / 1000)


class RawLink:
    """pyserial on the port; replies read straight from its fd (select + os.read)."""

    def __init__(self, port: str) -> None:
        self.serial = serial.Serial(port, timeout=READ_TIMEOUT)
        self.fd = self.serial.fileno()
        self.buf = bytearray()
        time.sleep(0.1)
        self.drain()

    def close(self) -> None:
        self.serial.close()

    def drain(self) -> None:
        """Drop whatever the board has sent so far (the `! hello` of its start)."""
        while select.select([self.fd], [], [], 0.05)[0]:
            if not os.read(self.fd, 4096):
                break
        self.buf.clear()

    def lines(self, count: int) -> list[bytes]:
        """The next `count` lines from the board."""
        out: list[bytes] = []
        while True:
            while len(out) < count:
                end = self.buf.find(b"\n")
                if end < 0:
                    break
                out.append(bytes(self.buf[: end + 1]))
                del self.buf[: end + 1]
            if len(out) == count:
                return out
            if not select.select([self.fd], [], [], READ_TIMEOUT)[0]:
                raise TimeoutError(f"no reply within {READ_TIMEOUT} s; got {out!r}")
            self.buf += os.read(self.fd, 4096)

    def request(self, line: bytes, replies: int = 1) -> tuple[int, list[bytes]]:
        """Write one line, read `replies` lines; (ns taken, lines)."""
        t0 = time.perf_counter_ns()
        self.serial.write(line)
        got = self.lines(replies)
        return time.perf_counter_ns() - t0, got


def expect_ok(line: bytes, request_id: str) -> None:
    if not line.startswith(f"#{request_id} ok".encode()):
        raise RuntimeError(f"unexpected reply to #{request_id}: {line!r}")


def raw_ping(link: RawLink, ids: Ids) -> int:
    rid = ids()
    ns, (reply,) = link.request(f"#{rid} ping\n".encode())
    expect_ok(reply, rid)
    return ns


def score_verb(i: int) -> str:
    """peg and undo alternately: the game never ends."""
    return "peg 0 5" if i % 2 == 0 else "undo"


def raw_score(link: RawLink, ids: Ids, i: int) -> int:
    """The i-th of the peg/undo sequence; reads its reply and its `! st` event."""
    rid = ids()
    ns, (reply, event) = link.request(f"#{rid} {score_verb(i)}\n".encode(), 2)
    expect_ok(reply, rid)
    if not event.startswith(b"! st "):
        raise RuntimeError(f"expected a state event after #{rid}, got {event!r}")
    return ns


def raw_echo(link: RawLink, line: bytes) -> int:
    ns, (back,) = link.request(line)
    if back != line:
        raise RuntimeError(f"echo board sent {back!r}")
    return ns


def write_echo(directory: str) -> str:
    """A firmware tree holding only the echo loop's main.py."""
    (Path(directory) / "main.py").write_text(ECHO_MAIN)
    return directory


def bare_pty_echo(exe: Path, line: bytes, count: int) -> list[int]:
    """The echo loop on one raw pty with no relay thread between (host <-> interpreter)."""
    with tempfile.TemporaryDirectory(prefix="cribboard-echo-") as tmp:
        master, slave = os.openpty()
        tty.setraw(slave)
        proc = subprocess.Popen(
            [str(exe), str(Path(write_echo(tmp)) / "main.py")],
            stdin=slave,
            stdout=slave,
            stderr=slave,
        )
        try:
            times = []
            for i in range(WARM_UP + count):
                t0 = time.perf_counter_ns()
                os.write(master, line)
                got = b""
                while not got.endswith(b"\n"):
                    if not select.select([master], [], [], READ_TIMEOUT)[0]:
                        raise TimeoutError("the bare echo loop does not answer")
                    got += os.read(master, 4096)
                if i >= WARM_UP:
                    times.append(time.perf_counter_ns() - t0)
            return times
        finally:
            proc.kill()
            proc.wait(PROBE_TIMEOUT)
            os.close(master)
            os.close(slave)


def raw_pipelined(link: RawLink, ids: Ids, count: int) -> tuple[float, int]:
    """Send `count` pegs/undos at once, read every reply and the events on a second thread
    (the board pushes its state once after what it read together: at least one event, the
    last of the state after the last reply). Returns (seconds from the first byte written to
    the last line read, bad replies)."""
    requests = []
    for i in range(count):
        requests.append(f"#{ids()} {score_verb(i)}\n")
    data = "".join(requests).encode()
    result: list[bytes] = []
    failure: list[BaseException] = []

    def reader() -> None:
        try:
            replies = 0
            last = b""  # the last reply's revision
            while True:
                line = link.lines(1)[0]
                result.append(line)
                if line.startswith(b"#"):
                    replies += 1
                    last = line.rsplit(b"r=", 1)[-1].strip()
                elif replies == count and line.startswith(b"! st r=" + last + b" "):
                    return
        except BaseException as err:  # reported by the caller
            failure.append(err)

    thread = threading.Thread(target=reader, daemon=True)
    t0 = time.perf_counter()
    thread.start()
    link.serial.write(data)
    thread.join(30)
    seconds = time.perf_counter() - t0
    if failure or thread.is_alive():
        raise RuntimeError(f"pipelined run failed: {failure or 'reader still waiting'}")
    replies = [ln for ln in result if ln.startswith(b"#")]
    bad = sum(1 for ln in replies if b" ok " not in ln) + (count - len(replies))
    return seconds, bad


async def library_round_trips(
    port: str, count: int, echo_link: RawLink, echo_line: bytes
) -> tuple[list[int], list[int], list[int], float]:
    """Board.ping(), then Board.peg()/Board.undo(), one at a time, each followed by a raw echo
    round trip (blocking the loop, outside the timing); then `count` pegs/undos gathered at once.
    Returns (ping ns, score ns, echo ns, pipelined seconds)."""
    board = await Board.open(port, reconnect=False)
    try:
        clock = time.perf_counter_ns
        for _ in range(WARM_UP):
            await board.ping()
        pings: list[int] = []
        scores: list[int] = []
        echoes: list[int] = []
        for _ in range(count):
            t0 = clock()
            await board.ping()
            pings.append(clock() - t0)
            echoes.append(raw_echo(echo_link, echo_line))
        for i in range(count):
            t0 = clock()
            if i % 2 == 0:
                await board.peg(0, 5)
            else:
                await board.undo()
            scores.append(clock() - t0)
        t = time.perf_counter()
        await asyncio.gather(
            *((board.peg(0, 5) if i % 2 == 0 else board.undo()) for i in range(PIPELINED))
        )
        pipelined = time.perf_counter() - t
    finally:
        await board.close()
    return pings, scores, echoes, pipelined


def mp_env(tree: Path | None = None) -> dict[str, str]:
    """MicroPython's path: the firmware as a board's flash holds it (.mpy bytecode, from the
    same build deploy uses) unless `tree` names another (the .py sources)."""
    from cribboard.firmware_build import build
    from cribboard.virtual.interpreter import find_micropython, interpreter_arch

    firmware = tree or build(arch=interpreter_arch(find_micropython()))
    path = f"{firmware}:{ROOT / 'tests' / 'core'}:.frozen"
    return dict(os.environ, MICROPYPATH=path)


def heap_probe(exe: Path) -> list[int]:
    """Run HEAP_PROBE in -X heapsize=SMALL_HEAP; its stdin is a pipe kept open (no input)."""
    with tempfile.TemporaryDirectory(prefix="cribboard-heap-") as tmp:
        script = Path(tmp) / "heap_probe.py"
        script.write_text(HEAP_PROBE)
        read_end, write_end = os.pipe()
        try:
            result = subprocess.run(
                [str(exe), "-X", f"heapsize={SMALL_HEAP}", str(script)],
                stdin=read_end,
                capture_output=True,
                text=True,
                env=mp_env(),
                timeout=PROBE_TIMEOUT,
                cwd=ROOT,
            )
        finally:
            os.close(read_end)
            os.close(write_end)
    for line in result.stdout.splitlines():
        if line.startswith("probe "):
            return [int(v) for v in line.split()[1:]]
    sys.exit(f"heap probe failed (exit {result.returncode}):\n{result.stdout}{result.stderr}")


def import_floor(exe: Path, tree: Path | None = None) -> int | None:
    """Smallest -X heapsize (in wK, steps of 4) in which `import asyncio, cribfw.app` succeeds
    with the firmware as deployed (.mpy), or from `tree` (the .py sources)."""
    for wk in range(16, 129, 4):
        result = subprocess.run(
            [
                str(exe),
                "-X",
                f"heapsize={wk}wK",
                "-c",
                "import asyncio, cribfw.app; print('imported')",
            ],
            capture_output=True,
            text=True,
            env=mp_env(tree),
            timeout=PROBE_TIMEOUT,
            cwd=ROOT,
        )
        if result.returncode == 0 and "imported" in result.stdout:
            return wk
    return None


def rt_row(name: str, ns: list[int]) -> str:
    median, p99, worst = stats(ns)
    return f"   {name:<30}{median:>9.0f} us{p99:>9.0f} us{worst:>9.0f} us"


# --- the report -----------------------------------------------------------------------------


def main() -> None:
    default_switch = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        report(default_switch)
    finally:
        sys.setswitchinterval(default_switch)


def report(default_switch: float) -> None:
    started = time.monotonic()
    exe = Path(find_micropython())
    ids = Ids()
    print("cribboard link benchmark (host <-> board)")
    print(
        f"   host -> pyserial -> pty -> relay thread -> pty -> MicroPython unix port "
        f"({exe.name}); {os.cpu_count()} CPUs"
    )
    print(
        f"   (the relay thread runs in this process: CPython switch interval "
        f"{SWITCH_INTERVAL * 1000:g} ms here, default {default_switch * 1000:g} ms)"
    )

    # -- the firmware and the echo baseline, side by side: requests alternate between them so
    # that whatever else the machine does hits both alike ------------------------------------
    fw_ping: list[int] = []
    fw_score: list[int] = []
    echo_ping: list[int] = []  # echo round trips taken alternately with the pings
    echo_score: list[int] = []  # ... with the pegs/undos
    with (
        tempfile.TemporaryDirectory(prefix="cribboard-echo-") as tmp,
        VirtualBoard() as vb,
        VirtualBoard(firmware=write_echo(tmp)) as echo_vb,
    ):
        link = RawLink(vb.port)
        echo_link = RawLink(echo_vb.port)
        try:
            echo_line = b"#" + b"e" * (len(f"#{ids()} ping\n") - 7) + b" ping\n"
            for i in range(WARM_UP):
                raw_ping(link, ids)
                raw_score(link, ids, i)
                raw_echo(echo_link, echo_line)
            for _ in range(ROUND_TRIPS):
                fw_ping.append(raw_ping(link, ids))
                echo_ping.append(raw_echo(echo_link, echo_line))
            for i in range(ROUND_TRIPS):
                fw_score.append(raw_score(link, ids, i))
                echo_score.append(raw_echo(echo_link, echo_line))
            pipe_s, pipe_bad = raw_pipelined(link, ids, PIPELINED)
            wire = []
            for verb, replies in (
                ("peg 0 12", 2),
                ("set 0 30 20", 2),
                ("undo", 2),
                ("st", 1),
                ("ping", 1),
            ):
                rid = ids()
                line = f"#{rid} {verb}\n".encode()
                _, got = link.request(line, replies)
                wire.append((line, got[0], got[1] if replies == 2 else None))
            lib_ping, lib_score, echo_lib, lib_pipe_s = asyncio.run(
                library_round_trips(vb.port, ROUND_TRIPS, echo_link, echo_line)
            )
        finally:
            link.close()
            echo_link.close()
    bare = bare_pty_echo(exe, echo_line, ROUND_TRIPS)

    # -- the firmware in a small heap ---------------------------------------------------------
    served, failed, small_error = 0, 0, ""
    try:
        with VirtualBoard(heap=SMALL_HEAP, ble=False) as vb:  # a board without Bluetooth
            link = RawLink(vb.port)
            try:
                for i in range(ROUND_TRIPS // 2):
                    raw_ping(link, ids)
                    raw_score(link, ids, i)
                    served += 2
                for verb in ("st", "frame") * 50:
                    rid = ids()
                    _, (reply,) = link.request(f"#{rid} {verb}\n".encode())
                    expect_ok(reply, rid)
                    served += 1
                _, failed = raw_pipelined(link, ids, PIPELINED)
                served += PIPELINED - failed
            finally:
                link.close()
    except Exception as err:  # reported, not raised: a figure like the others
        small_error = f"{type(err).__name__}: {err}"
    probe = heap_probe(exe)
    floor = import_floor(exe)
    source_floor = import_floor(exe, ROOT / "firmware")

    # -- print --------------------------------------------------------------------------------
    print(
        f"\n1. Round trip, request written -> reply read ({ROUND_TRIPS} each, after "
        f"{WARM_UP} warm-up)"
    )
    print(f"   {'':<30}{'median':>12}{'p99':>12}{'worst':>12}")
    print(rt_row("raw ping", fw_ping))
    print(rt_row("raw peg/undo (+ ! st event)", fw_score))
    print(rt_row("Board.ping()", lib_ping))
    print(rt_row("Board.peg()/undo()", lib_score))

    print(
        "\n2. Baseline: bare MicroPython echo loop (poll stdin, read the ready bytes, write "
        "each line back)"
    )
    print(f"   {'':<30}{'median':>12}{'p99':>12}{'worst':>12}")
    print(rt_row(f"echo, {len(echo_line)}-byte line", echo_ping + echo_score + echo_lib))
    print(rt_row("echo on a bare pty, no relay", bare))
    print("   firmware / echo, each against the echoes taken alternately with it:")
    for name, ns, echo in (
        ("raw ping", fw_ping, echo_ping),
        ("raw peg/undo", fw_score, echo_score),  # 2 lines back, not 1
        ("Board.ping()", lib_ping, echo_lib),
    ):
        median, p99, _ = stats(ns)
        echo_median, echo_p99, _ = stats(echo)
        verdict = "within" if p99 <= 2 * echo_p99 else "OVER"
        print(
            f"   {name:<13} p99 {p99 / echo_p99:.2f}x ({p99:.0f} / {echo_p99:.0f} us, "
            f"{verdict} the 2x target), median {median / echo_median:.2f}x "
            f"(+{median - echo_median:.0f} us)"
        )
    print("   (medians are steady from run to run; p99 follows the host's scheduling noise)")

    print("\n3. Sustained score commands (peg 0 5 / undo alternating)")
    print(
        f"   pipelined, raw:     {PIPELINED / pipe_s:>7.0f} /s   ({PIPELINED} requests sent "
        f"at once, {2 * PIPELINED} lines read, {pipe_s * 1000:.0f} ms, {pipe_bad} not ok)"
    )
    print(
        f"   pipelined, library: {PIPELINED / lib_pipe_s:>7.0f} /s   ({PIPELINED} "
        f"Board.peg/undo gathered, {lib_pipe_s * 1000:.0f} ms)"
    )
    for name, ns in (("one at a time, raw", fw_score), ("one at a time, lib", lib_score)):
        print(f"   {name + ':':<21}{len(ns) / (sum(ns) / 1e9):>7.0f} /s")

    print(
        f"\n4. Bytes on the wire (line end included; ids of 6 characters as the library "
        f"sends; BLE packet {BLE_PACKET} bytes)"
    )
    print(
        f"   {'request':<24}{'bytes':>6}  {'1 packet':<9}{'reply':>6}{'pkts':>5}"
        f"{'event':>7}{'pkts':>5}"
    )
    for line, reply, event in wire:
        text = line.decode().rstrip("\n")
        fits = "yes" if len(line) <= BLE_PACKET else "NO"
        ev = (
            f"{len(event):>7}{math.ceil(len(event) / BLE_PACKET):>5}"
            if event
            else f"{'-':>7}{'-':>5}"
        )
        print(
            f"   {text:<24}{len(line):>6}  {fits:<9}{len(reply):>6}"
            f"{math.ceil(len(reply) / BLE_PACKET):>5}{ev}"
        )
    print(f"   e.g. {wire[0][0]!r} -> {wire[0][1]!r} {wire[0][2]!r}")

    print(f"\n5. Heap (MicroPython, -X heapsize={SMALL_HEAP}: 68 KB on a 32-bit board)")
    if small_error:
        print(f"   firmware serves requests in {SMALL_HEAP}: NO after {served} ({small_error})")
    else:
        print(
            f"   firmware serves {served} requests in {SMALL_HEAP}: "
            f"{'yes' if not failed else 'NO'}  (ping, peg/undo, st, frame one at a time; "
            f"{PIPELINED} pipelined)"
        )
    m0, m1, m2, m3, m4, m5, total = probe
    print(
        f"   smallest heap for `import asyncio, cribfw.app` (steps of 4wK): "
        f"{f'{floor}wK' if floor else 'over 128wK'} as deployed (.mpy), "
        f"{f'{source_floor}wK' if source_floor else 'over 128wK'} from .py sources "
        f"(compiling needs more than the modules keep)"
    )
    print(
        "   heap in use (gc.collect(); gc.mem_alloc()), app built as cribfw.app.main() does "
        "with FakePixels:"
    )
    print(f"   {'interpreter base':<30}{m0:>7} bytes  (at script start)")
    print(f"   {'import asyncio':<30}{m2 - m1:>7} bytes")
    print(
        f"   {'import cribfw.app (+cribcore)':<30}{m3 - m2:>7} bytes  (.mpy bytecode, "
        f"as deploy puts them on the flash)"
    )
    print(
        f"   {'app objects: App()':<30}{m4 - m3:>7} bytes  (Board, Renderer, Dispatcher, "
        f"UsbLink, {HOLES * 3}-byte pixel buffer)"
    )
    print(f"   {'running tasks, 100 ms':<30}{m5 - m4:>7} bytes")
    print(
        f"   {'heap in use by the app':<30}{m5 - m1:>7} bytes  ({m5} with the base, of "
        f"{total} bytes of heap: {100 * m5 / total:.0f}%; 8-byte words on this port)"
    )

    print(f"\n(link benchmark took {time.monotonic() - started:.1f} s)")


if __name__ == "__main__":
    main()
