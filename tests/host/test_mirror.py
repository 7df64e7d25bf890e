"""The host's copy of a board's state under brief events (cribboard.mirror): the same rules as
the board's (cribcore.state), and a missed event is noticed, never papered over."""

from __future__ import annotations

from cribboard import wire
from cribboard.mirror import Mirror, state_fields
from cribcore import protocol
from cribcore.state import GameState


def whole(game: GameState) -> dict[str, str]:
    out = protocol.LineWriter(200)
    protocol.write_state_event(out, game)
    return wire.decode_line(bytes(out.buf[: out.n])).fields


def brief(game: GameState) -> wire.Line:
    out = protocol.LineWriter(32)
    assert protocol.write_brief_event(out, game)
    return wire.decode_line(bytes(out.buf[: out.n]))


def test_pegs_and_previews_follow_the_board_to_the_win() -> None:
    game = GameState(skunk_double=True)
    mirror = Mirror()
    mirror.whole(whole(game))
    moves = [("peg", 0, 12), ("pend", 1, 6), ("peg", 1, 6), ("peg", 0, 29), ("peg", 0, 29)]
    moves += [("peg", 1, 20), ("peg", 0, 29), ("peg", 0, 29)]  # blue wins, orange below 61
    for verb, player, points in moves:
        if verb == "peg":
            game.peg(player, points)
        else:
            game.set_pending(player, points)
        fields = mirror.apply_brief(brief(game))
        assert fields == whole(game), (verb, player, points)
    assert game.winner == 0 and game.games[0] == 2  # a double skunk, counted double


def test_a_missed_event_is_noticed() -> None:
    game = GameState()
    mirror = Mirror()
    mirror.whole(whole(game))
    game.peg(0, 5)
    game.peg(0, 7)  # the mirror never hears of the first peg
    assert mirror.apply_brief(brief(game)) is None
    mirror.whole(whole(game))  # read again
    game.peg(1, 4)
    event = brief(game)
    event.words[3] = "1"  # a back peg that is not orange's front: something is wrong
    assert mirror.apply_brief(event) is None
    assert Mirror().apply_brief(brief(game)) is None  # no whole state yet


def test_state_fields_is_decode_states_inverse() -> None:
    fields = whole(GameState(players=3))
    assert state_fields(wire.decode_state(fields)) == fields
