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

ROOT = Path(__file__).resolve().parents[2]

# Runs on both interpreters: prints one JSON list per case.
SCRIPT = r"""
from cribcore import protocol as P

PIECES = (b"peg", b"ping", b"st", b"set", b"new", b"games", b"admit", b"brief", b"pegs",
          b"clear", b"x2", b"open", b"clears", b"0", b"7", b"-3", b"-", b"--1", b"0000007",
          b"1234567", b"12a", b"#", b"#7", b"#abc", b"#a-b", b"#123456789", b" ", b"  ",
          b"\r", b"\t", b"\x7f", b"~", b"x", b"@", b"@17", b"@0", b"@123456789", b"@1x")

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
    id_start, id_end, verb, argc, if_rev = req.head
    print("[%d,%d,%d,%d,%d,%s,%s,%d,%d,%d]" % (code, id_start, id_end, verb, argc,
          list(req.args[:argc]), list(req.kinds[:argc]), P.remembered(req, code),
          P.is_open(req) if verb >= 0 else -1, if_rev))
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
    assert codes == {0, 1, 2, 3, 5, 6, 7}
    # ...and both answers of the checks on a parsed request.
    assert {case[7] for case in plain} == {0, 1}  # type: ignore[index]
    assert {case[8] for case in plain} == {-1, 0, 1}  # type: ignore[index]
    # ...and conditional requests, read and not (`@REV`, since 1.3).
    assert {-1, 0, 17} <= {case[9] for case in plain}  # type: ignore[index]


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


# The generated cases' random numbers (a script sets `rng` first): the same on both sides.
RAND = r"""
def rand(n):
    global rng
    rng = (rng * 1103515245 + 12345) % 2147483648
    return (rng >> 8) % n
"""


# The state's writers (a peg's `! st` event, the `st` reply's fields) on generated games: every
# field in play, winners and skunks, long revisions, writers too short for the whole line.
STATE_SCRIPT = (
    r"""
from cribcore import protocol as P
from cribcore.state import GameState

rng = 4242
"""
    + RAND
    + r"""
for case in range(60):
    players = 2 if rand(3) else 3
    g = GameState(players, 121 if rand(2) else 61, skunk_double=bool(rand(2)))
    for step in range(30):
        k = rand(10)
        try:
            if k < 4:
                g.peg(rand(players), 1 + rand(29))
            elif k == 4:
                g.set_pending(rand(players), rand(30))
            elif k == 5:
                g.undo()
            elif k == 6:
                g.new_game()
            elif k == 7:
                g.next_dealer()
            elif k == 8:
                g.set_skunk_double(rand(2))
            else:
                g.set_pegs(rand(players), g.target - rand(3), g.target - 5 - rand(20))
        except Exception:
            pass
        if rand(30) == 0:
            g.rev = 1000000 * rand(2000) + rand(1000)
        size = (4 + P.STATE_ROOM + 1) if rand(2) else 1 + rand(140)
        event = P.LineWriter(size)
        P.write_state_event(event, g)
        reply = P.LineWriter(1 + rand(300))
        reply.text(b"#x ok")
        P.write_state_fields(reply, g)
        reply.end()
        print("[%r,%d,%r,%d]" % (list(event.buf[: event.n]), 1 if event.overflow else 0,
              list(reply.buf[: reply.n]), 1 if reply.overflow else 0))
"""
)


def test_the_viper_state_writers_equal_their_plain_twins() -> None:
    native, plain = run_both(STATE_SCRIPT)
    assert len(native) == len(plain) == 60 * 30
    assert native == plain
    lines = [bytes(case[0]) for case in plain]  # type: ignore[index]
    assert any(b" w=0 " in line or b" w=1 " in line for line in lines)  # games won
    assert any(b" r=1" in line and len(line.split()[2]) > 9 for line in lines)  # long numbers
    assert any(case[1] for case in plain) and any(case[3] for case in plain)  # type: ignore[index]


# The game's changes that are viper code on a board (a peg in one call: GameState.score, and
# _move and _save_snapshot under every change) on generated games: the whole state after each
# step, the undo history and the error each rejected step gave, out-of-range numbers included.
GAME_SCRIPT = (
    r"""
from cribcore.state import GameState, GameError

rng = 777
"""
    + RAND
    + r"""
for case in range(40):
    players = 2 if rand(3) else 3
    g = GameState(players, 121 if rand(2) else 61, skunk_double=bool(rand(2)))
    for step in range(40):
        k = rand(12)
        error = ""
        try:
            if k < 5:
                g.score(rand(players + 1) - (1 if rand(8) == 0 else 0), rand(32) - 1)
            elif k == 5:
                g.peg(rand(players), 1 + rand(29))
            elif k == 6:
                g.undo()
            elif k == 7:
                g.new_game()
            elif k == 8:
                g.set_pending(rand(players), rand(30))
            elif k == 9:
                g.reset_games()
            elif k == 10:
                g.set_skunk_double(rand(2))
            else:
                g.set_pegs(rand(players), g.target - rand(3), g.target - 5 - rand(20))
        except GameError as err:
            error = err.code
        print("[\"%s\",%r,%r,%r,%r,%d,%d,%d,%d,%d,%d,%d,%d,%r]" % (error, list(g.front), list(g.back),
              list(g.games), list(g.pending), g.winner, g.award, g.dealer, g.rev, g.undo_count,
              g.last_kind, g.last_player, g.last_rev, g.undo_rows()))
"""
)


def test_the_viper_game_changes_equal_their_plain_twins() -> None:
    native, plain = run_both(GAME_SCRIPT)
    assert len(native) == len(plain) == 40 * 40
    assert native == plain
    errors = {case[0] for case in plain}  # type: ignore[index]
    assert {"", "bad_player", "bad_points", "game_over", "nothing_to_undo"} <= errors
    assert any(case[5] >= 0 for case in plain)  # type: ignore[index,operator]  # games won


# The renderer (its draw and output are viper code on a board) on generated games, drawn one
# after another by the same renderer as a board does: both strip layouts (GRB, RGBW) and byte
# orders, brightness and budgets that bring the limiter in, previews, winners, the admission call,
# frames loaded from elsewhere and the chain self-test in between. The frame, the strip's buffer,
# the scale, the estimate and `animating` must be equal.
RENDER_SCRIPT = (
    r"""
from cribcore.layout import HOLES
from cribcore.render import Renderer
from cribcore.state import GameState

class Pixels:
    def __init__(self, bpp, order):
        self.bpp = bpp
        self.ORDER = order
        self.buf = bytearray(HOLES * bpp)

    def write(self):
        pass

rng = 987654321
"""
    + RAND
    + r"""
for case in range(80):
    bpp = 3 if rand(4) else 4
    pixels = Pixels(bpp, (1, 0, 2, 3) if rand(3) else (2, 1, 0, 3))
    r = Renderer(pixels, budget_ma=150 + rand(600), brightness=rand(256))
    players = 2 if rand(3) else 3
    g = GameState(players, 121 if rand(3) else 61)
    for step in range(12):
        k = rand(10)
        try:
            if k < 5:
                g.peg(rand(players), 1 + rand(29))
            elif k == 5:
                g.set_pending(rand(players), rand(30))
            elif k == 6:
                front = rand(g.target + 1)
                g.set_pegs(rand(players), front, max(0, front - 1 - rand(20)))
            elif k == 7:
                g.next_dealer()
            elif k == 8:
                r.brightness = rand(256)
            else:
                r.calling = not r.calling
        except Exception:
            pass
        if rand(15) == 0:
            r.draw_chain_test(rand(HOLES))
            r.show()
        elif rand(15) == 0:
            r.load_frame(bytes(rand(256) for _ in range(3 * HOLES)))
            r.show()
        r.render(g, rand(5000))
        print('["%s","%s",%d,%d,%d]' % (bytes(r.frame).hex(), bytes(pixels.buf).hex(), r.scale,
              r.estimated_ma, 1 if r.animating else 0))
"""
)


def test_the_viper_renderer_equals_its_plain_twin() -> None:
    native, plain = run_both(RENDER_SCRIPT)
    assert len(native) == len(plain) == 80 * 12
    assert native == plain
    scales = {case[2] for case in plain}  # type: ignore[index]
    assert len(scales) > 50  # brightness and the limiter at work
    assert {case[4] for case in plain} == {0, 1}  # type: ignore[index]
