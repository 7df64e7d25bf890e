"""Moves and the merged game: what makes the two ends of a remote game converge.

Each end of a remote game keeps its own moves as an ordered log: a move has the side's id and its
number in that log (the move's id, ``side.seq``: delivered twice, it is still one move), a
Lamport clock (one more than the highest clock the side had seen when it made the move), the
game it was made in (the id of that game's ``game`` move) and what it does.

The merged game is a pure function of the *set* of moves (:func:`merge`): every move in one
order, by (clock, side, seq), folded over the shared core's :class:`GameState` (the board's own
rules: leapfrog, the win hole, the skunk lines). Two sides holding the same moves hold the same
game, whatever order the moves reached them in; a side's own moves keep their order (its clock
goes up), and a move made after seeing another comes after it.

- ``peg`` adds points: two sides pegging the same player at once both count.
- ``set`` places a player's pegs (a correction made at one board by a host).
- ``deal`` makes a player the dealer; the last in the order wins.
- ``undo`` names the move it takes back; two undos of one move take it back once.
- ``game`` starts a game: a new game (fronts at 0), or the first side's board as it was when
  the remote game began (its ``start``). Moves count only in the game they were made in: a peg made
  at the moment the other side started a new game stays in the old game. Two new games started
  at the same moment are one game (the first in the order; moves made in the other count in it).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cribboard.api import BoardState
from cribboard.remote import RemoteGameError
from cribcore.limits import MAX_PLAYERS, MAX_POINTS, PLAYER_COUNTS, TARGETS
from cribcore.state import GameError, GameState

log = logging.getLogger(__name__)

PEG = "peg"
SET = "set"
DEAL = "deal"
UNDO = "undo"
GAME = "game"
_ID = re.compile(r"([a-z0-9]{1,16})\.([1-9][0-9]{0,8})\Z")
MAX_SCORE = max(TARGETS)


class MoveError(RemoteGameError):
    """A move payload that is not a move."""


@dataclass(frozen=True)
class Change:
    """What a side did, before it has its place in the log. `front`/`back`: one value for
    ``set``, one per player for ``game``."""

    kind: str
    player: int = 0
    points: int = 0
    front: tuple[int, ...] = ()
    back: tuple[int, ...] = ()
    target: int = 0
    players: int = 0
    dealer: int = 0
    undoes: str = ""


@dataclass(frozen=True)
class Move:
    """A change with its place: made by `side` as its `seq`-th move, at Lamport `clock`, in
    the game started by the move `game` ("" for a side's first game move)."""

    side: str
    seq: int
    clock: int
    game: str
    change: Change

    @property
    def id(self) -> str:
        return f"{self.side}.{self.seq}"

    @property
    def order(self) -> tuple[int, str, int]:
        """The merged order: by clock, then side, then the side's own order."""
        return (self.clock, self.side, self.seq)


@dataclass(frozen=True)
class Position:
    """What the two ends agree on: the game's length, players, dealer and pegs (not the
    games-won tally, which each board keeps for itself, nor a pending count)."""

    target: int
    players: int
    dealer: int
    front: tuple[int, ...]
    back: tuple[int, ...]

    @property
    def winner(self) -> int | None:
        for player, front in enumerate(self.front):
            if front >= self.target:
                return player
        return None

    @classmethod
    def of_game(cls, game: GameState) -> Position:
        n = game.players
        return cls(game.target, n, game.dealer, tuple(game.front[:n]), tuple(game.back[:n]))

    @classmethod
    def of_state(cls, state: BoardState) -> Position:
        n = state.players
        return cls(state.target, n, state.dealer, tuple(state.front[:n]), tuple(state.back[:n]))


# --- payloads ---------------------------------------------------------------------------------


def split_id(move_id: str) -> tuple[str, int]:
    """A move id's side and number; MoveError when it is not ``side.seq``."""
    found = _ID.match(move_id)
    if found is None:
        raise MoveError(f"bad move id {move_id!r}: side.number")
    return found.group(1), int(found.group(2))


def encode_move(move: Move) -> bytes:
    """A move's payload: compact JSON (docs/mqtt.md, "Remote games")."""
    c = move.change
    obj: dict[str, Any] = {"id": move.id, "c": move.clock, "g": move.game, "k": c.kind}
    if c.kind == PEG:
        obj.update(p=c.player, n=c.points)
    elif c.kind == SET:
        obj.update(p=c.player, f=c.front[0], b=c.back[0])
    elif c.kind == DEAL:
        obj.update(p=c.player)
    elif c.kind == UNDO:
        obj.update(m=c.undoes)
    else:
        obj.update(t=c.target, n=c.players, d=c.dealer, f=list(c.front), b=list(c.back))
    return json.dumps(obj, separators=(",", ":")).encode()


def _int(obj: dict[str, Any], key: str, low: int, high: int) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise MoveError(f"move: {key} must be a whole number {low}..{high}")
    return value


def _scores(obj: dict[str, Any], key: str, count: int) -> tuple[int, ...]:
    values = obj.get(key)
    if not isinstance(values, list) or len(values) != count:
        raise MoveError(f"move: {key} must list {count} scores")
    return tuple(_int({key: v}, key, 0, MAX_SCORE) for v in values)


def decode_move(payload: bytes) -> Move:
    """A move payload back as a Move; MoveError for anything malformed (unknown fields are
    ignored: v1 only adds fields)."""
    try:
        obj = json.loads(payload)
    except (UnicodeDecodeError, ValueError) as err:
        raise MoveError(f"move: not JSON: {err}") from None
    if not isinstance(obj, dict):
        raise MoveError("move: not a JSON object")
    move_id, game, kind = obj.get("id"), obj.get("g"), obj.get("k")
    if not isinstance(move_id, str):
        raise MoveError("move: no id")
    side, seq = split_id(move_id)
    if not isinstance(game, str):
        raise MoveError("move: g must be a move id or empty")
    if game:
        split_id(game)
    clock = _int(obj, "c", 1, 2**53)
    if kind == PEG:
        change = Change(PEG, _int(obj, "p", 0, MAX_PLAYERS - 1), _int(obj, "n", 1, MAX_POINTS))
    elif kind == SET:
        player = _int(obj, "p", 0, MAX_PLAYERS - 1)
        front, back = _int(obj, "f", 0, MAX_SCORE), _int(obj, "b", 0, MAX_SCORE)
        change = Change(SET, player, front=(front,), back=(back,))
    elif kind == DEAL:
        change = Change(DEAL, _int(obj, "p", 0, MAX_PLAYERS - 1))
    elif kind == UNDO:
        undoes = obj.get("m")
        if not isinstance(undoes, str):
            raise MoveError("move: an undo names its move (m)")
        split_id(undoes)
        change = Change(UNDO, undoes=undoes)
    elif kind == GAME:
        target, players = obj.get("t"), obj.get("n")
        if target not in TARGETS or players not in PLAYER_COUNTS:
            raise MoveError(f"move: a game has t in {TARGETS} and n in {PLAYER_COUNTS}")
        assert isinstance(target, int) and isinstance(players, int)
        change = Change(
            GAME,
            front=_scores(obj, "f", players),
            back=_scores(obj, "b", players),
            target=target,
            players=players,
            dealer=_int(obj, "d", 0, players - 1),
        )
    else:
        raise MoveError(f"move: unknown kind {kind!r}")
    return Move(side, seq, clock, game, change)


# --- the merged game --------------------------------------------------------------------------


@dataclass(frozen=True)
class Merged:
    """The merged game: `game` None until some side started one; `current` is the id of the
    game move in force; `live` the moves that count, in order."""

    game: GameState | None
    current: str
    live: tuple[str, ...]
    starts: frozenset[str] = field(default_factory=frozenset)

    @property
    def position(self) -> Position | None:
        return None if self.game is None else Position.of_game(self.game)

    def last_undoable(self) -> str | None:
        """The move an undo takes back: the last that counts, a side's start excepted."""
        for move_id in reversed(self.live):
            if move_id not in self.starts:
                return move_id
        return None


def merge(moves: Iterable[Move]) -> Merged:
    """The merged game of a set of moves (see the module's docstring). Moves the game refuses
    where they fall (a peg after the win, pegs a lap apart) count for nothing, on every side."""
    ordered = sorted(moves, key=lambda m: m.order)
    undone = {m.change.undoes for m in ordered if m.change.kind == UNDO}
    game: GameState | None = None
    current = ""
    same_game: dict[str, str] = {}  # a game move started at the same moment as another -> it
    live: list[str] = []
    starts: set[str] = set()

    def game_of(move: Move) -> str:
        made_in = move.game
        while made_in in same_game:
            made_in = same_game[made_in]
        return made_in

    for move in ordered:
        change = move.change
        if change.kind == UNDO or move.id in undone:
            continue
        if change.kind == GAME:
            if game is not None and game_of(move) != current:
                same_game[move.id] = current
                continue
            game = _new_game(change)
            current = move.id
            live.append(move.id)
            if not move.game:
                starts.add(move.id)
            continue
        if game is None or game_of(move) != current:
            continue  # made in a game that is no longer the one in force
        try:
            _apply(game, change)
        except GameError:
            continue
        live.append(move.id)
    return Merged(game, current, tuple(live), frozenset(starts))


def _new_game(change: Change) -> GameState:
    game = GameState(change.players, change.target)
    game.dealer = change.dealer
    # Lower pegs first: a player placed in the win hole must not meet another one there.
    for player in sorted(range(change.players), key=lambda p: change.front[p]):
        try:
            game.set_pegs(player, change.front[player], change.back[player])
        except GameError:
            pass  # a start the board could not show: that player starts at 0
    return game


def _apply(game: GameState, change: Change) -> None:
    if change.kind == PEG:
        game.peg(change.player, change.points)
    elif change.kind == SET:
        game.set_pegs(change.player, change.front[0], change.back[0])
    elif change.kind == DEAL:
        game.set_dealer(change.player)


def game_change(position: Position) -> Change:
    """The ``game`` change that starts a game at `position` (a new game, or a side's start)."""
    return Change(
        GAME,
        front=position.front,
        back=position.back,
        target=position.target,
        players=position.players,
        dealer=position.dealer,
    )


class MoveLog:
    """Every move a side knows, by id; :meth:`merged` is cached until a move is added."""

    def __init__(self, moves: Iterable[Move] = ()) -> None:
        self.moves: dict[str, Move] = {}
        self._merged: Merged | None = None
        for move in moves:
            self.add(move)

    def add(self, move: Move) -> bool:
        """Take a move; False when it was known already (a redelivery counts once)."""
        known = self.moves.get(move.id)
        if known is not None:
            if known != move:
                log.warning("move %s arrived again with other contents: kept the first", move.id)
            return False
        self.moves[move.id] = move
        self._merged = None
        return True

    def merged(self) -> Merged:
        if self._merged is None:
            self._merged = merge(self.moves.values())
        return self._merged

    def clock(self) -> int:
        """The highest clock of any move known."""
        return max((m.clock for m in self.moves.values()), default=0)

    def of_side(self, side: str) -> list[Move]:
        """A side's moves, in its own order."""
        return sorted((m for m in self.moves.values() if m.side == side), key=lambda m: m.seq)

    def make(self, side: str, change: Change, game: str, clock: int | None = None) -> Move:
        """A new move of `side` made in `game` (the game its board showed): its next number,
        and a clock above every move known (or `clock`: a move made while the side knew
        less, with the clock it had then)."""
        seq = max((m.seq for m in self.moves.values() if m.side == side), default=0) + 1
        move = Move(side, seq, self.clock() + 1 if clock is None else clock, game, change)
        self.add(move)
        return move
