"""The store in a ring of records (cribfw/store.py, cribfw/ring.py) tells the truth about where its
state came from, whatever a power cut or a damaged flash left (docs/protocol.md, section 3, the
hello's `store`), checked with Hypothesis on the NOR flash stand-in (tests/core/checks.py).

A history of saves (games of every size of undo history, so entries of one to several pages),
restarts, quiet moments (blocks erased ahead) and power cuts in the middle of a save or an erase,
on a ring small enough to wrap; then random damage: bytes changed anywhere in the region or only
where something was written, a bit flipped, a page or a block overwritten with zeros. Then a
restart, and what it restored must agree with what it says:

- `saved` only for the last save that completed: never an older one (no silent rollback);
- whatever comes back is a save that completed, or a new game;
- `fresh` only where nothing was ever saved: a region that held a save is never "nothing saved";
- with damage to records alone (their headers intact), exactly the newest save whose record
  still reads, `saved` when it is the last one, else `backup` (or `fresh-corrupt` when none);
- during the history, without damage: after a cut, `backup` exactly when the cut had programmed
  part of the save's entry, else `saved`; the state is the last save that completed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from types import SimpleNamespace

from checks import NorFlash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cribcore.state import GameError, GameState
from cribfw import gamerecord
from cribfw.ring import PAGE, Ring
from cribfw.store import Store

BLOCKS = 5
BLOCK = 4096
HEADER = 8


def fresh_settings() -> SimpleNamespace:
    return SimpleNamespace(brightness=128, budget_ma=400)


def body(game: GameState, lights: SimpleNamespace) -> bytes:
    """A state's saved fields, as a record holds them (without its seq and crc32)."""
    record = gamerecord.encode(game, lights, 0)
    return bytes(record[6:8] + record[12:-4])


class Board:
    """The store as a board runs it: a game, its settings and its ring on `flash`."""

    def __init__(self, flash: NorFlash) -> None:
        self.flash = flash
        self.game = GameState()
        self.lights = fresh_settings()
        self.store = Store(Ring(flash, 0, BLOCKS))
        self.source = self.store.load(self.game, self.lights)

    def state(self) -> bytes:
        return body(self.game, self.lights)


def change(game: GameState, move: int) -> None:
    """A move that changes the game (its undo history grows, or a new game shrinks it)."""
    try:
        if move % 11 == 10:
            game.new_game()
        elif move % 11 == 9:
            game.undo()
        else:
            game.peg(move % 2, 1 + move % 29)
    except GameError:
        game.new_game()


@dataclass
class Entry:
    """An entry of the ring as this test reads the flash (the format of cribfw/ring.py)."""

    seq: int
    at: int  # the header's first byte in the region
    length: int
    intact: bool  # its record reads back

    def record(self) -> range:
        return range(self.at + HEADER, self.at + HEADER + self.length)

    def padding(self) -> range:
        end = self.at + (HEADER + self.length + PAGE - 1) // PAGE * PAGE
        return range(self.at + HEADER + self.length, end)


def entries(data: bytes) -> list[Entry]:
    """Every entry whose header reads, oldest first: each block's slots from its start, a page at
    a time past one that does not read, to the first erased one."""
    found = []
    for block in range(BLOCKS):
        offset = 0
        while offset + HEADER <= BLOCK:
            at = block * BLOCK + offset
            head = data[at : at + HEADER]
            if head == b"\xff" * HEADER:
                break
            seq, length, check = struct.unpack("<IHH", head)
            if length ^ check != 0xFFFF or not 0 < length <= BLOCK - offset - HEADER:
                offset += PAGE
                continue
            record = data[at + HEADER : at + HEADER + length]
            found.append(Entry(seq, at, length, isinstance(gamerecord.decode(record), tuple)))
            offset += (HEADER + length + PAGE - 1) // PAGE * PAGE
    return sorted(found, key=lambda e: (e.seq, e.at))


def restored(flash: NorFlash) -> tuple[bytes | None, str]:
    """What a restart brings back (None: a new game) and where the board says it came from."""
    board = Board(flash)
    return (None if board.store.source.startswith("fresh") else board.state()), board.source


def expected_sources(flash: NorFlash, saved: list[bytes], torn: bool | None) -> tuple[str, ...]:
    """Where a restart without damage may say its state came from: the last save, unless a cut
    left part of a later one (torn True: it did) or may have (None: an earlier cut did, which
    a later cut's erase may have taken away; or an erase was cut short, which can leave a
    block's first header in pieces, a later save's for all the board can tell). "fresh"
    exactly when nothing is on the flash."""
    if not saved:
        return ("fresh",) if flash.data == b"\xff" * len(flash.data) else ("fresh-corrupt",)
    return {True: ("backup",), False: ("saved",), None: ("saved", "backup")}[torn]


# --- the history ---------------------------------------------------------------------------------

save = st.tuples(st.just("save"), st.integers(0, 10**6), st.integers(1, 6))
steps = st.lists(
    st.one_of(
        save,
        save,
        save,
        st.tuples(st.just("restart"), st.just(0), st.just(0)),
        st.tuples(st.just("quiet"), st.just(0), st.just(0)),
        # a cut after that many bytes of the next save's erase and program (a block's erase
        # is 4096), or of the erases ahead
        st.tuples(st.just("cut"), st.integers(0, 5000), st.integers(1, 6)),
        st.tuples(st.just("cut ahead"), st.integers(0, 9000), st.just(0)),
    ),
    min_size=1,
    max_size=60,
)


def play(history: list[tuple[str, int, int]]) -> tuple[NorFlash, list[bytes]]:
    """Run the history; check every restart in it; return the flash and the states saved (the
    saves that completed), oldest first."""
    flash = NorFlash(count=BLOCKS)
    board = Board(flash)
    assert board.source == "fresh"
    saved: list[bytes] = []
    # A cut left part of a save's entry on the flash since the last save that completed: True
    # (the last cut did), None (it may have: see expected_sources), False (none).
    torn: bool | None = False
    for kind, seed, moves in history:
        if kind in ("save", "cut"):
            for i in range(moves):
                change(board.game, seed + i)
            before = bytes(flash.data)
            flash.cut_after = seed if kind == "cut" else -1
            try:
                if board.store.save(board.game, board.lights):
                    saved.append(board.state())
                    torn = False
                    continue
            except OSError:
                pass
            else:
                continue  # the flash already held that state: nothing to cut
            finally:
                flash.cut_after = -1
            # The power went during the save: a restart. (A cut in the last page's padding
            # leaves the whole record: the save completed.)
            attempt = board.state()
            programmed = any(a == 0xFF != b for a, b in zip(before, flash.data, strict=True))
            erased = any(a != 0xFF == b for a, b in zip(before, flash.data, strict=True))
            torn = True if programmed else None if erased or torn is None else torn
            board = Board(flash)
            if board.state() == attempt and board.source == "saved":
                saved.append(attempt)
                torn = False
                continue
            state, source = (None if not saved else board.state()), board.source
            assert state == (saved[-1] if saved else None), "not the last save that completed"
            assert source in expected_sources(flash, saved, torn), (source, programmed, torn)
        elif kind == "quiet":
            while board.store.place.erase_ahead():
                pass
        elif kind == "cut ahead":
            before = bytes(flash.data)
            flash.cut_after = seed
            try:
                while board.store.place.erase_ahead():
                    pass
            except OSError:
                pass
            flash.cut_after = -1
            if flash.data != before:  # an erase cut short
                torn = None
            board = Board(flash)
            assert board.source in expected_sources(flash, saved, torn), (board.source, torn)
            assert (board.state() if saved else None) == (saved[-1] if saved else None)
        else:  # a restart with everything saved
            if board.store.save(board.game, board.lights):
                saved.append(board.state())
                torn = False
            board = Board(flash)
            assert board.source in expected_sources(flash, saved, torn), (board.source, torn)
    return flash, saved


# --- the damage ------------------------------------------------------------------------------------


def points(values: st.SearchStrategy[int], most: int) -> st.SearchStrategy[list[tuple[int, int]]]:
    return st.lists(st.tuples(st.integers(0), values), min_size=1, max_size=most)


damages = st.one_of(
    st.tuples(st.just("bytes"), points(st.integers(0, 255), 4)),
    st.tuples(st.just("written"), points(st.integers(0, 255), 4)),
    st.tuples(st.just("bit"), points(st.integers(0, 7), 1)),
    st.tuples(st.just("zero page"), points(st.just(0), 1)),
    st.tuples(st.just("zero block"), points(st.just(0), 1)),
)


def damage(data: bytearray, how: tuple[str, list[tuple[int, int]]]) -> None:
    kind, points = how
    size = len(data)
    written = [i for i in range(size) if data[i] != 0xFF] or list(range(size))
    for where, value in points:
        if kind == "bytes":
            data[where % size] = value
        elif kind == "written":
            data[written[where % len(written)]] = value
        elif kind == "bit":
            data[written[where % len(written)]] ^= 1 << value
        else:
            span = PAGE if kind == "zero page" else BLOCK
            start = where % size // span * span
            data[start : start + span] = bytes(span)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(history=steps, how=damages)
def test_the_store_says_where_its_state_came_from_whatever_the_damage(
    history: list[tuple[str, int, int]], how: tuple[str, list[tuple[int, int]]]
) -> None:
    flash, saved = play(history)
    before = bytes(flash.data)
    damage(flash.data, how)
    changed = [i for i in range(len(before)) if before[i] != flash.data[i]]
    state, source = restored(flash)
    context = (source, how[0], len(saved))
    assert state is None or state in saved, "a state that was never saved: " + repr(context)
    if source == "saved":
        assert saved and state == saved[-1], "an older save said to be the last: " + repr(context)
    if saved:
        assert source != "fresh", "a region that held a save said to hold none: " + repr(context)
    # Damage to records alone (every header as it was): the newest save that still reads.
    old = entries(before)
    inside = set()
    for entry in old:
        inside.update(entry.record())
        inside.update(entry.padding())
    if changed and all(i in inside for i in changed) and history[-1][0] not in ("cut",):
        now = entries(bytes(flash.data))
        intact = [e for e in now if e.intact]
        if not intact:
            assert (state, source) == (None, "fresh-corrupt"), context
        else:
            expected = "saved" if intact[-1] is now[-1] else "backup"
            assert source == expected, context
            record = bytes(flash.data[intact[-1].record().start : intact[-1].record().stop])
            game = GameState()
            lights = fresh_settings()
            decoded = gamerecord.decode(record)
            assert isinstance(decoded, tuple)
            gamerecord.apply(decoded, game, lights)
            assert state == body(game, lights), context


def test_a_ring_overwritten_with_zeros_is_a_new_game_that_says_so() -> None:
    """Programmed flash, not erased: saves that are gone, not "nothing saved" (B3)."""
    flash, saved = play([("save", 1, 3), ("restart", 0, 0), ("save", 7, 2)])
    assert len(saved) == 2
    flash.data[:] = bytes(len(flash.data))
    assert restored(flash) == (None, "fresh-corrupt")
