# Reassembling request lines (cribfw/linebuffer.py) by its three ways in: fed a byte at a time
# (a Bluetooth write), taken a byte at a time from a polled stream (stdin on stock MicroPython)
# and taken a ready line at a time (a cribboard image's cribio.read_ready, faked here as its C
# source documents it). Every way must cut the same lines and answer a line too long with the same
# id, however the bytes arrive. Run under CPython (pytest) and MicroPython (mprun.py).

from cribcore.protocol import MAX_LINE
from cribfw.linebuffer import LineAssembler


class Events:
    """What a LineAssembler reported, in order: ("line", bytes) and ("long", id bytes)."""

    def __init__(self):
        self.seen = []

    def line(self, link, line, n):
        assert link is self
        self.seen.append(("line", bytes(line[:n])))

    def too_long(self, link, request_id, id_len):
        assert link is self
        self.seen.append(("long", bytes(request_id[:id_len])))


class ReadyInput:
    """Bytes that have arrived and not been read yet, read as cribio.read_ready reads stdin:
    what is there, into buf[start:], stopping after a newline or when buf is full; 0 when
    nothing is there; never waits."""

    def __init__(self):
        self.ready = bytearray()
        self.calls = 0

    def arrive(self, data):
        self.ready.extend(data)

    def read_ready(self, buf, start):
        self.calls += 1
        n = start
        taken = 0
        while n < len(buf) and taken < len(self.ready):
            c = self.ready[taken]
            buf[n] = c
            n += 1
            taken += 1
            if c == 10:
                break
        self.ready = self.ready[taken:]
        return n - start


class PolledInput(ReadyInput):
    """The same bytes as a stream polled with ipoll(0) and read a byte at a time."""

    def ipoll(self, timeout):
        return [(self, 1)] if self.ready else []

    def readinto(self, one):
        if not self.ready:
            return 0
        one[0] = self.ready[0]
        self.ready = self.ready[1:]
        return 1


def _pieces(data, size):
    return [data[i : i + size] for i in range(0, len(data), size)]


def _by_feed(data, size):
    events = Events()
    lines = LineAssembler(events, events.line, events.too_long)
    for piece in _pieces(data, size):
        lines.feed(piece, len(piece))
    return events.seen


def _by_read_lines(data, size):
    events = Events()
    lines = LineAssembler(events, events.line, events.too_long)
    source = ReadyInput()
    spare = bytearray(MAX_LINE)
    taken = 0
    for piece in _pieces(data, size):
        source.arrive(piece)
        taken += lines.read_lines(source.read_ready, spare)
        assert not source.ready  # everything that had arrived was taken
    assert taken == len(data)
    return events.seen


def _by_polling(data, size):
    events = Events()
    lines = LineAssembler(events, events.line, events.too_long)
    source = PolledInput()
    one = bytearray(1)
    taken = 0
    for piece in _pieces(data, size):
        source.arrive(piece)
        taken += lines.read_ready(source.ipoll, source.readinto, one)
    assert taken == len(data)
    return events.seen


LONG = b"x" * 80
STREAM = (
    b"#1 peg 0 5\n"
    + b"ping\r\n"
    + b"\n"  # blank: no line
    + b"#a2 st\n"
    + b"#ab3 "
    + LONG
    + b"\n"  # too long: answered with its id
    + b"   #cd4 "
    + LONG
    + b"\n"  # spaces before the id
    + b" " * 70
    + b"#late5 x\n"  # too long before its id even starts: the id is still read
    + b"#"
    + b"y" * 70
    + b"\n"  # an id longer than ids may be: none
    + b"#abc\r"
    + LONG
    + b"\n"  # "\r" inside: not an id
    + b"#q6"
    + b" " * 70
    + b"\n"  # its id, then spaces past the limit
    + b"#9"
    + b"z" * 70
    + b"\n"  # the id runs into the rest: none whole
    + b"a" * (MAX_LINE - 1)
    + b"\n"  # the longest line that fits
    + b"b" * MAX_LINE
    + b"\n"  # one byte more: too long, no id
    + b"#m7 new\n"
)
EXPECTED = [
    ("line", b"#1 peg 0 5"),
    ("line", b"ping\r"),
    ("line", b"#a2 st"),
    ("long", b"ab3"),
    ("long", b"cd4"),
    ("long", b"late5"),
    ("long", b""),
    ("long", b""),
    ("long", b"q6"),
    ("long", b""),
    ("line", b"a" * (MAX_LINE - 1)),
    ("long", b""),
    ("line", b"#m7 new"),
]


def test_every_way_in_cuts_the_same_lines_however_the_bytes_arrive():
    for size in (1, 2, 3, 5, 7, 11, 16, 63, 64, 65, 200, len(STREAM)):
        assert _by_feed(STREAM, size) == EXPECTED, size
        assert _by_read_lines(STREAM, size) == EXPECTED, size
        assert _by_polling(STREAM, size) == EXPECTED, size


def test_a_ready_line_is_read_in_one_call_into_place():
    events = Events()
    lines = LineAssembler(events, events.line, events.too_long)
    source = ReadyInput()
    source.arrive(b"#7 peg 1 2\n#8 ping\n")
    assert lines.read_lines(source.read_ready, bytearray(MAX_LINE)) == 19
    assert events.seen == [("line", b"#7 peg 1 2"), ("line", b"#8 ping")]
    assert source.calls == 3  # a line a call, then the call that finds nothing


def test_a_line_in_pieces_waits_for_its_end():
    events = Events()
    lines = LineAssembler(events, events.line, events.too_long)
    source = ReadyInput()
    spare = bytearray(MAX_LINE)
    source.arrive(b"#7 pe")
    assert lines.read_lines(source.read_ready, spare) == 5
    assert events.seen == []
    source.arrive(b"g 1 2\n#8")
    assert lines.read_lines(source.read_ready, spare) == 8
    assert events.seen == [("line", b"#7 peg 1 2")]
    lines.reset()  # the link was reset: the line begun is forgotten
    source.arrive(b" ping\n")
    lines.read_lines(source.read_ready, spare)
    assert events.seen == [("line", b"#7 peg 1 2"), ("line", b" ping")]


def test_a_line_that_lost_bytes_is_skipped_to_its_end_on_every_way_in():
    for way in ("feed", "read_lines"):
        events = Events()
        lines = LineAssembler(events, events.line, events.too_long)
        source = ReadyInput()
        source.arrive(b"#1 pe")
        lines.read_lines(source.read_ready, bytearray(MAX_LINE))
        lines.skip_line()
        rest = b"g 0 5\n#2 ping\n"
        if way == "feed":
            lines.feed(rest, len(rest))
        else:
            source.arrive(rest)
            lines.read_lines(source.read_ready, bytearray(MAX_LINE))
        assert events.seen == [("line", b"#2 ping")], way


def test_reading_ready_lines_allocates_nothing():
    try:
        import micropython
    except ImportError:
        return  # (CPython: allocation is MicroPython's question)
    lengths = bytearray(4)  # (no list to grow while the heap is locked)
    count = [0]

    def on_line(link, line, n):
        lengths[count[0]] = n
        count[0] += 1

    lines = LineAssembler(None, on_line, on_line)
    spare = bytearray(MAX_LINE)
    data = b"#1 peg 0 5\n#ab3 " + LONG + b"\nping\n"
    at = [0]

    def read_ready(buf, start):
        n = start
        i = at[0]
        while n < len(buf) and i < len(data):
            buf[n] = data[i]
            n += 1
            i += 1
            if data[i - 1] == 10:
                break
        at[0] = i
        return n - start

    micropython.heap_lock()
    try:
        taken = lines.read_lines(read_ready, spare)
    finally:
        micropython.heap_unlock()
    assert taken == len(data)
    assert count[0] == 3
    assert lengths[:3] == bytearray([10, 3, 4])  # the peg, the long line's id, ping
