# The board's line protocol: the one codec, used by the firmware (parse requests, write replies
# and events) and by the host package (encode requests, decode replies and events).
# docs/protocol.md describes it with byte examples; tests/core/vectors.py holds the literal vectors
# that run against this module on CPython and on MicroPython.
#
# A line is printable ASCII (0x20..0x7E) ended by "\n" (a "\r" before it is dropped).
#   request   [#ID ][@REV ]VERB[ ARG...]   e.g. "#7 peg 0 12\n", "#8 @17 undo\n"
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

    def const(value):  # type: ignore[no-redef]
        return value


from array import array

from cribcore.state import LAST_PEG
from cribcore.twins import ptr8, ptr32

PROTOCOL_MAJOR = const(1)  # bumped when a change breaks older hosts
# Bumped when something is added (1.1: admit; 1.2: brief, health, every; 1.3: the page's fields
# in health, the WebSocket transport, conditions, ids that survive a restart; 1.4: match play,
# the board's history, its game number, its uid).
PROTOCOL_MINOR = const(4)
MAX_LINE = const(64)  # request bytes including the newline
MAX_ID = const(8)  # characters in a request id
MAX_ARGS = const(3)
MAX_DIGITS = const(6)  # in a number argument (a minus sign not counted)
REV_DIGITS = const(9)  # in the revision a request is conditional on (`@REV`)

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
    (b"peg", 2, 3, K_CHANGE),  # a third argument since 1.3: the front it is conditional on
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
    (b"every", 0, 1, K_LINK),  # since 1.2
    (b"match", 0, 2, K_SET),  # since 1.4
    (b"hist", 0, 1, K_READ),  # since 1.4
)
VERBS = tuple(spec[0] for spec in VERB_TABLE)

# Words an argument may be instead of a number.
W_CLEAR = const(0)
W_X2 = const(1)
W_OPEN = const(2)  # since 1.1
W_BEST = const(3)  # since 1.4
W_FIRST = const(4)  # since 1.4
WORDS = (b"clear", b"x2", b"open", b"best", b"first")

ARG_INT = const(0)
ARG_WORD = const(1)
ARG_NONE = const(2)  # Request.kinds after the last argument (one place): no argument there

# Parse failures (board-made error codes besides the board state's own).
E_OK = const(0)
E_BAD_LINE = const(1)
E_UNKNOWN = const(2)
E_BAD_ARG = const(3)
E_TOO_LONG = const(4)
E_EMPTY = const(5)
E_ARITY = const(6)  # the verb takes another number of arguments
E_IF_REV = const(7)  # read whole, with a condition: `@REV` (head[_IF_REV]); since 1.3
PARSE_ERRORS = (
    (b"", b""),
    (b"bad_line", b"not a request line"),
    (b"unknown", b"unknown command"),
    (b"bad_arg", b"bad argument"),
    (b"too_long", b"line too long"),
    (b"", b""),  # E_EMPTY: no reply
    (b"bad_arg", b"wrong number of arguments"),
    (b"", b""),  # E_IF_REV: not an error
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
    "stale",  # since 1.3
)

_SPACE = const(32)
_HASH = const(35)
_MINUS = const(45)
_ZERO = const(48)
_NINE = const(57)


def is_id_char(c):
    return _ZERO <= c <= _NINE or 65 <= c <= 90 or 97 <= c <= 122


# Request.head: what parse_request found, at these places (one array: the viper code that reads
# or writes them looks one name up, where four attributes took four, a request's hot path
# looking them up 22 times).
_ID_START = const(0)  # the id is line[id_start:id_end]; equal: no id
_ID_END = const(1)
_VERB = const(2)  # the verb's number in VERBS; -1: none
_ARGC = const(3)  # the count of arguments read (in args and kinds)
_IF_REV = const(4)  # `@REV`: the revision the request is conditional on; -1: none


class Request:
    """One parsed request line; reused for every line (no allocation). `line` holds it; `head`
    what parse_request found (the id's start and end, the verb's number or -1, the count of
    arguments, the revision it is conditional on or -1, in that order); `args` and `kinds` its arguments. (No properties for
    those names: a class with properties makes every store to its instances look two names up
    more, and the dispatcher stores `line` for every request.)"""

    def __init__(self):
        self.line = bytearray(MAX_LINE)
        self.head = array("i", (0, 0, -1, 0, -1))
        self.args = array("i", bytes(4 * MAX_ARGS))
        self.kinds = bytearray(MAX_ARGS)

    def arg_count(self):
        return self.head[_ARGC]

    def set_id(self, start, end):
        """The reply's id is line[start:end] (equal: none): for a reply to what was not parsed."""
        self.head[_ID_START] = start
        self.head[_ID_END] = end

    @micropython.native
    def int_arg(self, i, default):
        """Argument i as a number; `default` when absent; None when it is a word."""
        if i >= self.head[_ARGC]:
            return default
        if self.kinds[i] != ARG_INT:
            return None
        return self.args[i]

    @micropython.native
    def word_arg(self, i):
        """Argument i's word code, or -1."""
        if i >= self.head[_ARGC] or self.kinds[i] != ARG_WORD:
            return -1
        return self.args[i]


# Each verb's kind, fewest and most arguments by its number (VERB_TABLE's columns, as bytes for
# the viper checks below: they run for every request).
_KINDS = bytes(spec[3] for spec in VERB_TABLE)
_ARITY = bytes(n for spec in VERB_TABLE for n in spec[1:3])  # fewest, most: two bytes a verb
_VERB_COUNT = const(20)  # len(VERBS), held equal by tests/core/test_protocol.py


@micropython.viper
def remembered(req, code: int) -> bool:
    """Whether the reply to `req`, parsed with result `code`, is remembered under its id: it has
    one and does more than read (a reading request simply runs again). A line whose verb could
    not be read counts as not reading: its error is remembered."""
    head = ptr32(req.head)
    if int(head[_ID_END]) <= int(head[_ID_START]):
        return False
    verb = int(head[_VERB])
    if verb < 0 or verb >= _VERB_COUNT:  # none (-1; read back unsigned on a 64-bit machine)
        return True
    kinds = ptr8(_KINDS)
    kind = kinds[verb]
    ok = code == E_OK or code == E_IF_REV
    if kind == K_READ or (kind != K_CHANGE and ok and int(head[_ARGC]) == 0):
        return False  # it only reads
    return True


@micropython.viper
def is_open(req) -> bool:
    """Whether anyone may send `req` (a parsed request), a link not trusted too: it reads, or
    sets only the asking link's own view."""
    kinds = ptr8(_KINDS)
    head = ptr32(req.head)
    kind = kinds[int(head[_VERB])]
    return kind == K_READ or kind == K_LINK or (kind == K_SET and int(head[_ARGC]) == 0)


# The verbs' and the words' names, each followed by a space, then a zero byte, for _find_name.
_VERB_NAMES = b" ".join(VERBS) + b" \0"
_WORD_NAMES = b" ".join(WORDS) + b" \0"


# The parser and the state's writer are viper code on a board: they run for every request and
# every event. Each function's source is also its plain twin (cribcore/twins.py).


@micropython.viper
def _find_name(names, line, start: int, end: int) -> int:
    """The index of line[start:end] among the space-separated names in `names`, or -1."""
    t = ptr8(names)
    s = ptr8(line)
    index = 0
    i = 0
    while t[i] != 0:  # (names end with a zero byte: no call of len())
        j = start
        while j < end and t[i] == s[j]:
            i += 1
            j += 1
        if j == end and t[i] == 32:
            return index
        while t[i] != 32:
            i += 1
        i += 1
        index += 1
    return -1


def _read_rev(line, i, n, head):
    """The revision of `@REV` from line[i:] into head[_IF_REV]: where it ends, -1 when it is
    not 1 to REV_DIGITS digits. (A plain function of its own, read only for a condition:
    parse_request stays short enough for Thumb's short jumps, which rp2's frozen native code
    needs, and a small board's heap keeps the room native code would take.)"""
    start = i
    value = 0
    while i < n and line[i] != 32:
        d = line[i] - 48
        if d < 0 or d > 9 or i - start >= REV_DIGITS:
            return -1
        value = value * 10 + d
        i += 1
    if i == start:
        return -1
    head[_IF_REV] = value
    return i


@micropython.viper
def parse_request(req, n: int) -> int:
    """Parse req.line[:n] (the newline already removed) into `req`; returns E_OK (E_IF_REV: with
    a condition, head[_IF_REV]) or an E_ code.
    On failure req.head still names the id when one could be read, for the error reply.
    A blank line is E_EMPTY: not a request, so it gets no reply."""
    line = req.line
    p = ptr8(line)
    args = ptr32(req.args)
    kinds = ptr8(req.kinds)
    head = ptr32(req.head)
    head[_VERB] = -1
    head[_ARGC] = 0
    head[_IF_REV] = -1
    if n > 0 and p[n - 1] == 13:  # tolerate "\r\n"
        n -= 1
    # The '#ID ' prefix, read into the head's id_start and id_end (equal: no id).
    id_start = 0
    id_end = 0
    i = 0
    while i < n and p[i] == 32:
        i += 1
    if i < n and p[i] == 35:  # '#'
        id_start = i + 1
        i = id_start
        while i < n:
            c = p[i]
            if not ((c >= 48 and c <= 57) or (c >= 65 and c <= 90) or (c >= 97 and c <= 122)):
                break
            i += 1
        if i == id_start or i - id_start > MAX_ID or (i < n and p[i] != 32):
            head[_ID_START] = 0
            head[_ID_END] = 0
            return E_BAD_LINE
        id_end = i
    head[_ID_START] = id_start
    head[_ID_END] = id_end
    for j in range(n):
        if p[j] < 32 or p[j] > 126:
            return E_BAD_LINE
    # '@REV ': apply the request only while the board's revision is REV (since 1.3).
    while i < n and p[i] == 32:
        i += 1
    conditional = i < n and p[i] == 64  # '@'
    if conditional:
        i = int(_read_rev(line, i + 1, n, req.head))  # (the array: `head` is a pointer here)
        if i < 0:
            return E_BAD_ARG
    verb = -1
    argc = 0
    while True:
        while i < n and p[i] == 32:
            i += 1
        if i >= n:
            break
        start = i
        while i < n and p[i] != 32:
            i += 1
        if verb < 0:
            verb = int(_find_name(_VERB_NAMES, line, start, i))
            head[_VERB] = verb
            if verb < 0:
                return E_UNKNOWN
            continue
        if argc >= MAX_ARGS:
            head[_ARGC] = argc
            return E_BAD_ARG
        c = p[start]
        if (c >= 48 and c <= 57) or (c == 45 and i - start > 1):
            first = start + 1 if c == 45 else start
            if i - first > MAX_DIGITS:  # leading zeros count: no small ints hidden in long ones
                head[_ARGC] = argc
                return E_BAD_ARG
            value = 0
            for k in range(first, i):
                d = p[k] - 48
                if d < 0 or d > 9:
                    head[_ARGC] = argc
                    return E_BAD_ARG
                value = value * 10 + d
            args[argc] = 0 - value if c == 45 else value
            kinds[argc] = ARG_INT
        else:
            word = int(_find_name(_WORD_NAMES, line, start, i))
            if word < 0:
                head[_ARGC] = argc
                return E_BAD_ARG
            args[argc] = word
            kinds[argc] = ARG_WORD
        argc += 1
    head[_ARGC] = argc  # (once: each argument's count set aside until the line ends or fails)
    if argc < MAX_ARGS:
        kinds[argc] = ARG_NONE  # (a handler tells an optional argument by its kind alone)
    if verb < 0:
        return E_BAD_LINE if id_end > id_start or conditional else E_EMPTY
    arity = ptr8(_ARITY)
    if argc < arity[2 * verb] or argc > arity[2 * verb + 1]:
        return E_ARITY
    return E_IF_REV if conditional else E_OK


# The powers of ten a 32-bit number's digits are counted out with (LineWriter.number).
_POWERS = array("i", (1000000000, 100000000, 10000000, 1000000, 100000, 10000, 1000, 100, 10, 1))


class LineWriter:
    """Builds one outgoing line in a preallocated buffer (no allocation). Viper code on a board,
    as the parser: every reply and event is written here (plain twins: cribcore/twins.py)."""

    def __init__(self, size):
        self.buf = bytearray(size)
        self.size = size
        self.n = 0
        self.overflow = False

    @micropython.native
    def reset(self):
        self.n = 0
        self.overflow = False

    @micropython.viper
    def byte(self, c: int):
        n = int(self.n)
        if n < int(self.size):
            p = ptr8(self.buf)
            p[n] = c
            self.n = n + 1
        else:
            self.overflow = True

    @micropython.viper
    def text(self, data):
        """Append bytes (or a str's UTF-8), as much as fits: then overflow."""
        if isinstance(data, str):
            data = data.encode()
        p = ptr8(self.buf)
        s = ptr8(data)
        n = int(self.n)
        size = int(self.size)
        for i in range(int(len(data))):  # (as copy: without a call, for every event)
            if n >= size:
                self.overflow = True
                break
            p[n] = s[i]
            n += 1
        self.n = n

    @micropython.viper
    def copy(self, source, start: int, end: int):
        """Append source[start:end] (as much as fits: then overflow)."""
        p = ptr8(self.buf)
        s = ptr8(source)
        n = int(self.n)
        size = int(self.size)
        for i in range(start, end):
            if n >= size:
                self.overflow = True
                break
            p[n] = s[i]
            n += 1
        self.n = n

    @micropython.viper
    def number(self, value: int):
        self.field(b"", value)

    @micropython.viper
    def key(self, name):
        """Start ' name=' ."""
        p = ptr8(self.buf)
        s = ptr8(name)
        n = int(self.n)
        count = int(len(name))
        if n + count + 2 <= int(self.size):  # (every field of a reply: without a further call)
            p[n] = 32
            for i in range(count):
                p[n + 1 + i] = s[i]
            p[n + count + 1] = 61  # '='
            self.n = n + count + 2
            return
        self.byte(32)
        self.text(name)
        self.byte(61)

    @micropython.viper
    def field(self, name, value: int):
        """' name=value': a key and its number (most of a reply's fields), in one call; the
        number alone when name is empty (number())."""
        p = ptr8(self.buf)
        n = int(self.n)
        size = int(self.size)
        count = int(len(name))
        if count:
            s = ptr8(name)
            if n + count + 2 <= size:  # (as key, without the call)
                p[n] = 32
                for i in range(count):
                    p[n + 1 + i] = s[i]
                p[n + count + 1] = 61  # '='
                n += count + 2
            else:
                self.key(name)
                n = int(self.n)
        if value < 0:
            if n >= size:
                self.overflow = True
                self.n = n
                return
            p[n] = 45  # '-'
            n += 1
            value = 0 - value
        # The digits by subtraction: a Cortex-M0+ has no divide instruction.
        powers = ptr32(_POWERS)
        k = 9  # (its first digit's power: counted up from the units, most numbers are short)
        while k > 0 and powers[k - 1] <= value:
            k -= 1
        while k < 10:  # (cut short: as many digits as fit, then overflow)
            if n >= size:
                self.overflow = True
                break
            digit = 48
            power = powers[k]
            while value >= power:
                value -= power
                digit += 1
            p[n] = digit
            n += 1
            k += 1
        self.n = n

    @micropython.native
    def numbers(self, values, count):
        """Comma-separated values[0:count]."""
        for i in range(count):
            if i:
                self.byte(44)
            self.number(values[i])

    @micropython.viper
    def hex_bytes(self, data):
        """Append each byte as two hex digits, as many as fit: then overflow."""
        p = ptr8(self.buf)
        s = ptr8(data)
        h = ptr8(_HEX)
        n = int(self.n)
        size = int(self.size)
        count = int(len(data))
        fit = (size - n) >> 1  # (the bytes whose two digits fit: no check in the loop)
        if count < fit:
            fit = count
        for i in range(fit):
            v = s[i]
            p[n] = h[v >> 4]
            p[n + 1] = h[v & 15]
            n += 2
        if fit < count:
            if n < size:
                p[n] = h[s[fit] >> 4]  # (cut short: as many digits as fit)
                n += 1
            self.overflow = True
        self.n = n

    @micropython.viper
    def end(self):
        """Close the line; a line that overflowed is cut, but always ends in a newline."""
        n = int(self.n)
        size = int(self.size)
        if n >= size:  # (no room left for the newline: it takes the last byte)
            n = size - 1
            self.overflow = True
        p = ptr8(self.buf)
        p[n] = 10
        self.n = n + 1


_HEX = b"0123456789abcdef"


@micropython.viper
def begin_reply(out, req, ok):
    """Start a reply to `req`: '#ID ok' or '#ID err' (any writer of a reply has room for it: an
    id is at most MAX_ID)."""
    p = ptr8(out.buf)
    head = ptr32(req.head)
    start = int(head[_ID_START])
    end = int(head[_ID_END])
    n = 0
    if end > start:
        line = ptr8(req.line)
        p[0] = 35  # '#'
        n = 1
        for i in range(start, end):
            p[n] = line[i]
            n += 1
        p[n] = 32
        n += 1
    if ok:
        p[n] = 111  # 'o'
        p[n + 1] = 107  # 'k'
        n += 2
    else:
        p[n] = 101  # 'e'
        p[n + 1] = 114  # 'r'
        p[n + 2] = 114
        n += 3
    out.n = n
    out.overflow = False


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
        out.n = state_into(out.buf, n, board, 0)
    else:  # a writer too short for the longest state: written aside, then cut as any line is
        out.copy(_STATE_ASIDE, 0, state_into(_STATE_ASIDE, 0, board, 0))


# The state's fields are written straight into the buffer, without a call per key or number:
# a call costs a Cortex-M0+ more than the digits do (a peg's event is sent to every link).
_DIGITS = const(11)  # the most characters of a field's number: a 32-bit one with its sign
_STATE_FIELDS = const(17)
# The keys, their spaces, '=' and the commas of 3 players (4 * 17 + 8), 25 numbers.
STATE_ROOM = const(76 + 25 * _DIGITS)
STATE_LINE_ROOM = const(4 + STATE_ROOM + 1)  # the '! st' event: its head, the fields, newline
_STATE_ASIDE = bytearray(STATE_ROOM)


@micropython.viper
def state_into(buf, n: int, board, line: int) -> int:
    """Write the state's fields at buf[n:] (room for STATE_ROOM bytes), or with `line` the '! st'
    event's line there (room for STATE_LINE_ROOM); returns the end. The dispatcher writes its
    events with it: one call where write_state_event makes two, on every change."""
    p = ptr8(buf)
    # r= t= n= d= w= x= f= b= g= q= u= x2= gn= m= mk= mg= mn= (in STATE_KEYS' order): two bytes
    # a key, a space for the second of a one-letter key (a literal: no name looked up).
    keys = ptr8(b"r t n d w x f b g q u x2gnm mkmgmn")
    powers = ptr32(_POWERS)
    if line:
        p[n] = 33  # "! st"
        p[n + 1] = 32
        p[n + 2] = 115
        p[n + 3] = 116
        n += 4
    # Each of the board's attributes looked up once (a lookup costs more than its digits).
    players = int(board.players)
    winner = int(board.winner)
    rev = int(board.rev)
    target = int(board.target)
    dealer = int(board.dealer)
    result = 0 if winner < 0 else int(board.result())  # (playing: 0, without the call)
    undo_count = int(board.undo_count)
    skunk_double = 1 if board.skunk_double else 0
    game_no = int(board.game_no)
    match_len = int(board.match_len)
    match_kind = 0  # (no match: its kind and game are 0 too, GameState's rule: two look-ups
    match_game = 0  # fewer while no match is on)
    if match_len:
        match_kind = int(board.match_kind)
        match_game = int(board.match_game)
    match_no = int(board.match_no)
    front = board.front
    back = board.back
    games = board.games
    pending = board.pending
    for field in range(_STATE_FIELDS):
        p[n] = 32  # ' ', the key (one or two letters), '='
        p[n + 1] = keys[2 * field]
        n += 2
        if keys[2 * field + 1] != 32:
            p[n] = keys[2 * field + 1]
            n += 1
        p[n] = 61
        n += 1
        count = 1
        seq = front
        listed = field >= 6 and field <= 9  # (one number for each player)
        if listed:
            count = players
            if field == 7:
                seq = back
            elif field == 8:
                seq = games
            elif field == 9:
                seq = pending
        for i in range(count):
            if i > 0:
                p[n] = 44  # ','
                n += 1
            value = players  # (field 2; the others picked in a short tree, not a long chain)
            if listed:
                value = int(seq[i])
            elif field < 6:
                if field == 0:
                    value = rev
                elif field == 1:
                    value = target
                elif field == 3:
                    value = dealer
                elif field == 4:
                    value = winner
                elif field == 5:
                    value = result
            elif field < 13:
                if field == 10:
                    value = undo_count
                elif field == 11:
                    value = skunk_double
                else:
                    value = game_no
            elif field < 15:
                value = match_len if field == 13 else match_kind
            else:
                value = match_game if field == 15 else match_no
            if value < 0:
                p[n] = 45  # '-'
                n += 1
                value = 0 - value
            if value < 10:  # (most fields)
                p[n] = 48 + value
                n += 1
                continue
            j = 8  # (the digits by subtraction, as in LineWriter.field: this one has two or more)
            while j > 0 and powers[j - 1] <= value:
                j -= 1
            while j < 10:
                digit = 48
                power = powers[j]
                while value >= power:
                    value -= power
                    digit += 1
                p[n] = digit
                n += 1
                j += 1
    if line:
        p[n] = 10
        n += 1
    return n


@micropython.viper
def write_state_event(out, board):
    """'! st' and the state's fields (every link gets one on every change)."""
    if int(out.size) >= STATE_LINE_ROOM:  # (every event writer: straight into its buffer)
        out.n = state_into(out.buf, 0, board, 1)
        out.overflow = False
    else:
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
