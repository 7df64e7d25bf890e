# The store: the whole board state (pegs, undo history, dealer, games won, target, settings) kept
# on the board's flash, so a game survives a power cut. Runs on MicroPython and CPython; where it
# lives (a raw flash region, or a directory) is passed in, no hardware is created here.
#
# The record (cribfw/gamerecord.py) holds the pegs, the undo history, the dealer, the games won,
# the target, the skunk rule and the LED settings, with a seq (+1 on every save: the newest valid
# record wins at boot) and a crc32; and the ids of the requests that changed them, still in the
# resend memory (cribfw/replies.py), so that after a power cut the board recognises a resend of
# exactly the changes it brought back.
#
# Where the state came from at boot, Store.source (the hello's `store=` field, so a reset is never
# silent, nor a rollback): "saved" (the last save, and nothing on the flash could be a later
# one), "backup" (an earlier save: the last did not read back, or something that could have been
# a later one cannot be read: cribfw/ring.py's doubt), "fresh" (nothing was ever written: a new
# game), "fresh-corrupt" (something was written, no save reads back: a new game),
# "fresh-version" (only saves of another record version: a new game; the next save replaces them).
#
# Where it lives (Store's `place`): a Ring of records in a raw flash region outside the file
# system (cribfw/ring.py: the cribboard images for the Pico, the virtual board), where no damage
# to the file system can reach it and reading it cannot crash MicroPython; or, on a board running
# stock MicroPython, files on its littlefs (cribfw/storefiles.py: written atomically with a
# backup). Either way boot takes the newest record that reads back intact.
#
# When it writes: Store.run (a task for App.tasks) watches the game's rev and the context's
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
# The module is kept small on purpose (few globals, functions and classes): its bytecode lives in
# the board's RAM next to everything else (see test_board_is_usable_in_a_68k_heap).
#
# A save in a ring never holds the board for long (a request waits about one flash page, not a
# save): Store.run encodes the record whole in one turn of the asyncio loop (about 1.5-1.8 ms on a
# Pico with a game's undo history, its crc32s included), then the ring programs it one 256-byte
# page per turn (an entry of a game is 4-8 pages, about 0.65 ms each, the chip stalled while a
# page programs); a change made meanwhile is not part of this record but the next save's. A cut
# between two pages leaves an entry whose record fails its checks: the one before wins, as a
# cut inside one page always did. The 4 KB erases (about 45 ms each, the whole chip stalled) are
# done ahead, when nothing has changed for QUIET_MS, nothing is left to save and no request has
# come on any link for a whole poll (_POLL_MS, 50 ms): one block per poll, up to AHEAD (3) blocks
# (cribfw/ring.py, Ring.erase_ahead). So requests that come one after another (a host writing
# each as soon as the last reply came, reads too) are never held by an erase begun among them;
# a request that comes in one of those 45 ms, after a pause, waits for it. A save erases inline
# only:
#   - the first save after a boot (the ring then takes a fresh block, so it never programs
#     beside what a cut may have left);
#   - in changes that never pause for QUIET_MS, once the blocks erased ahead are full too: with a
#     game's entries (2-4 a block) at the earliest the 7th save, 30-35 s into nonstop changes
#     (saves MAX_MS apart), then every 2-4 saves; at a table a pause of a second comes first.
# In files (stock MicroPython) a save stays one call: see cribfw/storefiles.py.
#
# LED output goes on during a save: on rp2 the frame goes out by PIO and DMA from a buffer in
# RAM, and a flash program or erase only stops execute-in-place (MicroPython's rp2.Flash runs the
# SDK's flash_range_program and flash_range_erase with interrupts off and the other core paused;
# the DMA and the state machine read no flash and keep running). Elsewhere the LED write is a
# synchronous call in the same loop, so a save's page and a frame never overlap.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


import os

from cribfw.clock import ticks_diff, ticks_ms
from cribfw.gamerecord import OTHER_VERSION, apply, body_crc, decode, encode

QUIET_MS = const(1000)
MAX_MS = const(5000)
STATE_DIR = "state"  # a directory of its own: see "Wear" in cribfw/storefiles.py
_POLL_MS = const(50)


class Store:
    """The board state in one of two places: a directory of files on the flash file system
    (`place` a path: "/state" on a board running stock MicroPython) or a Ring of records in a raw
    flash region outside it (`place` a cribfw.ring.Ring: the cribboard images, the virtual board).
    Also decides when to save: `quiet_ms` after the last change, at most `max_ms` after the first
    unsaved one (times are ticks_ms() values; any int clock in tests and benchmarks). `books`:
    the board's resend memory (cribfw.replies.Books), its durable ids saved with the game and
    restored with it; None: the record keeps no ids."""

    def __init__(self, place, name="cribboard", quiet_ms=QUIET_MS, max_ms=MAX_MS, books=None):
        if isinstance(place, str):
            from cribfw.storefiles import StoreFiles

            self.place = StoreFiles(place, name)
        else:
            self.place = _RingPlace(place)
        self.books = books  # the resend memory whose durable ids are saved with the game
        self.quiet_ms = quiet_ms
        self.max_ms = max_ms
        self.poll_ms = max(5, min(_POLL_MS, quiet_ms // 4))
        self.seq = 0  # of the last save made or found
        self.source = "fresh"  # where load() found the state
        self.saves = 0  # records written since boot
        self.errors = 0  # saves that failed (flash full or failing); retried
        self.last_error = ""  # the last failure, for the board's health report (one word)
        self._first = None  # time of the first unsaved change; None when all is saved
        self._last = 0  # time of the last change
        self._heard = 0  # time of the last poll that found requests had come (any link)
        self._saved = None  # crc32 of the body on the flash, when known
        self._writing = None  # crc32 of the body being written (start, step)
        self.loaded_rev = 0  # the game's and the settings' revisions when the store was loaded
        self.loaded_settings = 0

    # --- when ---------------------------------------------------------------------------------

    def changed(self, now):
        """The board or the settings changed at `now`."""
        if self._first is None:
            self._first = now
        self._last = now

    def heard(self, now):
        """Requests came (any, reads too) since the last poll, which was poll_ms before `now`."""
        self._heard = now

    def erase_due(self, now):
        """Whether `now` is a time to erase ahead: nothing left to save, no change for quiet_ms
        and no request for a whole poll."""
        # (A request half the ticks period ago, 6 days, or more reads as a negative interval: long
        # ago all the same. A board played with its buttons alone never hears one.)
        return (
            self._first is None
            and ticks_diff(now, self._last) >= self.quiet_ms
            and not 0 <= ticks_diff(now, self._heard) < self.poll_ms
        )

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
        except (OSError, MemoryError) as err:
            self._failed(err, now)
            return False

    def _failed(self, err, now):
        self.errors += 1
        # One word, for the health report: "OSError:28" (the errno), "MemoryError".
        code = err.args[0] if err.args and isinstance(err.args[0], int) else None
        self.last_error = type(err).__name__ + ("" if code is None else ":%d" % code)
        self.changed(now)

    async def run(self, app):
        """The store task (for App.tasks): debounced saves of the game and the LED settings,
        written a page per turn of the loop; at a quiet moment, the ring's next block erased
        ahead."""
        import asyncio

        ctx = app.ctx
        game = ctx.game
        renderer = ctx.renderer
        dispatcher = app.dispatcher
        # The revisions the store holds: a change made before this task first runs (a request
        # handled as the app starts) is saved too.
        rev = self.loaded_rev
        settings = self.loaded_settings
        inputs = dispatcher.inputs
        while True:
            await asyncio.sleep_ms(self.poll_ms)
            now = ticks_ms()
            if dispatcher.inputs != inputs:
                inputs = dispatcher.inputs
                self.heard(now)
            if game.rev != rev or ctx.settings_rev != settings:
                rev = game.rev
                settings = ctx.settings_rev
                self.changed(now)
            if self.due(now):
                self._first = None
                try:
                    # The record is made whole first: a change from here on is the next save's.
                    if self.start(game, renderer):
                        while self.step():
                            await asyncio.sleep_ms(0)  # a request waits one page at most
                except (OSError, MemoryError) as err:
                    self._failed(err, now)
            elif self.erase_due(now):
                try:
                    self.place.erase_ahead()  # one block per turn
                except OSError as err:
                    self._failed(err, now)  # tried again after the next save

    # --- the flash ----------------------------------------------------------------------------

    def load(self, board, renderer):
        """Restore the newest valid state into `board` and `renderer` (left as they are when
        there is none); return where it came from (also kept in `source`)."""
        rec, self.source, seq, settled = self.place.load()
        self.seq = max(self.seq, seq)  # never reuse a seq still on the flash
        if rec is not None:
            apply(rec, board, renderer, self.books)
            if settled:  # the newest place holds it: an equal state needs no new save
                self._saved = body_crc(encode(board, renderer, 0, self.books))
        return self.source

    def save(self, board, renderer):
        """Write the state now unless the flash already holds it; True if written. One
        synchronous call from start to end (the file path, the app's end, tests). Raises OSError
        if the flash fails; what is on the flash is then as a cut at that point would leave it."""
        if not self.start(board, renderer):
            return False
        while self.step():
            pass
        return True

    def start(self, board, renderer):
        """Begin a save of the state unless the flash already holds it; True if begun: step()
        writes it. The record is encoded here, whole: later changes are not part of it."""
        rec = encode(board, renderer, self.seq + 1, self.books)
        crc = body_crc(rec)
        if crc == self._saved:
            return False
        self._saved = None
        self._writing = None
        self.place.begin(rec)
        self._writing = crc
        return True

    def step(self):
        """Write the next part of the save start() began (a flash page in a ring; a file is
        written whole by start); True while parts are left."""
        if self._writing is None:
            return False
        try:
            if self.place.step():
                return True
        except OSError:
            self._writing = None
            raise
        self.seq += 1
        self._saved = self._writing
        self._writing = None
        self.saves += 1
        return False


class _RingPlace:
    """The store's records in a Ring: the newest that reads back intact wins."""

    def __init__(self, ring):
        self.ring = ring

    def load(self):
        """(record or None, source, seq, settled), as StoreFiles.load."""
        seen = [0]  # bit 1: a damaged record, bit 2: a record of another version

        def accept(data):
            rec = decode(data)
            if isinstance(rec, tuple):
                return rec
            seen[0] |= 2 if rec == OTHER_VERSION else 1
            return None

        ring = self.ring
        rec = ring.newest(accept, _seq_of)
        if rec is None:
            # "fresh" only for a region with nothing written in it: anything else was a save.
            damaged = seen[0] & 1 or ring.doubt
            source = "fresh-version" if seen[0] & 2 else "fresh-corrupt" if damaged else "fresh"
            return None, source, 0, False
        # A later entry that did not read back, or signs of one (ring.doubt): the last save was
        # cut or damaged, or may have been (or is of another version). Never "saved" then: a
        # host is told.
        newest = not ring.doubt
        return rec, "saved" if newest else "backup", rec[0], newest

    def begin(self, rec):
        self.ring.begin(rec)

    def step(self):
        return self.ring.step()

    def erase_ahead(self):
        self.ring.erase_ahead()


def _seq_of(rec):
    """A decoded record's own seq (inside its crc32): the order of the saves."""
    return rec[0]


def attach(app, root, sim=False, ring=None):
    """main()'s part: restore the saved state into `app` before its first frame (so the board
    shows it at once), let the hello say where it came from, add the store task. The game lives
    in `ring` (a cribfw.ring.Ring in the image's raw flash region) when given, else in files in
    the STATE_DIR of `root`, where the flash file system is mounted. Returns that directory (other
    records kept as files go there too). On the virtual board (`sim`) the environment variable
    CRIBBOARD_SIM_STORE_MS = "quiet,max" (ms) may shorten the delays, so tests can cut the power
    around many saves quickly: the same code with other numbers."""
    quiet_ms = QUIET_MS
    max_ms = MAX_MS
    timing = os.getenv("CRIBBOARD_SIM_STORE_MS") if sim else None
    if timing:
        quiet_ms, max_ms = [int(v) for v in timing.split(",")]
    root = root.rstrip("/") + "/" + STATE_DIR
    if ring is None:
        try:
            os.mkdir(root)
        except OSError:
            pass  # there already (or the flash is read-only: load finds nothing, saves fail)
    ctx = app.ctx
    store = Store(
        ring if ring is not None else root, quiet_ms=quiet_ms, max_ms=max_ms, books=ctx.books
    )
    ctx.attach_store(store, store.load(ctx.game, ctx.renderer).encode())
    store.loaded_rev = ctx.game.rev
    store.loaded_settings = ctx.settings_rev
    app.tasks.append(store.run)
    return root
