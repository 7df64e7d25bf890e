# Store tests: run under CPython (pytest; a temporary directory) and MicroPython (mprun.py; a real
# littlefs2 file system, VfsLfs2, on a RAM block device mounted for each test).
import os
import struct
import sys

from cribcore.history import ENTRY, History
from cribcore.limits import HISTORY_KEPT, MATCH_BEST_OF, MAX_PLAYERS
from cribcore.protocol import VERBS, LineWriter
from cribcore.state import SNAPSHOT_LEN, UNDO_DEPTH, GameState
from cribfw.clock import ticks_add
from cribfw.gamerecord import BAD, MAX_RECORD, OTHER_VERSION, apply, decode, encode
from cribfw.replies import MAX_BOOKS, RECENT, Books
from cribfw.store import Store

try:
    from binascii import crc32
except ImportError:
    from zlib import crc32

MICROPYTHON = sys.implementation.name == "micropython"
# Where the state came from (Store.source, the hello's store= field)
SAVED = "saved"
BACKUP = "backup"
FRESH = "fresh"
FRESH_CORRUPT = "fresh-corrupt"
FRESH_VERSION = "fresh-version"


class Settings:
    """The renderer's saved settings, without a renderer."""

    def __init__(self, brightness=128, budget_ma=400):
        self.brightness = brightness
        self.budget_ma = budget_ma


class RamBlocks:
    """A RAM block device (MicroPython's extended protocol) for a real littlefs."""

    def __init__(self, block_size=512, count=128):
        self.block_size = block_size
        self.count = count
        self.data = bytearray(block_size * count)

    def readblocks(self, block, buf, offset=0):
        at = block * self.block_size + offset
        buf[:] = memoryview(self.data)[at : at + len(buf)]

    def writeblocks(self, block, buf, offset=None):
        at = block * self.block_size + (offset or 0)
        self.data[at : at + len(buf)] = buf

    def ioctl(self, op, arg):
        if op == 4:
            return self.count
        if op == 5:
            return self.block_size
        return 0


_mounts = [0]


def with_root(test):
    """Run test(root) on an empty file system: littlefs on MicroPython, a temp dir on CPython."""
    if MICROPYTHON:
        import vfs

        _mounts[0] += 1
        root = "/store_test_%d" % _mounts[0]
        device = RamBlocks()
        vfs.VfsLfs2.mkfs(device)
        vfs.mount(vfs.VfsLfs2(device), root)
        try:
            test(root)
        finally:
            vfs.umount(root)
    else:
        import shutil
        import tempfile

        root = tempfile.mkdtemp(prefix="cribstore-")
        try:
            test(root)
        finally:
            shutil.rmtree(root)


def kept_board():
    """A board that keeps its finished games, as the firmware's (cribfw/app.py)."""
    b = GameState()
    b.keep_history(History())
    return b


def state(board, settings):
    """Everything the store keeps, comparable."""
    history = board.history
    return (
        board.players,
        board.target,
        board.dealer,
        board.winner,
        board.award,
        bool(board.skunk_double),
        list(board.front),
        list(board.back),
        list(board.games),
        [list(row) for row in board.undo_rows()],
        settings.brightness,
        settings.budget_ma,
        board.game_no,
        (board.match_kind, board.match_len, board.match_no, board.match_game),
        history.won_at if history is not None else -1,
        [history.entry(i) for i in range(history.count)] if history is not None else [],
    )


def played():
    """A board with something in every saved field: a match, two games in the history."""
    b = kept_board()
    b.keep_history(History(uptime=lambda: 300))
    b.set_skunk_double(True)
    b.start_match(MATCH_BEST_OF, 3)
    b.set_pegs(0, 115, 100)
    b.set_pegs(1, 50, 40)
    b.peg(0, 8)  # a double skunk: two games, the match
    b.history.won_at = 290
    b.new_game(61)  # the next match
    b.set_pegs(1, 60, 50)
    b.peg(1, 1)
    b.new_game()
    b.peg(1, 12)
    b.peg(0, 5)
    b.peg(1, 3)
    b.undo()
    b.next_dealer()
    b.set_pending(0, 4)  # not saved
    return b, Settings(77, 900)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def reseal(rec):
    """Fix the checksum after editing a record."""
    end = len(rec) - 4
    struct.pack_into("<I", rec, end, crc32(memoryview(rec)[:end]) & 0xFFFFFFFF)
    return rec


def restored(root):
    b = kept_board()
    s = Settings()
    source = Store(root).load(b, s)
    return source, b, s


# --- round trip ------------------------------------------------------------------------------


def test_round_trip_of_every_field():
    def run(root):
        b, s = played()
        assert Store(root).save(b, s)
        source, b2, s2 = restored(root)
        assert source == SAVED
        assert state(b2, s2) == state(b, s)
        assert b2.game_no == 4 and b2.match_no == 3 and b2.target == 61 and b2.dealer == b.dealer
        assert b2.history.count == 2 and b2.history.life_base == 300
        assert b2.pending[0] == 0  # a preview is not a move
        # The undo history works as before the cut, down to the first move: the history's
        # games back on the board one by one, the match's.
        while b.undo_count:
            b.undo()
            b2.undo()
            assert state(b2, s2) == state(b, s)
        assert b2.undo_count == 0 and b2.game_no == 1 and b2.history.count == 0

    with_root(run)


def test_round_trip_three_players_and_a_full_undo_ring():
    def run(root):
        b = GameState(players=3)
        for i in range(UNDO_DEPTH + 20):
            b.peg(i % 3, 1 + i % 4)
        b.set_dealer(2)
        s = Settings(0, 150)
        assert b.undo_count == UNDO_DEPTH
        Store(root).save(b, s)
        source, b2, s2 = restored(root)
        assert source == SAVED and state(b2, s2) == state(b, s)
        assert b2.players == 3 and b2.undo_count == UNDO_DEPTH

    with_root(run)


def test_a_finished_game_round_trips():
    def run(root):
        b = GameState()
        b.set_pegs(1, 119, 100)
        b.set_pegs(0, 80, 70)
        b.peg(1, 5)
        s = Settings()
        Store(root).save(b, s)
        source, b2, s2 = restored(root)
        assert source == SAVED and state(b2, s2) == state(b, s)
        assert b2.winner == 1 and b2.result() == b.result()

    with_root(run)


def test_a_won_game_whose_games_were_cleared_round_trips():
    def run(root):
        b = GameState()
        b.set_pegs(0, 121, 100)
        b.reset_games()  # the win stays, its game is no longer in the tally
        s = Settings()
        Store(root).save(b, s)
        source, b2, s2 = restored(root)
        assert source == SAVED and state(b2, s2) == state(b, s)
        assert (b2.winner, b2.award, b2.games[0]) == (0, 0, 0)

    with_root(run)


def test_nothing_saved_is_a_fresh_game():
    def run(root):
        source, b, s = restored(root)
        assert source == FRESH
        assert state(b, s) == state(GameState(), Settings())

    with_root(run)


# --- saving -----------------------------------------------------------------------------------


def test_save_keeps_the_previous_state_as_backup():
    def run(root):
        store = Store(root)
        b = GameState()
        s = Settings()
        b.peg(0, 5)
        store.save(b, s)
        first = state(b, s)
        b.peg(1, 7)
        store.save(b, s)
        assert not exists(store.place.tmp)
        back = decode(read(store.place.backup))
        cur = decode(read(store.place.current))
        assert isinstance(back, tuple) and isinstance(cur, tuple)
        assert cur[0] == back[0] + 1
        b2 = GameState()
        s2 = Settings()
        apply(back, b2, s2)
        assert state(b2, s2) == first

    with_root(run)


def test_an_unchanged_state_is_not_written_again():
    def run(root):
        store = Store(root)
        b = GameState()
        s = Settings()
        b.peg(0, 5)
        assert store.save(b, s)
        assert not store.save(b, s)
        b.set_pending(1, 6)  # only the preview changed
        assert not store.save(b, s)
        s.brightness = 10
        assert store.save(b, s)
        assert store.saves == 2 and store.seq == 2
        # After a restart the state on the flash is known: no rewrite of the same state.
        again = Store(root)
        assert again.load(GameState(), Settings()) == SAVED
        assert not again.save(b, s)
        b.peg(0, 1)
        assert again.save(b, s) and again.seq == 3

    with_root(run)


def test_seq_continues_after_a_restart():
    def run(root):
        store = Store(root)
        b = GameState()
        s = Settings()
        for i in range(5):
            b.peg(i % 2, 3)
            store.save(b, s)
        assert store.seq == 5
        again = Store(root)
        again.load(GameState(), Settings())
        assert again.seq == 5
        b.peg(0, 1)
        again.save(b, s)
        assert decode(read(again.place.current))[0] == 6

    with_root(run)


# --- damage and cut saves ------------------------------------------------------------------------


def two_saves(root):
    """Save A then B; return (store, A, B) as state() tuples."""
    store = Store(root)
    b = GameState()
    s = Settings()
    b.peg(0, 5)
    store.save(b, s)
    a = state(b, s)
    b.peg(1, 9)
    b.next_dealer()
    store.save(b, s)
    return store, b, s, a, state(b, s)


def test_a_corrupt_current_file_falls_back_to_the_backup():
    def run(root):
        store, b, s, a, _ = two_saves(root)
        data = bytearray(read(store.place.current))
        data[len(data) // 2] ^= 0x40  # one bit flipped
        write(store.place.current, data)
        source, b2, s2 = restored(root)
        assert source == BACKUP and state(b2, s2) == a
        # The next save must not rotate the damaged file over the good backup.
        again = Store(root)
        again.load(GameState(), Settings())
        b.peg(0, 2)
        again.save(b, s)
        assert state(*restored(root)[1:]) == state(b, s)
        back = GameState()
        back_settings = Settings()
        apply(decode(read(store.place.backup)), back, back_settings)
        assert state(back, back_settings) == a

    with_root(run)


def test_a_missing_current_file_falls_back_to_the_backup():
    def run(root):
        store, _, _, a, _ = two_saves(root)
        os.remove(store.place.current)
        source, b2, s2 = restored(root)
        assert source == BACKUP and state(b2, s2) == a

    with_root(run)


def test_both_files_corrupt_is_a_fresh_game_that_says_so():
    def run(root):
        store, _, _, _, _ = two_saves(root)
        write(store.place.current, b"CRIB\x01garbage")
        data = bytearray(read(store.place.backup))
        data[-1] ^= 1  # the checksum itself
        write(store.place.backup, data)
        source, b2, s2 = restored(root)
        assert source == FRESH_CORRUPT
        assert state(b2, s2) == state(GameState(), Settings())

    with_root(run)


def test_a_truncated_tmp_is_ignored_and_removed():
    def run(root):
        store, b, s, _, last = two_saves(root)
        b.peg(0, 20)
        newer = encode(b, s, store.seq + 1)
        for cut in (0, 3, 12, len(newer) // 2, len(newer) - 1):
            write(store.place.tmp, newer[:cut])  # a save cut while writing .tmp
            source, b2, s2 = restored(root)
            assert source == SAVED and state(b2, s2) == last, cut
            assert not exists(store.place.tmp)

    with_root(run)


def test_a_stray_tmp_alone_means_nothing_was_saved():
    def run(root):
        b = GameState()
        b.peg(0, 3)
        write(Store(root).place.tmp, encode(b, Settings(), 1)[:40])  # the first save, cut
        source, b2, s2 = restored(root)
        assert source == FRESH and state(b2, s2) == state(GameState(), Settings())

    with_root(run)


def test_a_complete_tmp_is_the_newest_state_and_is_moved_into_place():
    def run(root):
        store, b, s, _, last = two_saves(root)
        b.peg(0, 20)
        newest = state(b, s)
        write(store.place.tmp, encode(b, s, store.seq + 1))  # cut after .tmp was closed
        source, b2, s2 = restored(root)
        assert source == SAVED and state(b2, s2) == newest
        assert not exists(store.place.tmp)
        assert decode(read(store.place.current))[0] == store.seq + 1
        assert decode(read(store.place.backup))[0] == store.seq  # `last` is the backup now
        # And cut between the two renames: no current file, .tmp and .bak hold the last two.
        b.peg(1, 2)
        write(store.place.tmp, encode(b, s, store.seq + 2))
        os.rename(store.place.current, store.place.backup)
        source, b3, s3 = restored(root)
        assert source == SAVED and state(b3, s3) == state(b, s)
        assert last != newest

    with_root(run)


def test_another_record_version_is_not_read():
    def run(root):
        store, b, s, a, _ = two_saves(root)
        rec = bytearray(read(store.place.current))
        rec[4] = 4  # a record of a future firmware, intact
        reseal(rec)
        assert decode(rec) == OTHER_VERSION
        write(store.place.current, rec)
        source, b2, s2 = restored(root)
        assert source == BACKUP and state(b2, s2) == a  # the backup is still version 3
        write(store.place.backup, rec)
        source, b3, s3 = restored(root)
        assert source == FRESH_VERSION and state(b3, s3) == state(GameState(), Settings())

    with_root(run)


def test_a_well_sealed_record_with_impossible_values_is_rejected():
    b, s = played()
    good = encode(b, s, 1)
    assert isinstance(decode(good), tuple)
    # Offsets: header 12 bytes, then int16s: players 12, target 14, dealer 16, winner 18,
    # award 20, x2 22, front 24.., back 30.., games 36.., brightness 42, budget 44, undo count 46;
    # the game's numbers: life 48, game 52, match 56, won at 60, match game 64, form 66, games
    # in the history 67; the first undo row from 68 (its target at 70, its award at 76), the
    # history's games after the undo rows.
    rows_end = 68 + 28 * b.undo_count
    for offset, value, kind in (
        (12, 5, "<h"),
        (14, 100, "<h"),
        (16, 2, "<h"),
        (18, 0, "<h"),
        (18, 2, "<h"),
        (20, 1, "<h"),
        (22, 2, "<h"),
        (24, 130, "<h"),
        (30, 6, "<h"),
        (36, -1, "<h"),
        (42, 300, "<h"),
        (44, 20, "<h"),
        (46, 7, "<h"),
        (52, 0, "<I"),  # games are numbered from 1
        (60, 10, "<i"),  # a win's time without a winner
        (64, 0, "<H"),  # a match without its game
        (66, 0x04, "<B"),  # best of 4
        (66, 0, "<B"),  # a game of a match without one
        (67, 33, "<B"),  # more games than the history keeps
        (68, 4, "<h"),
        (68, 2 | 7 << 2 | 0x02 << 5, "<h"),  # an undo step back to a best of 2
        (70, 99, "<h"),
        (76, 3, "<h"),
        (rows_end, 0, "<I"),  # a finished game numbered 0
        (rows_end + 14, 100, "<B"),  # of 100 points
        (rows_end + 15, 0x2C, "<B"),  # won by a third player of two
        (rows_end + 16, 61, "<B"),  # the winner short of the win hole
    ):
        rec = bytearray(good)
        struct.pack_into(kind, rec, offset, value)
        assert decode(reseal(rec)) == BAD, (offset, value)
    assert decode(good[:-1]) == BAD
    assert decode(good + b"\0") == BAD
    assert decode(b"") == BAD
    assert decode(b"\xff" * 2000) == BAD
    assert decode(b"CRIB" + bytes(20)) == BAD


def test_the_record_layout_matches_the_board():
    # gamerecord.py writes 3 values per list and 14 per undo row, and reads at most a full ring,
    # a full history.
    assert MAX_PLAYERS == 3 and SNAPSHOT_LEN == 14 and UNDO_DEPTH == 64
    assert ENTRY == 28 and HISTORY_KEPT == 32
    b = kept_board()
    for i in range(UNDO_DEPTH + 1):
        b.peg(i % 2, 1)
    assert len(encode(b, Settings(), 1)) == 1865  # no ids: their count alone
    # a full history
    for i in range(HISTORY_KEPT + 3):
        b.set_pegs(0, 121, 120)
        b.new_game()
        assert b.history.count == min(i + 1, HISTORY_KEPT)
    for i in range(UNDO_DEPTH + 1):
        b.peg(i % 2, 1)
    assert len(encode(b, Settings(), 1)) == 1865 + HISTORY_KEPT * ENTRY
    # and every book of the resend memory full of durable 8-character ids
    books = Books()
    books.most = MAX_BOOKS
    reply = LineWriter(16)
    reply.text(b"ok r=1\n")
    for k in range(MAX_BOOKS):
        book = books.usb if k == 0 else books.join(bytes((0, 0, 0, 0, 0, 0, k)), _nobody)
        for i in range(RECENT + 3):
            book.remember(b"%08d" % i, 0, 8, reply, VERBS.index(b"peg"))
    rec = encode(b, Settings(), 1, books)
    assert len(rec) == MAX_RECORD
    assert 8 + MAX_RECORD <= 4096  # a ring entry (its header, then the record) fits a block
    kept = decode(rec)[3]
    assert [sender for sender, _ in kept] == [bytes(book.sender) for book in books.books]
    assert all(ids == [b"%08d" % i for i in range(3, RECENT + 3)] for _, ids in kept)


def _nobody(address):
    return False


# --- when to save --------------------------------------------------------------------------------


def test_saves_wait_for_quiet_and_are_bounded_in_a_burst():
    def run(root):
        store = Store(root, quiet_ms=1000, max_ms=5000)
        b = GameState()
        s = Settings()
        assert not store.save_due(b, s, 0)  # nothing changed
        b.peg(0, 2)
        store.changed(0)
        assert not store.save_due(b, s, 999)
        assert store.save_due(b, s, 1000) and store.saves == 1
        assert not store.save_due(b, s, 6000)  # saved: nothing due
        # A burst of changes 300 ms apart: never a quiet second, so the bound saves after 5 s.
        t = 10000
        while not store.save_due(b, s, t):
            b.peg(t // 300 % 2, 1)
            store.changed(t)
            t += 100
            if store.save_due(b, s, t):
                break
            t += 200
        assert 15000 <= t < 15300 and store.saves == 2
        # A change that leaves the saved fields alone (a preview) is due but writes nothing.
        b.set_pending(1, 5)
        store.changed(20000)
        assert not store.save_due(b, s, 21000) and store.saves == 2
        assert not store.due(22000)

    with_root(run)


def test_blocks_are_erased_ahead_only_between_requests_and_never_among_them():
    # An erase ahead holds the whole chip for 45 ms: never while requests come one after another
    # (a host writing each as soon as the last reply came, reads too), only once a whole poll of
    # the store's (50 ms) has passed without one, after a quiet second with nothing to save.
    def run(root):
        store = Store(root, quiet_ms=1000, max_ms=5000)
        assert store.poll_ms == 50
        b = GameState()
        s = Settings()
        b.peg(0, 2)
        store.changed(0)
        assert not store.erase_due(999)  # a change not yet a second old
        assert not store.erase_due(1000)  # saved first: a save is due
        assert store.save_due(b, s, 1000)
        assert store.erase_due(1000)  # saved, a second without a change, nothing asked
        for t in range(1000, 3000, 50):  # requests came before each poll for two seconds
            store.heard(t)
            assert not store.erase_due(t) and not store.erase_due(t + 49)
        assert store.erase_due(3000)  # a poll with none since the last
        b.peg(1, 3)
        store.changed(4000)
        store.heard(4000)
        assert not store.erase_due(5500)  # something to save
        assert store.save_due(b, s, 5500)
        assert store.erase_due(5500)
        store.heard(5550)
        assert not store.erase_due(5599) and store.erase_due(5600)
        # MicroPython's ticks wrap: a request more than half their period ago is long ago.
        period = ticks_add(0, -1) + 1  # (CPython's stand-in never wraps: 0)
        quarter = period // 4 + 500
        store.heard(ticks_add(ticks_add(5600, -quarter), -quarter))
        assert store.erase_due(5600)

    with_root(run)


def test_a_failed_save_is_retried():
    def run(root):
        store = Store(root + "/missing-dir", quiet_ms=100, max_ms=500)
        b = GameState()
        s = Settings()
        b.peg(0, 1)
        store.changed(0)
        assert not store.save_due(b, s, 100)  # cannot write there
        assert store.errors == 1 and store.due(200)
        os.mkdir(root + "/missing-dir")
        assert store.save_due(b, s, 200) and store.saves == 1
        assert not store.due(1000)
        assert restored(root + "/missing-dir")[0] == SAVED

    with_root(run)


def test_no_memory_for_a_save_is_a_failed_save_not_a_crash():
    class Starved(GameState):
        def pack_undo(self, buf, at):
            raise MemoryError("memory allocation failed")

    def run(root):
        store = Store(root, quiet_ms=100, max_ms=500)
        b = Starved()
        b.peg(0, 4)
        store.changed(0)
        assert not store.save_due(b, Settings(), 100)
        assert store.errors == 1 and store.due(200) and store.saves == 0

    with_root(run)


def test_the_undo_rows_go_into_the_record_as_undo_rows_gives_them():
    from cribcore import state

    for moves in (0, 1, 30, 64, 100):  # none, some, the ring full, the ring wrapped
        b = GameState()
        for i in range(moves):
            if b.winner >= 0:
                b.new_game()
            else:
                b.peg(i % 2, 1 + i % 5)
        rows = b.undo_rows()
        expect = b"".join(struct.pack("<14h", *row) for row in rows)
        for little in (True, False):  # the ring's bytes copied, or packed value by value
            was = state._LITTLE
            state._LITTLE = little and was
            try:
                buf = bytearray(len(expect) + 6)
                assert b.pack_undo(buf, 2) == 2 + len(expect), moves
                assert bytes(buf[2:-4]) == expect and buf[:2] == b"\0\0", (moves, little)
            finally:
                state._LITTLE = was
