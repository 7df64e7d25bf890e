"""The host's side of the board's line protocol: encoding requests, decoding replies and events.

The board's side (parsing requests, writing replies and events) and the protocol's constants are
the shared core's `cribcore.protocol`; this half lives in the host package so the board never
loads it. docs/protocol.md describes the lines; tests/core/vectors.py holds the literal vectors.

Written in the Python both interpreters run (the core tests decode the firmware's lines with it
under MicroPython too): annotations only, no `__future__` import, typing names imported for the
type checker alone.
"""

try:
    from typing import Any
except ImportError:  # MicroPython does not evaluate annotations
    pass

from cribcore.protocol import MAX_ID, MAX_LINE, REV_DIGITS, VERB_TABLE, VERBS, is_id_char
from cribcore.state import RESULT_NAMES as RESULT_NAMES  # the `x` field's values by number

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
    "gn": "game",
    "m": "match",
    "mk": "match_kind",
    "mg": "match_game",
    "mn": "match_number",
}
"""The state's keys on the wire (as the board writes them) and their names in decode_state
(`gn` and the match's `m mk mg mn` since 1.4)."""
LIST_KEYS = ("f", "b", "g", "q")
"""State keys whose value is a list, one number per player."""
HISTORY_FIELDS = (
    "game",
    "ended",
    "target",
    "players",
    "winner",
    "result",
    "skunk_double",
    "front",
    "back",
    "games",
    "match_number",
    "match_game",
    "match",
    "match_kind",
)
"""The fields of an entry of the board's history (`hist`, since 1.4), in their order on the
wire; named as decode_state names the state's (`ended`: when the game was won, in seconds of the
board's life)."""
HISTORY_LISTS = ("front", "back", "games")
"""History fields whose value is a list, one number per player."""
BRIEF_PEG = "p"
"""Brief event: a player's pegs moved (`! p REV PLAYER FRONT BACK`), since 1.2."""
BRIEF_PENDING = "q"
"""Brief event: a player's pending count changed (`! q REV PLAYER POINTS`), since 1.2."""


def encode_request(
    verb: str,
    args: "tuple[Any, ...] | list[Any]" = (),
    request_id: "str | int | None" = None,
    if_rev: "int | None" = None,
) -> bytes:
    """The request line as bytes: encode_request('peg', (0, 5), '7') -> b'#7 peg 0 5\\n';
    with `if_rev`, applied only while the board's revision is that (since 1.3):
    encode_request('undo', (), '8', 17) -> b'#8 @17 undo\\n'.

    Raises ValueError for an unknown verb, the wrong number of arguments, an argument with a
    space, a bad id or revision, or a line longer than the board takes."""
    parts = []
    if request_id is not None:
        request_id = str(request_id)
        if not request_id or len(request_id) > MAX_ID:
            raise ValueError("bad request id")
        for c in request_id.encode():
            if not is_id_char(c):
                raise ValueError("bad request id")
        parts.append("#" + request_id)
    if if_rev is not None:
        if not isinstance(if_rev, int) or if_rev < 0 or len(str(if_rev)) > REV_DIGITS:
            raise ValueError("bad revision: %r" % (if_rev,))
        parts.append("@%d" % if_rev)
    name = verb.encode()
    if name not in VERBS:
        raise ValueError("unknown verb: " + verb)
    spec = VERB_TABLE[VERBS.index(name)]
    if not spec[1] <= len(args) <= spec[2]:
        raise ValueError("%s takes %d to %d arguments" % (verb, spec[1], spec[2]))
    parts.append(verb)
    for arg in args:
        text = str(arg)
        if not text or " " in text:
            raise ValueError("bad argument: %r" % (arg,))
        parts.append(text)
    data = (" ".join(parts) + "\n").encode()
    if len(data) > MAX_LINE:
        raise ValueError("request longer than %d bytes" % MAX_LINE)
    for c in data[:-1]:
        if c < 32 or c > 126:
            raise ValueError("requests are printable ASCII")
    return data


class Line:
    """A decoded reply or event.

    kind: 'ok', 'err' or 'event'; request_id: the reply's id or None; name: the event's kind
    ('st', 'hello', 'p', ...) or '' for replies; fields: KEY=VALUE fields; words: the other
    words after the kind or status (a brief event's numbers); code and text: an error's."""

    def __init__(
        self,
        kind: str,
        request_id: "str | None",
        name: str,
        fields: "dict[str, str]",
        code: str,
        text: str,
        words: "list[str] | None" = None,
    ) -> None:
        self.kind = kind
        self.request_id = request_id
        self.name = name
        self.fields = fields
        self.code = code
        self.text = text
        self.words = words if words is not None else []

    def __repr__(self) -> str:
        return "Line(%r, %r, %r, %r, %r, %r)" % (
            self.kind,
            self.request_id,
            self.name,
            self.fields,
            self.code,
            self.text,
        )


def _fields(words: "list[str]") -> "dict[str, str]":
    fields = {}
    for word in words:
        eq = word.find("=")
        if eq > 0:
            fields[word[:eq]] = word[eq + 1 :]
    return fields  # words without '=' are ignored: unknown things are skipped, never fatal


def decode_line(data: "bytes | bytearray | str") -> Line:
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
        rest = words[2:]
        plain = [w for w in rest if "=" not in w]
        return Line("event", None, words[1], _fields(rest), "", "", plain)
    request_id = None
    if words[0].startswith("#"):
        request_id = words[0][1:]
        words = words[1:]
        if not words:
            raise ValueError("reply without a status")
    if words[0] == "ok":
        plain = [w for w in words[1:] if w and "=" not in w]  # (a history's entries)
        return Line("ok", request_id, "", _fields(words[1:]), "", "", plain)
    if words[0] == "err":
        if len(words) < 2:
            raise ValueError("error without a code")
        return Line("err", request_id, "", {}, words[1], " ".join(words[2:]))
    raise ValueError("not a reply or event: " + text)


def decode_state(fields: "dict[str, str]") -> "dict[str, Any]":
    """State fields (from '! st' or the reply to 'st') as a dict with readable names.
    Absent keys are absent from the result, so a partial update merges over an older state."""
    state: dict[str, Any] = {}
    for key, value in fields.items():
        name = STATE_KEYS.get(key)
        if name is None:
            continue  # a newer board's field: ignore
        if key in LIST_KEYS:
            state[name] = [int(v) for v in value.split(",")] if value else []
        else:
            state[name] = int(value)
    return state


def decode_history_entry(word: str) -> "dict[str, Any]":
    """One entry of a `hist` reply (a word of Line.words) as a dict named by HISTORY_FIELDS;
    fields a newer board adds after them are ignored. Raises ValueError for a malformed one."""
    values = word.split("/")
    if len(values) < len(HISTORY_FIELDS):
        raise ValueError("not a history entry: %r" % word)
    entry: dict[str, Any] = {}
    for name, value in zip(HISTORY_FIELDS, values):
        if name in HISTORY_LISTS:
            entry[name] = [int(v) for v in value.split(",")]
        else:
            entry[name] = int(value)
    return entry


def decode_brief(line: Line) -> "tuple[int, int, list[int]]":
    """A brief event's (revision, player, values): values are [front, back] for `! p` and
    [points] for `! q`. Raises ValueError when the event is not a well-formed brief event."""
    expected = 4 if line.name == BRIEF_PEG else 3 if line.name == BRIEF_PENDING else 0
    if line.kind != "event" or len(line.words) < expected or not expected:
        raise ValueError("not a brief event: %r" % (line,))
    numbers = [int(w) for w in line.words[:expected]]
    return numbers[0], numbers[1], numbers[2:]


def decode_frame(hex_text: str) -> bytes:
    """The 'rgb' field of a frame reply as bytes (3 per hole, hole order)."""
    if len(hex_text) % 6:
        raise ValueError("frame length is not whole RGB triples")
    return bytes(int(hex_text[i : i + 2], 16) for i in range(0, len(hex_text), 2))
