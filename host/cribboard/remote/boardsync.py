"""A board and the merged game: what a board's own change was, as moves (:func:`board_changes`),
and the requests that bring a board to the merged position (:func:`plan`, :func:`run_step`).

A board pushes its whole state after every change, whatever made it (its buttons, a host, its
end of the remote game itself; the end asks it to, `every 1`, for requests that reach it
together too). The side tells its own changes apart by the revision each request returned; any
other change is read from the difference between two successive states:

- the undo count fell: the board took moves back (one ``undo`` per step);
- the game's length or players changed, or every peg went home: a new ``game``;
- a player's back peg is where the front peg was and the front went up by 1 to 29: a ``peg``;
- a player's pegs moved otherwise: a ``set`` (a host's correction);
- the dealer changed: a ``deal``.

A pending count (blinking where the peg would land) and the games-won tally are not moves. A
pending count entered at this board survives the other end's moves: a request that clears it
(the board's ``peg`` and ``set`` clear the player's pending count) is followed by one that shows
it again, so the buttons still commit it (:func:`plan`).
"""

from __future__ import annotations

from dataclasses import dataclass

from cribboard.api import Board, BoardState
from cribboard.remote.moves import DEAL, GAME, PEG, SET, UNDO, Change, Position, game_change
from cribcore.limits import MAX_POINTS

NEW = "new"
PEND = "pend"  # the request that shows a pending count again


def _home(position: Position) -> bool:
    return not any(position.front) and not any(position.back)


def board_changes(before: BoardState, after: BoardState) -> list[Change]:
    """The moves a board made from `before` to `after` (successive states; see the module's
    docstring). Undo changes do not name their move yet: the side does."""
    if after.undo < before.undo:
        return [Change(UNDO)] * (before.undo - after.undo)
    return position_changes(Position.of_state(before), Position.of_state(after))


def position_changes(was: Position, now: Position) -> list[Change]:
    """The moves that take a board from `was` to `now` (no undo)."""
    if was == now:
        return []
    if (now.target, now.players) != (was.target, was.players) or (_home(now) and not _home(was)):
        return [game_change(now)]
    changes = []
    # Pegs that fall first, the win last: a correction taking a peg out of the win hole comes
    # before another player's peg, and nothing is pegged after a win.
    for player in sorted(
        range(now.players), key=lambda p: (now.front[p] >= now.target, now.front[p] - was.front[p])
    ):
        if (now.front[player], now.back[player]) == (was.front[player], was.back[player]):
            continue
        gained = now.front[player] - was.front[player]
        if now.back[player] == was.front[player] and 1 <= gained <= MAX_POINTS:
            changes.append(Change(PEG, player, gained))
        else:
            changes.append(
                Change(SET, player, front=(now.front[player],), back=(now.back[player],))
            )
    if now.dealer != was.dealer:
        changes.append(Change(DEAL, now.dealer))
    return changes


def offline_changes(before: BoardState, applying: Position | None, now: BoardState) -> list[Change]:
    """The moves a board made while its side was away from it (stopped, or its connection to
    the board down): from `before` (the last state the side saw) to `now`. `applying` is the
    position the side was bringing the board to when it stopped, if it was: what matches it is
    the side's own doing, not a move."""
    changes = board_changes(before, now)
    if applying is None:
        return changes
    reached = Position.of_state(now)
    if reached == applying:
        return []
    kept = []
    for change in changes:
        if change.kind == GAME and (applying.target, applying.players) == (
            reached.target,
            reached.players,
        ):
            continue
        if change.kind in (PEG, SET) and (
            reached.front[change.player],
            reached.back[change.player],
        ) == (applying.front[change.player], applying.back[change.player]):
            continue
        if change.kind == DEAL and change.player == applying.dealer:
            continue
        kept.append(change)
    return kept


@dataclass(frozen=True)
class Step:
    """One request to the board: ``new`` (target, players), ``deal`` (player), ``peg``
    (player, points), ``set`` (player, front, back) or ``pend`` (player, points)."""

    verb: str
    args: tuple[int, ...]


def plan(board: BoardState, target: Position, *, same_game: bool = True) -> list[Step]:
    """The requests that take a board showing `board` to `target`: a new game when the length
    or the players differ or every peg goes home (the dealer then in the next round, once the
    board has chosen one), else the dealer first; then each player's pegs (pegs that fall
    first, the win last; a peg by 1 to 29 as the board's own leapfrog, anything else placed);
    last, the pending counts at this board that those requests clear, shown again (not
    once the game is won: the board takes no count then; nor after a new game, unless
    `same_game`: the merged game is still the one the board showed, its pegs only went home)."""
    now = Position.of_state(board)
    if now == target:
        return []
    steps: list[Step] = []
    winner = board.winner
    if (now.target, now.players) != (target.target, target.players) or (
        _home(target) and not _home(now)
    ):
        steps.append(Step(NEW, (target.target, target.players)))
        zeros = (0,) * target.players
        now = Position(target.target, target.players, target.dealer, zeros, zeros)
        winner = None
    elif now.dealer != target.dealer:
        steps.append(Step(DEAL, (target.dealer,)))
    for player in sorted(
        range(target.players),
        key=lambda p: (target.front[p] >= target.target, target.front[p] - now.front[p]),
    ):
        front, back = target.front[player], target.back[player]
        if (front, back) == (now.front[player], now.back[player]):
            continue
        gained = front - now.front[player]
        if winner is None and back == now.front[player] and 1 <= gained <= MAX_POINTS:
            steps.append(Step(PEG, (player, gained)))
        else:
            steps.append(Step(SET, (player, front, back)))
        if front >= target.target:
            winner = player
        elif winner == player:
            winner = None
    if winner is None and (same_game or not steps or steps[0].verb != NEW):
        moved = {step.args[0] for step in steps if step.verb in (PEG, SET)}
        if steps and steps[0].verb == NEW:
            moved = set(range(target.players))  # a new game clears every count
        for player in sorted(moved):
            if player < len(board.pending) and board.pending[player]:
                steps.append(Step(PEND, (player, board.pending[player])))
    return steps


async def run_step(board: Board, step: Step) -> int | None:
    """Send one request; the board's revision after it (None for ``deal``, whose reply has
    none). Raises what the board raises (BoardRejected; LinkError, the connection lost)."""
    if step.verb == NEW:
        return await board.new_game(*step.args)
    if step.verb == PEND:
        return await board.set_pending(*step.args)
    if step.verb == DEAL:
        await board.set_dealer(step.args[0])
        return None
    if step.verb == PEG:
        return await board.peg(*step.args)
    return await board.set_pegs(*step.args)
