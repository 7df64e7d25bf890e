"""Where the table was in its deal, kept for the next `cribboard keep`: the board keeps the
scores and the dealer, and this file (in the user's state directory) the rest of the deal the
scorekeeper knows: which hands of the show are counted, the starter, his heels, the cards seen,
the points a short claim left, the five-card game's bonus. It is taken back only for the same
board, the same form of the game and the board looking exactly as it did when it was written;
otherwise the deal starts from the pone's hand, as before.

The file is read as hostile (its size, its types, its ranges): a damaged one is ignored."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from cribboard.api import BoardState
from cribboard.paths import state_dir
from cribboard.play.outside import looks
from cribboard.rules.cards import Card, parse_card
from cribboard.rules.errors import CardError
from cribboard.rules.scorekeeping import Pegs, Turn
from cribboard.rules.show import ShowHand
from cribboard.rules.variants import Variant

TABLE_FILE = "keeper-deal.json"
_MOST_BYTES = 16 * 1024


def table_path() -> Path:
    """The file in the state directory."""
    return state_dir() / TABLE_FILE


def save_table(path: Path, board: str, variant: Variant, state: BoardState, turn: Turn) -> None:
    """Keep `turn`, the deal of `variant` on `board` (what names it: its port or flash) that
    looks like `state`. Written whole or not at all."""
    record = {
        "board": board,
        "game": variant.name,
        "looks": _json(looks(state)),
        "dealer": turn.dealer,
        "deal": turn.deal_no,
        "step": turn.step,
        "starter": None if turn.starter is None else str(turn.starter),
        "heels": turn.heels,
        "shown": turn.shown,
        "seen": [[str(card), hand.seat, hand.crib] for card, hand in turn.seen],
        "overlooked": None if turn.overlooked is None else list(turn.overlooked),
        "bonus": turn.bonus_due,
    }
    partial = path.with_suffix(".part")
    with contextlib.suppress(OSError):
        with open(partial, "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.replace(partial, path)


def load_table(path: Path, board: str, variant: Variant, state: BoardState) -> Turn | None:
    """The turn kept for `variant` on `board`, if the board still looks as it did then."""
    try:
        with open(path, "rb") as data:
            raw = data.read(_MOST_BYTES + 1)
        record = json.loads(raw) if len(raw) <= _MOST_BYTES else None
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    if (record.get("board"), record.get("game")) != (board, variant.name):
        return None
    if record.get("looks") != _json(looks(state)):
        return None
    try:
        return _turn(record, variant)
    except (TypeError, ValueError, CardError):
        return None


def _turn(record: dict[str, Any], variant: Variant) -> Turn | None:
    seats = variant.players
    dealer, deal, step = (_int(record.get(key)) for key in ("dealer", "deal", "step"))
    if not 0 <= dealer < seats or deal < 1 or not 0 <= step <= seats:
        return None
    seen = []
    for item in _list(record.get("seen"))[:20]:
        card, seat, crib = _list(item)
        if not 0 <= _int(seat) < seats or not isinstance(crib, bool):
            return None
        seen.append((_card(card), ShowHand(_int(seat), crib)))
    overlooked = record.get("overlooked")
    pegs = None
    if overlooked is not None:
        side, points = (_int(value) for value in _list(overlooked))
        if not 0 <= side < variant.sides or not 0 < points <= 29:
            return None
        pegs = Pegs(side, points)
    starter = record.get("starter")
    heels, shown, bonus = record.get("heels"), record.get("shown"), record.get("bonus")
    if not all(isinstance(flag, bool) for flag in (heels, shown, bonus)):
        return None
    return Turn(
        dealer=dealer,
        deal_no=deal,
        step=step,
        starter=None if starter is None else _card(starter),
        heels=bool(heels),
        shown=bool(shown),
        seen=tuple(seen),
        overlooked=pegs,
        bonus_due=bool(bonus),
    )


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("not a whole number")
    return value


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("not a list")
    return value


def _card(value: object) -> Card:
    if not isinstance(value, str) or len(value) > 3:
        raise TypeError("not a card")
    return parse_card(value)


def _json(value: object) -> object:
    """As JSON gives it back (tuples as lists)."""
    return json.loads(json.dumps(value))
