"""Two linked ends, every interleaving (issue 22, 7): counts being entered on one board's buttons
while the other end pegs the same player, host pegs at both ends, moves delivered late. Each
end is the shared core's GameState (the board's own rules) with a panel's count as the firmware's
panel enters and commits it (cribfw/panel.py: its own count, committed only while the board
still shows it), and the link's own pieces: a board's change read as moves
(:func:`board_changes`), the move logs merged (:class:`MoveLog`), and the requests that bring a
board to the merged game (:func:`plan`), run on the board as the board runs them. Property:
once everything is delivered and every count committed, both boards show one game, and each
player's front peg is every point pegged for them at either end (up to the win hole)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from cribboard.hall.simtable import board_state
from cribboard.link.boardsync import DEAL, NEW, PEG, PEND, board_changes, plan
from cribboard.link.moves import MoveLog, Position, game_change
from cribcore.state import GameError, GameState

TARGET = 121


@dataclass
class End:
    """One end: its board (the core's game), its panel's counts, its move log."""

    side: str
    game: GameState = field(default_factory=lambda: GameState(2, TARGET))
    log: MoveLog = field(default_factory=MoveLog)
    entered: list[int] = field(default_factory=lambda: [0, 0])

    def __post_init__(self) -> None:
        self.seen = board_state(self.game)

    def record(self) -> None:
        """The board's own change since the link last looked, as moves of this side."""
        now = board_state(self.game)
        for change in board_changes(self.seen, now):
            self.log.make(self.side, change, self.log.merged().current)
        self.seen = now

    def apply(self) -> None:
        """The link brings the board to the merged game (its own requests are not moves)."""
        target = self.log.merged().position
        if target is None:
            return
        for step in plan(board_state(self.game), target):
            try:
                if step.verb == NEW:
                    self.game.new_game(*step.args)
                elif step.verb == DEAL:
                    self.game.set_dealer(*step.args)
                elif step.verb == PEG:
                    self.game.peg(*step.args)
                elif step.verb == PEND:
                    self.game.set_pending(*step.args)
                else:
                    self.game.set_pegs(*step.args)
            except GameError:
                break  # as the link: a refused request, the next state tells
        self.seen = board_state(self.game)

    # --- the panel (cribfw/panel.py) ------------------------------------------------------

    def enter(self, player: int, points: int) -> None:
        try:
            self.game.set_pending(player, points)
        except GameError:
            return
        self.entered[player] = points

    def commit(self, player: int) -> int:
        """Commit this panel's count (pegged if the board still shows it, as the panel does);
        the points the player entered, which the game must show in the end."""
        points = self.entered[player]
        self.entered[player] = 0
        if not points or self.game.pending[player] != points:
            return points  # lost, unless the game is over: the property says
        try:
            self.game.peg(player, points)
        except GameError:
            self.game.set_pending(player, 0)
            return points
        self.record()
        return points


def deliver(src: End, dst: End) -> None:
    for move in list(src.log.moves.values()):
        dst.log.add(move)
    dst.apply()


actions = st.lists(
    st.one_of(
        st.tuples(st.just("enter"), st.sampled_from("ab"), st.integers(0, 1), st.integers(1, 9)),
        st.tuples(st.just("commit"), st.sampled_from("ab"), st.integers(0, 1)),
        st.tuples(st.just("peg"), st.sampled_from("ab"), st.integers(0, 1), st.integers(1, 9)),
        st.tuples(st.just("deliver"), st.sampled_from("ab")),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(actions=actions)
def test_counts_and_pegs_made_at_both_ends_at_once_all_count(
    actions: list[tuple[object, ...]],
) -> None:
    a, b = End("a"), End("b")
    start = a.log.make("a", game_change(Position.of_game(a.game)), "")
    b.log.add(start)
    ends = {"a": a, "b": b}
    pegged = [0, 0]
    for action in actions:
        kind, end = action[0], ends[str(action[1])]
        if kind == "enter":
            end.enter(int(action[2]), int(action[3]))  # type: ignore[call-overload]
        elif kind == "commit":
            player = int(action[2])  # type: ignore[call-overload]
            pegged[player] += end.commit(player)
        elif kind == "peg":
            player, points = int(action[2]), int(action[3])  # type: ignore[call-overload]
            # (A host pegging at the board whose own buttons hold a count for that player is
            # one end's business: `peg` commits a preview by the protocol. Not modelled.)
            if end.game.winner < 0 and not end.entered[player]:
                end.game.peg(player, points)
                end.record()
                pegged[player] += points
        else:
            deliver(end, b if end is a else a)
    # Everything delivered, every count committed, everything delivered again.
    for _ in range(2):
        deliver(a, b)
        deliver(b, a)
        for end in (a, b):
            for player in (0, 1):
                pegged[player] += end.commit(player)
    deliver(a, b)
    deliver(b, a)
    shown = {Position.of_game(end.game) for end in (a, b)}
    assert len(shown) == 1, shown
    position = shown.pop()
    if position.winner is None:  # after a win, pegs made at the same moment count for nothing
        assert list(position.front) == pegged, (position, pegged)
