# The payloads a Wi-Fi board's table client sends and reads (docs/mqtt.md): its state as compact
# JSON (byte for byte what the host's cribboard.hallwire.messages.encode_state writes for the same
# state: tests/core/test_hallpayload.py), an ack, and the director's command. The state and ack
# are written into a preallocated LineWriter (cribcore.protocol): no allocation per state.

from cribcore.hall import MAX_COMMAND_BYTES, MAX_NAME_CHARS, NEW_GAME, is_command_id
from cribcore.limits import PLAYER_COUNTS, TARGETS
from cribcore.state import NO_WINNER, RESULT_NAMES

STATE_BYTES = 200  # the longest state (three players) is 197 bytes
_RESULTS = tuple(name.encode() for name in RESULT_NAMES)
_QUOTE = 34
_BACKSLASH = 92
_SHORT_ESCAPES = b"\b\t\n\f\r"  # written as \b \t \n \f \r, as json.dumps does
_SHORT_LETTERS = b"btnfr"


def _key(out, name, first=False):
    # ,"name":
    if not first:
        out.byte(44)
    out.byte(_QUOTE)
    out.text(name)
    out.byte(_QUOTE)
    out.byte(58)


def _list(out, values, count):
    out.byte(91)
    out.numbers(values, count)
    out.byte(93)


def _string(out, text):
    # A JSON string; only '"', '\' and control characters need escaping (as json.dumps with
    # ensure_ascii=False writes it; other characters pass as UTF-8).
    out.byte(_QUOTE)
    for c in text:
        if c == _QUOTE or c == _BACKSLASH:
            out.byte(_BACKSLASH)
            out.byte(c)
        elif c < 32:
            short = _SHORT_ESCAPES.find(bytes((c,)))
            if short >= 0:
                out.byte(_BACKSLASH)
                out.byte(_SHORT_LETTERS[short])
            else:
                out.text(b"\\u00")
                out.byte(48 + (c >> 4))
                out.byte(b"0123456789abcdef"[c & 15])
        else:
            out.byte(c)
    out.byte(_QUOTE)


def _bool(out, value):
    out.text(b"true" if value else b"false")


def write_state(out, game):
    """The `state` / `event` payload of `game` (cribcore.state.GameState) into `out`."""
    n = game.players
    out.reset()
    out.byte(123)
    _key(out, b"rev", True)
    out.number(game.rev)
    _key(out, b"target")
    out.number(game.target)
    _key(out, b"players")
    out.number(n)
    _key(out, b"dealer")
    out.number(game.dealer)
    _key(out, b"winner")
    if game.winner == NO_WINNER:
        out.text(b"null")
    else:
        out.number(game.winner)
    _key(out, b"result")
    out.byte(_QUOTE)
    out.text(_RESULTS[game.result()])
    out.byte(_QUOTE)
    _key(out, b"front")
    _list(out, game.front, n)
    _key(out, b"back")
    _list(out, game.back, n)
    _key(out, b"games")
    _list(out, game.games, n)
    _key(out, b"pending")
    _list(out, game.pending, n)
    _key(out, b"undo")
    out.number(game.undo_count)
    _key(out, b"skunk_double")
    _bool(out, game.skunk_double)
    out.byte(125)


def write_ack(out, command_id, code=None, message=None):
    """An `ack` payload: ok when `code` is None, else refused with that error code (bytes) and
    an optional `message` (bytes, for people). `command_id` is bytes."""
    out.reset()
    out.byte(123)
    _key(out, b"id", True)
    _string(out, command_id)
    _key(out, b"ok")
    _bool(out, code is None)
    if code is not None:
        _key(out, b"error")
        _string(out, code)
        if message:
            _key(out, b"message")
            _string(out, message)
    out.byte(125)


class CommandError(Exception):
    """A `cmd` payload the table cannot run. `command_id` (str) is set when the command was
    readable enough to answer with a `bad_command` ack; None: it is ignored."""

    def __init__(self, text, command_id=None):
        super().__init__(text)
        self.text = text
        self.command_id = command_id


def read_command(payload):
    """(id, target, names) of a `cmd` payload, checked as the host's decode_command checks it;
    CommandError otherwise."""
    import json

    if len(payload) > MAX_COMMAND_BYTES:
        raise CommandError("longer than 256 bytes")  # not parsed: its id is not to be trusted
    try:
        obj = json.loads(payload)
    except (ValueError, UnicodeError):
        raise CommandError("not JSON")
    if not isinstance(obj, dict):
        raise CommandError("not a JSON object")
    command_id = obj.get("id")
    if not isinstance(command_id, str) or not is_command_id(command_id):
        raise CommandError("no usable id")
    if obj.get("op") != NEW_GAME:
        raise CommandError("unknown op", command_id)
    target = obj.get("target")
    if not isinstance(target, int) or isinstance(target, bool) or target not in TARGETS:
        raise CommandError("target must be 61 or 121", command_id)
    names = obj.get("names")
    if not isinstance(names, list) or len(names) not in PLAYER_COUNTS:
        raise CommandError("names must be a list of 2 or 3 names", command_id)
    for name in names:
        if not isinstance(name, str):
            raise CommandError("names must be strings", command_id)
    return command_id, target, [name[:MAX_NAME_CHARS] for name in names]
