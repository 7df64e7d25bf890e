# The store's records as files on the flash file system (littlefs): where a board running stock
# MicroPython keeps its game (the record: cribfw/gamerecord.py; when it is written:
# cribfw/store.py; the cribboard images keep it in a raw flash region instead, cribfw/ring.py).
#
# Atomic save, three files in the directory: <name>.dat (current), <name>.bak (backup),
# <name>.tmp.
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
# Wear: littlefs spreads the writes over all free blocks (dynamic wear leveling) and moves a
# metadata pair elsewhere after 100 erases (MicroPython's block_cycles). The files live in a
# directory of their own, not in the root: the root's metadata pair is the superblock, which
# wore twice as fast in bench/flash_bench.py (204 vs 103 erases of the worst block in 30 games).

import os

from cribfw import flashrecord
from cribfw.gamerecord import BAD, MAX_RECORD, OTHER_VERSION, decode


class StoreFiles:
    """Records in `root`/<name>.dat, .bak and .tmp."""

    def __init__(self, root, name):
        base = root.rstrip("/") + "/" + name
        self.current = base + ".dat"
        self.backup = base + ".bak"
        self.tmp = base + ".tmp"
        self._good = False  # .dat holds a valid record (so it may become the backup)

    def load(self):
        """(the newest valid record or None, source, the highest seq on the flash, settled: the
        record is in .dat now, so an equal state needs no new save)."""
        found = []  # per file: a record tuple, BAD, OTHER_VERSION, or None when missing
        for path in (self.current, self.tmp, self.backup):
            data = flashrecord.read(path, MAX_RECORD + 1)
            found.append(None if data is None else decode(data))
        best = -1
        seq = 0
        for i in range(3):
            rec = found[i]
            if isinstance(rec, tuple):
                if best < 0 or rec[0] > found[best][0]:
                    best = i
                seq = max(seq, rec[0])
        self._good = isinstance(found[0], tuple)
        if best < 0:
            kept = (found[0], found[2])  # a stray .tmp alone: nothing was ever committed
            if OTHER_VERSION in kept:
                source = "fresh-version"
            elif BAD in kept:
                source = "fresh-corrupt"
            else:
                source = "fresh"
        else:
            source = "backup" if best == 2 else "saved"
        settled = 0 <= best < 2  # .dat holds it (once a cut save is settled below)
        if found[1] is not None:  # a save was cut: finish it if it is the newest, else drop it
            try:
                if best == 1:
                    self._swap_in()
                else:
                    os.remove(self.tmp)
            except OSError:
                settled = False  # not settled: the next save writes in any case
        return (found[best] if best >= 0 else None), source, seq, settled

    def write(self, rec):
        """Write one record atomically (see the top). Raises OSError when the flash fails."""
        flashrecord.write(self.tmp, rec)
        self._swap_in()

    # The store's stepped save (Store.start, step): a file is written whole, in one call. littlefs
    # decides inside the write, the close and the renames which blocks it programs and erases (and
    # when it compacts a metadata pair); splitting that would mean reimplementing it. So on stock
    # MicroPython a save still stalls the loop for its flash time, once per move.
    begin = write

    def step(self):
        return False

    def erase_ahead(self):
        pass

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
