"""The hall's topic scheme and payloads, and the examples in docs/mqtt.md byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cribboard.api import Board, BoardState
from cribboard.errors import HallError
from cribboard.hall.view import frame_hex
from cribboard.hall.wins import FinishedGame, finished_game
from cribboard.hallwire import messages as m
from cribboard.hallwire import topics as t
from cribboard.remote import RemoteGameError
from cribboard.remote import topics as link_topics
from cribboard.tournament import Tournament
from cribboard.virtual import VirtualBoard
from cribcore.render import Renderer
from cribcore.state import GameState
from cribdev.simtable import board_state

DOC = Path(__file__).resolve().parents[2] / "docs" / "mqtt.md"


def doc_examples() -> list[tuple[str, bytes]]:
    """(topic, payload) for every example in docs/mqtt.md: a code block's topic line followed
    by its payload line."""
    found = re.findall(r"```\n(cribboard/v1/\S+)\n(.*)\n```", DOC.read_text())
    return [(topic, payload.encode()) for topic, payload in found]


def test_topics_round_trip_and_refuse_others() -> None:
    assert t.table_topic("club", 3, t.STATE) == "cribboard/v1/club/table/3/state"
    assert t.hall_topic("club", t.STANDINGS) == "cribboard/v1/club/standings"
    assert t.table_topic("club", "+", t.CMD) == "cribboard/v1/club/table/+/cmd"
    for leaf in t.TABLE_LEAVES:
        assert t.parse(t.table_topic("club", 12, leaf)) == t.TopicName("club", 12, leaf)
    for leaf in t.HALL_LEAVES:
        assert t.parse(t.hall_topic("club", leaf)) == t.TopicName("club", None, leaf)
    for bad in (
        "cribboard/v2/club/round",
        "cribboard/v1/Club/round",
        "cribboard/v1/club/table/03/state",
        "cribboard/v1/club/table/0/state",
        "cribboard/v1/club/table/3/frame",
        "cribboard/v1/club/table/3",
    ):
        with pytest.raises(HallError):
            t.parse(bad)
    with pytest.raises(HallError, match="bad hall name"):
        t.hall_prefix("a/b")
    assert set(t.DELIVERY) == set(t.TABLE_LEAVES) | set(t.HALL_LEAVES)


def test_a_hall_and_a_remote_game_are_named_alike() -> None:
    for good in ("a", "0", "club-2", "east_wing", "a" * 32):
        assert t.check_hall(good) == link_topics.check_game(good) == good
    for bad in ("", "A", "-a", "_a", "a/b", "a+", "a#", "a b", "å", "a" * 33, "a\n"):
        with pytest.raises(HallError, match="bad hall name"):
            t.check_hall(bad)
        with pytest.raises(RemoteGameError, match="bad game name"):
            link_topics.check_game(bad)


def test_the_documented_examples_are_what_the_code_sends() -> None:
    examples = doc_examples()
    leaves = [t.parse(topic).leaf for topic, _ in examples]
    assert set(leaves) == set(t.TABLE_LEAVES) | set(t.HALL_LEAVES)
    tournament = Tournament()
    for name in ("Ann", "Bob", "Cid", "Dee", "Eve"):
        tournament.register(name)
    round_1 = tournament.next_round()
    tournament.record(tournament.make_result(1, 1, 0, 86, 121))
    tournament.record(tournament.make_result(1, 2, 1, 101, 121))
    for topic, payload in examples:
        leaf = t.parse(topic).leaf
        if leaf in (t.STATE, t.EVENT):
            assert m.encode_state(m.decode_state(payload)) == payload
        elif leaf == t.ONLINE:
            assert m.decode_online(payload) is True
        elif leaf == t.CMD:
            assert m.encode_command(m.decode_command(payload)) == payload
        elif leaf == t.ACK:
            assert m.encode_ack(m.decode_ack(payload)) == payload
        elif leaf == t.ROUND:
            assert m.encode_round(tournament, round_1) == payload
        else:
            assert m.encode_standings(1, tournament.standings()) == payload


def test_bad_payloads_get_clear_errors() -> None:
    with pytest.raises(m.MessageError, match="target missing or not int"):
        m.decode_state(b'{"rev":1}')
    with pytest.raises(m.MessageError, match="not JSON"):
        m.decode_state(b"\xff")
    with pytest.raises(m.MessageError, match="is not 1 or 0"):
        m.decode_online(b"yes")
    with pytest.raises(m.MessageError) as refused:
        m.decode_command(b'{"id":"r1t1","op":"new","target":100,"names":["A","B"]}')
    assert refused.value.command_id == "r1t1"  # answerable with an error ack
    with pytest.raises(m.MessageError) as refused:
        m.decode_command(b'{"op":"new"}')
    assert refused.value.command_id is None
    with pytest.raises(m.MessageError, match="256 bytes"):
        m.encode_command(m.NewGame("x", 121, ("\U0001f0cf" * 30,) * 3))  # 4-byte characters


async def test_a_win_on_the_board_becomes_a_finished_game(vboard: VirtualBoard) -> None:
    async with await Board.open(vboard.port) as board:
        await board.new_game(121, 2)
        playing = await board.state()
        assert finished_game(m.decode_state(m.encode_state(playing))) is None
        await board.set_pegs(0, 85, 80)
        await board.set_pegs(1, 118, 110)
        await board.peg(1, 3)
        won: BoardState = m.decode_state(m.encode_state(await board.state()))
    assert finished_game(won) == FinishedGame(
        winner_seat=1, loser_score=85, target=121, rev=won.rev
    )


def test_a_won_table_is_drawn_as_its_board_draws_it() -> None:
    """The projector page's picture of a table (hall.view.frame_hex, from the state the table
    sent) is the firmware's own still frame, for a game won too (the win hole's pattern)."""
    game = GameState(2, 121)
    game.set_pegs(0, 119, 110)
    game.peg(0, 2)
    renderer = Renderer(None)
    renderer.draw(game, 0)
    assert frame_hex(board_state(game)) == bytes(renderer.frame).hex()
