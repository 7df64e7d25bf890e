"""The payloads of the hall's topics (docs/mqtt.md), encoded and decoded: compact JSON in UTF-8,
small enough for a board's umqtt.simple. Decoders raise MessageError on anything malformed and
ignore fields they do not know (later v1 versions may add some)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_type_hints

from cribboard.api import MATCH_KINDS, BoardState
from cribboard.boarddata import MATCH_FIELDS
from cribboard.errors import HallError
from cribboard.plaintext import inert
from cribboard.tournament import Round, Standing, Tournament
from cribcore import hall as core
from cribcore.hall import is_command_id
from cribcore.limits import MATCH_MOST, MAX_POINTS, PLAYER_COUNTS, TARGETS

# The shared core's (a board's own table client uses the same).
ONLINE = core.ONLINE_PAYLOAD
OFFLINE = core.OFFLINE_PAYLOAD
NEW_GAME = core.NEW_GAME
MAX_COMMAND_BYTES = core.MAX_COMMAND_BYTES  # a board's receive buffer for cmd
MAX_NAME_CHARS = core.MAX_NAME_CHARS  # a player's name in a command (longer names are cut)
# What a table may publish (state, event, ack: a few hundred bytes): anything longer is refused
# before it is parsed. The director's own messages (round, standings) may be longer; the broker
# refuses any message above MAX_MESSAGE_BYTES (its message_size_limit).
MAX_TABLE_MESSAGE_BYTES = 1024
MAX_MESSAGE_BYTES = 256 * 1024
MAX_DEPTH = 4  # JSON nesting: a state object holds lists of numbers, nothing deeper
MAX_REV = 2**31 - 1
MAX_GAMES = 32767  # the board keeps its games-won tally in 16 bits
RESULTS = ("playing", "won", "skunk", "double_skunk")


class MessageError(HallError):
    """A payload that is not what its topic carries. `command_id` is set when a command was
    readable enough to answer with an error ack."""

    def __init__(self, message: str, command_id: str | None = None) -> None:
        super().__init__(message)
        self.command_id = command_id


def payload_bytes(payload: object) -> bytes:
    """A received message's payload as bytes (aiomqtt's type also allows str and numbers)."""
    if isinstance(payload, bytes | bytearray):
        return bytes(payload)
    return b"" if payload is None else str(payload).encode()


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _too_deep(payload: bytes, limit: int) -> bool:
    """Whether `payload` nests JSON arrays or objects deeper than `limit` (brackets inside
    strings do not count). Checked before parsing: a deep value must not reach the parser."""
    if payload.count(b"[") + payload.count(b"{") <= limit:
        return False  # cannot be deeper: the common case, without a scan
    # The brackets outside strings, in order (an unterminated string's count: it is not JSON).
    brackets = _STRING.sub(b"", payload).translate(None, _NOT_BRACKETS)
    depth = 0
    for byte in brackets:
        if byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _loads(payload: bytes, what: str, max_bytes: int = MAX_TABLE_MESSAGE_BYTES) -> dict[str, Any]:
    """A JSON object from a payload of at most `max_bytes` bytes and MAX_DEPTH levels;
    MessageError otherwise (nothing larger or deeper is parsed)."""
    if len(payload) > max_bytes:
        raise MessageError(f"{what}: {len(payload)} bytes, more than {max_bytes}")
    if _too_deep(payload, MAX_DEPTH):
        raise MessageError(f"{what}: JSON nested too deep (more than {MAX_DEPTH} levels)")
    try:
        obj = json.loads(payload)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise MessageError(f"{what}: not JSON: {err}")
    if not isinstance(obj, dict):
        raise MessageError(f"{what}: not a JSON object")
    return obj


# --- state and event: the bridge's state object --------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# BoardState's field types -> their name in errors, and the JSON values they accept.
_FIELD_CHECKS: dict[object, tuple[str, Callable[[object], bool]]] = {
    int: ("int", _is_int),
    int | None: ("int | None", lambda v: v is None or _is_int(v)),
    str: ("str", lambda v: isinstance(v, str)),
    bool: ("bool", lambda v: isinstance(v, bool)),
    list[int]: ("list[int]", lambda v: isinstance(v, list) and all(_is_int(x) for x in v)),
}
_STATE_TYPES = get_type_hints(BoardState)
"""BoardState's fields, in order, and their types."""


def encode_state(state: BoardState) -> bytes:
    """A `state` (and `event`) payload: the bridge's state object (``GET /api/state``), built
    by :meth:`BoardState.to_json`, with its revision ``rev``; without the board's game number
    and match (protocol 1.4: the hall plays its own rounds), so that a Wi-Fi board's own client
    writes the same bytes (cribfw/hallpayload.py)."""
    obj = state.to_json()
    for name in _NOT_IN_THE_HALL:
        del obj[name]
    return _dumps(obj)


_NOT_IN_THE_HALL = ("game", "match")


def decode_state(payload: bytes) -> BoardState:
    """A `state` or `event` payload back as a BoardState: its fields checked by type, range
    and against each other as a board keeps them (:func:`check_state`)."""
    obj = _loads(payload, "state")
    values: dict[str, Any] = {}
    for name, kind in _STATE_TYPES.items():
        if name in MATCH_FIELDS or (name == "game" and name not in obj):
            continue  # (the match from its object; both absent from a board before 1.4)
        word, check = _FIELD_CHECKS[kind]
        if name not in obj or not check(obj[name]):
            raise MessageError(f"state: {name} missing or not {word}")
        values[name] = obj[name]
    if values.get("game") is not None and not 1 <= values["game"] <= MAX_REV:
        raise MessageError(f"state: game must be 1..{MAX_REV}")
    values.update(_match_values(obj.get("match")))
    return check_state(BoardState(**values))


def _match_values(match: object) -> dict[str, int]:
    """BoardState's match fields from a state's `match` (None: no match), checked."""
    if match is None:
        return {}
    if not isinstance(match, dict):
        raise MessageError("state: match must be an object or null")
    kind = match.get("kind")
    if not isinstance(kind, str) or kind not in MATCH_KINDS:
        raise MessageError(f"state: match kind must be one of {MATCH_KINDS}")
    numbers: dict[str, int] = {}
    for name, low, high in (
        ("length", 2, MATCH_MOST),
        ("game", 1, MAX_REV),
        ("number", 1, MAX_REV),
    ):
        value = match.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise MessageError(f"state: match {name} must be {low}..{high}")
        numbers[name] = value
    return {
        "match_length": numbers["length"],
        "match_kind": MATCH_KINDS.index(kind),
        "match_game": numbers["game"],
        "match_number": numbers["number"],
    }


def check_state(state: BoardState) -> BoardState:
    """`state` if a board could show it (MessageError naming the first field that is wrong):
    a target and player count the board plays, one value a player in each list, pegs on the
    board (back <= front <= target), the winner the player in the win hole, the result
    matching it, pending counts 0..29."""
    n, target = state.players, state.target

    def bad(field: str, why: str) -> MessageError:
        return MessageError(f"state: {field} {why}")

    if target not in TARGETS:
        raise bad("target", f"must be one of {TARGETS}")
    if n not in PLAYER_COUNTS:
        raise bad("players", f"must be one of {PLAYER_COUNTS}")
    if not 0 <= state.rev <= MAX_REV:
        raise bad("rev", f"must be 0..{MAX_REV}")
    if not 0 <= state.undo <= MAX_REV:
        raise bad("undo", f"must be 0..{MAX_REV}")
    if not 0 <= state.dealer < n:
        raise bad("dealer", f"must be 0..{n - 1}")
    for field in ("front", "back", "games", "pending"):
        if len(getattr(state, field)) != n:
            raise bad(field, f"must list {n} values")
    for p in range(n):
        front, back = state.front[p], state.back[p]
        if not 0 <= back <= front <= target or back >= target:
            raise bad("front", f"and back of player {p} must be 0 <= back <= front <= {target}")
        if not 0 <= state.games[p] <= MAX_GAMES:
            raise bad("games", f"must be 0..{MAX_GAMES}")
        if not 0 <= state.pending[p] <= MAX_POINTS:
            raise bad("pending", f"must be 0..{MAX_POINTS}")
    at_target = [p for p in range(n) if state.front[p] == target]
    if len(at_target) > 1:
        raise bad("front", "has more than one player in the win hole")
    winner = at_target[0] if at_target else None
    if state.winner != winner:
        raise bad("winner", f"must be {winner} (the player in the win hole)")
    if state.result not in RESULTS or (state.result == "playing") != (winner is None):
        raise bad("result", f"{state.result!r} does not match the winner {winner}")
    return state


def decode_hall(payload: bytes, what: str) -> dict[str, Any]:
    """A hall-wide payload (`round`, `standings`: the director's) as a JSON object, size- and
    depth-capped like the rest."""
    return _loads(payload, what, MAX_MESSAGE_BYTES)


def decode_online(payload: bytes) -> bool:
    """The `online` flag: True for ``1``, False for ``0``."""
    if payload not in (ONLINE, OFFLINE):
        raise MessageError(f"online: {payload!r} is not 1 or 0")
    return payload == ONLINE


# --- cmd and ack ------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewGame:
    """Director -> table: start a new game to `target` for these players (seat order: blue,
    orange[, purple]). `id` comes back in the ack; a table runs each id once."""

    id: str
    target: int
    names: tuple[str, ...]


@dataclass(frozen=True)
class Ack:
    """Table -> director: the command `id` was done (`ok`), or refused with a stable `error`
    code (the board's, or ``bad_command``) and a short `message`."""

    id: str
    ok: bool
    error: str | None = None
    message: str | None = None


def encode_command(command: NewGame) -> bytes:
    """A `cmd` payload; MessageError when it would not fit a board's buffer."""
    if not is_command_id(command.id):
        raise MessageError(f"command id {command.id!r}: 1-16 of A-Z a-z 0-9 _ . -")
    if command.target not in TARGETS or len(command.names) not in PLAYER_COUNTS:
        raise MessageError(f"a new game has a target in {TARGETS} and {PLAYER_COUNTS} players")
    names = [name[:MAX_NAME_CHARS] for name in command.names]
    payload = _dumps({"id": command.id, "op": NEW_GAME, "target": command.target, "names": names})
    if len(payload) > MAX_COMMAND_BYTES:
        raise MessageError(f"command longer than {MAX_COMMAND_BYTES} bytes")
    return payload


def decode_command(payload: bytes) -> NewGame:
    """A `cmd` payload; MessageError (with its `command_id` when readable) otherwise."""
    obj = _loads(payload, "cmd", MAX_COMMAND_BYTES)
    command_id = obj.get("id")
    if not isinstance(command_id, str) or not is_command_id(command_id):
        raise MessageError("cmd: no usable id")
    op, target, names = obj.get("op"), obj.get("target"), obj.get("names")
    if op != NEW_GAME:
        raise MessageError(f"cmd: unknown op {op!r}", command_id)
    if target not in TARGETS:
        raise MessageError(f"cmd: target must be one of {TARGETS}", command_id)
    if (
        not isinstance(names, list)
        or len(names) not in PLAYER_COUNTS
        or not all(isinstance(n, str) for n in names)
    ):
        raise MessageError(f"cmd: names must be a list of {PLAYER_COUNTS} strings", command_id)
    assert isinstance(target, int)
    return NewGame(command_id, target, tuple(name[:MAX_NAME_CHARS] for name in names))


def encode_ack(ack: Ack) -> bytes:
    obj: dict[str, Any] = {"id": ack.id, "ok": ack.ok}
    if not ack.ok:
        obj["error"] = ack.error or "error"
        if ack.message:
            obj["message"] = ack.message
    return _dumps(obj)


def decode_ack(payload: bytes) -> Ack:
    obj = _loads(payload, "ack")
    command_id, ok = obj.get("id"), obj.get("ok")
    if not isinstance(command_id, str) or not isinstance(ok, bool):
        raise MessageError("ack: needs id (a string) and ok (true or false)")
    if not is_command_id(command_id):
        raise MessageError("ack: the id is not a command id")
    error, message = obj.get("error"), obj.get("message")
    return Ack(
        command_id,
        ok,
        error if isinstance(error, str) else None,
        message if isinstance(message, str) else None,
    )


# --- hall-wide: round and standings -----------------------------------------------------------


def encode_round(tournament: Tournament, round_: Round) -> bytes:
    """The retained `round` payload: who plays whom at which table (seat order), and the bye."""

    def name(player_id: int) -> str:
        return inert(tournament.player(player_id).name)

    return _dumps(
        {
            "round": round_.number,
            "tables": [
                {"table": t.number, "players": [name(p) for p in t.players]} for t in round_.tables
            ],
            "bye": None if round_.bye is None else name(round_.bye),
        }
    )


def encode_standings(
    round_no: int, standings: list[Standing], held: list[dict[str, Any]] | None = None
) -> bytes:
    """The retained `standings` payload, best first, after round `round_no`'s results so far;
    `held`: the results held for the director (round, table, result in words, reason), not
    counted in the standings."""
    return _dumps(
        {
            "round": round_no,
            "standings": [
                {
                    "rank": s.rank,
                    "player": inert(s.player.name),
                    "points": s.points,
                    "played": s.played,
                    "won": s.won,
                    "skunks": s.skunks,
                    "spread": s.spread,
                }
                for s in standings
            ],
            "held": held or [],
        }
    )
