# The board's line protocol: the one codec, used by the firmware (parse requests, write replies
# and events) and by the host package (encode requests, decode replies and events).
# docs/protocol.md describes it with byte examples; tests/core/vectors.py holds the literal vectors
# that run against this module on CPython and on MicroPython.
#
# A line is printable ASCII (0x20..0x7E) ended by "\n" (a "\r" before it is dropped).
#   request   [#ID ]VERB[ ARG...]          e.g. "#7 peg 0 12\n"
#   reply     [#ID ]ok[ KEY=VALUE...]      e.g. "#7 ok r=18\n"
#             [#ID ]err CODE TEXT          e.g. "#7 err bad_points points must be 1..29\n"
#   event     ! KIND[ KEY=VALUE...]        e.g. "! st r=18 t=121 n=2 ...\n"
# Requests are at most MAX_LINE bytes with the newline; replies and events may be longer (the
# links split them to the packet size and the host reassembles by line).
#
# The firmware side parses into a preallocated Request and writes into a preallocated LineWriter:
# no allocation while handling a score command. The host's side of the codec (encoding requests,
# decoding replies and events) is host/cribboard/wire.py: the board never loads it.

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython
    from cribcore.nomicropython import const


from array import array

from cribcore.state import LAST_PEG

PROTOCOL_MAJOR = const(1)  # bumped when a change breaks older hosts
PROTOCOL_MINOR = const(2)  # bumped when something is added (1.1: admit; 1.2: brief, health)
MAX_LINE = const(64)  # request bytes including the newline
MAX_ID = const(8)  # characters in a request id
MAX_ARGS = const(3)
MAX_DIGITS = const(6)  # in a number argument (a minus sign not counted)

# What a verb does, which decides who may send it and whether its reply is remembered:
K_READ = const(0)  # reads only: anyone may send it; the reply is never remembered (it runs again)
K_SET = const(1)  # reads without arguments (as K_READ); with them changes the board (K_CHANGE)
K_CHANGE = const(2)  # changes the board: a trusted link only; the reply is remembered
K_LINK = const(3)  # reads without arguments; with them sets the asking link's own view: anyone

# The verbs, in wire order (a verb's number, Request.verb, is its index): name, fewest and most
# arguments, kind. The firmware's handlers are in cribfw/verbs.py, in the same order;
# docs/protocol.md describes each.
VERB_TABLE = (
    (b"hello", 0, 0, K_READ),
    (b"ping", 0, 0, K_READ),
    (b"st", 0, 0, K_READ),
    (b"peg", 2, 2, K_CHANGE),
    (b"set", 2, 3, K_CHANGE),
    (b"undo", 0, 0, K_CHANGE),
    (b"new", 0, 2, K_CHANGE),
    (b"deal", 0, 1, K_CHANGE),
    (b"pend", 2, 2, K_CHANGE),
    (b"games", 0, 2, K_SET),
    (b"bright", 0, 1, K_SET),
    (b"budget", 0, 1, K_SET),
    (b"frame", 0, 0, K_READ),
    (b"test", 0, 0, K_CHANGE),
    (b"admit", 0, 2, K_SET),  # since 1.1
    (b"brief", 0, 1, K_LINK),  # since 1.2
    (b"health", 0, 0, K_READ),  # since 1.2
)
VERBS = tuple(spec[0] for spec in VERB_TABLE)

# Words an argument may be instead of a number.
W_CLEAR = const(0)
W_X2 = const(1)
W_OPEN = const(2)  # since 1.1
WORDS = (b"clear", b"x2", b"open")

ARG_INT = const(0)
ARG_WORD = const(1)

# Parse failures (board-made error codes besides the board state's own).
E_OK = const(0)
E_BAD_LINE = const(1)
E_UNKNOWN = const(2)
E_BAD_ARG = const(3)
E_TOO_LONG = const(4)
E_EMPTY = const(5)
E_ARITY = const(6)  # (found by the dispatcher: the verb takes another number of arguments)
PARSE_ERRORS = (
    (b"", b""),
    (b"bad_line", b"not a request line"),
    (b"unknown", b"unknown command"),
    (b"bad_arg", b"bad argument"),
    (b"too_long", b"line too long"),
    (b"", b""),  # E_EMPTY: no reply
    (b"bad_arg", b"wrong number of arguments"),
)
# Every error code a board may send, stable across versions (the protocol document lists them).
ERROR_CODES = (
    "bad_line",
    "unknown",
    "bad_arg",
    "too_long",
    "bad_player",
    "bad_points",
    "bad_pegs",
    "bad_target",
    "bad_players",
    "game_over",
    "nothing_to_undo",
    "bad_value",
    "denied",
    "busy",
)

_SPACE = const(32)
_HASH = const(35)
_MINUS = const(45)
_ZERO = const(48)
_NINE = const(57)


def is_id_char(c):
    return _ZERO <= c <= _NINE or 65 <= c <= 90 or 97 <= c <= 122


class Request:
    """One parsed request line; reused for every line (no allocation)."""

    def __init__(self):
        self.line = bytearray(MAX_LINE)
        self.id_start = 0
        self.id_end = 0  # id_start == id_end: no id
        self.verb = -1
        self.argc = 0
        self.args = array("i", bytes(4 * MAX_ARGS))
        self.kinds = bytearray(MAX_ARGS)

    @micropython.native
    def has_id(self):
        return self.id_end > self.id_start

    @micropython.native
    def int_arg(self, i, default):
        """Argument i as a number; `default` when absent; None when it is a word."""
        if i >= self.argc:
            return default
        if self.kinds[i] != ARG_INT:
            return None
        return self.args[i]

    @micropython.native
    def word_arg(self, i):
        """Argument i's word code, or -1."""
        if i >= self.argc or self.kinds[i] != ARG_WORD:
            return -1
        return self.args[i]


@micropython.native
def is_reading(req, code):
    """Whether `req`, parsed with result `code`, only reads (its reply is not remembered). A
    line whose verb could not be read is not: it gets an error, remembered under its id."""
    if req.verb < 0:
        return False
    kind = VERB_TABLE[req.verb][3]
    return kind == K_READ or (kind != K_CHANGE and code == E_OK and req.argc == 0)


@micropython.native
def is_open(req):
    """Whether anyone may send `req` (a parsed request), a link not trusted too: it reads, or
    sets only the asking link's own view."""
    kind = VERB_TABLE[req.verb][3]
    return kind == K_READ or kind == K_LINK or (kind == K_SET and req.argc == 0)


@micropython.native
def arity_ok(req):
    """Whether `req` (a parsed request) has as many arguments as its verb takes."""
    spec = VERB_TABLE[req.verb]
    return spec[1] <= req.argc <= spec[2]


@micropython.native
def _match(line, start, end, word):
    if end - start != len(word):
        return False
    for i in range(len(word)):
        if line[start + i] != word[i]:
            return False
    return True


@micropython.native
def _find(table, line, start, end):
    n = end - start
    first = line[start]
    for i in range(len(table)):
        word = table[i]
        # (the length and the first letter first: most words end there, without a call)
        if len(word) == n and word[0] == first and _match(line, start, end, word):
            return i
    return -1


@micropython.native
def parse_id(req, n):
    """Read the '#ID ' prefix of req.line[:n] into req.id_*; returns the index after it, or -1
    when the prefix is malformed."""
    line = req.line
    req.id_start = req.id_end = 0
    i = 0
    while i < n and line[i] == _SPACE:
        i += 1
    if i < n and line[i] == _HASH:
        start = i + 1
        i = start
        while i < n:
            c = line[i]  # (is_id_char's test, without a call per character)
            if not (_ZERO <= c <= _NINE or 65 <= c <= 90 or 97 <= c <= 122):
                break
            i += 1
        if i == start or i - start > MAX_ID or (i < n and line[i] != _SPACE):
            return -1
        req.id_start = start
        req.id_end = i
    return i


@micropython.native
def parse_request(req, n):
    """Parse req.line[:n] (the newline already removed) into `req`; returns E_OK or an E_ code.
    On failure req.id_* still names the id when one could be read, for the error reply.
    A blank line is E_EMPTY: not a request, so it gets no reply."""
    line = req.line
    req.verb = -1
    req.argc = 0
    if n > 0 and line[n - 1] == 13:  # tolerate "\r\n"
        n -= 1
    i = parse_id(req, n)
    if i < 0:
        return E_BAD_LINE
    for j in range(n):
        if line[j] < _SPACE or line[j] > 126:
            return E_BAD_LINE
    token = 0
    while True:
        while i < n and line[i] == _SPACE:
            i += 1
        if i >= n:
            break
        start = i
        while i < n and line[i] != _SPACE:
            i += 1
        if token == 0:
            req.verb = _find(VERBS, line, start, i)
            if req.verb < 0:
                return E_UNKNOWN
        else:
            if req.argc >= MAX_ARGS:
                return E_BAD_ARG
            if not _parse_arg(req, line, start, i):
                return E_BAD_ARG
        token += 1
    if req.verb < 0:
        return E_BAD_LINE if req.has_id() else E_EMPTY
    return E_OK


@micropython.native
def _parse_arg(req, line, start, end):
    k = req.argc
    c = line[start]
    if _ZERO <= c <= _NINE or (c == _MINUS and end - start > 1):
        negative = c == _MINUS
        first = start + 1 if negative else start
        if end - first > MAX_DIGITS:  # leading zeros count: no small ints hidden in long ones
            return False
        value = 0
        for i in range(first, end):
            d = line[i] - _ZERO
            if d < 0 or d > 9:
                return False
            value = value * 10 + d
        req.args[k] = -value if negative else value
        req.kinds[k] = ARG_INT
    else:
        word = _find(WORDS, line, start, end)
        if word < 0:
            return False
        req.args[k] = word
        req.kinds[k] = ARG_WORD
    req.argc = k + 1
    return True


class LineWriter:
    """Builds one outgoing line in a preallocated buffer (no allocation). Whole words go in with
    one slice assignment (a copy in C) rather than byte by byte: a reply is mostly words.
    The methods are native code (`micropython.native`) but those storing a slice (text, key):
    the VM stores a slice without making a slice object, native code makes one on the heap."""

    def __init__(self, size):
        self.buf = bytearray(size)
        self.n = 0
        self.overflow = False

    @micropython.native
    def reset(self):
        self.n = 0
        self.overflow = False

    @micropython.native
    def byte(self, c):
        if self.n < len(self.buf):
            self.buf[self.n] = c
            self.n += 1
        else:
            self.overflow = True

    def text(self, data):
        if isinstance(data, str):
            data = data.encode()
        n = self.n
        end = n + len(data)
        if end <= len(self.buf):
            self.buf[n:end] = data  # (slices of a bytearray cost no allocation in MicroPython)
            self.n = end
        else:
            self.copy(data, 0, len(data))

    @micropython.native
    def copy(self, source, start, end):
        n = self.n
        buf = self.buf
        if n + end - start <= len(buf):  # (a call per byte costs a board more than the copy)
            for i in range(start, end):
                buf[n] = source[i]
                n += 1
            self.n = n
            return
        for i in range(start, end):
            self.byte(source[i])

    @micropython.native
    def number(self, value):
        n = self.n
        if 0 <= value < 10 and n < len(self.buf):  # (most fields: one digit)
            self.buf[n] = _ZERO + value
            self.n = n + 1
            return
        if value < 0:
            self.byte(_MINUS)
            value = -value
        digits = 1
        div = 1
        while value >= div * 10:
            div *= 10
            digits += 1
        n = self.n
        if n + digits > len(self.buf):
            while div:  # (cut short: as many digits as fit, then overflow)
                self.byte(_ZERO + value // div % 10)
                div //= 10
            return
        buf = self.buf
        while div:
            buf[n] = _ZERO + value // div % 10
            n += 1
            div //= 10
        self.n = n

    def key(self, name):
        """Start ' name=' ."""
        n = self.n
        end = n + len(name) + 2
        buf = self.buf
        if end <= len(buf):
            buf[n] = _SPACE
            buf[n + 1 : end - 1] = name
            buf[end - 1] = 61  # '='
            self.n = end
            return
        self.byte(_SPACE)
        self.text(name)
        self.byte(61)

    @micropython.native
    def numbers(self, values, count):
        """Comma-separated values[0:count]."""
        for i in range(count):
            if i:
                if self.n < len(self.buf):
                    self.buf[self.n] = 44
                    self.n += 1
                else:
                    self.overflow = True
            self.number(values[i])

    @micropython.native
    def hex_bytes(self, data):
        n = self.n
        if n + 2 * len(data) > len(self.buf):
            for i in range(len(data)):
                self.byte(_HEX[data[i] >> 4])
                self.byte(_HEX[data[i] & 15])
            return
        buf = self.buf
        for c in data:
            buf[n] = _HEX[c >> 4]
            buf[n + 1] = _HEX[c & 15]
            n += 2
        self.n = n

    @micropython.native
    def end(self):
        """Close the line; a line that overflowed is cut, but always ends in a newline."""
        if self.n >= len(self.buf):  # (no room left for the newline: it takes the last byte)
            self.n = len(self.buf) - 1
            self.overflow = True
        self.byte(10)


_HEX = b"0123456789abcdef"


@micropython.native
def begin_reply(out, req, ok):
    """Start a reply to `req`: '#ID ok' or '#ID err'."""
    out.reset()
    start = req.id_start
    end = req.id_end
    if end > start:  # (an id is at most MAX_ID: it always fits a writer)
        buf = out.buf
        buf[0] = _HASH
        n = 1
        line = req.line
        for i in range(start, end):
            buf[n] = line[i]
            n += 1
        buf[n] = _SPACE
        out.n = n + 1
    out.text(b"ok" if ok else b"err")


@micropython.native
def write_error(out, req, code, text):
    begin_reply(out, req, False)
    out.byte(_SPACE)
    out.text(code)
    out.byte(_SPACE)
    out.text(text)
    out.end()


@micropython.native
def write_state_fields(out, board):
    """The board state as KEY=VALUE fields (see STATE_KEYS)."""
    n = out.n
    if n + STATE_ROOM <= len(out.buf):
        out.n = _state_into(out.buf, n, board)
    else:  # a writer too short for the longest state: written aside, then cut as any line is
        out.copy(_STATE_ASIDE, 0, _state_into(_STATE_ASIDE, 0, board))


# The state's fields are written straight into the buffer, byte by byte in native code: a call
# per key costs a Cortex-M0+ more than the digits do (a peg's event is sent to every link), and a
# slice store in native code would make a slice object (see LineWriter). Measured on the emulated
# RP2040: about 64,000 cycles, 92,000 as bytecode storing each key as a slice.
_DIGITS = const(11)  # the most characters of a field's number: a 32-bit one with its sign
STATE_ROOM = const(37 + 8 + 20 * _DIGITS)  # the keys, the commas, 20 numbers
_STATE_ASIDE = bytearray(STATE_ROOM)
_EQUALS = const(61)


@micropython.native
def _state_into(buf, n, board):
    """Write the state's fields at buf[n:] (room for STATE_ROOM bytes); returns the end."""
    players = board.players
    buf[n] = _SPACE
    buf[n + 1] = 114  # r
    buf[n + 2] = _EQUALS
    n = _number_into(buf, n + 3, board.rev)
    buf[n] = _SPACE
    buf[n + 1] = 116  # t
    buf[n + 2] = _EQUALS
    n = _number_into(buf, n + 3, board.target)
    buf[n] = _SPACE
    buf[n + 1] = 110  # n
    buf[n + 2] = _EQUALS
    buf[n + 3] = _ZERO + players
    n += 4
    buf[n] = _SPACE
    buf[n + 1] = 100  # d
    buf[n + 2] = _EQUALS
    n = _number_into(buf, n + 3, board.dealer)
    buf[n] = _SPACE
    buf[n + 1] = 119  # w
    buf[n + 2] = _EQUALS
    n = _number_into(buf, n + 3, board.winner)
    buf[n] = _SPACE
    buf[n + 1] = 120  # x
    buf[n + 2] = _EQUALS
    n = _number_into(buf, n + 3, board.result())
    buf[n] = _SPACE
    buf[n + 1] = 102  # f
    buf[n + 2] = _EQUALS
    n = _numbers_into(buf, n + 3, board.front, players)
    buf[n] = _SPACE
    buf[n + 1] = 98  # b
    buf[n + 2] = _EQUALS
    n = _numbers_into(buf, n + 3, board.back, players)
    buf[n] = _SPACE
    buf[n + 1] = 103  # g
    buf[n + 2] = _EQUALS
    n = _numbers_into(buf, n + 3, board.games, players)
    buf[n] = _SPACE
    buf[n + 1] = 113  # q
    buf[n + 2] = _EQUALS
    n = _numbers_into(buf, n + 3, board.pending, players)
    buf[n] = _SPACE
    buf[n + 1] = 117  # u
    buf[n + 2] = _EQUALS
    n = _number_into(buf, n + 3, board.undo_count)
    buf[n] = _SPACE
    buf[n + 1] = 120  # x
    buf[n + 2] = 50  # 2
    buf[n + 3] = _EQUALS
    buf[n + 4] = 49 if board.skunk_double else _ZERO
    return n + 5


@micropython.native
def _number_into(buf, n, value):
    """Write `value` in decimal at buf[n:] (room for _DIGITS bytes); returns the end."""
    if 0 <= value < 10:
        buf[n] = _ZERO + value
        return n + 1
    if value < 0:
        buf[n] = _MINUS
        n += 1
        value = -value
    div = 1
    while value >= div * 10:
        div *= 10
    while div:
        buf[n] = _ZERO + value // div % 10
        n += 1
        div //= 10
    return n


@micropython.native
def _numbers_into(buf, n, values, count):
    """Comma-separated values[0:count] at buf[n:]; returns the end."""
    for i in range(count):
        if i:
            buf[n] = 44
            n += 1
        value = values[i]
        if 0 <= value < 10:
            buf[n] = _ZERO + value
            n += 1
        else:
            n = _number_into(buf, n, value)
    return n


@micropython.native
def write_state_event(out, board):
    out.reset()
    out.text(b"! st")
    write_state_fields(out, board)
    out.end()


@micropython.native
def write_brief_event(out, game):
    """The brief event for the game's last change, if it was a peg ('! p R P F B': player P's
    front and back pegs at revision R) or a preview ('! q R P Q'); False for any other change
    (the links that asked for brief events get '! st' then)."""
    if game.last_rev != game.rev:
        return False
    player = game.last_player
    out.reset()
    out.text(b"! p " if game.last_kind == LAST_PEG else b"! q ")
    out.number(game.rev)
    out.byte(_SPACE)
    out.number(player)
    out.byte(_SPACE)
    if game.last_kind == LAST_PEG:
        out.number(game.front[player])
        out.byte(_SPACE)
        out.number(game.back[player])
    else:
        out.number(game.pending[player])
    out.end()
    return True


# Bluetooth LE: the Nordic UART Service the board offers (docs/protocol.md, section 10), written in
# lower case as BlueZ and Web Bluetooth write UUIDs (MicroPython's bluetooth.UUID takes either).
NUS_SERVICE = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
NUS_RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"  # the central writes requests
NUS_TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"  # the board notifies replies and events
