"""The games-won tally under random sequences of every operation that touches it (peg, set, undo,
new, games clear, games x2, deal), run on the shared core (cribcore.state) with Hypothesis.

The rules checked (docs/protocol.md, "games"): the tally never goes below zero; a win adds 1, or 2
for a skunk or double skunk while x2 is on; a correction that takes a win back takes back exactly
what that win added and is still in the tally (nothing after `games clear`); a correction that
keeps the winner changes the tally only when it changes the result, and only while the win's
games are in the tally (settled again under the x2 rule of then); every change can be undone back
to the state before it; every change moves the revision by exactly one; an operation that leaves
the state as it is moves nothing, not even the revision. Two and three players, both targets;
scores drawn near the skunk lines and the win hole, where the rules differ.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from cribcore.layout import skunk_lines
from cribcore.state import NO_WINNER, SKUNK, UNDO_DEPTH, GameError, GameState

# Scores where the rules change (the skunk lines of both games, the win holes), and any other.
SCORES = st.one_of(
    st.sampled_from((0, 1, 30, 31, 32, 59, 60, 61, 62, 89, 90, 91, 92, 119, 120, 121)),
    st.integers(0, 121),
)


def _saved(game: GameState) -> tuple[object, ...]:
    """What undo must restore (pending previews and rev are not undone)."""
    n = game.players
    return (
        game.players,
        game.target,
        game.dealer,
        game.winner,
        tuple(game.front[:n]),
        tuple(game.back[:n]),
        tuple(game.games),
    )


class TallyMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.game = GameState()
        # States undo can go back to, oldest first, each with the model's win_award then.
        self.history: list[tuple[tuple[object, ...], int]] = []
        # The games the current win added and the tally still holds, as the model sees it.
        self.win_award = 0

    # -- helpers ---------------------------------------------------------------------------------

    def _apply(self, change: object, *args: int) -> bool:
        """Run a change; True when it was applied (the rev moved). A rejected one changes
        nothing at all."""
        game = self.game
        before, rev, undo = _saved(game), game.rev, game.undo_count
        try:
            change(*args)  # type: ignore[operator]
        except GameError:
            assert _saved(game) == before and game.rev == rev and game.undo_count == undo
            return False
        if game.rev == rev:
            # Nothing changed: no undo step either.
            assert _saved(game) == before and game.undo_count == undo
            return False
        assert game.rev == rev + 1, "a change moves the revision by exactly one"
        return True

    def _expected_award(self) -> int:
        game = self.game
        if game.winner == NO_WINNER:
            return 0
        return 2 if game.skunk_double and game.result() >= SKUNK else 1

    @staticmethod
    def _result(before: tuple[object, ...]) -> int:
        """The result of a saved state, from the document's rule (section 5), not the board's
        code: judged on the lowest losing score; 0 playing, 1 won, 2 skunk, 3 double skunk."""
        players, target, _, winner, fronts = before[:5]
        if winner == NO_WINNER:
            return 0
        lowest = min(f for p, f in enumerate(fronts) if p != winner)  # type: ignore[arg-type]
        double_line, skunk_line = skunk_lines(target)
        return 3 if lowest < double_line else 2 if lowest < skunk_line else 1

    def _record(self, before: tuple[object, ...], award: int) -> None:
        self.history.append((before, award))
        del self.history[:-UNDO_DEPTH]

    def _settled(self, before: tuple[object, ...], games_before: list[int]) -> None:
        """After a peg or set: the tally changed by exactly what the win taken back and the
        win now held account for; a correction that keeps the winner settles the game again
        only when the result changed and the win's games are still in the tally."""
        game = self.game
        expected = list(games_before)
        old_winner = before[3]
        if old_winner != NO_WINNER and old_winner == game.winner:
            after = _saved(game)
            if self.win_award and self._result(after) != self._result(before):
                expected[game.winner] -= self.win_award
                self.win_award = self._expected_award()
                expected[game.winner] += self.win_award
        else:
            if old_winner != NO_WINNER:
                expected[old_winner] -= self.win_award  # type: ignore[index]
            self.win_award = self._expected_award()
            if game.winner != NO_WINNER:
                expected[game.winner] += self.win_award
        assert list(game.games) == expected, (before, _saved(game), expected, game.games)

    # -- rules -------------------------------------------------------------------------------

    @rule(player=st.integers(0, 2), points=st.integers(0, 30))
    def peg(self, player: int, points: int) -> None:
        before, games, award = _saved(self.game), list(self.game.games), self.win_award
        if self._apply(self.game.peg, player, points):
            self._record(before, award)
            self._settled(before, games)

    @rule(player=st.integers(0, 2), front=SCORES, gap=st.integers(0, 70))
    def set_pegs(self, player: int, front: int, gap: int) -> None:
        before, games, award = _saved(self.game), list(self.game.games), self.win_award
        back = max(0, front - gap)
        if self._apply(self.game.set_pegs, player, front, back):
            self._record(before, award)
            self._settled(before, games)

    @rule()
    def clear_games(self) -> None:
        before = _saved(self.game)
        if self._apply(self.game.reset_games):
            self._record(before, self.win_award)
            self.win_award = 0
        assert all(g == 0 for g in self.game.games)

    @rule(on=st.booleans())
    def skunk_double(self, on: bool) -> None:
        was = self.game.skunk_double
        applied = self._apply(self.game.set_skunk_double, on)
        assert applied == (was != on)

    @rule(player=st.integers(0, 2))
    def deal(self, player: int) -> None:
        before = _saved(self.game)
        if self._apply(self.game.set_dealer, player):
            self._record(before, self.win_award)

    @rule(length=st.sampled_from((0, 61, 121)), players=st.sampled_from((0, 2, 3)))
    def new_game(self, length: int, players: int) -> None:
        before = _saved(self.game)
        if self._apply(self.game.new_game, length, players):
            self._record(before, self.win_award)
            self.win_award = 0

    @precondition(lambda self: self.history)
    @rule()
    def undo(self) -> None:
        expected, self.win_award = self.history.pop()
        self.game.undo()
        assert _saved(self.game) == expected

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def tally_never_below_zero(self) -> None:
        assert min(self.game.games) >= 0, self.game.games

    @invariant()
    def award_is_what_the_tally_holds(self) -> None:
        game = self.game
        assert game.award == self.win_award
        if game.winner != NO_WINNER:
            assert game.games[game.winner] >= game.award
        else:
            assert game.award == 0


TallyMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=60, deadline=None)
test_tally = TallyMachine.TestCase
