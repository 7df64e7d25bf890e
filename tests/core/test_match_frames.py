# A won game of a match tells on the board which game of the match it was, and a match won has a
# celebration of its own, in the win hole; every frame still gives each player's pegs. Frames
# decoded by tests/core/decode.py over animation time. Under CPython and MicroPython.
from checks import FakePixels
from decode import decode_player, holes_from_pixels, win_hole_story

from cribcore.layout import HOLES, WIN_HOLE
from cribcore.limits import MATCH_BEST_OF, MATCH_FIRST_TO
from cribcore.render import Renderer
from cribcore.state import GameState

PERIOD_MS = 2 * 250 * 7 + 1500  # game 7's flashes and the pause


def story(board, players):
    """The win hole's story over two periods, each frame's pegs checked on the way."""
    pixels = FakePixels(HOLES)
    renderer = Renderer(pixels)
    samples = []
    for t_ms in range(0, 2 * PERIOD_MS, 50):
        renderer.render(board, t_ms)
        rgb = holes_from_pixels(pixels)
        for p in range(players):
            pegs = decode_player(rgb, players, board.target, p, renderer.scale)
            assert pegs == (board.front[p], board.back[p]), (t_ms, p, pegs)
        samples.append(tuple(rgb[3 * WIN_HOLE : 3 * WIN_HOLE + 3]))
    return win_hole_story(samples, board.winner, renderer.scale)


def win(board, player, loser_front=100):
    """`player` wins the game on `board`, the others at `loser_front`."""
    for p in range(board.players):
        if p != player:
            board.set_pegs(p, loser_front, loser_front - 3)
    board.set_pegs(player, board.target - 1, board.target - 6)
    board.peg(player, 1)


def test_a_game_won_outside_a_match_pulses():
    board = GameState()
    win(board, 1)
    assert story(board, 2) == ("won",)


def test_each_game_of_a_best_of_3_flashes_its_number_and_the_match_sparkles():
    board = GameState()
    board.start_match(MATCH_BEST_OF, 3)
    win(board, 0)
    assert story(board, 2) == ("game", 1)
    board.new_game()
    win(board, 1)
    assert story(board, 2) == ("game", 2)
    board.new_game()
    win(board, 1)  # two games to one: the match
    assert story(board, 2) == ("match",)
    board.new_game()  # the next match, game 1 of it
    assert board.match_game == 1 and board.match_no == 2
    win(board, 0, loser_front=50)  # a double skunk
    assert story(board, 2) == ("game", 1)
    board.set_skunk_double(True)  # settled again: two games with x2, but the result is the same
    assert story(board, 2) == ("game", 1)
    board.set_pegs(1, 70, 65)  # a skunk: another result, settled again under x2: the match
    assert story(board, 2) == ("match",)


def test_three_players_first_to_2_and_the_61_game():
    board = GameState(players=3, target=61)
    board.start_match(MATCH_FIRST_TO, 2)
    for game in range(1, 4):
        win(board, 2 if game == 2 else 0, loser_front=40)
        assert story(board, 3) == (("game", game) if game < 3 else ("match",)), game
        if game < 3:
            board.new_game()
