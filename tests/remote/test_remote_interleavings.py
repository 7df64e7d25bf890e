"""Two ends of a remote game, every interleaving (issue 22, 7): counts being entered on one
board's buttons while the other end pegs the same player, host pegs and undos at both ends (two
undos of one move take it back once), moves delivered late. Each
end is the shared core's GameState (the board's own rules) with a panel's count as the firmware's
panel enters and commits it (cribfw/panel.py: its own count, committed only while the board
still shows it), and the remote end's own pieces: a board's change read as moves
(:func:`board_changes`), the move logs merged (:class:`MoveLog`), and the requests that bring a
board to the merged game (:func:`plan`), run on the board as the board runs them. Property:
once everything is delivered and every count committed, both boards show one game, and each
player's front peg is every point pegged for them at either end (up to the win hole)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from cribboard.remote.boardsync import DEAL, NEW, PEG, PEND, board_changes, plan
from cribboard.remote.moves import PEG as PEG_MOVE
from cribboard.remote.moves import UNDO, Change, MoveLog, Position, game_change
from cribcore.state import GameError, GameState
from cribdev.simtable import board_state

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
        self.shown = ""  # the game move the board showed last

    def record(self) -> list[Change]:
        """The board's own change since the end last looked, as moves of this side (an undo
        names the last move that counts, as a RemoteEnd does); the changes made."""
        now = board_state(self.game)
        made = []
        for change in board_changes(self.seen, now):
            merged = self.log.merged()
            if change.kind == UNDO:
                undone = {m.change.undoes for m in self.log.moves.values() if m.change.undoes}
                targets = [m for m in reversed(merged.live) if m not in merged.starts]
                targets = [m for m in targets if m not in undone]
                if not targets:
                    continue
                change = Change(UNDO, undoes=targets[0])
            self.log.make(self.side, change, merged.current)
            made.append(change)
        self.seen = now
        return made

    def apply(self) -> None:
        """The end brings the board to the merged game (its own requests are not moves)."""
        merged = self.log.merged()
        target = merged.position
        if target is None:
            return
        same_game, self.shown = merged.current == self.shown, merged.current
        for step in plan(board_state(self.game), target, same_game=same_game):
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
                break  # as the end: a refused request, the next state tells
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
        st.tuples(st.just("undo"), st.sampled_from("ab")),
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
    a.shown = b.shown = start.id  # both boards show the start (both begin at home)
    ends = {"a": a, "b": b}
    pegged = [0, 0]
    undone: set[str] = set()
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
        elif kind == "undo":
            # The board's undo (a host's, or the buttons' hold with nothing pending here).
            if any(end.entered) or end.game.undo_count == 0:
                continue
            end.game.undo()
            for change in end.record():
                taken = end.log.moves[change.undoes].change
                if taken.kind == PEG_MOVE and change.undoes not in undone:
                    pegged[taken.player] -= taken.points  # two undos of one move: once
                undone.add(change.undoes)
            end.apply()  # the end brings the board to the merged game
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
