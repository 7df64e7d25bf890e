"""The director's watch over one table's game in a round: the states the director itself received
since the board showed the round's fresh game, and what makes that game doubtful.

A table's password is on its board (a Wi-Fi board keeps it in ``/hall.json``): whoever reads a
board can publish as its table. So a result counts at once only when the states the director
received make it plausible, one after the other (:meth:`GameWatch.take`):

- each state's revision one above the last (a table client publishes every change, and keeps
  those it made while the broker was away for when it is back): a **gap** is doubtful, since a
  forger publishes a win at a revision of its own choosing (unless the broker died in between,
  losing what it had not passed on: then only the points are judged);
- a revision **lower** than before (or the same with another game) only after the table's
  connection changed (an ``online`` message came), and then with the same game: a board that
  restarted counts its revisions from 0 again, its game as it was. A revision that falls while
  the table stays online is two boards (a forger and the real one) publishing as one table;
- no more points between two states than one peg or one correction scores (29), the round's
  target and two players all along;
- at the win, the board's games-won tally up from the fresh game's by the win alone
  (:func:`doubt_about_win`).

A doubt stays with the game (kept in the store with it: a restarted director knows it): the
game's win is held for the director, and a result already counted is held again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cribboard.api import BoardState
from cribboard.hall.store import TableCommand
from cribboard.i18n import _, n_
from cribcore.limits import MAX_POINTS

MAX_DOUBTS = 8  # doubts kept word for word; more are only counted
MAX_AWARD = 2  # games a win adds to the board's tally (2: a skunk with "skunk counts double")


def is_fresh(state: BoardState) -> bool:
    """Whether a board shows a game just begun: every peg home, no winner."""
    return state.winner is None and not any(state.front) and not any(state.back)


def _score(state: BoardState) -> str:
    return "-".join(str(front) for front in state.front)


def _same_game(a: BoardState, b: BoardState) -> bool:
    return (a.target, a.players, a.front, a.back, a.winner) == (
        b.target,
        b.players,
        b.front,
        b.back,
        b.winner,
    )


def doubt_about_step(
    was: BoardState,
    now: BoardState,
    target: int,
    *,
    reconnected: bool = False,
    finished: bool = False,
    broker_lost: bool = False,
) -> str | None:
    """Why a board could not have gone from `was` to `now` in the round's game, as states
    received one after the other (None: it could). `reconnected`: the table's connection
    changed in between (a board that restarted counts its revisions from 0 again).
    `finished`: the round's game was won already (the board may start any game of its own
    since; its revisions must still follow each other). `broker_lost`: the director lost the
    broker in between (a broker that died loses what it had not passed on: a gap then is the
    crash's, judged by its points alone)."""
    if not finished and (now.target, now.players) != (target, 2):
        return _(
            "the board plays a %(target)d-point game for %(players)d, not the round's "
            "%(round_target)d-point game for 2",
            target=now.target,
            players=now.players,
            round_target=target,
        )
    if now.rev <= was.rev:
        if reconnected and _same_game(was, now):
            return None  # the board restarted, its game as it was
        if reconnected:
            return _(
                "the board came back at revision %(now_rev)d with %(now)s, not the %(was)s it "
                "showed at revision %(was_rev)d",
                now_rev=now.rev,
                now=_score(now),
                was=_score(was),
                was_rev=was.rev,
            )
        if now.rev == was.rev:
            return _(
                "two different states at revision %(rev)d (%(was)s, then %(now)s) while the "
                "table stayed online",
                rev=now.rev,
                was=_score(was),
                now=_score(now),
            )
        return _(
            "the revision fell from %(was_rev)d (%(was)s) to %(now_rev)d (%(now)s) while the "
            "table stayed online",
            was_rev=was.rev,
            was=_score(was),
            now_rev=now.rev,
            now=_score(now),
        )
    moves = now.rev - was.rev
    if moves > 1 and not broker_lost:
        return _(
            "the director never received the revisions between %(was_rev)d (%(was)s) and "
            "%(now_rev)d (%(now)s)",
            was=_score(was),
            was_rev=was.rev,
            now=_score(now),
            now_rev=now.rev,
        )
    gained = sum(max(0, a - b) for a, b in zip(now.front, was.front, strict=False))
    if gained > moves * MAX_POINTS:
        return n_(
            "the board went from %(was)s at revision %(was_rev)d to %(now)s at revision "
            "%(now_rev)d: more points than %(count)d move can score",
            "the board went from %(was)s at revision %(was_rev)d to %(now)s at revision "
            "%(now_rev)d: more points than %(count)d moves can score",
            moves,
            was=_score(was),
            was_rev=was.rev,
            now=_score(now),
            now_rev=now.rev,
        )
    return None


def doubt_about_win(state: BoardState, command: TableCommand, target: int) -> str | None:
    """Why a win is not the round's game (None: it is): the round's target, and the board's
    games-won tally up from the fresh game's by this win alone (a board's tally carries over
    from game to game)."""
    if state.target != target:
        return _(
            "a %(target)d-point game in a %(hall_target)d-point hall",
            target=state.target,
            hall_target=target,
        )
    base = command.fresh_games
    if base is None:
        return None  # a game started by an earlier cribboard: its tally was not kept
    for seat, games in enumerate(state.games):
        allowed = base[seat] + (MAX_AWARD if seat == state.winner else 0) if seat < len(base) else 0
        if games > allowed:
            return _(
                "the board's games won went from %(was)s to %(now)s in one game",
                was=list(base),
                now=state.games,
            )
    return None


@dataclass
class GameWatch:
    """A table's game in one round since its fresh game: the last state the director
    received, whether the table's connection changed since, and the doubts so far."""

    round: int
    last: BoardState
    doubts: list[str] = field(default_factory=list)
    more_doubts: int = 0  # doubts beyond MAX_DOUBTS, only counted
    reconnected: bool = False
    finished: bool = False  # the round's game was won on the board
    # The director's connection to the broker when the last state came (not kept: a director
    # started again judges the next state as following the last kept).
    connection: int = field(default=0, compare=False)

    @classmethod
    def from_command(cls, round_no: int, command: TableCommand, target: int) -> GameWatch:
        """The watch of a game whose fresh game the store kept but no watch (a hall of an
        earlier cribboard): the fresh game is the base."""
        assert command.fresh_rev is not None
        games = list(command.fresh_games or (0, 0))
        zeros = [0] * len(games)
        base = BoardState(
            command.fresh_rev, target, len(games), 0, None, "playing",
            zeros, zeros, games, zeros, 0, False,
        )  # fmt: skip
        return cls(round_no, base)

    @classmethod
    def from_json(cls, round_no: int, kept: dict[str, Any]) -> GameWatch:
        return cls(
            round_no,
            BoardState.from_json(kept["last"]),
            [str(doubt) for doubt in kept.get("doubts", [])],
            int(kept.get("more", 0)),
            bool(kept.get("reconnected", False)),
            bool(kept.get("finished", False)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "last": self.last.to_json(),
            "doubts": self.doubts,
            "more": self.more_doubts,
            "reconnected": self.reconnected,
            "finished": self.finished,
        }

    def take(self, state: BoardState, target: int, *, broker_lost: bool = False) -> str | None:
        """Follow the game to `state` (a state different from the last); returns the doubt it
        raises, if any, which stays with the game. `broker_lost`: the director lost the broker
        since the last state (see :func:`doubt_about_step`)."""
        doubt = doubt_about_step(
            self.last,
            state,
            target,
            reconnected=self.reconnected,
            finished=self.finished,
            broker_lost=broker_lost,
        )
        self.last = state
        self.reconnected = False
        if state.winner is not None and state.target == target:
            self.finished = True
        if doubt is not None:
            self.add(doubt)
        return doubt

    def add(self, doubt: str) -> None:
        if doubt in self.doubts:
            return
        if len(self.doubts) < MAX_DOUBTS:
            self.doubts.append(doubt)
        else:
            self.more_doubts += 1

    def reason(self, *more: str) -> str:
        """The doubts in words, one sentence (with `more` doubts of the moment)."""
        words = self.doubts + [doubt for doubt in more if doubt not in self.doubts]
        if self.more_doubts:
            words.append(
                n_("and %(count)d more doubt", "and %(count)d more doubts", self.more_doubts)
            )
        return "; ".join(words)
