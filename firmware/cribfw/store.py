# The store: the whole board state (pegs, undo history, dealer, games won, target, settings) kept
# on the board's flash, so a game survives a power cut. Runs on MicroPython and CPython; the file
# system root is passed in (the board's littlefs is mounted at "/"), no hardware is created here.
#
# The record (version 1, little-endian; 52 bytes plus 28 per undo step, 1844 bytes at most):
#   0  b"CRIB"         magic
#   4  u8 version      1; another version is not read (never guessed at): `fresh-version`
#   5  u8 0            reserved
#   6  u16 body bytes  2 * (18 + undo steps * 14)
#   8  u32 seq         +1 on every save: the newest valid file wins at boot
#   12 body            18 int16s: players target dealer winner award x2 front[3] back[3] games[3]
#                      brightness budget_ma undo_count; then the undo rows, 14 int16s each, oldest
#                      first (GameState.undo_rows(): state.py's snapshot layout)
#   .. u32 crc32       binascii.crc32 of everything before it
# Where the state came from at boot, Store.source (the hello's `store=` field, so a reset is never
# silent): "saved" (the last save), "backup" (the last save was unreadable: the one before it),
# "fresh" (nothing saved: a new game), "fresh-corrupt" (saves exist, none readable: a new game),
# "fresh-version" (only saves of another record version: a new game; the next save replaces them).
# Not saved: the pending previews (a preview is not a move) and `rev` (it starts again at 0 after
# a restart; hosts resync on the `! hello` the board sends when it starts).
#
# Atomic save, three files in /state: <name>.dat (current), <name>.bak (backup), <name>.tmp.
#   1. write the whole record to .tmp and close it    (littlefs commits a file on close)
#   2. rename .dat -> .bak                            (the previous good state becomes the backup)
#   3. rename .tmp -> .dat
# A cut anywhere leaves a readable last-or-one-before state:
#   during 1:         .dat (last save) and .bak intact; .tmp is empty, partial or absent
#   between 1 and 2:  .tmp complete (newest), .dat (last), .bak (one before)
#   between 2 and 3:  .tmp complete (newest), .bak (last); .dat missing
#   after 3:          .dat (newest), .bak (last)
# Boot reads all three, validates each (magic, version, length, checksum, sane values) and takes
# the newest valid by seq; a record still in .tmp is then moved into place (steps 2 and 3 again).
# This relies on rename being atomic and replacing its target: true on littlefs (VfsLfs2, the
# MicroPython default on rp2 and esp32) and on POSIX (CPython tests). Not on FAT (VfsFat): there
# rename refuses an existing target, and removing the target first opens a window with no current
# file, and FAT updates are not atomic anyway. Keep the state on littlefs.
#
# When it writes: Store.run (a task for App.tasks) watches board.rev and the dispatcher's
# settings_rev and saves QUIET_MS after the last change, or MAX_MS after the first unsaved change
# if changes keep coming. Numbers:
#   QUIET_MS = 1000: longer than the gaps inside a burst (button presses 0.2-0.4 s apart while a
#     player counts up a hand, a host's resync or a string of undos), so a burst is one save;
#     shorter than the gap between real moves (a card played every few seconds), so in play a
#     cut loses at most the last second: about one save per move.
#   MAX_MS = 5000: bounds what a cut can lose while changes never pause.
# A change that leaves the saved fields as they were (a pending preview) writes nothing: the body's
# crc32 is compared with the last save's. Figures (bench/flash_bench.py): about 110 saves per
# 121-point game when a host pegs each score, 100 with +1 buttons (235 without the debounce);
# about 135 block erases per game; three games a night on a Pico 2 W's 2.5 MiB littlefs wear each
# block about 250 cycles a year on average, the most erased one about 900: a century or more
# before 100k-cycle NOR flash wears out.
#
# Wear: littlefs spreads the writes over all free blocks (dynamic wear leveling) and moves a
# metadata pair elsewhere after 100 erases (MicroPython's block_cycles). The files live in a
# directory of their own, not in the root: the root's metadata pair is the superblock, which
# wore twice as fast in bench/flash_bench.py (204 vs 103 erases of the worst block in 30 games).
#
# The module is kept small on purpose (few globals, functions and classes): its bytecode lives in
# the board's RAM next to everything else (see test_board_is_usable_in_a_64k_heap).
#
# Never during LED output: the save is one synchronous call, with no await inside, in the same
# asyncio loop as the render task, whose LED write is synchronous too (rp2's bitstream even runs
# with interrupts off); so the two cannot overlap. A save takes a few ms to tens of ms (a 4 KB erase
# on NOR flash): the loop pauses that long, once per move.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


import os
import struct

try:
    from binascii import crc32
except ImportError:  # a MicroPython build without binascii.crc32
    from zlib import crc32  # type: ignore[no-redef]

from cribcore.limits import MAX_BRIGHTNESS, MAX_BUDGET_MA, MIN_BUDGET_MA, TARGETS
from cribfw.clock import ticks_diff, ticks_ms

QUIET_MS = const(1000)
MAX_MS = const(5000)
STATE_DIR = "state"  # a directory of its own: see "Wear" at the top
BAD = const(0)  # decode(): damaged, truncated or impossible
OTHER_VERSION = const(1)  # decode(): an intact record of another version
_POLL_MS = const(50)
_VERSION = const(1)
_HEADER = const(12)
_FIXED = const(18)  # int16s before the undo rows; MAX_PLAYERS (3) values per list
_FRONT = const(6)  # front[3] at 6, back[3] at 9, games[3] at 12
_BRIGHT = const(15)
_BUDGET = const(16)
_UNDO = const(17)
_ROW = const(14)  # cribcore.state.SNAPSHOT_LEN
_MAX_RECORD = const(1844)  # _HEADER + 2 * (_FIXED + 64 * _ROW) + 4: a full undo ring (UNDO_DEPTH)


def encode(board, renderer, seq):
    """The record of `board` and the renderer's settings, as a bytearray."""
    rows = board.undo_rows()
    end = _HEADER + 2 * (_FIXED + len(rows) * _ROW)
    rec = bytearray(end + 4)
    struct.pack_into("<4sBBHI", rec, 0, b"CRIB", _VERSION, 0, end - _HEADER, seq)
    struct.pack_into(
        "<18h",
        rec,
        _HEADER,
        board.players,
        board.target,
        board.dealer,
        board.winner,
        board.award,
        1 if board.skunk_double else 0,
        board.front[0],
        board.front[1],
        board.front[2],
        board.back[0],
        board.back[1],
        board.back[2],
        board.games[0],
        board.games[1],
        board.games[2],
        renderer.brightness,
        renderer.budget_ma,
        len(rows),
    )
    at = _HEADER + 2 * _FIXED
    for row in rows:
        struct.pack_into("<14h", rec, at, *row)
        at += 2 * _ROW
    struct.pack_into("<I", rec, end, crc32(memoryview(rec)[:end]) & 0xFFFFFFFF)
    return rec


def decode(data):
    """(seq, fixed values, undo rows) from a record's bytes, or BAD or OTHER_VERSION. Checks
    magic, length, checksum, version and that every value is one the board can reach. Whatever
    a cut or a worn block left, it raises nothing but MemoryError."""
    try:
        if len(data) < _HEADER + 4 or data[:4] != b"CRIB":
            return BAD
        version = data[4]
        body, seq = struct.unpack_from("<HI", data, 6)
        end = _HEADER + body
        if (
            len(data) != end + 4
            or struct.unpack_from("<I", data, end)[0] != crc32(memoryview(data)[:end]) & 0xFFFFFFFF
        ):
            return BAD
        if version != _VERSION:
            return OTHER_VERSION
        count = (body - 2 * _FIXED) // (2 * _ROW)
        if body != 2 * (_FIXED + count * _ROW) or not 0 <= count <= 64:
            return BAD
        fixed = struct.unpack_from("<18h", data, _HEADER)
        if (
            fixed[_UNDO] != count
            or not _sane(fixed, _FRONT)
            or fixed[5] not in (0, 1)
            or not 0 <= fixed[_BRIGHT] <= MAX_BRIGHTNESS
            or not MIN_BUDGET_MA <= fixed[_BUDGET] <= MAX_BUDGET_MA
        ):
            return BAD
        rows = []
        for i in range(count):
            row = struct.unpack_from("<14h", data, _HEADER + 2 * (_FIXED + i * _ROW))
            if not _sane(row, 5):  # state.py's snapshot: players target dealer winner award
                return BAD
            rows.append(row)
        return seq, fixed, rows
    except MemoryError:
        raise  # not the record's fault: never judge a good save corrupt for want of memory
    except Exception:
        return BAD


def _sane(v, pegs):
    # players, target, dealer, winner, award at v[0..4], front[3] and back[3] from v[pegs]: a
    # state the board can reach. Games won are not bounded: the board can reach a negative count
    # (clear the games after a win, then take the win back).
    players = v[0]
    target = v[1]
    winner = v[3]
    if (
        players not in (2, 3)
        or target not in TARGETS
        or not 0 <= v[2] < players
        or not -1 <= winner < players
        or not 0 <= v[4] <= 2
        or (winner < 0) != (v[4] == 0)
    ):
        return False
    for p in range(3):
        front = v[pegs + p]
        if not 0 <= v[pegs + 3 + p] <= front <= target:
            return False
        if p < players and (front == target) != (p == winner):
            return False
    return True


def apply(rec, board, renderer):
    """Put a decoded record into `board` and the renderer's settings (rev is left alone)."""
    f = rec[1]
    board.players = f[0]
    board.target = f[1]
    board.dealer = f[2]
    board.winner = f[3]
    board.award = f[4]
    board.skunk_double = bool(f[5])
    for p in range(3):
        board.front[p] = f[_FRONT + p]
        board.back[p] = f[_FRONT + 3 + p]
        board.games[p] = f[_FRONT + 6 + p]
        board.pending[p] = 0
    board.load_undo_rows(rec[2])
    renderer.brightness = f[_BRIGHT]
    renderer.budget_ma = f[_BUDGET]


class Store:
    """The board state in files under `root` (a directory: "/state" on a board). Also decides
    when to save: `quiet_ms` after the last change, at most `max_ms` after the first unsaved
    one (times are ticks_ms() values; any int clock in tests and benchmarks)."""

    def __init__(self, root, name="cribboard", quiet_ms=QUIET_MS, max_ms=MAX_MS):
        base = root.rstrip("/") + "/" + name
        self.current = base + ".dat"
        self.backup = base + ".bak"
        self.tmp = base + ".tmp"
        self.quiet_ms = quiet_ms
        self.max_ms = max_ms
        self.poll_ms = max(5, min(_POLL_MS, quiet_ms // 4))
        self.seq = 0  # of the last save made or found
        self.source = "fresh"  # where load() found the state
        self.saves = 0  # records written since boot
        self.errors = 0  # saves that failed (flash full or failing); retried
        self._first = None  # time of the first unsaved change; None when all is saved
        self._last = 0  # time of the last change
        self._saved = None  # crc32 of the body on the flash, when known
        self._good = False  # .dat holds a valid record (so it may become the backup)

    # --- when ---------------------------------------------------------------------------------

    def changed(self, now):
        """The board or the settings changed at `now`."""
        if self._first is None:
            self._first = now
        self._last = now

    def due(self, now):
        """Whether a save is due at `now`."""
        return self._first is not None and (
            ticks_diff(now, self._last) >= self.quiet_ms
            or ticks_diff(now, self._first) >= self.max_ms
        )

    def save_due(self, board, renderer, now):
        """Save if one is due at `now`; True if a record was written. A failed save (flash
        full or failing, or no memory for the record) is counted in `errors` and tried again
        after another quiet period; it never stops the board."""
        if not self.due(now):
            return False
        self._first = None
        try:
            return self.save(board, renderer)
        except (OSError, MemoryError):
            self.errors += 1
            self.changed(now)
            return False

    async def run(self, app):
        """The store task (for App.tasks): debounced saves of app.board and its settings."""
        import asyncio

        board = app.board
        renderer = app.renderer
        dispatcher = app.dispatcher
        rev = board.rev
        settings = dispatcher.settings_rev
        while True:
            await asyncio.sleep_ms(self.poll_ms)
            now = ticks_ms()
            if board.rev != rev or dispatcher.settings_rev != settings:
                rev = board.rev
                settings = dispatcher.settings_rev
                self.changed(now)
            self.save_due(board, renderer, now)  # no await inside: never beside an LED write

    # --- the files ----------------------------------------------------------------------------

    def load(self, board, renderer):
        """Restore the newest valid state into `board` and `renderer` (left as they are when
        there is none); return where it came from (also kept in `source`)."""
        found = []  # per file: a record tuple, BAD, OTHER_VERSION, or None when missing
        for path in (self.current, self.tmp, self.backup):
            try:
                with open(path, "rb") as f:
                    found.append(decode(f.read(_MAX_RECORD + 1)))
            except OSError:
                found.append(None)
        best = -1
        for i in range(3):
            rec = found[i]
            if isinstance(rec, tuple):
                if best < 0 or rec[0] > found[best][0]:
                    best = i
                self.seq = max(self.seq, rec[0])  # never reuse a seq still on the flash
        self._good = isinstance(found[0], tuple)
        if best < 0:
            kept = (found[0], found[2])  # a stray .tmp alone: nothing was ever committed
            self.source = (
                "fresh-version"
                if OTHER_VERSION in kept
                else "fresh-corrupt"
                if BAD in kept
                else "fresh"
            )
        else:
            apply(found[best], board, renderer)
            self.source = "backup" if best == 2 else "saved"
            if best < 2:  # .dat holds it (once a cut save is settled below)
                self._saved = _body_crc(encode(board, renderer, 0))
        if found[1] is not None:  # a save was cut: finish it if it is the newest, else drop it
            try:
                if best == 1:
                    self._swap_in()
                else:
                    os.remove(self.tmp)
            except OSError:
                self._saved = None  # not settled: the next save writes in any case
        return self.source

    def save(self, board, renderer):
        """Write the state now unless the flash already holds it; True if written. One
        synchronous call from start to end. Raises OSError if the flash fails; the files are
        then as a cut at that point would leave them."""
        rec = encode(board, renderer, self.seq + 1)
        crc = _body_crc(rec)
        if crc == self._saved:
            return False
        with open(self.tmp, "wb") as f:
            f.write(rec)
        self._swap_in()
        self.seq += 1
        self._saved = crc
        self.saves += 1
        return True

    def _swap_in(self):
        # .dat -> .bak only when .dat is valid: a damaged .dat must not replace a good backup.
        if self._good:
            os.rename(self.current, self.backup)
        else:
            try:
                os.remove(self.current)
            except OSError:
                pass
        os.rename(self.tmp, self.current)
        self._good = True


def _body_crc(rec):
    # The saved fields alone (no header, no seq): equal bodies, equal state.
    return crc32(memoryview(rec)[_HEADER : len(rec) - 4]) & 0xFFFFFFFF


def attach(app, root, sim=False):
    """main()'s part: restore the saved state into `app` before its first frame (so the board
    shows it at once), let the hello say where it came from, add the store task. `root`: where
    the flash (littlefs) is mounted; the files go in its STATE_DIR. On the virtual board (`sim`)
    the environment variable CRIBBOARD_SIM_STORE_MS = "quiet,max" (ms) may shorten the delays,
    so tests can cut the power around many saves quickly: the same code with other numbers."""
    quiet_ms = QUIET_MS
    max_ms = MAX_MS
    timing = os.getenv("CRIBBOARD_SIM_STORE_MS") if sim else None
    if timing:
        quiet_ms, max_ms = [int(v) for v in timing.split(",")]
    root = root.rstrip("/") + "/" + STATE_DIR
    try:
        os.mkdir(root)
    except OSError:
        pass  # there already (or the flash is read-only: load finds nothing, saves fail)
    store = Store(root, quiet_ms=quiet_ms, max_ms=max_ms)
    app.dispatcher.store = store.load(app.board, app.renderer).encode()
    app.tasks.append(store.run)
    return store
