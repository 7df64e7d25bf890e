# The resend memory: the last replies the board sent to request lines with an id, so a request
# resent after a lost reply gets the same reply again and is not applied twice
# (docs/protocol.md, section 2).
#
# Kept per SENDER, not per link: the USB host, a Bluetooth central by its address, or a page of
# the board's own (cribfw/webserver.py) by its token. Each sender
# has a book of its last RECENT replies (RecentReplies); the books are the board's (Books), not a
# link slot's, so a central that comes back finds its book whatever other centrals did meanwhile
# (a second phone taking the one slot of a btstack board, four taking every slot of a NimBLE one).
# There are a few more books than the stack takes centrals; a newcomer takes a book never used,
# else the one whose sender connected longest ago among those not admitted, else the one that
# connected longest ago: strangers cycling through never push out an admitted phone's book.
#
# Across a power cut: the ids of the replies whose request changed what the board saves (the
# game, the LED settings: marked `durable`) are saved with the game in the SAME record
# (cribfw/gamerecord.py: Books.durable() writes them, Books.restore() puts them back), so a change
# and its id are kept or lost together. After a restart a book holds those ids without their
# replies (`restored`): a resend of one is answered from the board as it is now (cribfw/verbs.py,
# answer) and not applied; a resend of a request whose change the cut took is not known, and is
# applied: for the game the board came back with, it is its first time.

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

    def const(value):  # type: ignore[no-redef]
        return value


from cribcore.twins import ptr8

RECENT = const(8)  # replies remembered per sender
RECENT_REPLY = const(72)  # longest reply remembered (the longest a request gets: 72)
SENDER = const(7)  # a sender: a central's address type and 6 address bytes
USB_SENDER = b"\xff" * 7  # the USB host (no Bluetooth address type is 0xff)
SPARE_BOOKS = const(2)  # books for centrals beyond the stack's number of connections
PAGE_BOOKS = const(8)  # books for the board's own pages (by token): 4 open, 4 gone
MAX_BOOKS = const(15)  # USB, 4 + SPARE_BOOKS centrals, PAGE_BOOKS: what a saved record may name

# A slot of RecentReplies.mem: the id's length (0: empty), the reply's length (0: restored, no
# reply kept), durable (1: its request changed what the board saves), the id, the reply. After
# the last slot, one byte: the slot to be written next; then _SAVES, a byte a verb.
_REPLY_N = const(1)
_DURABLE = const(2)
_ID_AT = const(3)
_REPLY_AT = const(3 + 8)  # (8: protocol.MAX_ID, held equal by tests/core/test_protocol.py)
_SLOT_SIZE = const(_REPLY_AT + RECENT_REPLY)
_NEXT_AT = const(RECENT * _SLOT_SIZE)
# By verb number (cribcore.protocol.VERB_TABLE), 1 for a change the game's record keeps: peg,
# set, undo, new, deal, games, bright, budget, match (their reading forms are never
# remembered). Not pend (a preview is not saved), test, admit (kept elsewhere, and set, not
# added to), brief and every (a link's own view, gone with a restart); hist only reads.
# tests/core/test_protocol.py checks it.
_SAVES = const(0b1000000111011111000)  # bit v: verb v (a const: no object on the heap)
_VERBS = const(20)
_SAVES_AT = const(_NEXT_AT + 1)  # (_SAVES, after the slots: read where the slots are read)


class RecentReplies:
    """One sender's last few (id, reply) pairs. Ids are given as (buffer, start, end). All of it
    is in one buffer, `mem`, slot after slot: one lookup for each request."""

    def __init__(self, sender):
        self.mem = bytearray(_SAVES_AT + _VERBS)
        for verb in range(_VERBS):
            self.mem[_SAVES_AT + verb] = (_SAVES >> verb) & 1
        self.sender = bytearray(sender)
        self.live = 0  # links of this sender connected now

    @micropython.viper
    def find(self, line, start: int, end: int) -> int:
        """The slot remembering the id line[start:end], or -1."""
        n = end - start
        if n == 0:
            return -1
        mem = ptr8(self.mem)
        s = ptr8(line)
        for slot in range(RECENT):
            base = slot * _SLOT_SIZE
            if mem[base] != n:
                continue
            base += _ID_AT
            same = True
            for i in range(n):
                if mem[base + i] != s[start + i]:
                    same = False
                    break
            if same:
                return slot
        return -1

    @micropython.viper
    def remember(self, line, start: int, end: int, out, verb: int):
        """Remember `out` as the reply to the id line[start:end]; `verb`: the verb's number when
        the request was applied (-1: refused), so that the id of a change the board saves goes
        into the game's record with it (a change that changed nothing too: its resend after a
        restart must not undo what came after it)."""
        size = int(out.n)
        if size > RECENT_REPLY:
            return
        mem = ptr8(self.mem)
        durable = 0
        if verb >= 0 and verb < _VERBS:
            durable = mem[_SAVES_AT + verb]
        slot = mem[_NEXT_AT]
        mem[_NEXT_AT] = slot + 1 if slot + 1 < RECENT else 0
        base = slot * _SLOT_SIZE
        mem[base] = end - start
        mem[base + _REPLY_N] = size
        mem[base + _DURABLE] = durable
        j = base + _ID_AT
        s = ptr8(line)
        for i in range(start, end):
            mem[j] = s[i]
            j += 1
        j = base + _REPLY_AT
        buf = ptr8(out.buf)
        for i in range(size):
            mem[j + i] = buf[i]

    def kept(self, slot):
        """Whether the slot holds its reply (not an id brought back from the flash alone)."""
        return self.mem[slot * _SLOT_SIZE + _REPLY_N] != 0

    @micropython.native
    def replay(self, slot, out):
        out.reset()
        base = slot * _SLOT_SIZE
        out.copy(self.mem, base + _REPLY_AT, base + _REPLY_AT + self.mem[base + _REPLY_N])

    def clear(self):
        for slot in range(RECENT):
            self.mem[slot * _SLOT_SIZE] = 0

    def durable(self, rec, at):
        """This book's durable ids as the game's record keeps them: their count, then each
        id's length and bytes, oldest first; written at rec[at:] unless `rec` is None. Returns
        how many bytes they take, 0 when there are none. (No allocation: every save does it.)"""
        mem = self.mem
        first = mem[_NEXT_AT]
        size = 1
        for k in range(RECENT):
            base = ((first + k) % RECENT) * _SLOT_SIZE
            n = mem[base]
            if n and mem[base + _DURABLE]:
                if rec is not None:
                    rec[at] += 1
                    rec[at + size] = n
                    for i in range(n):
                        rec[at + size + 1 + i] = mem[base + _ID_AT + i]
                size += 1 + n
        return size if size > 1 else 0

    def restore(self, ids):
        """Remember `ids` (oldest first, at most RECENT) as durable, without their replies."""
        self.clear()
        mem = self.mem
        for slot in range(len(ids)):
            base = slot * _SLOT_SIZE
            known = ids[slot]
            mem[base] = len(known)
            mem[base + _REPLY_N] = 0
            mem[base + _DURABLE] = 1
            mem[base + _ID_AT : base + _ID_AT + len(known)] = known
        mem[_NEXT_AT] = len(ids) % RECENT


class Books:
    """Every sender's RecentReplies: `usb` always, and books for Bluetooth centrals, made when
    a central first needs one, at most `most` in all (the Bluetooth link sets it: its stack's
    centrals and SPARE_BOOKS more). `books` is in the order their senders last connected, the
    longest ago first. A book's `live` counts its sender's links connected now."""

    def __init__(self):
        self.usb = RecentReplies(USB_SENDER)
        self.usb.live = 1
        self.books = [self.usb]
        self.most = 1  # a board without Bluetooth makes no other

    def join(self, address, admitted):
        """The book of the central at `address` (7 bytes), which just connected; `admitted(a)`
        tells whether address `a` may change the board (cribfw.admission.Admission.knows). A
        newcomer takes a book never used; else, of those whose sender is away, the one that
        connected longest ago among those not admitted, else the one that connected longest
        ago."""
        books = self.books
        book = None
        for known in books:
            if known.sender == address:
                book = known
        if book is None:
            if len(books) < self.most:
                book = RecentReplies(address)
                books.append(book)
            else:
                for lax in (False, True):  # (the longest ago first)
                    for known in books:
                        if book is None and not known.live and (lax or not admitted(known.sender)):
                            book = known
                if book is None:  # (more senders connected than the stack takes)
                    book = RecentReplies(address)
                    books.append(book)
                book.clear()
                book.sender[:] = address
        books.remove(book)
        books.append(book)
        book.live += 1
        return book

    def durable(self, rec, at):
        """The durable ids of every book that has some, as the game's record keeps them
        (cribfw/gamerecord.py): the count of those books, then for each its sender and its ids
        (RecentReplies.durable); written at rec[at:] (zeros there) unless `rec` is None.
        Returns how many bytes they take."""
        size = 1
        for book in self.books:
            if book.durable(None, 0):
                if rec is not None:
                    rec[at] += 1
                    for i in range(SENDER):
                        rec[at + size + i] = book.sender[i]
                size += SENDER + book.durable(rec, at + size + SENDER)
        return size

    def restore(self, kept):
        """Put back what durable() wrote, as gamerecord.decode read it: [(sender, [id, ...]),
        ...]; before any link connects."""
        for sender, ids in kept:
            book = self.usb if sender == USB_SENDER else RecentReplies(sender)
            if book is not self.usb:
                self.books.append(book)
            book.restore(ids)
