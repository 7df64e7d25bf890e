"""Power cuts on the virtual board, the machinery tests/test_power_cut.py and bench/soak.py share:
a game is played over the protocol while the interpreter is killed (SIGKILL, as VirtualBoard.reset() does: that is a power cut) at random moments, some of them
in the middle of the store's saves; after each restart the board must show a state it had
committed to its flash (the ring of records in the image's raw region: cribfw/ring.py), never a
corrupted one and never a fresh game it does not admit to.

What the test accepts, precisely. The host mirrors the board with the same core (cribcore.state
Board models, fed the same commands; every `! st` event is checked against them) and keeps the
history of saved-field states P0, P1, ... (pegs, dealer, target, players, winner, games, x2, undo
count and rows, brightness, budget; not the pending previews, not `r`). The store saves the
current state once the board has been quiet for quiet_ms (polling every poll_ms: Timing), so a
state the board held without any request for certain_s is certainly committed. Let c be the newest certainly
committed state (a state restored at boot counts: it is on the flash), c2 the one before it:
  - `store=saved`: the restored state is some P_j with j >= c: the last committed state or a newer
    one that the store also managed to save (never older than the last certain commit);
  - `store=backup`: some P_j with j >= c2 (the one before);
  - `store=fresh`: only while nothing was ever certainly committed, and the state is a new game;
  - anything else (`fresh-corrupt`, `fresh-version`, a state not in the history) fails.
The store's delays are shortened for the test (CRIBBOARD_SIM_STORE_MS, the virtual board's only
knob; same code: Timing) so that many cuts fit in a minute; the soak runs some at the board's own.
Each restore also counts what the host had seen acknowledged after the restored state (Tally.lose):
the oldest acknowledged change lost, in changes and seconds, worst case.

Cuts: right after a reply ("now"), at a random time inside the debounce window ("window"), while a
request is in flight ("inflight"), after the state is certainly saved ("late"), and during a save
("save"): the test watches the flash image file, which the interpreter writes straight through,
and cuts 0-1.5 ms after the save's first block write. Whether a cut really interrupted a save is
measured, not assumed: the image the killed interpreter left is read, and a save was cut short
when the ring's newest entry does not read back intact or a block is left half erased (the
entry format of cribfw/ring.py, parsed here independently).
"""

from __future__ import annotations

import os
import random
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import serial

from cribboard import wire
from cribboard.virtual import SimControl, VirtualBoard
from cribboot import STATE_BLOCKS
from cribcore.state import GameError, GameState
from cribfw.gamerecord import apply, decode, encode

BLOCK = 4096  # the flash image's block size
SEED = int(os.environ.get("CRIBBOARD_POWER_CUT_SEED", "20240521"))
MODES = (("now", 0.2), ("window", 0.22), ("save", 0.38), ("late", 0.1), ("inflight", 0.1))
FRESH_SOURCES = ("fresh",)


@dataclass(frozen=True)
class Timing:
    """The store's delays the board runs with (cribfw.store: quiet_ms after the last change,
    at most max_ms after the first unsaved one); a shortened pair goes to the virtual board as
    CRIBBOARD_SIM_STORE_MS (env()), the board's own (1000, 5000) needs nothing."""

    quiet_ms: int = 60
    max_ms: int = 240

    @property
    def poll_ms(self) -> int:
        return max(5, min(50, self.quiet_ms // 4))  # as cribfw.store.Store picks it

    @property
    def certain_s(self) -> float:
        """Quiet this long: the state is on the flash."""
        return (self.quiet_ms + self.poll_ms + 110) / 1000

    def env(self) -> dict[str, str]:
        return {"CRIBBOARD_SIM_STORE_MS": f"{self.quiet_ms},{self.max_ms}"}


SHORT = Timing(60, 240)  # the tests' delays: many cuts in a minute
BOARD = Timing(1000, 5000)  # the board's own (cribfw.store.QUIET_MS, MAX_MS)


class Settings:
    def __init__(self, brightness: int = 128, budget_ma: int = 400) -> None:
        self.brightness = brightness
        self.budget_ma = budget_ma


@dataclass
class Model:
    board: GameState
    settings: Settings

    def record(self) -> bytes:
        return bytes(encode(self.board, self.settings, 0))

    def clone(self) -> Model:
        return model_from(self.record())

    def shown(self) -> tuple[object, ...]:
        """What `! st` shows (the saved fields but settings, plus the pending previews)."""
        n = self.board.players
        return self.key()[:10] + (tuple(self.board.pending[:n]),)

    def key(self) -> tuple[object, ...]:
        """The saved fields as the protocol shows them (st + bright/budget)."""
        b = self.board
        n = b.players
        return (
            b.target,
            n,
            b.dealer,
            b.winner,
            b.result(),
            tuple(b.front[:n]),
            tuple(b.back[:n]),
            tuple(b.games[:n]),
            b.undo_count,
            int(b.skunk_double),
            self.settings.brightness,
            self.settings.budget_ma,
        )


def model_from(record: bytes) -> Model:
    rec = decode(record)
    assert not isinstance(rec, int), "a record the test made does not decode"
    m = Model(GameState(), Settings())
    apply(rec, m.board, m.settings)
    return m


@dataclass
class Entry:
    """A saved-field state the board had; `records` holds its possible full records (undo rows
    included: several when a restore left the undo rows ambiguous)."""

    key: tuple[object, ...]
    records: set[bytes]
    on_flash: bool = False  # restored from the flash at boot
    quiet: float = 0.0  # longest time the board held it with no request arriving
    acked: float | None = None  # when the host saw it acknowledged (None: a request in flight)


@dataclass
class Tally:
    cuts: int = 0
    by_mode: dict[str, int] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)
    cut_saves: dict[str, int] = field(default_factory=dict)  # boot found a save cut short
    newest: int = 0  # restored the newest state the host had seen
    older: int = 0  # restored a state older than the newest (a change inside the debounce)
    moves: int = 0
    seconds: float = 0.0
    # Acknowledged changes a restore did not bring back: the worst case over all cuts, in
    # changes (saved-field states the host saw acknowledged after the restored one) and in
    # seconds (from the acknowledgment of the oldest change lost to the cut).
    lost_changes: int = 0
    lost_seconds: float = 0.0
    cuts_losing: int = 0

    def add(self, table: dict[str, int], key: str) -> None:
        table[key] = table.get(key, 0) + 1

    def text(self) -> str:
        return (
            f"power cuts: {self.cuts} in {self.seconds:.1f} s ({self.moves} moves, seed "
            f"{SEED}); by moment: {fmt(self.by_mode)}; restored from: {fmt(self.sources)}; "
            f"cuts that interrupted a save (cut short on the flash): "
            f"{sum(self.cut_saves.values())} ({fmt(self.cut_saves)}); restored the newest "
            f"state {self.newest}, an earlier committed one {self.older}; oldest acknowledged "
            f"change lost: {self.lost_changes} changes back, {self.lost_seconds:.2f} s before "
            f"the cut; corrupted or unexplained: 0"
        )

    def lose(self, history: list[Entry], restored: int, cut_at: float) -> None:
        """The restore brought back history[restored]: count what the host had seen
        acknowledged after it."""
        lost = [e for e in history[restored + 1 :] if e.acked is not None]
        if lost:
            self.cuts_losing += 1
            self.lost_changes = max(self.lost_changes, len(lost))
            self.lost_seconds = max(self.lost_seconds, cut_at - (lost[0].acked or cut_at))


def fmt(table: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(table.items())) or "none"


def shown_state(fields: dict[str, str]) -> tuple[object, ...]:
    s = wire.decode_state(fields)
    return (
        s["target"],
        s["players"],
        s["dealer"],
        s["winner"],
        s["result"],
        tuple(s["front"]),
        tuple(s["back"]),
        tuple(s["games"]),
        s["undo"],
        s["skunk_double"],
        tuple(s["pending"]),
    )


def state_key(fields: dict[str, str], bright: dict[str, str]) -> tuple[object, ...]:
    """The saved fields as read back after a restart (st and bright replies)."""
    shown = shown_state(fields)
    assert not any(shown[-1]), "a pending preview survived a restart"
    return shown[:-1] + (int(bright["bright"]), int(bright["budget"]))


class Link:
    """The board's serial port, line by line."""

    def __init__(self, port: str) -> None:
        self.serial = serial.Serial(port, timeout=5)

    def close(self) -> None:
        self.serial.close()

    def readline(self) -> bytes:
        line = self.serial.readline()
        assert line.endswith(b"\n"), f"the board went quiet (got {line!r})"
        return line

    def send(self, line: bytes) -> None:
        self.serial.write(line)

    def exchange(self, line: bytes) -> tuple[wire.Line, list[wire.Line]]:
        """One request: its reply and the events it caused (a ping marks their end)."""
        self.send(line + b"\n#zz9 ping\n")
        reply = None
        events = []
        while True:
            got = self.readline()
            if got == b"#zz9 ok\n":
                break
            decoded = wire.decode_line(got)
            if decoded.kind == "event":
                events.append(decoded)
            else:
                assert reply is None, f"two replies to {line!r}"
                reply = decoded
        assert reply is not None, f"no reply to {line!r}"
        return reply, events

    def wait_hello(self) -> wire.Line:
        """Skip what the killed interpreter left half-written; return the new boot's hello."""
        while True:
            got = self.readline()
            at = got.find(b"! hello ")
            if at >= 0:
                return wire.decode_line(got[at:])


def choose(rng: random.Random, m: Model) -> tuple[bytes, object]:
    """A random command that is valid for model m, and its effect on a model."""
    b = m.board
    n = b.players
    while True:
        roll = rng.random()
        if b.winner != -1:  # game over: usually a new game, sometimes an undo
            if roll < 0.75:
                target = rng.choice((0, 0, 0, 61, 121))
                players = rng.choice((0,) * 8 + (2, 3))
                return (
                    b"new %d %d" % (target, players),
                    lambda x: x.board.new_game(target, players),
                )
            return b"undo", lambda x: x.board.undo()
        if roll < 0.62:
            p = rng.randrange(n)
            pts = rng.choice((1, 2, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 29))
            return b"peg %d %d" % (p, pts), lambda x: x.board.peg(p, pts)
        if roll < 0.72 and b.undo_count:
            return b"undo", lambda x: x.board.undo()
        if roll < 0.80:
            return b"deal", lambda x: x.board.next_dealer()
        if roll < 0.85:
            p = rng.randrange(n)
            pts = rng.randrange(0, 30)
            return b"pend %d %d" % (p, pts), lambda x: x.board.set_pending(p, pts)
        if roll < 0.88:
            p = rng.randrange(n)
            front = min(b.front[p] + rng.randrange(1, 8), b.target - 1)
            back = b.front[p]
            try:
                m.clone().board.set_pegs(p, front, back)
            except GameError:
                continue
            return b"set %d %d %d" % (p, front, back), lambda x: x.board.set_pegs(p, front, back)
        if roll < 0.91:
            v = rng.randrange(0, 256)
            return b"bright %d" % v, lambda x: setattr(x.settings, "brightness", v)
        if roll < 0.93:
            v = rng.randrange(150, 2001)
            return b"budget %d" % v, lambda x: setattr(x.settings, "budget_ma", v)
        if roll < 0.96:
            v = rng.randrange(2)
            return b"games x2 %d" % v, lambda x: x.board.set_skunk_double(v)
        if roll < 0.97:
            return b"games clear", lambda x: x.board.reset_games()
        if roll < 0.985:
            target = rng.choice((0, 61, 121))
            return b"new %d" % target, lambda x: x.board.new_game(target)


def run_cuts(
    rng: random.Random,
    vboard: VirtualBoard,
    sim: SimControl,
    link: Link,
    image: Path,
    tally: Tally,
    cuts: int,
    timing: Timing = SHORT,
) -> None:
    """Play and cut the power `cuts` times on `vboard` (started with timing.env() and a fresh
    flash `image`), checking every restore; raises AssertionError on the first one the rule
    does not allow."""
    reply, _ = link.exchange(b"hello")
    assert reply.fields.get("store") == "fresh", reply.fields  # a new flash image
    models = [Model(GameState(), Settings())]
    history = [Entry(models[0].key(), {models[0].record()})]
    last_reply = time.monotonic()
    pid = int(sim.info()["pid"])

    def quiet_until(now: float) -> None:
        history[-1].quiet = max(history[-1].quiet, now - last_reply)

    def play(line: bytes, effect: object) -> None:
        nonlocal models, last_reply
        quiet_until(time.monotonic())
        reply, events = link.exchange(line)
        last_reply = time.monotonic()
        assert reply.kind == "ok", (line, reply)
        for m in models:
            effect(m)  # type: ignore[operator]
        for ev in events:
            if ev.name == "st":  # the board's state must be a model's (or the models' we keep)
                models = [m for m in models if m.shown() == shown_state(ev.fields)]
                assert models, f"the board left the model after {line!r}: {ev.fields}"
        key = models[0].key()
        if key != history[-1].key:
            history.append(Entry(key, {m.record() for m in models}, acked=last_reply))
        tally.moves += 1

    while tally.cuts < cuts:
        for _ in range(rng.randint(1, 4)):
            line, effect = choose(rng, models[0])
            play(line, effect)
            if rng.random() < 0.08:
                time.sleep(timing.certain_s + 0.01)  # let this one be saved for sure
        mode = rng.choices([m for m, _ in MODES], [w for _, w in MODES])[0]
        inflight = None
        if mode == "now":
            pass
        elif mode == "window":
            time.sleep(rng.uniform(0, timing.quiet_ms / 1000))
        elif mode == "late":
            time.sleep(timing.certain_s + rng.uniform(0.01, 0.05))
        elif mode == "save":
            watch_for_a_save(image, rng, timing)
        else:  # a request on its way: it may or may not have been applied
            line, effect = choose(rng, models[0])
            quiet_until(time.monotonic())
            link.send(line + b"\n")
            time.sleep(rng.uniform(0, 0.002))
            inflight = (line, effect)
        cut_at = time.monotonic()
        quiet_until(cut_at)
        vboard.reset()
        tally.cuts += 1
        tally.add(tally.by_mode, mode)
        if inflight is not None:  # the state it would make is a candidate too, never certain
            after = [m.clone() for m in models]
            try:
                for m in after:
                    inflight[1](m)  # type: ignore[operator]
            except GameError:
                after = []
            if after and after[0].key() != history[-1].key:
                history.append(Entry(after[0].key(), {m.record() for m in after}))

        if save_cut_short(power_off_image(pid, image)):
            tally.add(tally.cut_saves, mode)
        hello = link.wait_hello()
        pid = int(sim.info()["pid"])
        source = hello.fields.get("store", "?")
        tally.add(tally.sources, source)
        st, _ = link.exchange(b"st")
        cfg, _ = link.exchange(b"bright")
        got = state_key(st.fields, cfg.fields)
        models = check_restored(history, source, got, tally, timing, cut_at)
        history.append(
            Entry(
                got,
                {m.record() for m in models},
                on_flash=source != "fresh",
                acked=time.monotonic(),
            )
        )
        last_reply = time.monotonic()


def watch_for_a_save(image: Path, rng: random.Random, timing: Timing) -> None:
    """Return 0-1.5 ms after the flash image is next written (the store's save starting), or when
    no save comes (the last change left the saved fields as they were)."""
    start = os.stat(image).st_mtime_ns
    deadline = time.monotonic() + (timing.max_ms + 200) / 1000
    while os.stat(image).st_mtime_ns == start:
        if time.monotonic() > deadline:
            return
    until = time.perf_counter() + rng.uniform(0, 0.0015)
    while time.perf_counter() < until:
        pass


def power_off_image(pid: int, image: Path) -> bytes:
    """The flash image as the killed interpreter left it: read once the process is gone and
    before the next one (which takes tens of ms to start) reaches the store."""
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{pid}"):
        assert time.monotonic() < deadline, "the interpreter was not killed"
        time.sleep(0.0002)
    return image.read_bytes()


def save_cut_short(image: bytes) -> bool:
    """Whether the ring in the game's region of `image` shows a save cut short: its newest entry
    (by seq) does not hold an intact record, or a block is neither erased nor starts with an
    entry (an erase stopped part way)."""
    blocks = len(image) // BLOCK
    newest: tuple[int, bytes] | None = None
    for block in range(blocks - STATE_BLOCKS, blocks):
        data = image[block * BLOCK : (block + 1) * BLOCK]
        offset = 0
        while offset + 8 <= BLOCK:
            seq, length, check = struct.unpack_from("<IHH", data, offset)
            if seq == 0xFFFFFFFF or length ^ check != 0xFFFF or offset + 8 + length > BLOCK:
                break
            if newest is None or seq > newest[0]:
                newest = (seq, data[offset + 8 : offset + 8 + length])
            offset += (8 + length + 255) // 256 * 256
        if offset == 0 and data != b"\xff" * BLOCK:
            return True  # a half-erased block
        if offset and data[offset:] != b"\xff" * (BLOCK - offset):
            return True  # a header that was not written whole after the last entry
    return newest is not None and not isinstance(decode(newest[1]), tuple)


def check_restored(
    history: list[Entry],
    source: str,
    got: tuple[object, ...],
    tally: Tally,
    timing: Timing = SHORT,
    cut_at: float = 0.0,
) -> list[Model]:
    """Check the restored state against the history (see the module docstring); return the
    models it can be (several when entries with these fields had different undo rows)."""
    certain = [i for i, e in enumerate(history) if e.on_flash or e.quiet >= timing.certain_s]
    context = (
        f"restored {got} from {source!r}; newest seen {history[-1].key}; last certain "
        f"{history[certain[-1]].key if certain else None}"
    )
    if source in FRESH_SOURCES:
        assert not certain, "a fresh game although a state was committed: " + context
        assert got == Model(GameState(), Settings()).key(), context
        tally.newest += got == history[-1].key
        tally.older += got != history[-1].key
        tally.lose(history, 0, cut_at)
        return [Model(GameState(), Settings())]
    assert source in ("saved", "backup"), "unexpected store source: " + context
    if source == "saved":
        lower = certain[-1] if certain else 1
    else:
        lower = certain[-2] if len(certain) >= 2 else 0
    matches = [i for i in range(lower, len(history)) if history[i].key == got]
    assert matches, "not the last committed state nor the one before: " + context
    if got == history[-1].key:
        tally.newest += 1
    else:
        tally.older += 1
    tally.lose(history, matches[-1], cut_at)
    records = set().union(*(history[i].records for i in matches))
    return [model_from(r) for r in sorted(records)]
