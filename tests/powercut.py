"""Power cuts on the virtual board, the machinery tests/firmware/test_power_cut.py and bench/soak.py share:
a game is played over the protocol while the interpreter is killed (SIGKILL, as
VirtualBoard.reset() does: that is a power cut) at random moments and at chosen steps of the
store's saves; after each restart the board must show the last save that completed on its flash
(the ring of records in the image's raw region: cribfw/ring.py), never a corrupted state, never
one older than a save the host saw completed, and never a fresh game it does not admit to.

What the test accepts, precisely (what docs/protocol.md promises: "after a power cut the board
shows the last save that completed"). The host mirrors the board with the same core
(cribcore.state Board models, fed the same commands; every `! st` event is checked against them)
and keeps the history of saved-field states (pegs, dealer, target, players, winner, games, x2,
undo count and rows, brightness, budget; not the pending previews, not `r`). After each cut it
reads the flash image the killed interpreter left, parsing the ring itself (the entry format of
cribfw/ring.py, the record decoded by cribfw/gamerecord.py), and then:
  - the restored state is that of the newest record that reads back intact, with `store=saved`,
    or `store=backup` when a newer entry is torn; a new game when no record is intact, with
    `store=fresh` (no entry at all) or `store=fresh-corrupt` (only torn ones); its undo rows
    are those the board had with these fields;
  - it is a state of the history no older than the last committed one: a state restored at
    boot, or seen intact on the flash while the board was stopped at a flash point (below).
So what counts as committed is what the host saw on the flash, never how long the board was left
alone: a loaded machine can starve the board of the CPU for longer than the store's delays, and
the save then comes later (the store promises a save quiet_ms after the last change of the
board's own running, not of the host's clock).
The store's delays are shortened for the test (CRIBBOARD_SIM_STORE_MS, the virtual board's only
knob; same code: Timing) so that many cuts fit in a minute; the soak runs some at the board's own.
Each restore also counts what the host had seen acknowledged after the restored state (Tally.lose):
the oldest acknowledged change lost, in changes and seconds, worst case.

Cuts: right after a reply ("now"), at a random time inside the debounce window ("window"), while a
request is in flight ("inflight"), at the end of a save ("late"), and inside a save ("save"). The
last two are aimed, not timed: the side channel stops the board at a flash point
(VirtualControl.break_at_flash_point: before each 256-byte step of an erase or a program, and at its end);
for "save" a move is sent after the break is set, one that certainly makes a save, and the board
is run on, stopped, to a point chosen at random in that save's erase or program, then cut. Now and
then after a move the board is also run to the end of its save ("let it be saved"): a commitment
the rule holds to at every later cut. Whether a cut really interrupted a save is measured from the
image too (a torn newest entry, a block half erased), and an aimed cut inside a program must have
torn it.
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
from cribboard.virtual import FlashStop, VirtualBoard, VirtualControl
from cribboot import STATE_BLOCKS
from cribcore.state import GameError, GameState
from cribfw.gamerecord import apply, decode, encode

BLOCK = 4096  # the flash image's block size
SEED = int(os.environ.get("CRIBBOARD_POWER_CUT_SEED", "20240521"))
MODES = (("now", 0.17), ("window", 0.18), ("save", 0.45), ("late", 0.1), ("inflight", 0.1))


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
    on_flash: bool = False  # committed: restored at boot or seen intact on the flash
    acked: float | None = None  # when the host saw it acknowledged (None: a request in flight)


@dataclass
class Tally:
    cuts: int = 0
    by_mode: dict[str, int] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)
    cut_saves: dict[str, int] = field(default_factory=dict)  # cuts that tore a save, by mode
    aimed: dict[str, int] = field(default_factory=dict)  # where the aimed cuts stopped the board
    torn_aimed: int = 0  # aimed cuts strictly inside an erase or a program
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
            f"{sum(self.cut_saves.values())} ({fmt(self.cut_saves)}); aimed cuts stopped at: "
            f"{fmt(self.aimed)} (tearing {self.torn_aimed}); restored the newest "
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
        """One request: its reply and the events it caused (a ping marks their end: the link
        asked for an event after every request, `every 1`, so they come before its reply)."""
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

    def ask_every(self) -> None:
        """An event after every request, even for two sent together (exchange's request and
        ping): the board pushes once after what it read together otherwise."""
        reply, _ = self.exchange(b"every 1")
        assert reply.fields.get("every") == "1", reply

    def wait_hello(self) -> wire.Line:
        """Skip what the killed interpreter left half-written; return the new boot's hello,
        once the link has asked the new boot for an event after every request."""
        while True:
            got = self.readline()
            at = got.find(b"! hello ")
            if at >= 0:
                hello = wire.decode_line(got[at:])
                self.ask_every()
                return hello


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
    sim: VirtualControl,
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
    link.ask_every()
    models = [Model(GameState(), Settings())]
    history = [Entry(models[0].key(), {models[0].record()})]
    pid = int(sim.info()["pid"])
    last = b""  # the flash as the last cut left it
    wait_s = timing.max_ms / 1000 + 10  # a save is due by max_ms; the rest is a loaded machine

    def play(line: bytes, effect: object) -> None:
        nonlocal models
        reply, events = link.exchange(line)
        assert reply.kind == "ok", (line, reply)
        for m in models:
            effect(m)  # type: ignore[operator]
        for ev in events:
            if ev.name == "st":  # the board's state must be a model's (or the models' we keep)
                models = [m for m in models if m.shown() == shown_state(ev.fields)]
                assert models, f"the board left the model after {line!r}: {ev.fields}"
        records = {m.record() for m in models}
        if records != history[-1].records:  # (undo rows may change alone: `set` at 64 steps)
            history.append(Entry(models[0].key(), records, acked=time.monotonic()))
        tally.moves += 1

    def seen_on_flash() -> None:
        """The board is stopped at a flash point: its newest intact record is committed."""
        newest = ring_view(image.read_bytes()).newest
        if newest is not None:
            mark_committed(history, newest)

    def to_the_end(stop: FlashStop) -> FlashStop:
        """Run the stopped board on to the end of this save (its last page's end point)."""
        while stop.kind != "program":
            stop = run_to(sim, stop, stop.total + (stop.index == stop.total), wait_s)
            check_ring_block(stop, image)
        return to_the_entrys_end(sim, run_to(sim, stop, stop.total, wait_s), image, wait_s)

    while tally.cuts < cuts:
        for _ in range(rng.randint(1, 4)):
            line, effect = choose(rng, models[0])
            play(line, effect)
            if rng.random() < 0.08:  # let this one be saved: a commitment the rule holds to
                sim.break_at_flash_point(0)
                if saved_body(image) != body(models[0].record()):
                    to_the_end(sim.wait_flash_stop(wait_s))
                    seen_on_flash()
                sim.break_at_flash_point(-1)
        mode = rng.choices([m for m, _ in MODES], [w for _, w in MODES])[0]
        inflight = None
        aimed = ""  # where an aimed cut stopped the board
        stop: FlashStop | None = None  # the same, exactly
        last_stop = b""  # the flash at the aimed cut's first stop
        if mode == "now":
            pass
        elif mode == "window":
            time.sleep(rng.uniform(0, timing.quiet_ms / 1000))  # a random moment, not a wait
        elif mode in ("save", "late"):
            sim.break_at_flash_point(0)
            if mode == "save":  # a move after the arm, so that a save certainly follows
                inflight = move_to_save(rng, models[0], saved_body(image))
                link.send(inflight[0] + b"\n")
            if mode == "save" or saved_body(image) != body(models[0].record()):
                stop = sim.wait_flash_stop(wait_s)
                check_ring_block(stop, image)
                last_stop = image.read_bytes()
                seen_on_flash()
                if mode == "late":
                    stop = to_the_end(stop)
                    where = "end"
                else:
                    stop, where = aim_inside(rng, sim, stop, image, wait_s)
                aimed = f"{stop.kind} {where}"
            else:
                aimed = "on the flash already"
        else:  # a request on its way: it may or may not have been applied
            inflight = choose(rng, models[0])
            link.send(inflight[0] + b"\n")
            time.sleep(rng.uniform(0, 0.002))  # a random moment, not a wait
        cut_at = time.monotonic()
        vboard.reset()
        tally.cuts += 1
        tally.add(tally.by_mode, mode)
        if aimed:
            tally.add(tally.aimed, aimed)
        if inflight is not None:  # the state it would make is a candidate too, never certain
            after = [m.clone() for m in models]
            try:
                for m in after:
                    inflight[1](m)  # type: ignore[operator]
            except GameError:
                after = []
            if after and {m.record() for m in after} != history[-1].records:
                history.append(Entry(after[0].key(), {m.record() for m in after}))

        off = power_off_image(pid, image)
        flash = ring_view(off)
        # Damage in a block that changed since the last cut is this cut's (a block with a torn
        # entry or half erased is written again only after an erase).
        torn = {block for _, block in flash.damage if block_of(off, block) != block_of(last, block)}
        last = off
        if torn:
            tally.add(tally.cut_saves, mode)
        if stop is not None and aimed.endswith(" inside"):
            # Stopped between two pages of an entry, or inside an erase with data still to
            # erase: torn there.
            left = block_of(last_stop, stop.block)[stop.index * 256 :]
            if stop.kind == "program" or left != b"\xff" * len(left):
                assert stop.block in torn, f"a cut inside a save left no damage: {stop}"
                tally.torn_aimed += 1
        hello = link.wait_hello()
        pid = int(sim.info()["pid"])
        source = hello.fields.get("store", "?")
        tally.add(tally.sources, source)
        st, _ = link.exchange(b"st")
        cfg, _ = link.exchange(b"bright")
        got = state_key(st.fields, cfg.fields)
        models = check_restored(history, source, got, flash, tally, cut_at)
        history.append(
            Entry(
                got,
                {m.record() for m in models},
                on_flash=flash.newest is not None,
                acked=time.monotonic(),
            )
        )


def aim_inside(
    rng: random.Random, sim: VirtualControl, stop: FlashStop, image: Path, wait_s: float
) -> tuple[FlashStop, str]:
    """The board is stopped at the first flash point of a save: run it on to a point chosen at
    random in the save and leave it stopped there; with where it is in its operation ("start",
    "inside", "end"). Mostly strictly inside its erase or its entry's program (a block half
    erased; an entry torn: the store programs it a page per step, cribfw/ring.py), sometimes at a
    start or an end."""
    if stop.kind == "erase" and rng.random() < 0.5:  # somewhere in the erase
        stop = run_to(sim, stop, pick(rng, stop), wait_s)
        return stop, "start" if stop.index == 0 else "end" if stop.index == stop.total else "inside"
    if stop.kind == "erase":  # on to the program that follows it
        stop = run_to(sim, stop, stop.total + 1, wait_s)
        check_ring_block(stop, image)
    if stop.index == 0 and rng.random() < 0.15:
        return stop, "start"
    stop = run_to(sim, stop, stop.total, wait_s)  # this page programmed: the entry's header read
    pages, written = entry_progress(image, stop.block)
    left = 2 * (pages - written)  # points to the entry's end: each page's start and its end
    if left and rng.random() < 0.85:
        sim.break_at_flash_point(rng.randint(1, left - 1) if left > 1 else 1)
        stop = sim.wait_flash_stop(wait_s)
    pages, written = entry_progress(image, stop.block)
    return stop, "inside" if written < pages else "end"


def to_the_entrys_end(
    sim: VirtualControl, stop: FlashStop, image: Path, wait_s: float
) -> FlashStop:
    """The board stopped at the end of one page's program: run it on to the end of the entry's
    last page."""
    pages, written = entry_progress(image, stop.block)
    if written < pages:
        sim.break_at_flash_point(2 * (pages - written))
        stop = sim.wait_flash_stop(wait_s)
    return stop


def entry_progress(image: Path, block: int) -> tuple[int, int]:
    """(pages, pages programmed) of the last entry whose header is in `block` of the image: the
    entry being written (a page of a record is never all 0xFF: every one holds some of its
    fields or its crc32)."""
    data = block_of(image.read_bytes(), block)
    offset = -1
    at = 0
    pages = 0
    while at + 8 <= BLOCK:
        seq, length, check = struct.unpack_from("<IHH", data, at)
        if seq == 0xFFFFFFFF or length ^ check != 0xFFFF or at + 8 + length > BLOCK:
            break
        offset = at
        pages = (8 + length + 255) // 256
        at += pages * 256
    written = 0
    while written < pages and data[offset + written * 256 : offset + (written + 1) * 256] != (
        b"\xff" * 256
    ):
        written += 1
    return pages, written


def pick(rng: random.Random, stop: FlashStop) -> int:
    """A point of the operation the board is stopped in, from where it is to its end."""
    if stop.total - stop.index >= 2 and rng.random() < 0.75:
        return rng.randint(max(1, stop.index), stop.total - 1)
    return rng.randint(stop.index, stop.total)


def run_to(sim: VirtualControl, stop: FlashStop, index: int, wait_s: float) -> FlashStop:
    """Run the stopped board on to point `index` of its operation (one past its end: the next
    operation's first point)."""
    if index == stop.index:
        return stop
    sim.break_at_flash_point(index - stop.index)
    return sim.wait_flash_stop(wait_s)


def move_to_save(rng: random.Random, m: Model, saved: bytes | None) -> tuple[bytes, object]:
    """A random move after which the board certainly saves: its saved fields are neither the
    board's now nor those on the flash (cribfw.store writes nothing for a state equal to its
    last save)."""
    now = body(m.record())
    while True:
        line, effect = choose(rng, m)
        after = m.clone()
        try:
            effect(after)  # type: ignore[operator]
        except GameError:
            continue
        if body(after.record()) not in (now, saved):
            return line, effect


def body(record: bytes) -> bytes:
    """A game record's saved fields (cribfw/gamerecord.py): without its seq and crc32."""
    return record[6:8] + record[12:-4]


def saved_body(image: Path) -> bytes | None:
    """The saved fields of the newest intact record in the flash image now."""
    newest = ring_view(image.read_bytes()).newest
    return None if newest is None else body(newest)


def block_of(image: bytes, block: int) -> bytes:
    return image[block * BLOCK : (block + 1) * BLOCK]


def check_ring_block(stop: FlashStop, image: Path) -> None:
    blocks = image.stat().st_size // BLOCK
    assert blocks - STATE_BLOCKS <= stop.block < blocks, f"a flash write outside the ring: {stop}"


def mark_committed(history: list[Entry], record: bytes) -> None:
    """`record` was seen intact on the flash: its state (the newest one the host had with that
    record) is committed."""
    mine = model_from(record).record()  # as the host's records are: seq 0
    for entry in reversed(history):
        if mine in entry.records:
            entry.on_flash = True
            return
    raise AssertionError(f"the flash holds a state the board never had: {decode(record)}")


def power_off_image(pid: int, image: Path) -> bytes:
    """The flash image as the killed interpreter left it: read once the process is gone (the
    next one writes to the ring only after a change, which the host makes later)."""
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{pid}"):
        assert time.monotonic() < deadline, "the interpreter was not killed"
        time.sleep(0.0002)
    return image.read_bytes()


@dataclass(frozen=True)
class RingView:
    """The game's ring in a flash image, read here independently of cribfw/ring.py."""

    newest: bytes | None  # the newest record (by seq) that reads back intact
    torn_newer: bool  # an entry newer than it whose record does not read back
    damage: frozenset[tuple[str, int]]  # (what, block): entries torn, blocks half erased


def ring_view(image: bytes) -> RingView:
    """Parse the ring in the game's region of `image` (the entry format of cribfw/ring.py)."""
    blocks = len(image) // BLOCK
    entries: list[tuple[int, int, bytes]] = []  # seq, block, record
    damage: set[tuple[str, int]] = set()
    for block in range(blocks - STATE_BLOCKS, blocks):
        data = image[block * BLOCK : (block + 1) * BLOCK]
        offset = 0
        while offset + 8 <= BLOCK:
            seq, length, check = struct.unpack_from("<IHH", data, offset)
            if seq == 0xFFFFFFFF or length ^ check != 0xFFFF or offset + 8 + length > BLOCK:
                break
            entries.append((seq, block, data[offset + 8 : offset + 8 + length]))
            offset += (8 + length + 255) // 256 * 256
        if offset == 0 and data != b"\xff" * BLOCK:
            damage.add(("erase", block))  # an erase stopped part way
        if offset and data[offset:] != b"\xff" * (BLOCK - offset):
            damage.add(("header", block))  # a header not written whole after the last entry
    entries.sort()
    intact = [i for i, (_, _, rec) in enumerate(entries) if isinstance(decode(rec), tuple)]
    damage.update(("entry", block) for _, block, rec in entries if isinstance(decode(rec), int))
    newest = entries[intact[-1]][2] if intact else None
    torn_newer = bool(entries) and (not intact or intact[-1] < len(entries) - 1)
    return RingView(newest, torn_newer, frozenset(damage))


def check_restored(
    history: list[Entry],
    source: str,
    got: tuple[object, ...],
    flash: RingView,
    tally: Tally,
    cut_at: float = 0.0,
) -> list[Model]:
    """Check the restored state against the flash at the cut and the history (see the module
    docstring); return the model of the board it restored."""
    certain = [i for i, e in enumerate(history) if e.on_flash]
    context = (
        f"restored {got} from {source!r}; newest seen {history[-1].key}; last committed "
        f"{history[certain[-1]].key if certain else None}"
    )
    if flash.newest is None:
        expected = "fresh-corrupt" if flash.torn_newer else "fresh"  # saves, none readable
        assert source == expected, f"no intact save on the flash: {expected}: " + context
        assert not certain, "a committed state lost: " + context
        assert got == Model(GameState(), Settings()).key(), context
        tally.newest += got == history[-1].key
        tally.older += got != history[-1].key
        tally.lose(history, 0, cut_at)
        return [Model(GameState(), Settings())]
    expected = "backup" if flash.torn_newer else "saved"
    assert source == expected, f"the flash says {expected}: " + context
    last = model_from(flash.newest)
    assert got == last.key(), f"not the last save that completed ({last.key()}): " + context
    lower = certain[-1] if certain else 1
    mine = last.record()
    matches = [i for i in range(lower, len(history)) if mine in history[i].records]
    assert matches, "not a state the board had since the last committed one: " + context
    if got == history[-1].key:
        tally.newest += 1
    else:
        tally.older += 1
    tally.lose(history, matches[-1], cut_at)
    return [last]
