"""The bridge's operations: one table that the HTTP server routes, validates and runs, and that
the OpenAPI document is generated from. They mirror the library (cribboard.api.Board)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cribboard.api import KEY_CHARS, MAX_KEY, Board
from cribboard.bridge.registry import frame_json
from cribboard.errors import BoardRejected, CribboardError, KeyReused, LinkError
from cribboard.names import PLAYER_HELP, player_number
from cribcore import protocol
from cribcore.limits import MATCH_MOST, MAX_POINTS, PLAYER_COUNTS, TARGETS

_INT_LIMIT = 10**protocol.MAX_DIGITS - 1  # the largest number the protocol carries
MAX_REV = 10**protocol.REV_DIGITS - 1  # the largest revision a change may be conditional on
KEY_PATTERN = f"^[!-~]{{1,{MAX_KEY}}}$"  # (KEY_CHARS: printable ASCII but the space)
KEY_HEADER = "Idempotency-Key"
Args = dict[str, Any]


class ApiError(Exception):
    """A request the bridge answers with an error: HTTP status, stable code, text for people."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> dict[str, str]:
        return {"error": self.code, "message": self.message}


# Board error codes (docs/protocol.md, section 8) -> HTTP status. The board changed nothing.
_CONFLICT = {"game_over", "nothing_to_undo", "stale"}
_STATUS_OF_BOARD_CODE = {"denied": 403, "busy": 503}


# What to do, after the board's own words, for the refusals a newcomer meets.
_HINT_OF_BOARD_CODE = {
    "bad_players": "four players play in two partnerships: ask for players 2, one per side",
}


def board_error(err: CribboardError) -> ApiError:
    if isinstance(err, KeyReused):
        return ApiError(422, "key_reused", str(err))
    if isinstance(err, BoardRejected):
        status = 409 if err.code in _CONFLICT else _STATUS_OF_BOARD_CODE.get(err.code, 400)
        hint = _HINT_OF_BOARD_CODE.get(err.code)
        return ApiError(status, err.code, f"{err.text}; {hint}" if hint else err.text)
    if isinstance(err, LinkError):
        return ApiError(503, "board_unavailable", str(err))
    return ApiError(400, "bad_request", str(err))


@dataclass(frozen=True)
class Param:
    """A field of an operation's body. Its range (`low`..`high`, or one of `choices`) is the
    board's, stated in the OpenAPI schema so that a generated client checks it; the board
    checks it too, and answers with its own code (bad_points, bad_pegs, ...)."""

    name: str
    kind: str  # "player" (0..2 or a name), "int", "bool" or "key" (a program's idempotency key)
    required: bool
    description: str
    example: int | str | None = None
    low: int | None = None
    high: int | None = None
    choices: tuple[int, ...] = ()


@dataclass(frozen=True)
class Op:
    name: str  # the path's last segment
    method: str  # GET or POST
    summary: str
    description: str
    params: tuple[Param, ...]
    run: Callable[[Board, Args], Awaitable[dict[str, Any]]]
    result: str  # the component schema of the 200 reply
    old_names: tuple[str, ...] = ()
    """Its old path segments (`preview` for `pending`), kept for one release: served as this
    one, and marked deprecated in the OpenAPI document."""

    def paths(self) -> tuple[str, ...]:
        """Every path it is served on: for the first board and by board id, its name's then
        each old name's."""
        return tuple(
            path
            for name in (self.name, *self.old_names)
            for path in (f"/api/{name}", f"/api/boards/{{board}}/{name}")
        )

    @property
    def keyed(self) -> bool:
        """Whether it takes a program's key (the `key` field, the Idempotency-Key header)."""
        return any(p.kind == "key" for p in self.params)


_PLAYER = Param("player", "player", True, PLAYER_HELP, 0)
_TARGETS = " or ".join(str(t) for t in TARGETS)
_HOLE = max(TARGETS)  # the win hole: the highest a front peg goes
# Every change takes these (docs/bridge.md, "Changes safe to repeat").
_KEY = Param(
    "key",
    "key",
    False,
    "the program's own name for this change (an idempotency key, also the "
    f"{KEY_HEADER} header): the same key again counts once and gets the first answer",
    "deal-3-hand-1",
)
_IF_REV = Param(
    "if_rev",
    "int",
    False,
    "apply it only while the board's revision (state.rev) is still this; else 409 stale",
    17,
    0,
    MAX_REV,
)
_CHANGE = (_KEY, _IF_REV)


async def _with_state(board: Board, **extra: Any) -> dict[str, Any]:
    state = (await board.state()).to_json()
    return {**extra, "rev": state["rev"], "state": state}


async def _state(board: Board, args: Args) -> dict[str, Any]:
    state = (await board.state()).to_json()
    health = await board.health()
    if health is not None:
        state["health"] = health.to_json()
    return state


async def _frame(board: Board, args: Args) -> dict[str, Any]:
    return frame_json(await board.frame())


def _condition(args: Args) -> dict[str, Any]:
    return {"key": args.get("key"), "if_rev": args.get("if_rev")}


async def _peg(board: Board, args: Args) -> dict[str, Any]:
    await board.peg(
        args["player"], args["points"], if_front=args.get("if_front"), **_condition(args)
    )
    return await _with_state(board)


async def _set(board: Board, args: Args) -> dict[str, Any]:
    await board.set_pegs(args["player"], args["front"], args.get("back"), **_condition(args))
    return await _with_state(board)


async def _undo(board: Board, args: Args) -> dict[str, Any]:
    await board.undo(**_condition(args))
    return await _with_state(board)


async def _new(board: Board, args: Args) -> dict[str, Any]:
    await board.new_game(args.get("target"), args.get("players"), **_condition(args))
    return await _with_state(board)


async def _dealer(board: Board, args: Args) -> dict[str, Any]:
    dealer = await board.set_dealer(args.get("player"), **_condition(args))
    return await _with_state(board, dealer=dealer)


async def _match(board: Board, args: Args) -> dict[str, Any]:
    forms = [name for name in ("best_of", "first_to", "end") if args.get(name) is not None]
    if len(forms) > 1 or (not forms and args.get("skunk_double") is None):
        raise ApiError(
            400, "bad_request", "one of best_of, first_to or end (and skunk_double, or it alone)"
        )
    if forms == ["end"] and args["end"]:
        await board.end_match(**_condition(args))
    elif forms and forms[0] != "end":
        await board.start_match(
            args[forms[0]], forms[0], skunk_double=args.get("skunk_double"), **_condition(args)
        )
        return await _with_state(board)
    if args.get("skunk_double") is not None:
        await board.set_skunk_double(args["skunk_double"])
    return await _with_state(board)


async def _pending(board: Board, args: Args) -> dict[str, Any]:
    await board.set_pending(args["player"], args["points"], **_condition(args))
    return await _with_state(board)


OPS: tuple[Op, ...] = (
    Op(
        "state",
        "GET",
        "The board's state",
        "The game the board shows: pegs, dealer, winner, games won, pending counts; and, from a "
        "board that reports it, its health (uptime, free heap, saves and failed saves).",
        (),
        _state,
        "State",
    ),
    Op(
        "frame",
        "GET",
        "What the LEDs show",
        "The board's current LED frame: `rgb` is 6 hex digits (RRGGBB) per hole in hole order "
        "(the ids of /layout.json), before brightness; `scale` (of 256) is the brightness and "
        "current limiter applied on the strip, `milliamps` the estimated draw.",
        (),
        _frame,
        "Frame",
    ),
    Op(
        "peg",
        "POST",
        "Score points for a player",
        "The back peg leapfrogs to front + points. Clears the player's pending count.",
        (
            _PLAYER,
            Param("points", "int", True, f"1..{MAX_POINTS}", 5, 1, MAX_POINTS),
            Param(
                "if_front",
                "int",
                False,
                "peg only while the player's front peg (the score) is still this; else 409 stale",
                0,
                0,
                _HOLE,
            ),
            *_CHANGE,
        ),
        _peg,
        "Change",
    ),
    Op(
        "set",
        "POST",
        "Place a player's pegs (a correction)",
        "Needs 0 <= back <= front <= target, back < target, and the pegs less than a lap apart "
        "(unless back is 0). Undoable.",
        (
            _PLAYER,
            Param("front", "int", True, "the front peg (the score)", 30, 0, _HOLE),
            Param("back", "int", False, "the back peg; absent: where it is", 20, 0, _HOLE - 1),
            *_CHANGE,
        ),
        _set,
        "Change",
    ),
    Op(
        "undo",
        "POST",
        "Take back the last change",
        "Reverses the last peg, set, dealer change or new game.",
        _CHANGE,
        _undo,
        "Change",
    ),
    Op(
        "new",
        "POST",
        "Start a new game",
        "Absent fields keep the current setting. Games won carry over unless the player count "
        "changes.",
        (
            Param("target", "int", False, _TARGETS, max(TARGETS), choices=TARGETS),
            Param(
                "players",
                "int",
                False,
                "2 or 3; four players in two partnerships: 2 (each side pegs as one player)",
                min(PLAYER_COUNTS),
                choices=PLAYER_COUNTS,
            ),
            *_CHANGE,
        ),
        _new,
        "Change",
    ),
    Op(
        "dealer",
        "POST",
        "Set the dealer, or pass the deal on",
        "With a player: that player deals (has the crib). Without: the deal passes on.",
        (Param("player", "player", False, "the new dealer; absent: the next player", 1), *_CHANGE),
        _dealer,
        "DealerChange",
    ),
    Op(
        "pending",
        "POST",
        "Show a pending count before it is pegged",
        "A count entered but not yet pegged: the board blinks the hole the player's peg would "
        "reach; 0 clears it. Not undoable.",
        (
            _PLAYER,
            Param("points", "int", True, f"0..{MAX_POINTS} (0 clears)", 6, 0, MAX_POINTS),
            *_CHANGE,
        ),
        _pending,
        "Change",
        old_names=("preview",),
    ),
    Op(
        "match",
        "POST",
        "Start a match, or end match play",
        "best_of N (3, 5, .., 15) or first_to N (2..15) starts a match with a new game and the "
        "games won at 0 (its score: state.match says who won it); end: true ends match play "
        "(the game and the games won go on); skunk_double: whether a skunk (or double skunk) "
        "wins two games, alone or with the start. Undoable but for skunk_double (protocol 1.4: "
        "a board with an older firmware is refused, 400, saying to update it).",
        (
            Param(
                "best_of",
                "int",
                False,
                "games in the match: the first to win more than half wins it",
                3,
                choices=tuple(range(3, MATCH_MOST + 1, 2)),
            ),
            Param("first_to", "int", False, "the games a player must win", 5, 2, MATCH_MOST),
            Param("end", "bool", False, "true: no more match play", True),
            Param(
                "skunk_double",
                "bool",
                False,
                "a skunk (or double skunk) wins two games of the match, not one",
                True,
            ),
            *_CHANGE,
        ),
        _match,
        "Change",
    ),
)


def _int(param: Param, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(400, "bad_request", f"{param.name} must be a whole number")
    # What the protocol can carry; the game's ranges are the board's to check.
    low, high = (0, MAX_REV) if param is _IF_REV else (-_INT_LIMIT, _INT_LIMIT)
    if not low <= value <= high:
        raise ApiError(400, "bad_request", f"{param.name} is out of range")
    return value


def _key(value: object) -> str:
    if (
        not isinstance(value, str)
        or not 0 < len(value) <= MAX_KEY
        or not set(value) <= set(KEY_CHARS)
    ):
        raise ApiError(
            400,
            "bad_request",
            f"key must be 1 to {MAX_KEY} printable ASCII characters without spaces",
        )
    return value


def parse_args(op: Op, body: object, key: str | None = None) -> Args:
    """Check a request's JSON body against the operation (the board checks the ranges of the
    game; the bridge those of the protocol); `key`: the Idempotency-Key header, if sent."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise ApiError(400, "bad_request", "the body must be a JSON object")
    known = {p.name for p in op.params}
    unknown = sorted(set(body) - known)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise ApiError(400, "bad_request", f"unknown field {unknown[0]!r} (fields: {allowed})")
    args: Args = {}
    if key is not None and op.keyed:  # (a reading request has nothing to repeat: ignored)
        if body.get("key") not in (None, key):
            raise ApiError(400, "bad_request", f"the {KEY_HEADER} header and key differ")
        body = {**body, "key": key}
    for param in op.params:
        value = body.get(param.name)
        if value is None:
            if param.required:
                raise ApiError(400, "bad_request", f"missing field {param.name!r}")
            continue
        if param.kind == "player" and isinstance(value, str):
            player = player_number(value)
            if player is None:
                raise ApiError(400, "bad_player", f"unknown player {value!r}: use {PLAYER_HELP}")
            args[param.name] = player
        elif param.kind == "player" and (isinstance(value, bool) or not isinstance(value, int)):
            raise ApiError(
                400,
                "bad_request",
                f"{param.name} must be {PLAYER_HELP}, not {json.dumps(value)}",
            )
        elif param.kind == "key":
            args[param.name] = _key(value)
        elif param.kind == "bool":
            if not isinstance(value, bool):
                raise ApiError(400, "bad_request", f"{param.name} must be true or false")
            args[param.name] = value
        else:
            args[param.name] = _int(param, value)
    return args
