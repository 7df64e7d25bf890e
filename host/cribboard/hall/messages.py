"""The payloads of the hall's topics (docs/mqtt.md), encoded and decoded: compact JSON in UTF-8,
small enough for a board's umqtt.simple. Decoders raise MessageError on anything malformed and
ignore fields they do not know (later v1 versions may add some)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cribboard.api import BoardState
from cribboard.hall import HallError
from cribboard.hall.tournament import Round, Standing, Tournament
from cribcore import hall as core
from cribcore.hall import is_command_id
from cribcore.limits import PLAYER_COUNTS, TARGETS

# The shared core's (a board's own table client uses the same).
ONLINE = core.ONLINE_PAYLOAD
OFFLINE = core.OFFLINE_PAYLOAD
NEW_GAME = core.NEW_GAME
MAX_COMMAND_BYTES = core.MAX_COMMAND_BYTES  # a board's receive buffer for cmd
MAX_NAME_CHARS = core.MAX_NAME_CHARS  # a player's name in a command (longer names are cut)


class MessageError(HallError):
    """A payload that is not what its topic carries. `command_id` is set when a command was
    readable enough to answer with an error ack."""

    def __init__(self, message: str, command_id: str | None = None) -> None:
        super().__init__(message)
        self.command_id = command_id


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _loads(payload: bytes, what: str) -> dict[str, Any]:
    try:
        obj = json.loads(payload)
    except (UnicodeDecodeError, ValueError) as err:
        raise MessageError(f"{what}: not JSON: {err}")
    if not isinstance(obj, dict):
        raise MessageError(f"{what}: not a JSON object")
    return obj


# --- state and event: the bridge's state object --------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# BoardState's field types (as annotated) -> the JSON values they accept.
_FIELD_CHECKS: dict[str, Callable[[object], bool]] = {
    "int": _is_int,
    "int | None": lambda v: v is None or _is_int(v),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "list[int]": lambda v: isinstance(v, list) and all(_is_int(x) for x in v),
}


def encode_state(state: BoardState) -> bytes:
    """A `state` (and `event`) payload: the bridge's state object (``GET /api/state``), built
    by :meth:`BoardState.to_json`, with its revision ``rev``."""
    return _dumps(state.to_json())


def decode_state(payload: bytes) -> BoardState:
    """A `state` or `event` payload back as a BoardState (its fields, checked by type)."""
    obj = _loads(payload, "state")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(BoardState):
        check = _FIELD_CHECKS[str(f.type)]
        if f.name not in obj or not check(obj[f.name]):
            raise MessageError(f"state: {f.name} missing or not {f.type}")
        values[f.name] = obj[f.name]
    return BoardState(**values)


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
    obj = _loads(payload, "cmd")
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
    return NewGame(command_id, target, tuple(names))


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
        return tournament.player(player_id).name

    return _dumps(
        {
            "round": round_.number,
            "tables": [
                {"table": t.number, "players": [name(p) for p in t.players]} for t in round_.tables
            ],
            "bye": None if round_.bye is None else name(round_.bye),
        }
    )


def encode_standings(round_no: int, standings: list[Standing]) -> bytes:
    """The retained `standings` payload, best first, after round `round_no`'s results so far."""
    return _dumps(
        {
            "round": round_no,
            "standings": [
                {
                    "rank": s.rank,
                    "player": s.player.name,
                    "points": s.points,
                    "played": s.played,
                    "won": s.won,
                    "skunks": s.skunks,
                    "spread": s.spread,
                }
                for s in standings
            ],
        }
    )
