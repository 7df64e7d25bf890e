"""A remote game's merged game as pure logic: any delivery order and any redelivery give one game;
pegs at both ends at once both count; an undo takes back the move it names, once; new games
and moves made at the same moment; a board's changes read back as moves, and the requests
that bring a board (the shared core's GameState, as the firmware runs it) to any position.
The examples of docs/mqtt.md's remote games section, byte for byte."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from cribboard.api import BoardState
from cribboard.remote import RemoteGameError
from cribboard.remote import topics as t
from cribboard.remote.boardsync import DEAL, NEW, PEG, board_changes, plan
from cribboard.remote.end import Hello, default_state_file, describe, read_online
from cribboard.remote.moves import (
    GAME,
    SET,
    UNDO,
    Change,
    Move,
    MoveError,
    MoveLog,
    Position,
    decode_move,
    encode_move,
    game_change,
    merge,
)
from cribcore.state import GameError, GameState
from cribdev.simtable import board_state

DOC = Path(__file__).resolve().parents[2] / "docs" / "mqtt.md"
FRESH = Position(121, 2, 0, (0, 0), (0, 0))


def start(side: str = "a") -> Move:
    return Move(side, 1, 1, "", game_change(FRESH))


def peg(side: str, seq: int, clock: int, player: int, points: int, game: str = "a.1") -> Move:
    return Move(side, seq, clock, game, Change("peg", player, points))


def test_pegs_at_both_ends_at_once_both_count_in_any_order_and_once_each() -> None:
    rng = random.Random(5)
    moves = [start()]
    clocks = {"a": 1, "b": 1}
    total = [0, 0]
    for _ in range(60):
        side = rng.choice("ab")
        clocks[side] += rng.randint(1, 2)  # the sides' clocks run apart: concurrent moves
        player, points = rng.randrange(2), rng.randint(1, 6)
        seq = sum(1 for m in moves if m.side == side) + 1
        moves.append(peg(side, seq, clocks[side], player, points))
        total[player] += points
    expected = merge(moves).position
    assert expected is not None and expected.front == tuple(total)
    for _ in range(20):
        delivered = moves + rng.sample(moves, 15)  # some arrive twice
        rng.shuffle(delivered)
        log = MoveLog()
        added = sum(log.add(m) for m in delivered)
        assert added == len(moves)
        assert log.merged().position == expected


def test_an_undo_takes_back_the_move_it_names_once() -> None:
    a_peg = peg("a", 2, 2, 0, 5)
    b_peg = peg("b", 1, 2, 1, 3)  # the same moment: both count
    a_undo = Move("a", 3, 3, "a.1", Change(UNDO, undoes="a.2"))
    b_undo = Move("b", 2, 3, "a.1", Change(UNDO, undoes="a.2"))  # the other end, at once
    merged = merge([start(), a_peg, b_peg, a_undo, b_undo])
    assert merged.position == Position(121, 2, 0, (0, 3), (0, 0))
    assert merged.live == ("a.1", "b.1")
    assert merged.last_undoable() == "b.1"  # never the start


def test_a_peg_made_as_the_other_end_starts_a_new_game_stays_in_the_old_game() -> None:
    moves = [start(), peg("a", 2, 2, 0, 20)]
    new = Move("a", 3, 3, "a.1", game_change(Position(61, 2, 1, (0, 0), (0, 0))))
    late = peg("b", 1, 3, 1, 7)  # made in a.1, ordered after the new game
    after = peg("b", 2, 4, 1, 2, game="a.3")
    merged = merge([*moves, new, late, after])
    assert merged.position == Position(61, 2, 1, (0, 2), (0, 0))
    assert merged.current == "a.3"
    # The new game taken back: the old game again, with the late peg in it.
    undone = merge([*moves, new, late, after, Move("a", 4, 5, "a.3", Change(UNDO, undoes="a.3"))])
    assert undone.position == Position(121, 2, 0, (20, 7), (0, 0))


def test_two_new_games_at_once_are_one_game() -> None:
    moves = [start(), peg("a", 2, 2, 0, 20)]
    new_a = Move("a", 3, 3, "a.1", game_change(Position(121, 2, 1, (0, 0), (0, 0))))
    new_b = Move("b", 1, 3, "a.1", game_change(Position(121, 2, 1, (0, 0), (0, 0))))
    pegs = [peg("a", 4, 4, 0, 4, game="a.3"), peg("b", 2, 4, 1, 9, game="b.1")]
    merged = merge([*moves, new_a, new_b, *pegs])
    assert merged.current == "a.3"
    assert merged.position == Position(121, 2, 1, (4, 9), (0, 0))


def test_moves_the_game_refuses_where_they_fall_count_for_nothing_everywhere() -> None:
    win = peg("a", 2, 2, 0, 29)
    moves = [Move("a", 1, 1, "", game_change(Position(61, 2, 0, (40, 10), (30, 5)))), win]
    moves += [peg("b", 1, 2, 1, 3)]  # a peg at the same moment as the win: after it in order
    merged = merge(moves)
    assert merged.position == Position(61, 2, 0, (61, 10), (40, 5))
    assert merged.position.winner == 0
    assert "b.1" not in merged.live


def test_payloads_round_trip_and_refuse_what_is_not_a_move() -> None:
    for change in (
        Change("peg", 1, 12),
        Change(SET, 0, front=(30,), back=(22,)),
        Change("deal", 1),
        Change(UNDO, undoes="k3f9.4"),
        game_change(Position(61, 3, 2, (5, 0, 9), (0, 0, 4))),
    ):
        move = Move("k3f9", 7, 25, "a7b2.1", change)
        assert decode_move(encode_move(move)) == move
    for bad, why in (
        (b"[]", "not a JSON object"),
        (b'{"id":"A.1","c":1,"g":"","k":"peg","p":0,"n":5}', "bad move id"),
        (b'{"id":"a.1","c":1,"g":"","k":"peg","p":0,"n":30}', "n must be"),
        (b'{"id":"a.1","c":1,"g":"","k":"fly"}', "unknown kind"),
        (b'{"id":"a.1","c":1,"g":"","k":"game","t":100,"n":2}', "a game has"),
    ):
        with pytest.raises(MoveError, match=why):
            decode_move(bad)
    instance = "1a251a2e2c5e7e99"
    assert t.parse(t.move_topic("friday", instance, "k3f9", 7)) == t.TopicName(
        "friday", "k3f9", "move", 7, instance
    )
    assert t.parse(t.hello_topic("friday", "k3f9")) == t.TopicName("friday", "k3f9", "hello")
    for bad_topic in (
        f"cribboard/link/v2/friday/{instance}/k3f9/move/0",
        "cribboard/link/v2/friday/k3f9/move/1",  # no instance
        "cribboard/link/v1/friday/k3f9/move/1",  # before instances
        "cribboard/v1/friday/k3f9/online",
    ):
        with pytest.raises(RemoteGameError):
            t.parse(bad_topic)


def _as_board(game: GameState) -> BoardState:
    return board_state(game)


def _apply_step(game: GameState, verb: str, args: tuple[int, ...]) -> None:
    if verb == NEW:
        game.new_game(*args)
    elif verb == DEAL:
        game.set_dealer(args[0])
    elif verb == PEG:
        game.peg(*args)
    else:
        game.set_pegs(*args)


def _random_game(rng: random.Random) -> GameState:
    game = GameState(rng.choice((2, 3)), rng.choice((61, 121)))
    for _ in range(rng.randrange(12)):
        try:
            game.peg(rng.randrange(game.players), rng.randint(1, 29))
        except GameError:
            break
    game.set_dealer(rng.randrange(game.players))
    return game


def test_the_requests_bring_a_board_to_any_position_and_its_changes_read_back() -> None:
    rng = random.Random(11)
    for _ in range(300):
        board, wanted = _random_game(rng), _random_game(rng)
        target = Position.of_game(wanted)
        for step in plan(_as_board(board), target):
            _apply_step(board, step.verb, step.args)
        if Position.of_game(board) != target:  # a new game first: the dealer in a second round
            for step in plan(_as_board(board), target):
                _apply_step(board, step.verb, step.args)
        assert Position.of_game(board) == target
        # And what a board does reads back as moves that make the same position.
        before = _as_board(board)
        model = merge([Move("a", 1, 1, "", game_change(target))]).game
        assert model is not None
        for _ in range(rng.randint(1, 3)):
            try:
                board.peg(rng.randrange(board.players), rng.randint(1, 29))
            except GameError:
                break
        if rng.random() < 0.3:
            board.next_dealer()
        changes = board_changes(before, _as_board(board))
        for change in changes:
            assert change.kind in ("peg", SET, "deal", GAME)
        moves = [Move("a", 1, 1, "", game_change(target))] + [
            Move("a", i + 2, i + 2, "a.1", c) for i, c in enumerate(changes)
        ]
        assert merge(moves).position == Position.of_game(board)


def test_an_undo_on_the_board_reads_as_an_undo() -> None:
    game = GameState()
    game.peg(0, 5)
    before = _as_board(game)
    game.undo()
    assert [c.kind for c in board_changes(before, _as_board(game))] == [UNDO]


def test_the_documented_examples_are_what_the_code_sends() -> None:
    text = DOC.read_text()
    found = re.findall(r"```\n(cribboard/link/v2/\S+)\n(.*)\n```", text)
    moves = []
    for topic, payload in found:
        name = t.parse(topic)
        if name.leaf == t.MOVE:
            move = decode_move(payload.encode())
            assert encode_move(move) == payload.encode()
            assert (move.side, move.seq) == (name.side, name.seq)
            moves.append(move)
        elif name.leaf == t.ONLINE:
            assert read_online(payload.encode()) == (True, 3)
        elif name.leaf == t.HELLO:
            assert Hello.decode(payload.encode()).encode() == payload.encode()
        else:
            assert re.fullmatch(r"[0-9a-f]{16}", payload)
    assert {m.change.kind for m in moves} == {"peg", SET, "deal", UNDO, GAME}
    # The story the document tells about them, move by move.
    told = [
        ((12, 7), (8, 0)),
        ((17, 7), (12, 0)),
        ((20, 7), (17, 0)),  # both pegs of blue count: 5 first (the lower side id), then 3
        ((17, 7), (12, 0)),  # the undo takes back the 3 it names; the 5 stays
        ((17, 9), (12, 7)),
        ((17, 9), (12, 7)),
        ((0, 0), (0, 0)),
    ]
    for count, pegs in enumerate(told, 1):
        position = merge(moves[:count]).position
        assert position is not None and (position.front, position.back) == pegs
    assert "blue 17 (12), orange 9 (7), blue deals" in text
    assert describe(merge(moves[:6]).position) == "121 up, blue 17 (12), orange 9 (7), blue deals"
    assert merge(moves).position == Position(61, 2, 1, (0, 0), (0, 0))


def test_a_state_file_of_before_the_rename_is_renamed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An end's state file was link-<game>.json: the same game picks it up as remote-<game>.json,
    and a file of the new name is never replaced by an old one."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    folder = tmp_path / "cribboard"
    folder.mkdir()
    (folder / "link-friday.json").write_text('{"side": "5e1a07c3"}')
    path = default_state_file("friday")
    assert path == folder / "remote-friday.json"
    assert path.read_text() == '{"side": "5e1a07c3"}'
    assert not (folder / "link-friday.json").exists()
    assert default_state_file("friday") == path  # once: nothing left to rename
    (folder / "link-friday.json").write_text('{"side": "00000000"}')
    assert default_state_file("friday") == path
    assert path.read_text() == '{"side": "5e1a07c3"}'
    assert default_state_file("saturday") == folder / "remote-saturday.json"
