"""The host's copy of a board's state, kept whole from the board's events: whole states (`! st`)
replace or merge into it, and brief events (`! p`, `! q`, protocol 1.2: one short line for a peg
or a pending count) are applied to it with the board's own rules (`cribcore.state`), so the host
always holds what the board holds. A brief event that does not follow from the copy (a revision
skipped, a back peg that is not the player's front) means something was missed: the caller reads
the whole state again."""

from __future__ import annotations

from typing import Any

from cribboard import wire
from cribcore.limits import MAX_PLAYERS
from cribcore.state import NO_WINNER, GameError, GameState


def state_fields(state: dict[str, Any]) -> dict[str, str]:
    """The wire's state fields for a state as `wire.decode_state` gives it (its inverse)."""
    names = {name: key for key, name in wire.STATE_KEYS.items()}
    fields = {}
    for name, value in state.items():
        key = names[name]
        fields[key] = ",".join(str(v) for v in value) if key in wire.LIST_KEYS else str(value)
    return fields


class Mirror:
    """The last whole state seen, as `wire.decode_state` names it (None until one came)."""

    def __init__(self) -> None:
        self.state: dict[str, Any] | None = None

    def whole(self, fields: dict[str, str]) -> None:
        """A whole state (the reply to `st`) replaces the copy."""
        self.state = wire.decode_state(fields)

    def merge(self, fields: dict[str, str]) -> None:
        """A state event's fields merge into the copy (absent fields stay as they were)."""
        if self.state is not None:
            self.state.update(wire.decode_state(fields))

    def apply_brief(self, event: wire.Line) -> dict[str, str] | None:
        """Apply a brief event; return the whole state's fields after it, or None when it does
        not follow from the copy (then read the whole state again)."""
        state = self.state
        try:
            rev, player, values = wire.decode_brief(event)
        except ValueError:
            return None
        if state is None or rev != state["rev"] + 1 or not 0 <= player < state["players"]:
            return None
        changed: dict[str, Any] | None
        if event.name == wire.BRIEF_PENDING:
            pending = list(state["pending"])
            pending[player] = values[0]
            changed = {"pending": pending}
        else:
            changed = self._pegged(state, player, values[0], values[1])
            if changed is None:
                return None
        changed["rev"] = rev
        state.update(changed)
        return state_fields(state)

    @staticmethod
    def _pegged(state: dict[str, Any], player: int, front: int, back: int) -> dict[str, Any] | None:
        """The state after `player` pegged from `back` to `front`, by the board's rules."""
        if state["front"][player] != back or front <= back or state["winner"] != NO_WINNER:
            return None
        n = state["players"]
        game = GameState(n, state["target"], bool(state["skunk_double"]))
        for name in ("front", "back", "games", "pending"):
            values = list(state[name]) + [0] * (MAX_PLAYERS - n)
            getattr(game, name)[:] = values
        game.dealer = state["dealer"]
        game.undo_count = state["undo"]  # (the ring's rows are the board's: only the count)
        try:
            game.peg(player, front - back)
        except GameError:
            return None
        if game.front[player] != front:
            return None
        return {
            "front": game.front[:n],
            "back": game.back[:n],
            "games": game.games[:n],
            "pending": game.pending[:n],
            "winner": game.winner,
            "result": game.result(),
            "undo": game.undo_count,
        }
