# Between games (cribcore/games.py): the board's game number, match play and the history of
# finished games, through new games, corrections and undo. Under CPython and MicroPython.
from checks import raises

from cribcore.games import match_winner
from cribcore.history import History
from cribcore.limits import HISTORY_KEPT, MATCH_BEST_OF, MATCH_FIRST_TO
from cribcore.state import NO_WINNER, GameState


def board():
    b = GameState()
    b.keep_history(History())
    return b


def win(b, player, loser_front=100):
    for p in range(b.players):
        if p != player:
            b.set_pegs(p, loser_front, loser_front - 3)
    b.set_pegs(player, b.target - 1, b.target - 6)
    b.peg(player, 1)


def entries(b):
    return [b.history.entry(i) for i in range(b.history.count)]


def test_each_new_game_has_the_next_number_and_an_undo_takes_it_back():
    b = board()
    assert b.game_no == 1
    b.peg(0, 5)
    b.new_game()
    assert b.game_no == 2
    b.new_game(61, 3)
    assert b.game_no == 3
    b.undo()
    assert b.game_no == 2 and b.players == 2 and b.target == 121
    b.undo()
    assert b.game_no == 1 and b.front[0] == 5
    b.undo()  # the peg: the number stays
    assert b.game_no == 1 and b.front[0] == 0


def test_a_won_game_goes_into_the_history_when_the_board_leaves_it():
    b = GameState()
    b.keep_history(History(uptime=lambda: 42))
    win(b, 1, loser_front=80)
    assert b.history.count == 0  # still on the board: a correction may come
    b.set_pegs(0, 85, 80)  # a correction of the loser's score: the entry has it
    b.new_game()
    (game, ended, match, place, form, target, bits, f0, f1, f2, b0, b1, b2, g0, g1, g2) = entries(
        b
    )[0]
    assert (game, ended, match, place, form, target) == (1, 42, 0, 0, 0, 121)
    assert bits == 0 | 0 << 1 | 1 << 2 | 2 << 4  # two players, x2 off, player 1, a skunk
    assert (f0, f1, f2, b0, b1, b2) == (85, 121, 0, 80, 120, 0)
    assert (g0, g1, g2) == (0, 1, 0)
    # A game left without a winner is not a finished game; neither is a win taken back.
    b.peg(0, 5)
    b.new_game()
    win(b, 0)
    b.undo()
    b.new_game()
    assert b.history.count == 1 and b.game_no == 4


def test_undoing_the_new_game_takes_the_entry_out_with_its_time():
    b = board()
    win(b, 0)
    b.history.won_at = 17  # (the board's clock noted the win)
    b.new_game()
    assert b.history.count == 1 and b.history.won_at == -1
    b.undo()
    assert b.history.count == 0 and b.winner == 0 and b.history.won_at == 17
    b.undo()  # the winning peg: the game goes on
    assert b.winner == NO_WINNER
    b.peg(0, 1)
    b.new_game()
    assert entries(b)[0][1] == 17  # won at the time noted (the clock is the board's to reset)


def test_the_history_keeps_the_last_games_and_drops_the_oldest():
    b = board()
    for i in range(HISTORY_KEPT + 5):
        win(b, i % 2)
        b.new_game()
    assert b.history.count == HISTORY_KEPT
    numbers = [b.history.game_of(i) for i in range(HISTORY_KEPT)]
    assert numbers == list(range(6, HISTORY_KEPT + 6))
    b.undo()  # the newest out again; the oldest the ring dropped for it stays dropped
    assert b.history.count == HISTORY_KEPT - 1 and b.history.game_of(0) == 6


def test_a_best_of_3_is_won_by_two_games_and_the_next_match_starts_at_0():
    b = board()
    b.games[0] = 4  # a tally from before the match
    b.start_match(MATCH_BEST_OF, 3)
    assert (b.game_no, b.match_no, b.match_game, list(b.games[:2])) == (2, 1, 1, [0, 0])
    win(b, 0)
    assert match_winner(b) == NO_WINNER
    b.new_game()
    assert b.match_game == 2
    win(b, 0)
    assert match_winner(b) == 0
    b.new_game()
    assert (b.match_no, b.match_game, list(b.games[:2]), b.match_len) == (2, 1, [0, 0], 3)
    places = [(e[0], e[2], e[3], e[4]) for e in entries(b)]
    assert places == [(2, 1, 1, 3), (3, 1, 2, 3)]  # game, match, place, form
    b.undo()  # back to the match won
    assert (b.match_no, b.match_game, match_winner(b), b.game_no) == (1, 2, 0, 3)


def test_skunks_count_two_games_towards_the_match_when_asked():
    b = board()
    b.start_match(MATCH_FIRST_TO, 2)
    b.set_skunk_double(True)
    win(b, 1, loser_front=80)  # a skunk: two games
    assert list(b.games[:2]) == [0, 2] and match_winner(b) == 1


def test_a_new_player_count_starts_the_next_match():
    b = board()
    b.start_match(MATCH_BEST_OF, 5)
    win(b, 0)
    b.new_game(0, 3)
    assert (b.match_no, b.match_game, b.players, list(b.games)) == (2, 1, 3, [0, 0, 0])
    b.new_game(61)  # another target: the same match goes on
    assert (b.match_no, b.match_game, b.target) == (2, 2, 61)


def test_a_match_ends_by_request_and_that_is_undone():
    b = board()
    b.end_match()  # no match: nothing changes
    assert b.rev == 0 and b.undo_count == 0
    b.start_match(MATCH_BEST_OF, 7)
    win(b, 1)
    rev = b.rev
    b.end_match()
    assert (b.match_len, b.match_game, b.match_no, b.rev) == (0, 0, 1, rev + 1)
    b.new_game()
    assert b.match_game == 0 and list(b.games[:2]) == [0, 1]  # the tally goes on
    assert entries(b)[0][2:5] == (0, 0, 0)  # left after the match ended: no match
    b.undo()
    b.undo()
    assert (b.match_len, b.match_kind, b.match_game, b.match_no) == (7, MATCH_BEST_OF, 1, 1)


def test_only_the_forms_a_board_plays():
    b = board()
    for kind, length in ((MATCH_BEST_OF, 4), (MATCH_BEST_OF, 1), (MATCH_BEST_OF, 17)):
        raises("bad_value", b.start_match, kind, length)
    for kind, length in ((MATCH_FIRST_TO, 1), (MATCH_FIRST_TO, 16), (2, 3)):
        raises("bad_value", b.start_match, kind, length)
    assert b.rev == 0 and b.match_len == 0
    b.start_match(MATCH_BEST_OF, 15)
    b.start_match(MATCH_FIRST_TO, 15)
    assert (b.match_no, b.match_len, b.match_kind) == (2, 15, MATCH_FIRST_TO)


def test_without_a_match_its_kind_and_game_are_0():
    # The state's writer (cribcore.protocol._state_into) reads `mk` and `mg` only while a match
    # is on, and writes 0 otherwise: the state keeps them 0 through every way out of a match.
    b = board()

    def no_match_reads_0():
        assert b.match_len or (b.match_kind, b.match_game) == (0, 0)

    b.start_match(MATCH_FIRST_TO, 2)
    win(b, 0)
    b.end_match()
    no_match_reads_0()
    b.new_game()
    no_match_reads_0()
    b.start_match(MATCH_FIRST_TO, 3)
    for _ in range(5):
        b.undo()
        no_match_reads_0()
