# Reassembles protocol lines from bytes arriving in pieces of any size (a USB read, a BLE write).
# A line longer than the protocol allows is discarded up to its newline and reported once with
# the request's id. That id is read from the line's kept start, then from the bytes that pass,
# whatever the line's length and however many spaces come before it, so a too-long line is
# answered with its whole id or with none: never with an id cut short, which a client could take
# for another request's. (A line that fits is parsed whole, id included, by the dispatcher.)

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

    def const(value):  # type: ignore[no-redef]
        return value


from cribcore.protocol import MAX_ID, MAX_LINE, is_id_char

# protocol.MAX_LINE as this module's constant for read_lines (a name of another module is looked
# up at run time; tests/core/test_protocol.py holds them equal).
_MAX_LINE = const(64)

# Where the reading of a line's '#ID ' prefix stands.
_LEAD = const(0)  # only spaces so far
_IN_ID = const(1)  # after '#': id characters
_IN_ID_CR = const(2)  # id characters, then "\r": whole if the newline follows ("\r\n")
_READ = const(3)  # the id and the space after it were read whole
_NONE = const(4)  # the line has no id (or a malformed one)


class LineAssembler:
    """One link's input cut into lines: on_line(link, line, n) for each line that fits,
    on_too_long(link, id, id_len) for one that does not (the dispatcher's handle_line and
    line_too_long, called straight: no call of the link's in between)."""

    def __init__(self, link, on_line, on_too_long):
        self.line = bytearray(MAX_LINE)
        self.n = 0
        self.discarding = False
        self.skipping = False  # input was lost: the rest of this line is not read
        self.id = bytearray(MAX_ID)  # the id of the line being read
        self.id_len = 0
        self._id_state = _LEAD
        self._link = link
        self._on_line = on_line  # on_line(link, line, n)
        self._on_too_long = on_too_long  # on_too_long(link, id, id_len): id_len 0 when none

    @micropython.native
    def reset(self):
        """Forget a line in progress (the link was reset)."""
        self.n = 0
        self.discarding = False
        self.skipping = False
        self.id_len = 0
        self._id_state = _LEAD

    def skip_line(self):
        """Bytes of the line in progress were lost: drop it and the rest of it, up to the next
        newline, unanswered (its start or end may read as another request)."""
        self.reset()
        self.skipping = True

    @micropython.native
    def feed_byte(self, c):
        if self.skipping:
            if c == 10:
                self.skipping = False
            return
        if c == 10:  # newline
            if self.discarding:
                # "#ID" then the newline: the id ended with the line, it was read whole.
                whole = self._id_state == _READ or self._id_state == _IN_ID
                whole = whole or self._id_state == _IN_ID_CR
                id_len = self.id_len if whole else 0
                self.reset()
                self._on_too_long(self._link, self.id, id_len)
            else:
                n = self.n
                self.reset()
                if n:
                    self._on_line(self._link, self.line, n)
            return
        if self.discarding:
            if self._id_state < _READ:  # (an id after a long run of spaces)
                self._read_id(c)
            return
        if self.n >= MAX_LINE - 1:  # no room left for a line that still has to end
            self.discarding = True
            # Only a line too long needs its id read as the bytes pass (the parser reads a
            # whole line's): read it now from the bytes kept, then from this one on.
            line = self.line
            for i in range(self.n):
                if self._id_state >= _READ:
                    break
                self._read_id(line[i])
            if self._id_state < _READ:
                self._read_id(c)
            return
        self.line[self.n] = c
        self.n += 1

    @micropython.native
    def _read_id(self, c):
        if self._id_state == _LEAD:
            if c == 35:  # '#'
                self._id_state = _IN_ID
            elif c != 32:
                self._id_state = _NONE
        elif self._id_state == _IN_ID_CR:
            self._id_state = _NONE  # "\r" inside the line: not an id
        elif c == 32:
            self._id_state = _READ if self.id_len else _NONE
        elif c == 13 and self.id_len:
            self._id_state = _IN_ID_CR
        elif is_id_char(c) and self.id_len < MAX_ID:
            self.id[self.id_len] = c
            self.id_len += 1
        else:
            self._id_state = _NONE

    def feed(self, data, n):
        for i in range(n):
            self.feed_byte(data[i])

    @micropython.native
    def read_ready(self, ready, readinto, one):
        """Take bytes one at a time from a stream while `ready(0)` (a poll's ipoll) says it has
        one, read with `readinto(one)` (`one` a bytearray(1)); returns the count. The middle of a
        line goes straight into it; its end and a line too long go by feed_byte."""
        count = 0
        line = self.line
        more = True
        while more:
            more = False
            for _ in ready(0):
                if readinto(one):
                    more = True
                    count += 1
                    c = one[0]
                    n = self.n
                    if c == 10 or self.discarding or self.skipping or n >= MAX_LINE - 1:
                        self.feed_byte(c)
                    else:
                        line[n] = c
                        self.n = n + 1
        return count

    @micropython.native
    def read_lines(self, read, spare):
        """Take every byte ready with `read(buf, start)`, which copies what is ready into
        buf[start:] without waiting, stopping after a newline, and returns the count (the cribio
        module's read_ready); returns the count taken. A line is read straight into place; the
        rest of a line too long, or of one being skipped, goes through `spare` (a bytearray)."""
        count = 0
        line = self.line
        while True:
            if self.discarding or self.skipping:
                got = read(spare, 0)
                for i in range(got):
                    self.feed_byte(spare[i])
            else:
                n = self.n
                got = read(line, n)
                end = n + got
                while got and line[end - 1] == 10:
                    # A whole line (nothing of it was discarded or skipped): handled here,
                    # without feed_byte's turn for its newline; then the next, which starts
                    # a line as this one did (nothing discarded or skipped).
                    self.n = 0
                    if end > 1:
                        self._on_line(self._link, line, end - 1)
                    count += got
                    got = read(line, 0)
                    end = got
                if end == _MAX_LINE:
                    # Its 64th byte and still no newline: too long (fed as any byte).
                    self.n = end - 1
                    self.feed_byte(line[end - 1])
                else:
                    self.n = end
            if not got:
                return count
            count += got
