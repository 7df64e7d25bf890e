# Board state tests: run under CPython (pytest) and MicroPython (mprun.py).
from checks import raises

from cribcore.state import (
    DOUBLE_SKUNK,
    NO_WINNER,
    PLAYING,
    SKUNK,
    UNDO_DEPTH,
    WON,
    GameState,
)


def test_leapfrog():
    b = GameState()
    assert (b.front[0], b.back[0]) == (0, 0)
    b.peg(0, 5)
    assert (b.front[0], b.back[0]) == (5, 0)
    b.peg(0, 3)
    assert (b.front[0], b.back[0]) == (8, 5)
    b.peg(0, 12)
    assert (b.front[0], b.back[0]) == (20, 8)
    assert (b.front[1], b.back[1]) == (0, 0)


def test_rev_bumps_on_every_change():
    b = GameState()
    r = b.rev
    b.peg(1, 2)
    assert b.rev == r + 1
    b.set_pending(0, 4)
    assert b.rev == r + 2
    b.undo()
    assert b.rev == r + 3


def test_game_ends_at_target_and_peg_stops_in_win_hole():
    b = GameState(target=61)
    b.set_pegs(0, 55, 50)
    b.peg(0, 10)
    assert b.front[0] == 61 and b.back[0] == 55
    assert b.winner == 0
    assert b.result() == SKUNK  # loser 0 < 31 in a 61 game
    assert b.games[0] == 1
    err = raises("game_over", b.peg, 1, 2)
    assert "over" in err.text
    raises("game_over", b.set_pending, 1, 2)


def test_skunk_classification_121():
    for loser, expected in ((90, SKUNK), (91, WON), (60, DOUBLE_SKUNK), (61, SKUNK)):
        b = GameState()
        b.set_pegs(1, loser, loser - 5)
        b.set_pegs(0, 119, 110)
        b.peg(0, 2)
        assert b.result() == expected, (loser, b.result())


def test_skunk_counts_double_as_an_option():
    b = GameState(skunk_double=True)
    b.set_pegs(0, 119, 110)
    b.peg(0, 4)
    assert b.result() == DOUBLE_SKUNK
    assert b.games[0] == 2
    b.undo()
    assert b.games[0] == 0 and b.winner == NO_WINNER
    b.set_pegs(1, 100, 95)
    b.peg(0, 4)
    assert b.games[0] == 1


def test_invalid_operations_change_nothing():
    b = GameState()
    b.peg(0, 7)
    before = (list(b.front), list(b.back), b.rev, b.undo_count)
    raises("bad_points", b.peg, 0, -1)
    raises("bad_points", b.peg, 0, 0)
    raises("bad_points", b.peg, 0, 30)
    raises("bad_player", b.peg, 2, 3)
    raises("bad_player", b.peg, -1, 3)
    raises("bad_pegs", b.set_pegs, 0, 5, 6)
    for player, points, code in ((0, 0, "bad_points"), (0, 30, "bad_points"), (3, 1, "bad_player")):
        raises(code, b.score, player, points)  # (the protocol's peg: checked in the same step)
    raises("bad_pegs", b.set_pegs, 0, 122, 100)
    raises("bad_pegs", b.set_pegs, 0, 100, 40)
    raises("bad_target", b.new_game, 100)
    raises("bad_players", b.new_game, 121, 5)
    raises("bad_player", b.set_dealer, 3)
    assert (list(b.front), list(b.back), b.rev, b.undo_count) == before


def test_a_peg_refused_after_the_win_saves_no_undo_step():
    # (GameState.score checks in the step that saves the undo step: the checks come first.)
    b = GameState()
    b.set_pegs(0, 120, 115)
    b.score(0, 2)
    won = (list(b.front), list(b.back), b.rev, b.undo_count, b._undo_top)
    raises("game_over", b.score, 1, 2)
    assert (list(b.front), list(b.back), b.rev, b.undo_count, b._undo_top) == won


def test_undo_whole_deals():
    b = GameState()
    history = []
    for i in range(40):
        history.append((b.front[i % 2], b.back[i % 2]))
        b.peg(i % 2, 1 + i % 5)
    for i in reversed(range(40)):
        b.undo()
        assert (b.front[i % 2], b.back[i % 2]) == history[i]
    raises("nothing_to_undo", b.undo)


def test_undo_depth_is_bounded():
    b = GameState(target=121)
    for i in range(UNDO_DEPTH + 10):
        b.peg(i % 2, 1)
    for _ in range(UNDO_DEPTH):
        b.undo()
    raises("nothing_to_undo", b.undo)
    assert b.front[0] + b.front[1] == 10


def test_set_pegs_out_of_the_win_hole_takes_the_win_back():
    b = GameState()
    b.set_pegs(0, 120, 100)
    b.peg(0, 5)
    assert b.winner == 0 and b.games[0] == 1
    b.set_pegs(0, 118, 100)
    assert b.winner == NO_WINNER and b.games[0] == 0
    assert b.result() == PLAYING
    b.peg(1, 3)


def test_new_game_keeps_games_and_loser_deals():
    b = GameState()
    b.set_dealer(0)
    b.set_pegs(1, 120, 115)
    b.peg(1, 1)
    assert b.games[1] == 1
    b.new_game(61)
    assert b.target == 61 and b.front[1] == 0 and b.games[1] == 1
    assert b.dealer == 0  # the loser deals first
    b.undo()  # a new game started by mistake comes back
    assert b.target == 121 and b.front[1] == 121 and b.winner == 1


def test_dealer_rotation_and_three_players():
    b = GameState(players=3)
    assert b.dealer == 0
    b.next_dealer()
    b.next_dealer()
    assert b.dealer == 2
    b.next_dealer()
    assert b.dealer == 0
    b.peg(2, 29)
    assert b.front[2] == 29
    b.undo()
    assert b.dealer == 0 and b.front[2] == 0
    b.new_game(121, 2)
    assert b.players == 2
    raises("bad_player", b.peg, 2, 1)


def test_undo_history_round_trip():
    b = GameState()
    for i in range(10):
        b.peg(i % 2, 3)
    rows = b.undo_rows()
    c = GameState()
    c.load_undo_rows(rows)
    c.front = list(b.front)
    c.back = list(b.back)
    for _ in range(10):
        b.undo()
        c.undo()
        assert b.front == c.front and b.back == c.back


def test_pending_preview_cleared_by_commit():
    b = GameState()
    b.set_pending(0, 6)
    assert b.pending[0] == 6
    b.peg(0, 6)
    assert b.pending[0] == 0
    raises("bad_points", b.set_pending, 0, 30)


def test_the_states_own_limits_are_the_limits():
    # cribcore/state.py keeps MAX_POINTS and MAX_PLAYERS as its own constants for its viper code
    # (a name of another module is looked up at run time); MicroPython compiles them away,
    # CPython keeps the names to compare.
    import sys

    if sys.implementation.name == "micropython":
        return
    from cribcore import limits, state

    assert (state._MAX_POINTS, state._MAX_PLAYERS) == (limits.MAX_POINTS, limits.MAX_PLAYERS)


def test_score_returns_the_new_revision():
    b = GameState()
    rev = b.score(0, 5)
    assert rev == b.rev == b.last_rev and b.front[0] == 5
    assert b.score(1, 29) == rev + 1
