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

    # --- reading ------------------------------------------------------------------------------

    def _entry(self, block, offset):
        """(seq, length) of the entry at `offset` in ring block `block`, or None."""
        if offset + _HEADER > self.block_size:
            return None
        head = self._head
        self.device.readblocks(self.first + block, head, offset)
        seq, length, check = struct.unpack("<IHH", head)
        if seq == _NO_SEQ or length ^ check != 0xFFFF or length == 0:
            return None
        if offset + _HEADER + length > self.block_size:
            return None
        return seq, length

    def newest(self, accept):
        """The newest record for which accept(record) is not None, as accept returns it; None
        when no record is accepted. Remembers where it was, for the next append."""
        order = []  # blocks by the seq of their first entry, newest first
        for block in range(self.count):
            entry = self._entry(block, 0)
            if entry is not None:
                i = 0
                while i < len(order) and order[i][0] > entry[0]:
                    i += 1
                order.insert(i, (entry[0], block))
        for _, block in order:
            offsets = []
            offset = 0
            while True:
                entry = self._entry(block, offset)
                if entry is None:
                    break
                offsets.append((offset, entry[0], entry[1]))
                offset += _pages(_HEADER + entry[1])
            for i in range(len(offsets) - 1, -1, -1):
                offset, seq, length = offsets[i]
                record = bytearray(length)
                self.device.readblocks(self.first + block, record, offset + _HEADER)
                found = accept(record)
                if found is not None:
                    self._good = block
                    last = offsets[len(offsets) - 1][1]
                    self._seq = (max(seq, last) + 1) & 0x7FFFFFFF
                    self._block = -1
                    self._ahead = 0
                    self._writing = None
                    return found
        return None

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


def _pages(n):
    return (n + PAGE - 1) // PAGE * PAGE
