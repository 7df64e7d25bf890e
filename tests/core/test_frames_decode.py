# Every state a game can reach for a player gives a frame from which a reader recovers that
# player's front and back peg: different states never look the same on the board.
from checks import FakePixels
from decode import decode_player, holes_from_pixels

from cribcore.layout import HOLES
from cribcore.render import Renderer
from cribcore.state import GameState


def reachable(target):
    """(front, back): the start, every 0 <= back <= front < target with front - back <= 29,
    and the finished game (front in the win hole)."""
    states = [(0, 0)]
    for front in range(1, target + 1):
        for back in range(max(0, front - 29), front + 1):
            if back < target:
                states.append((front, back))
    return states


def check_game(players, target):
    pixels = FakePixels(HOLES)
    renderer = Renderer(pixels)
    checked = 0
    for player in range(players):
        other = (player + 1) % players
        for other_pegs in ((0, 0), (target - 2, target - 10), (target, target - 5)):
            seen = {}
            for front, back in reachable(target):
                if other_pegs[0] == target and front == target:
                    continue  # only one player can win
                board = GameState(players=players, target=target)
                board.set_pegs(other, other_pegs[0], other_pegs[1])
                board.set_pegs(player, front, back)
                board.set_dealer(player)
                for t_ms in (0, 333):
                    renderer.render(board, t_ms)
                    rgb = holes_from_pixels(pixels)
                    got = decode_player(rgb, players, target, player, renderer.scale)
                    assert got == (front, back), (
                        players,
                        target,
                        player,
                        other_pegs,
                        (front, back),
                        got,
                    )
                key = bytes(rgb)
                assert key not in seen
                seen[key] = (front, back)
                checked += 1
    return checked


def expected_count(players, target):
    states = reachable(target)
    finished = len([s for s in states if s[0] == target])
    return players * (3 * len(states) - finished)


def test_reachable_states():
    states = reachable(121)
    assert (0, 0) in states and (29, 0) in states and (121, 92) in states
    assert (30, 0) not in states and (121, 121) not in states and (50, 20) not in states
    assert len(states) == len(set(states))


def test_every_state_decodes_121_two_players():
    assert check_game(2, 121) == expected_count(2, 121)


def test_every_state_decodes_61_two_players():
    assert check_game(2, 61) == expected_count(2, 61)


def test_every_state_decodes_121_three_players():
    assert check_game(3, 121) == expected_count(3, 121)
