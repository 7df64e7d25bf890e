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
# no allocation while handling a score command.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


from array import array

PROTOCOL_MAJOR = const(1)  # bumped when a change breaks older hosts
PROTOCOL_MINOR = const(1)  # bumped when something is added (1.1: admit, ! admit, denied)
MAX_LINE = const(64)  # request bytes including the newline
MAX_ID = const(8)  # characters in a request id
MAX_ARGS = const(3)
MAX_DIGITS = const(6)  # in a number argument (a minus sign not counted)

# Verbs, in VERBS order. Since 1.0 unless noted.
V_HELLO = const(0)
V_PING = const(1)
V_STATE = const(2)
V_PEG = const(3)
V_SET = const(4)
V_UNDO = const(5)
V_NEW = const(6)
V_DEAL = const(7)
V_PEND = const(8)
V_GAMES = const(9)
V_BRIGHT = const(10)
V_BUDGET = const(11)
V_FRAME = const(12)
V_TEST = const(13)
V_ADMIT = const(14)  # since 1.1
VERBS = (
    b"hello",
    b"ping",
    b"st",
    b"peg",
    b"set",
    b"undo",
    b"new",
    b"deal",
    b"pend",
    b"games",
    b"bright",
    b"budget",
    b"frame",
    b"test",
    b"admit",
)
# Verbs that only read, whoever asks (a central not admitted may use them); their replies are
# never remembered (a resend simply runs again). games, bright, budget and admit read too when
# they have no arguments. Every other request may change something.
READING_VERBS = (V_HELLO, V_PING, V_STATE, V_FRAME)
READING_BARE_VERBS = (V_GAMES, V_BRIGHT, V_BUDGET, V_ADMIT)

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
PARSE_ERRORS = (
    (b"", b""),
    (b"bad_line", b"not a request line"),
    (b"unknown", b"unknown command"),
    (b"bad_arg", b"bad argument"),
    (b"too_long", b"line too long"),
    (b"", b""),  # E_EMPTY: no reply
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

    def has_id(self):
        return self.id_end > self.id_start

    def same_id(self, other_line, start, end):
        """True when this request's id equals other_line[start:end]."""
        if end - start != self.id_end - self.id_start or end == start:
            return False
        line = self.line
        j = self.id_start
        for i in range(start, end):
            if other_line[i] != line[j]:
                return False
            j += 1
        return True

    def int_arg(self, i, default):
        """Argument i as a number; `default` when absent; None when it is a word."""
        if i >= self.argc:
            return default
        if self.kinds[i] != ARG_INT:
            return None
        return self.args[i]

    def word_arg(self, i):
        """Argument i's word code, or -1."""
        if i >= self.argc or self.kinds[i] != ARG_WORD:
            return -1
        return self.args[i]


def is_reading(req, code):
    """Whether `req`, parsed with result `code`, is a reading request (see READING_VERBS). A
    line whose verb could not be read is not: it gets an error, remembered under its id."""
    verb = req.verb
    return verb in READING_VERBS or (verb in READING_BARE_VERBS and code == E_OK and req.argc == 0)


def _match(line, start, end, word):
    if end - start != len(word):
        return False
    for i in range(len(word)):
        if line[start + i] != word[i]:
            return False
    return True


def _find(table, line, start, end):
    for i in range(len(table)):
        if _match(line, start, end, table[i]):
            return i
    return -1


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
        while i < n and is_id_char(line[i]):
            i += 1
        if i == start or i - start > MAX_ID or (i < n and line[i] != _SPACE):
            return -1
        req.id_start = start
        req.id_end = i
    return i


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
    """Builds one outgoing line in a preallocated buffer (no allocation)."""

    def __init__(self, size):
        self.buf = bytearray(size)
        self.n = 0
        self.overflow = False

    def reset(self):
        self.n = 0
        self.overflow = False

    def byte(self, c):
        if self.n < len(self.buf):
            self.buf[self.n] = c
            self.n += 1
        else:
            self.overflow = True

    def text(self, data):
        if isinstance(data, str):
            data = data.encode()
        for i in range(len(data)):
            self.byte(data[i])

    def copy(self, source, start, end):
        for i in range(start, end):
            self.byte(source[i])

    def number(self, value):
        if value < 0:
            self.byte(_MINUS)
            value = -value
        if value >= 10:
            self.number(value // 10)
        self.byte(_ZERO + value % 10)

    def key(self, name):
        """Start ' name=' ."""
        self.byte(_SPACE)
        self.text(name)
        self.byte(61)  # '='

    def numbers(self, values, count):
        """Comma-separated values[0:count]."""
        for i in range(count):
            if i:
                self.byte(44)
            self.number(values[i])

    def hex_bytes(self, data):
        for i in range(len(data)):
            self.byte(_HEX[data[i] >> 4])
            self.byte(_HEX[data[i] & 15])

    def end(self):
        """Close the line; a line that overflowed is cut, but always ends in a newline."""
        if self.n >= len(self.buf):
            self.n = len(self.buf) - 1
        self.byte(10)


_HEX = b"0123456789abcdef"


def begin_reply(out, req, ok):
    """Start a reply to `req`: '#ID ok' or '#ID err'."""
    out.reset()
    if req.has_id():
        out.byte(_HASH)
        out.copy(req.line, req.id_start, req.id_end)
        out.byte(_SPACE)
    out.text(b"ok" if ok else b"err")


def write_error(out, req, code, text):
    begin_reply(out, req, False)
    out.byte(_SPACE)
    out.text(code)
    out.byte(_SPACE)
    out.text(text)
    out.end()


def write_state_fields(out, board):
    """The board state as KEY=VALUE fields (see STATE_KEYS)."""
    n = board.players
    out.key(b"r")
    out.number(board.rev)
    out.key(b"t")
    out.number(board.target)
    out.key(b"n")
    out.number(n)
    out.key(b"d")
    out.number(board.dealer)
    out.key(b"w")
    out.number(board.winner)
    out.key(b"x")
    out.number(board.result())
    out.key(b"f")
    out.numbers(board.front, n)
    out.key(b"b")
    out.numbers(board.back, n)
    out.key(b"g")
    out.numbers(board.games, n)
    out.key(b"q")
    out.numbers(board.pending, n)
    out.key(b"u")
    out.number(board.undo_count)
    out.key(b"x2")
    out.number(1 if board.skunk_double else 0)


def write_state_event(out, board):
    out.reset()
    out.text(b"! st")
    write_state_fields(out, board)
    out.end()


# Bluetooth LE: the Nordic UART Service the board offers (docs/protocol.md, section 10), written in
# lower case as BlueZ and Web Bluetooth write UUIDs (MicroPython's bluetooth.UUID takes either).
NUS_SERVICE = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
NUS_RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"  # the central writes requests
NUS_TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"  # the board notifies replies and events

# --- host side: encoding requests, decoding lines (allocates freely) ----------------------------

# State keys and their meaning, for decoders: single numbers, or per-player lists.
STATE_KEYS = {
    "r": "rev",
    "t": "target",
    "n": "players",
    "d": "dealer",
    "w": "winner",
    "x": "result",
    "u": "undo",
    "x2": "skunk_double",
    "f": "front",
    "b": "back",
    "g": "games",
    "q": "pending",
}
LIST_KEYS = ("f", "b", "g", "q")
RESULT_NAMES = ("playing", "won", "skunk", "double_skunk")


def encode_request(verb, args=(), request_id=None):
    """The request line as bytes: encode_request('peg', (0, 5), '7') -> b'#7 peg 0 5\\n'."""
    parts = []
    if request_id is not None:
        request_id = str(request_id)
        if not request_id or len(request_id) > MAX_ID:
            raise ValueError("bad request id")
        for c in request_id.encode():
            if not is_id_char(c):
                raise ValueError("bad request id")
        parts.append("#" + request_id)
    if verb.encode() not in VERBS:
        raise ValueError("unknown verb: " + verb)
    parts.append(verb)
    for arg in args:
        text = str(arg)
        if not text or " " in text:
            raise ValueError("bad argument: %r" % (arg,))
        parts.append(text)
    line = " ".join(parts) + "\n"
    data = line.encode()
    if len(data) > MAX_LINE:
        raise ValueError("request longer than %d bytes" % MAX_LINE)
    for c in data[:-1]:
        if c < _SPACE or c > 126:
            raise ValueError("requests are printable ASCII")
    return data


class Line:
    """A decoded reply or event. kind: 'ok', 'err' or 'event'."""

    def __init__(self, kind, request_id, name, fields, code, text):
        self.kind = kind
        self.request_id = request_id  # str or None
        self.name = name  # event kind ('st', 'hello', ...) or '' for replies
        self.fields = fields  # dict of str -> str
        self.code = code  # error code for 'err'
        self.text = text  # error text for 'err'

    def __repr__(self):
        return "Line(%r, %r, %r, %r, %r, %r)" % (
            self.kind,
            self.request_id,
            self.name,
            self.fields,
            self.code,
            self.text,
        )


def _fields(words):
    fields = {}
    for word in words:
        eq = word.find("=")
        if eq > 0:
            fields[word[:eq]] = word[eq + 1 :]
    return fields  # words without '=' are ignored: unknown things are skipped, never fatal


def decode_line(data):
    """Decode one line (bytes or str, with or without the newline) from a board.
    Raises ValueError when it is not a reply or event."""
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data).decode()
    text = data.rstrip("\r\n")
    words = text.split(" ")
    if not words or not words[0]:
        raise ValueError("empty line")
    if words[0] == "!":
        if len(words) < 2 or not words[1]:
            raise ValueError("event without a kind")
        return Line("event", None, words[1], _fields(words[2:]), "", "")
    request_id = None
    if words[0].startswith("#"):
        request_id = words[0][1:]
        words = words[1:]
        if not words:
            raise ValueError("reply without a status")
    if words[0] == "ok":
        return Line("ok", request_id, "", _fields(words[1:]), "", "")
    if words[0] == "err":
        if len(words) < 2:
            raise ValueError("error without a code")
        return Line("err", request_id, "", {}, words[1], " ".join(words[2:]))
    raise ValueError("not a reply or event: " + text)


def decode_state(fields):
    """State fields (from '! st' or the reply to 'st') as a dict with readable names.
    Absent keys are absent from the result, so a partial update merges over an older state."""
    state = {}
    for key, value in fields.items():
        name = STATE_KEYS.get(key)
        if name is None:
            continue  # a newer board's field: ignore
        if key in LIST_KEYS:
            state[name] = [int(v) for v in value.split(",")] if value else []
        else:
            state[name] = int(value)
    return state


def decode_frame(hex_text):
    """The 'rgb' field of a frame reply as bytes (3 per hole, hole order)."""
    if len(hex_text) % 6:
        raise ValueError("frame length is not whole RGB triples")
    return bytes(int(hex_text[i : i + 2], 16) for i in range(0, len(hex_text), 2))
