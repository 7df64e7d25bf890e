# A ring of records in a raw flash region, outside any file system: where the board keeps its
# game (and the admitted Bluetooth devices) on a board whose image has room for it (the cribboard
# images for the Pico; the virtual board). A damaged file system can crash MicroPython itself
# while mounting or reading it; reading this region is plain Python over bytes that carry their
# own checks, so no damage here can do worse than lose the newest records.
#
# The device is a MicroPython block device with the extended interface (rp2.Flash, the virtual
# board's flash): readblocks(block, buf, offset), writeblocks(block, buf, offset) programs bytes
# that were erased (NOR flash: a program can only clear bits), ioctl(6, block) erases a block.
#
# Entries are appended one after another in a block, each a whole number of PAGE-byte pages:
#   0  u32 seq        +1 per entry: orders entries across blocks
#   4  u16 length     of the record that follows
#   6  u16 ~length    (0xFFFF ^ length): a header that was not written whole does not match
#   8  the record, then 0xFF up to the page boundary
# The record is the caller's and carries its own checksum (cribfw/flashrecord.py).
# When the next entry does not fit, the ring erases the next block and goes on there; the oldest
# entries go with it. The block holding the newest good record is never the one erased, and after
# a restart (or a failed write) the ring always starts a fresh block, so it never programs over
# bytes a cut may have left half written.
#
# Writing in steps: begin() lays the entry out in RAM (and erases, inline, only if it needs a new
# block that was not erased ahead), step() programs one page of it, so a caller can let others
# run between pages (cribfw/store.py). An entry left part written (its writer stopped) is treated
# as a failed write: the next entry goes to a fresh block.
# Erase ahead: erase_ahead() erases, at a quiet moment the caller chooses, the blocks the ring will
# go on to when the current one is full (AHEAD of them, one a call): the blocks after the newest
# good record, never that record's own block, and only while the ring writes on after that record, in this boot (after a
# restart or a failed write the next entry takes a fresh block, erased inline as before: so a
# board restarted again and again without a save erases nothing more). That block's entries are
# the oldest in the ring, which the ring would erase next anyway; the erase only comes earlier
# (the ring keeps count - AHEAD blocks of older records: 29 of 32 on the cribboard images).
#
# Reading (newest): every block's header slots, a page at a time past one that does not read (so
# one damaged header hides nothing after it), then the entries newest first by seq until the
# caller accepts one. The seq is in the header, outside the record's own checks: damage, or an
# erase cut short (its first bytes erased: 0xFF in the seq's low bytes), can change it. So the
# ring also says whether it is in doubt (`doubt`): an entry refused before the one found, an
# unreadable slot where a later entry would be, or seqs that do not follow the places the ring
# writes them in; the caller then does not claim the newest. A caller that knows its records'
# own order (the store: the save's seq, inside its crc32) passes it: the blocks around the one
# found are checked with it, and in doubt the newest record of every block is read and the
# latest by that order wins; a later save could then only be after it in its block or in the
# next block, so that alone decides the doubt.
#
# Wear: every entry is written once; a block is erased once per pass round the ring.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


import struct

PAGE = const(256)  # flash program granularity
_HEADER = const(8)
_ERASE = const(6)  # ioctl: erase a block
_NO_SEQ = const(0xFFFFFFFF)  # erased flash
AHEAD = const(3)  # blocks erase_ahead keeps erased: 6-12 saves of a game, 30 s of nonstop changes
_ERASED = b"\xff" * PAGE  # a page's end after its record
_ERASED_HEAD = b"\xff" * _HEADER


class Ring:
    """Records in blocks first..first+count-1 of `device` (each `block_size` bytes)."""

    def __init__(self, device, first, count, block_size=4096):
        self.device = device
        self.first = first
        self.count = count
        self.block_size = block_size
        self._head = bytearray(_HEADER)
        self._block = -1  # where the next entry goes (-1: a fresh block first)
        self._offset = 0
        self._good = -1  # the block holding the newest good record (-1: none)
        self._seq = 0  # of the next entry
        self._ready = -1  # the first of the blocks erased ahead and not written since
        self._ahead = 0  # how many: _ready, _ready + 1, ... (mod count)
        self._writing = None  # the record being written (begin, step)
        self._done = 0  # its entry's bytes programmed
        self._size = 0  # its entry's bytes, whole pages
        self._page = None  # one page of it, laid out for the program (made at the first)
        self.erases = 0  # blocks erased since boot (figures)
        self.doubt = False  # newest() found signs of a later entry it could not read

    # --- reading ------------------------------------------------------------------------------

    def _slot(self, block, offset):
        """The header slot at `offset` of ring block `block`: (seq, length) of an entry; None
        when it is erased (nothing was written there, nor after it in the block: the end of the
        block's entries); False when something was written there that is not a whole header
        (torn by a cut, damaged, or never an entry: zeros, garbage)."""
        if offset + _HEADER > self.block_size:
            return None
        head = self._head
        self.device.readblocks(self.first + block, head, offset)
        if head == _ERASED_HEAD:
            return None
        seq, length, check = struct.unpack("<IHH", head)
        if seq == _NO_SEQ or length ^ check != 0xFFFF or length == 0:
            return False
        if offset + _HEADER + length > self.block_size:
            return False
        return seq, length

    def _entries(self, block):
        """Ring block `block`'s slots in the order they were written, up to the first erased
        one: (offset, seq, length) for an entry, (offset, -1, 0) for a slot written but not a
        header, after which the block is searched a page at a time for the next entry (entries
        start at pages), so one damaged header hides nothing after it."""
        found = []
        offset = 0
        while True:
            slot = self._slot(block, offset)
            if slot is None:
                return found
            if slot is False:
                found.append((offset, -1, 0))
                offset += PAGE
            else:
                found.append((offset, slot[0], slot[1]))
                offset += _pages(_HEADER + slot[1])

    def newest(self, accept, order=None):
        """The newest record for which accept(record) is not None, as accept returns it; None
        when no record is accepted. Remembers where it was, for the next append. Sets `doubt`:
        True when the region holds something that could be a later entry than the one returned
        but cannot be read (a torn or damaged header where the ring would have gone on writing,
        or entries whose seqs do not follow their places), or, when none was accepted, anything
        written that is not an entry or that accept refused. `order(found)`, when given, is the
        record's own place in time, kept inside its checked bytes (a header's seq is not: damage
        or an erase cut short can change it): the newest records of the blocks before and after
        the one found must come before it (two more records read), and when anything is in doubt
        the newest record of every block is read and the latest by `order` returned. Reads every
        block's headers once (8 bytes a slot), and the records of the blocks it tries, newest
        first."""
        count = self.count
        # Per block, from its slots: the first and last entry's seq (-1: no entry), the offset
        # of its last unreadable slot (-1: none), whether one came before its first entry
        # (lead) or after its last (tail), whether its entries' seqs do not go up one by one.
        lo = [-1] * count
        hi = [-1] * count
        torn = [-1] * count
        lead = [False] * count
        tail = [False] * count
        jumbled = [False] * count
        top = -1
        for block in range(count):
            for offset, seq, _ in self._entries(block):
                if seq < 0:
                    torn[block] = offset
                    if lo[block] < 0:
                        lead[block] = True
                    tail[block] = True
                    continue
                if lo[block] < 0:
                    lo[block] = seq
                elif seq <= hi[block] or (not tail[block] and seq != hi[block] + 1):
                    jumbled[block] = True  # (after an unreadable slot: any later seq)
                hi[block] = max(hi[block], seq)
                top = max(top, seq)
                tail[block] = False
        slots = (lo, hi, torn, lead, tail, jumbled)
        tried = []  # blocks tried, newest first: accept refused every entry of all but the last
        best = None  # (found, block, offset, seq, refused)
        while best is None:
            # The untried block with the newest entry (of two with the same newest seq, the one
            # a failed write left is the one that starts lower: the entry was written again
            # after it, in the next block, under the same seq).
            block = -1
            for b in range(count):
                if hi[b] < 0 or b in tried:
                    continue
                if block < 0 or (hi[b], lo[b]) > (hi[block], lo[block]):
                    block = b
            if block < 0:
                # Nothing read back: the next entry goes above everything there.
                self._seq = (top + 1) & 0x7FFFFFFF
                self.doubt = max(torn) >= 0 or bool(tried)
                return None
            tried.append(block)
            best = self._newest_in(block, accept)
        found, block, offset, seq, after_it = best
        # Entries refused before it (in blocks with newer entries, or after it in its own):
        # the last save did not read back.
        self.doubt = len(tried) > 1 or after_it or self._in_doubt(block, offset, slots)
        if order is not None and count > 1:
            key = order(found)
            for b in ((block - 1) % count, (block + 1) % count):
                other = self._newest_in(b, accept) if hi[b] >= 0 else None
                if other is not None and order(other[0]) >= key:
                    self.doubt = True  # a record as new as it or newer, by its own order
            if self.doubt:
                # The headers cannot be trusted: the newest record of every block, by its own
                # order; then a later save can only be after it in its block, or in the next.
                for b in range(count):
                    other = self._newest_in(b, accept) if hi[b] >= 0 and b != block else None
                    if other is not None and order(other[0]) > key:
                        best = other
                        key = order(other[0])
                found, block, offset, seq, after_it = best
                after = (block + 1) % count
                self.doubt = (
                    after_it
                    or torn[block] > offset
                    or (
                        after != block
                        and (hi[after] >= 0 or torn[after] >= 0)
                        and self._newest_in(after, accept) is None
                    )
                )
        self._good = block
        self._seq = (max(seq, hi[block]) + 1) & 0x7FFFFFFF
        self._block = -1
        self._ahead = 0
        self._writing = None
        return found

    def _newest_in(self, block, accept):
        """(found, block, offset, seq, refused) of the last entry in ring block `block` that
        `accept` takes (refused: entries after it it did not), or None."""
        entries = self._entries(block)
        refused = False
        for i in range(len(entries) - 1, -1, -1):
            offset, seq, length = entries[i]
            if seq >= 0:
                record = bytearray(length)
                self.device.readblocks(self.first + block, record, offset + _HEADER)
                found = accept(record)
                if found is not None:
                    return found, block, offset, seq, refused
                refused = True
        return None

    def _in_doubt(self, block, offset, slots):
        """Whether a later entry than the one accepted at `offset` of `block` may have been
        lost, from the slots' summary (newest()). The ring writes on after an entry in its
        block, then in the next block, never skipping one, and erases only the blocks after the
        newest (ahead of need). So a later entry could only be after it in its block or in the
        next block; and going round the ring from the next block, past the blocks without
        entries there (erased ahead, never written, or never the ring's), every block holds
        entries, each block's seqs following the block before's, up to this one. Anything else
        (an unreadable slot where a later entry would be, an erased block among written ones,
        seqs out of their places: a damaged seq) is doubt."""
        lo, hi, torn, lead, tail, jumbled = slots
        if torn[block] > offset or jumbled[block]:
            return True
        count = self.count
        b = (block + 1) % count
        if b != block and hi[b] < 0 and torn[b] >= 0:
            return True  # the next block was written, and not one entry in it reads
        while b != block and hi[b] < 0:
            b = (b + 1) % count
        prev = -1  # the last block with entries
        loose = False  # a block whose slots are all unreadable since: its entries took seqs
        while b != block:
            if hi[b] >= 0:
                if prev >= 0 and not _follows(hi[prev], lo[b], loose or tail[prev] or lead[b]):
                    return True
                prev = b
                loose = False
            elif torn[b] < 0:
                return True  # an erased block among written ones: never left by the ring
            else:
                loose = True
            b = (b + 1) % count
        return prev >= 0 and not _follows(hi[prev], lo[block], loose or tail[prev] or lead[block])

    # --- writing ------------------------------------------------------------------------------

    def append(self, record):
        """Write `record` (bytes) as the newest entry, in one call. Raises OSError when the flash
        fails; the next append then starts a fresh block."""
        self.begin(record)
        while self.step():
            pass

    def begin(self, record):
        """Start writing `record` as the newest entry: step() programs it a page at a time. Only
        erases (inline, the whole chip stalls) when the entry does not fit in the block and the
        next block was not erased ahead."""
        size = _pages(_HEADER + len(record))
        if size > self.block_size:
            raise ValueError("record larger than a block")
        if self._writing is not None:
            # An entry left part written (its task was stopped): never program next to it.
            self._writing = None
            self._block = -1
            self._ahead = 0
        if self._block < 0 or self._offset + size > self.block_size:
            # The block after the newest good record: the oldest entries, or a fresh block
            # whose write failed (it holds nothing good then).
            block = (self._good + 1) % self.count
            self._block = -1
            if self._ahead and block == self._ready:
                self._ready = (block + 1) % self.count
                self._ahead -= 1
            else:
                self._ahead = 0
                self.erases += 1
                self.device.ioctl(_ERASE, self.first + block)
            self._block = block
            self._offset = 0
        self._writing = record  # the caller's, left as it is until the last page is out
        self._done = 0
        self._size = size

    def step(self):
        """Program the next page of the entry begin() started; True while pages are left. A cut
        between two pages leaves an entry whose record fails its own checks: the one before it
        wins. Raises OSError when the flash fails; the next entry then starts a fresh block.
        Each page is laid out in one small buffer: nothing the size of the record is allocated."""
        record = self._writing
        if record is None:
            return False
        done = self._done
        page = self._page
        if page is None:
            page = self._page = bytearray(PAGE)
        n = len(record)
        if done:
            at = 0
            start = done - _HEADER
        else:
            struct.pack_into("<IHH", page, 0, self._seq, n, 0xFFFF ^ n)
            at = _HEADER
            start = 0
        take = min(PAGE - at, n - start)
        page[at : at + take] = memoryview(record)[start : start + take]
        if at + take < PAGE:
            page[at + take :] = memoryview(_ERASED)[at + take :]
        try:
            self.device.writeblocks(self.first + self._block, page, self._offset + done)
        except OSError:
            self._writing = None
            self._block = -1  # never program after a write that may be half done
            self._ahead = 0  # (it may have been the first block erased ahead)
            raise
        done += PAGE
        if done < self._size:
            self._done = done
            return True
        self._writing = None
        self._good = self._block
        self._offset += done
        self._seq = (self._seq + 1) & 0x7FFFFFFF
        return False

    def erase_ahead(self):
        """Erase the next of the AHEAD blocks the ring goes on to when the current one is full,
        now (a quiet moment: one block, 45 ms on a Pico, per call), so that a save then only
        programs; True if it erased, False when they are all erased already. Never the block holding
        the newest good record; only once the ring has written an entry since it was read and
        writes on after it (not after a restart, nor while an entry is being written, nor after a
        write left part done or failed: the next entry takes a fresh block, erased inline)."""
        if self._writing is not None or self._block < 0 or self._block != self._good:
            return False
        nxt = (self._good + 1) % self.count
        if not self._ahead or self._ready != nxt:
            self._ahead = 0
            self._ready = nxt
        block = (nxt + self._ahead) % self.count
        if self._ahead >= AHEAD or block == self._good:
            return False
        self.device.ioctl(_ERASE, self.first + block)  # (a failure: those before it still count)
        self.erases += 1
        self._ahead += 1
        return True


def _follows(last, first, torn_between):
    """Whether a block whose first entry has seq `first` follows one whose last has `last`:
    the next seq, or the same after a write that failed (it is written again in a fresh block),
    or any later one when an unreadable slot comes between them (it may have taken a seq)."""
    step = first - last
    return step > 0 if torn_between else step in (0, 1)


def _pages(n):
    return (n + PAGE - 1) // PAGE * PAGE
