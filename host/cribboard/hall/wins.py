"""What a table's board state says about its game: finished or not, who won, the loser's score.

The board judges the win itself (its front peg reaches the target: the win hole); the
director takes the result from the first state that shows it, through :func:`finished_game`,
and keys it with :func:`result_key` so that the same win delivered twice is stored once."""

from __future__ import annotations

from dataclasses import dataclass

from cribboard.api import BoardState


@dataclass(frozen=True)
class FinishedGame:
    """A two-player game that has a winner: seat 0 is blue, seat 1 orange."""

    winner_seat: int
    loser_score: int
    target: int
    rev: int


def finished_game(state: BoardState) -> FinishedGame | None:
    """The finished game a two-player state shows; None while it is being played (or for a
    three-player game, which a club night does not use)."""
    if state.winner is None or state.players != 2 or state.winner not in (0, 1):
        return None
    loser_score = state.front[1 - state.winner]
    return FinishedGame(state.winner, loser_score, state.target, state.rev)


def result_key(table: int, round_no: int, rev: int) -> str:
    """The idempotency key of a table's result: the table, the round, and the board's revision
    at the win (``t3/r2/rev118``). A redelivered message (QoS 1, a broker restart) or a retained
    state read again carries the same key."""
    return f"t{table}/r{round_no}/rev{rev}"
