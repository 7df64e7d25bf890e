# The ring of records in a raw flash region (cribfw/ring.py) and the store kept in it: run under
# CPython (pytest) and MicroPython (mprun.py) on a NOR flash stand-in (checks.NorFlash) that
# erases to 0xFF, programs by clearing bits, and can lose power in the middle of either.
from checks import NorFlash

from cribcore.state import GameState
from cribfw.ring import AHEAD, PAGE, Ring
from cribfw.store import Store


class Settings:
    def __init__(self, brightness=128, budget_ma=400):
        self.brightness = brightness
        self.budget_ma = budget_ma


def record(i, size=40):
    """A record that checks itself: i, then size - 2 bytes of i, then its sum mod 256."""
    body = bytes([i & 0xFF] * (size - 1))
    return body + bytes([sum(body) & 0xFF])


def intact(data):
    return data if len(data) > 1 and sum(data[:-1]) & 0xFF == data[-1] else None


def newest(flash, first=0, count=None):
    ring = Ring(flash, first, count if count is not None else flash.count)
    return ring, ring.newest(intact)


def test_an_empty_region_holds_nothing():
    flash = NorFlash(count=4)
    _, found = newest(flash)
    assert found is None


def test_the_newest_record_wins_across_restarts():
    flash = NorFlash(count=4)
    ring, _ = newest(flash)
    for i in range(5):
        ring.append(record(i))
    _, found = newest(flash)
    assert found == record(4)
    ring, _ = newest(flash)  # a restart: appends go on in a fresh block
    ring.append(record(9))
    _, found = newest(flash)
    assert found == record(9)


def test_entries_take_whole_pages_and_a_block_holds_several():
    flash = NorFlash(count=4)
    ring, _ = newest(flash)
    for i in range(3):
        ring.append(record(i, 300))  # two pages each
    assert flash.erases == [1, 0, 0, 0]
    assert flash.data[2 * PAGE] != 0xFF and flash.data[4 * PAGE] != 0xFF
    ring.append(record(3, 2600))  # 11 pages: no room left in block 0's 16
    assert flash.erases == [1, 1, 0, 0]


def test_the_ring_wraps_erasing_the_oldest_block_never_the_newest():
    flash = NorFlash(count=3)
    ring, _ = newest(flash)
    for i in range(30):
        ring.append(record(i, 2000))  # two per block
        _, found = newest(flash)
        assert found == record(i, 2000)
    assert sum(flash.erases) == 15 and max(flash.erases) - min(flash.erases) <= 1


def test_a_cut_while_writing_keeps_the_record_before():
    for cut in (0, 3, 8, 100, 299):
        flash = NorFlash(count=3)
        ring, _ = newest(flash)
        ring.append(record(1, 300))
        ring.append(record(2, 300))
        flash.cut_after = cut
        try:
            ring.append(record(3, 300))
            raise AssertionError("the cut did not happen")
        except OSError:
            pass
        flash.cut_after = -1
        ring2, found = newest(flash)
        assert found == record(2, 300), cut
        ring2.append(record(4, 300))  # and the next boot writes on, in another block
        assert newest(flash)[1] == record(4, 300), cut


def test_a_cut_while_erasing_keeps_the_newest_record():
    flash = NorFlash(count=3)
    ring, _ = newest(flash)
    ring.append(record(1, 2000))
    ring.append(record(2, 2000))  # block 0 full
    flash.cut_after = 1000  # the erase of block 1 stops part way
    try:
        ring.append(record(3, 2000))
        raise AssertionError("the cut did not happen")
    except OSError:
        pass
    flash.cut_after = -1
    ring, found = newest(flash)
    assert found == record(2, 2000)
    ring.append(record(4))
    assert newest(flash)[1] == record(4)


def test_after_a_failed_write_the_ring_goes_on_in_another_block():
    flash = NorFlash(count=4)
    ring, _ = newest(flash)
    ring.append(record(1))
    flash.cut_after = 10
    try:
        ring.append(record(2))
    except OSError:
        pass
    flash.cut_after = -1
    ring.append(record(3))  # the same boot, the flash working again
    assert flash.erases == [1, 1, 0, 0]
    assert newest(flash)[1] == record(3)


def test_garbage_in_the_region_is_skipped():
    flash = NorFlash(count=4)
    ring, _ = newest(flash)
    ring.append(record(7))
    # Random-looking bytes in another block, including a header that claims a newer seq.
    at = 2 * flash.block_size
    flash.data[at : at + 8] = b"\xff\xff\xff\x7f\x10\x00\xef\xff"
    for i in range(8, 200):
        flash.data[at + i] = (i * 37) & 0xFF
    ring, found = newest(flash)
    assert found == record(7)
    ring.append(record(8))
    assert newest(flash)[1] == record(8)


def test_a_ring_in_part_of_a_device():
    flash = NorFlash(count=8)
    ring = Ring(flash, 5, 3)
    ring.newest(intact)
    for i in range(10):
        ring.append(record(i, 2000))
    assert flash.erases[:5] == [0] * 5
    assert Ring(flash, 5, 3).newest(intact) == record(9, 2000)


# --- erased ahead, written a page at a time ----------------------------------------------------


def good_block(flash, count):
    """The ring block holding the newest record that reads back intact (-1: none)."""
    ring = Ring(flash, 0, count)
    return ring._good if ring.newest(intact) is not None else -1


def test_erase_ahead_never_erases_the_block_holding_the_newest_record():
    for count in (1, 2, 3, 5):
        flash = NorFlash(count=count)
        ring, _ = newest(flash)
        assert not ring.erase_ahead()  # nothing written since the ring was read
        for i in range(25):
            ring.append(record(i, 1500))  # two per block
            before = good_block(flash, count)
            erased = list(flash.erases)
            ahead = 0
            while ring.erase_ahead():  # one block a call, up to AHEAD
                ahead += 1
            assert ahead <= AHEAD and (i > 0 or ahead == min(AHEAD, count - 1)), (count, i, ahead)
            after = [b for b in range(count) if flash.erases[b] != erased[b]]
            assert before not in after, (count, i)
            assert newest(flash)[1] == record(i, 1500), (count, i)
            assert not ring.erase_ahead()  # all erased until the ring moves on


def test_after_an_erase_ahead_a_save_only_programs():
    flash = NorFlash(count=4)
    ring, _ = newest(flash)
    ring.append(record(0, 1500))  # the first after the ring was read: a fresh block, erased
    for i in range(1, 40):
        while ring.erase_ahead():  # a quiet moment after each save
            pass
        erases = sum(flash.erases)
        ring.append(record(i, 1500))
        assert sum(flash.erases) == erases, i  # never an erase inline
        assert newest(flash)[1] == record(i, 1500)


def test_after_a_restart_the_first_entry_takes_a_fresh_block_then_the_ring_erases_ahead():
    flash = NorFlash(count=4)
    ring, _ = newest(flash)
    ring.append(record(1, 300))  # block 0 (erased first), room left in it
    ring, _ = newest(flash)  # a restart: never programs next to what a cut may have left
    assert not ring.erase_ahead() and flash.erases == [1, 0, 0, 0]  # restarts wear nothing
    ring.append(record(2, 300))
    assert flash.erases == [1, 1, 0, 0]  # the fresh block, erased inline
    assert ring.erase_ahead() and flash.erases == [1, 1, 1, 0]
    assert newest(flash)[1] == record(2, 300) and good_block(flash, 4) == 1


def test_a_storm_longer_than_the_room_erased_ahead_still_saves():
    flash = NorFlash(count=8)
    ring, _ = newest(flash)
    ring.append(record(0, 1500))
    while ring.erase_ahead():
        pass
    erases = sum(flash.erases)
    assert erases == 1 + AHEAD
    for i in range(1, 16):  # no quiet moment: two entries a block, then inline erases
        ring.append(record(i, 1500))
        assert newest(flash)[1] == record(i, 1500)
    # 15 entries: 1 more fits in block 0, 2 in each block erased ahead, the rest take a block
    # each two, erased inline.
    assert sum(flash.erases) - erases == (15 - 1 - 2 * AHEAD + 1) // 2


def test_a_save_in_steps_cut_at_every_page_keeps_the_one_before_or_the_new_one():
    size = 5 * PAGE - 8 - 20  # five pages with its header
    for first in (0, 2):  # the entry at the start of a block, or after others in it
        for pages in range(6):
            for within in (0, 1, PAGE // 2):  # the record's last byte is past PAGE // 2
                if pages == 5 and within:
                    continue
                flash = NorFlash(count=3)
                ring, _ = newest(flash)
                for i in range(first + 1):
                    ring.append(record(i, size if i == first else 300))
                ring.erase_ahead()
                old = newest(flash)[1]
                ring.begin(record(99, size))
                for _ in range(pages):
                    assert ring.step() == (_ < 4)
                flash.cut_after = within  # the power goes part way into the next page
                cut = False
                try:
                    ring.step()
                except OSError:
                    cut = True
                flash.cut_after = -1
                ring2, found = newest(flash)
                assert found == (record(99, size) if pages == 5 else old), (first, pages, within)
                assert cut == (pages < 5)
                ring2.append(record(100, 300))  # the next boot writes on
                assert newest(flash)[1] == record(100, 300)


def test_an_entry_left_part_written_is_never_programmed_beside():
    flash = NorFlash(count=3)
    ring, _ = newest(flash)
    ring.append(record(1, 300))
    ring.begin(record(2, 1000))
    ring.step()  # its task stopped here: the header page alone
    ring.append(record(3, 300))  # the app's last save
    assert flash.erases == [1, 1, 0]  # in a fresh block
    assert newest(flash)[1] == record(3, 300)


# --- the store in a ring ---------------------------------------------------------------------------


def test_the_store_keeps_the_game_in_a_ring():
    flash = NorFlash(count=4)
    game = GameState()
    game.peg(0, 12)
    game.peg(1, 7)
    store = Store(Ring(flash, 0, 4))
    assert store.load(GameState(), Settings()) == "fresh"
    assert store.save(game, Settings(90, 500))
    assert not store.save(game, Settings(90, 500))  # unchanged: nothing written
    again = GameState()
    settings = Settings()
    assert Store(Ring(flash, 0, 4)).load(again, settings) == "saved"
    assert again.front[:2] == [12, 7] and again.undo_count == 2
    assert (settings.brightness, settings.budget_ma) == (90, 500)


def test_a_save_cut_short_restores_the_one_before_and_says_so():
    flash = NorFlash(count=4)
    game = GameState()
    store = Store(Ring(flash, 0, 4))
    store.load(GameState(), Settings())
    game.peg(0, 5)
    store.save(game, Settings())
    game.peg(0, 6)
    flash.cut_after = 40  # the header and part of the record
    try:
        store.save(game, Settings())
    except OSError:
        pass
    flash.cut_after = -1
    again = GameState()
    store2 = Store(Ring(flash, 0, 4))
    assert store2.load(again, Settings()) == "backup"
    assert again.front[0] == 5
    assert store2.save(again, Settings())  # the restored state is written again, as newest
    assert Store(Ring(flash, 0, 4)).load(GameState(), Settings()) == "saved"


def test_a_region_of_garbage_is_a_fresh_game_that_says_so():
    flash = NorFlash(count=2)
    for i in range(len(flash.data)):
        flash.data[i] = (i * 131 + 7) & 0xFF
    # A header that reads right in front of a record that does not.
    flash.data[0:8] = b"\x01\x00\x00\x00\x20\x00\xdf\xff"
    game = GameState()
    assert Store(Ring(flash, 0, 2)).load(game, Settings()) == "fresh-corrupt"
    assert game.front[0] == 0


def test_a_save_in_steps_writes_the_state_it_started_with():
    flash = NorFlash(count=4)
    game = GameState()
    store = Store(Ring(flash, 0, 4))
    store.load(GameState(), Settings())
    for i in range(30):
        game.peg(i % 2, 2)
    assert store.start(game, Settings())
    game.peg(0, 5)  # a change while the pages go out: the next save's
    steps = 1
    while store.step():
        steps += 1
    assert steps == 4 and store.saves == 1  # 8 + 892 bytes: four pages, one per step
    again = GameState()
    assert Store(Ring(flash, 0, 4)).load(again, Settings()) == "saved"
    assert again.front[0] == 30 and again.undo_count == 30
    assert store.save(game, Settings())  # the change is not the saved state: written


# --- what the store says after damage: never "saved" for a save that may not be the last ---------


def _sessions(flash, count, saves_per_session):
    """Saves of a game in sessions (a restart between two: each session's first save takes a
    fresh block); returns the fronts saved, oldest first."""
    fronts = []
    game = GameState()
    for saves in saves_per_session:
        game = GameState()
        store = Store(Ring(flash, 0, count))
        store.load(game, Settings())
        for _ in range(saves):
            game.peg(len(fronts) % 2, 3)
            assert store.save(game, Settings())
            fronts.append(list(game.front[:2]))
    return fronts


def _load(flash, count):
    game = GameState()
    return Store(Ring(flash, 0, count)).load(game, Settings()), list(game.front[:2])


def test_a_damaged_header_in_the_last_sessions_block_is_a_backup_not_a_save():
    """B2: five saves, the last session's one block; byte 7 of that block (the first entry's
    header) 0xff -> 0x33: the save before it comes back, and the board says so."""
    flash = NorFlash(count=4)
    fronts = _sessions(flash, 4, (4, 1))
    assert _load(flash, 4) == ("saved", fronts[-1])
    last = flash.block_size  # the last session's block: the second
    assert flash.data[last + 7] == 0xFF
    flash.data[last + 7] = 0x33
    assert _load(flash, 4) == ("backup", fronts[-2])


def test_a_damaged_header_before_intact_entries_hides_nothing():
    flash = NorFlash(count=4)
    fronts = _sessions(flash, 4, (1, 3))
    flash.data[flash.block_size + 7] = 0x33  # the first of the last session's three
    assert _load(flash, 4) == ("saved", fronts[-1])


def test_a_region_overwritten_with_zeros_is_not_nothing_saved():
    """B3: programmed flash, not erased."""
    flash = NorFlash(count=4)
    _sessions(flash, 4, (2, 1))
    flash.data[:] = bytes(len(flash.data))
    assert _load(flash, 4) == ("fresh-corrupt", [0, 0])
    flash = NorFlash(count=4)
    flash.data[: flash.block_size] = bytes(flash.block_size)  # zeros where nothing was saved
    assert _load(flash, 4) == ("fresh-corrupt", [0, 0])
    assert _load(NorFlash(count=4), 4) == ("fresh", [0, 0])


def test_a_damaged_number_never_passes_an_old_save_for_the_last():
    """A header's seq is outside the record's checksum: the newest save's made low (it looks
    like the oldest block's) or an old save's made high (it looks newest). The saves' own
    numbers (inside their checksums) find the last one, which is there whole: saved."""
    for block, byte, value in ((0, 0, 0), (1, 3, 0x7F)):
        flash = NorFlash(count=4)
        fronts = _sessions(flash, 4, (1, 1, 1, 1, 1))  # one a block; the fifth wraps to block 0
        at = block * flash.block_size + byte  # seq 4 made 0 (block 0's before), seq 1 made huge
        assert flash.data[at] != value
        flash.data[at] = value
        source, front = _load(flash, 4)
        assert (source, front) == ("saved", fronts[-1]), (block, source, front, fronts)


def test_an_erase_cut_short_never_brings_back_the_oldest_save():
    """An erase that stops after its first bytes leaves the oldest block's first header with
    0xFF in its seq's low bytes: a number higher than every other, in front of a record that
    still reads. The newest save comes back, and it is the last (the cut save wrote nothing)."""
    for cut in (1, 2, 3):
        flash = NorFlash(count=4)
        fronts = _sessions(flash, 4, (1, 1, 1, 1))
        game = GameState()
        store = Store(Ring(flash, 0, 4))
        store.load(game, Settings())
        game.peg(0, 5)
        flash.cut_after = cut  # the save's erase of block 0, the oldest
        try:
            store.save(game, Settings())
            raise AssertionError("the cut did not happen")
        except OSError:
            pass
        flash.cut_after = -1
        source, front = _load(flash, 4)
        assert (source, front) == ("saved", fronts[-1]), (cut, source, front)
