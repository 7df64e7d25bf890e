"""Random request lines for the soak's fuzzer (bench/soak.py): requests a client could send, the
document's own example lines mutated byte by byte, and noise, in pipelined batches. Plain
`random` (fast: a million lines); the model (tests/protocol_model.py) says what each must get.

Never the byte 0x03: on a board's USB that is MicroPython's Ctrl-C, which interrupts the app and
never reaches it (docs/protocol.md, section 1); the virtual board and the emulated RP2040 do the
same.
"""

from __future__ import annotations

import random

import vectors as V

from cribcore.state import GameState

ID_CHARS = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
SHARED_IDS = [b"1", b"7", b"a", b"x1", b"k2", b"12345678", b"zz"]  # reused: resends, clashes
EXAMPLES = [data for data, _ in V.VECTORS] + [step[1] for step in V.ADMISSION if step[0] in (0, 1)]
CTRL_C = 0x03


def request_id(rng: random.Random) -> bytes:
    if rng.random() < 0.3:
        return rng.choice(SHARED_IDS)
    return bytes(rng.choice(ID_CHARS) for _ in range(rng.randint(1, 8)))


def number(rng: random.Random, value: int) -> bytes:
    text = b"%d" % abs(value)
    if rng.random() < 0.1:
        text = text.rjust(rng.randint(len(text), 6), b"0")
    return (b"-" if value < 0 else b"") + text


def request(rng: random.Random, game: GameState) -> bytes:
    """A request a client might send in this game (mostly valid, sometimes not)."""
    n = game.players
    player = rng.randrange(n) if rng.random() < 0.95 else rng.randint(-1, 3)
    roll = rng.random()
    if game.winner != -1 and roll < 0.5:
        words = [b"new"] + [number(rng, v) for v in rng.choice([(), (61,), (121,), (121, 3)])]
        words = words if rng.random() < 0.8 else [b"undo"]
    elif roll < 0.45:
        words = [b"peg", number(rng, player), number(rng, rng.choice((1, 2, 4, 6, 8, 12, 29, 30)))]
    elif roll < 0.52:
        front = min(game.front[player % n] + rng.randint(-3, 20), game.target + rng.randint(0, 1))
        words = [b"set", number(rng, player), number(rng, front)]
        if rng.random() < 0.6:
            words.append(number(rng, max(0, front - rng.randint(0, 40))))
    elif roll < 0.60:
        words = [b"undo"]
    elif roll < 0.65:
        words = [b"deal"] + ([number(rng, player)] if rng.random() < 0.5 else [])
    elif roll < 0.72:
        words = [b"pend", number(rng, player), number(rng, rng.randint(0, 30))]
    elif roll < 0.75:
        words = rng.choice([[b"games"], [b"games", b"clear"], [b"games", b"x2", b"0"]])
        words = words if rng.random() < 0.7 else [b"games", b"x2", b"1"]
    elif roll < 0.78:
        words = [b"bright"] + ([number(rng, rng.randint(0, 256))] if rng.random() < 0.7 else [])
    elif roll < 0.80:
        words = [b"budget"] + ([number(rng, rng.randint(149, 10001))] if rng.random() < 0.7 else [])
    elif roll < 0.81:
        words = [b"new"] + [number(rng, v) for v in rng.choice([(61,), (121, 2), (0, 3), (0, 2)])]
    elif roll < 0.83:
        words = rng.choice([[b"admit"], [b"admit", b"open", b"0"], [b"admit", b"clear"]])
    elif roll < 0.85:
        words = rng.choice([[b"brief"], [b"brief", b"1"], [b"brief", b"0"]])
    elif roll < 0.93:
        words = [rng.choice((b"st", b"ping", b"hello", b"health"))]
    elif roll < 0.932:
        words = [b"frame"]
    elif roll < 0.933:
        words = [b"test"]
    else:
        return mutated(rng)
    if rng.random() < 0.5:
        words.insert(0, b"#" + request_id(rng))
    gap = b"  " if rng.random() < 0.05 else b" "
    end = b"\r\n" if rng.random() < 0.1 else b"\n"
    return (b" " if rng.random() < 0.03 else b"") + gap.join(words) + end


def mutated(rng: random.Random) -> bytes:
    """One of the document's example request lines, changed by a few random edits."""
    line = bytearray(rng.choice(EXAMPLES).rstrip(b"\n"))
    for _ in range(rng.randint(1, 3)):
        edit = rng.random()
        at = rng.randint(0, len(line))
        if edit < 0.3 and line:
            line[min(at, len(line) - 1)] = rng.randrange(256)  # replace a byte
        elif edit < 0.5:
            line.insert(at, rng.choice(b" #0123456789-xz\r\t\x00\x7f\xff"))  # insert one
        elif edit < 0.7 and line:
            del line[min(at, len(line) - 1)]  # delete one
        elif edit < 0.8:
            line[at:at] = line[: rng.randint(0, len(line))]  # repeat a piece
        elif edit < 0.9:
            line[at:at] = b" " * rng.randint(1, 70)  # spaces: long lines, ids after spaces
        else:
            line[at:at] = rng.choice(EXAMPLES).rstrip(b"\n")  # splice another example in
    return bytes(c for c in line if c != CTRL_C) + b"\n"


def noise(rng: random.Random) -> bytes:
    """Random bytes up to a newline; now and then an over-long line with an id somewhere."""
    if rng.random() < 0.3:
        rid = b"#" + request_id(rng) + rng.choice((b" ", b"", b"\r"))
        filler = bytes(rng.choice(b" abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(80))
        spaces = b" " * rng.randint(0, 120)
        return (spaces + rid + filler[: rng.randint(0, 80)]).ljust(64, b"y") + rng.choice(
            (b"\n", b"\r\n")
        )
    size = rng.choice((0, 1, 2, 5, 10, 30, 63, 64, 100))
    body = bytes(rng.randrange(256) for _ in range(size))
    return bytes(c for c in body if c not in (CTRL_C, 0x0A)) + b"\n"


def batch(rng: random.Random, game: GameState) -> bytes:
    """A write of one or more lines (pipelined), each complete."""
    lines = []
    for _ in range(rng.choice((1, 1, 1, 2, 3, 5, 8, 16, 30))):
        roll = rng.random()
        if roll < 0.8:
            lines.append(request(rng, game))
        elif roll < 0.93:
            lines.append(mutated(rng))
        else:
            lines.append(noise(rng))
    return b"".join(lines)
