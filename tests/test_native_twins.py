"""The core's native (viper) functions against their plain twins.

On a board the request parser and the state's writer (cribcore/protocol.py) are viper code; the
same source runs as plain Python under CPython (and on a MicroPython without a native emitter).
Here both run the same few thousand generated lines and states: the results must be equal, byte
for byte. The viper side runs on the real MicroPython interpreter (the unix port, x64 code)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cribboard.virtual.interpreter import find_micropython

ROOT = Path(__file__).resolve().parents[1]

# Runs on both interpreters: prints one JSON list per case.
SCRIPT = r"""
from cribcore import protocol as P

PIECES = (b"peg", b"ping", b"st", b"set", b"new", b"games", b"admit", b"brief", b"pegs",
          b"clear", b"x2", b"open", b"clears", b"0", b"7", b"-3", b"-", b"--1", b"0000007",
          b"1234567", b"12a", b"#", b"#7", b"#abc", b"#a-b", b"#123456789", b" ", b"  ",
          b"\r", b"\t", b"\x7f", b"~", b"x")

def lines(count):
    rng = 12345
    for _ in range(count):
        line = bytearray()
        rng = (rng * 1103515245 + 12345) % 2147483648
        for _ in range(rng % 7):
            rng = (rng * 1103515245 + 12345) % 2147483648
            line.extend(PIECES[(rng >> 8) % len(PIECES)])
            rng = (rng * 1103515245 + 12345) % 2147483648
            if rng % 3:
                line.extend(b" ")
        yield bytes(line[: P.MAX_LINE - 1])

req = P.Request()
for body in lines(4000):
    req.line[: len(body)] = body
    code = P.parse_request(req, len(body))
    print("[%d,%d,%d,%d,%d,%s,%s,%d,%d]" % (code, req.id_start, req.id_end, req.verb, req.argc,
          list(req.args[: req.argc]), list(req.kinds[: req.argc]), P.remembered(req, code),
          P.is_open(req) if req.verb >= 0 else -1))
"""


def run_both(script: str) -> tuple[list[object], list[object]]:
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    native = subprocess.run(
        [str(find_micropython()), "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )
    assert native.returncode == 0, native.stderr
    plain = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "firmware")),
        timeout=300,
        cwd=ROOT,
    )
    assert plain.returncode == 0, plain.stderr
    return (
        [json.loads(line) for line in native.stdout.splitlines()],
        [json.loads(line) for line in plain.stdout.splitlines()],
    )


def test_the_viper_parser_equals_its_plain_twin() -> None:
    native, plain = run_both(SCRIPT)
    assert len(native) == len(plain) == 4000
    assert native == plain
    codes = {case[0] for case in plain}  # type: ignore[index]
    # Every result the parser gives came up (too_long is the line reader's).
    assert codes == {0, 1, 2, 3, 5, 6}
    # ...and both answers of the checks on a parsed request.
    assert {case[7] for case in plain} == {0, 1}  # type: ignore[index]
    assert {case[8] for case in plain} == {-1, 0, 1}  # type: ignore[index]


# Every way of writing into a LineWriter, into writers of every size from too small to roomy:
# what each wrote, and whether it overflowed.
WRITER_SCRIPT = r"""
from cribcore import protocol as P

NUMBERS = (0, 7, 10, 99, 121, -1, -42, 100000, 999999999, 1000000000, 2147483647, -2147483647)

def ops(out, case):
    out.reset()
    out.text(b"#" if case % 2 else "! st")
    out.key(b"r")
    out.number(NUMBERS[case % len(NUMBERS)])
    out.key(b"x2")
    out.numbers(NUMBERS, 1 + case % len(NUMBERS))
    out.byte(32)
    out.copy(b"0123456789", case % 4, 10 - case % 3)
    out.field(b"heap", NUMBERS[(case + 3) % len(NUMBERS)])
    out.key(b"rgb")
    out.hex_bytes(bytes(range(case % 17, case % 17 + 9)))
    out.field(b"x" * (case % 5), NUMBERS[case % len(NUMBERS)])
    out.end()

for size in range(1, 140, 3):
    out = P.LineWriter(size)
    for case in range(40):
        ops(out, case)
        print("[%d,%d,%r,%d]" % (size, case, list(out.buf[: out.n]), 1 if out.overflow else 0))
"""


def test_the_viper_line_writer_equals_its_plain_twin() -> None:
    native, plain = run_both(WRITER_SCRIPT)
    assert len(native) == len(plain) == 47 * 40
    assert native == plain
    assert any(case[3] for case in plain) and not all(case[3] for case in plain)  # type: ignore[index]
