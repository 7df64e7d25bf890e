"""A Wi-Fi board's hall payloads against the host's (cribboard.hallwire.messages): the literal vectors
of tests/core/test_hallpayload.py (which also run on MicroPython) are what the host encodes, and
the board's writer gives the host's bytes for thousands of played states; the board reads
commands as the host does; the topics are the host's; umqtt.simple is micropython-lib's file."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

from cribboard.hallwire import messages
from cribboard.hallwire import topics as t
from cribcore import hall as core
from cribcore.protocol import LineWriter
from cribcore.state import NO_WINNER, GameError, GameState
from cribdev.simtable import board_state
from cribfw.hallpayload import STATE_BYTES, CommandError, read_command, write_ack, write_state

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "core"))

import test_hallpayload as vectors  # noqa: E402

# micropython-lib at 8380c7bb8f9e5e5260e9539156742925e00366b2:
# micropython/umqtt.simple/umqtt/simple.py (its git blob id).
UMQTT_BLOB = "5d52ee3058d9f63fe167252a779e590923eba24b"


def board_payload(game: GameState) -> bytes:
    out = LineWriter(STATE_BYTES)
    write_state(out, game)
    assert not out.overflow
    return bytes(out.buf[: out.n])


def test_the_literal_vectors_are_what_the_host_encodes() -> None:
    for make, expected in vectors.STATE_VECTORS:
        assert messages.encode_state(board_state(make())) == expected
    for (command_id, code, message), expected in vectors.ACK_VECTORS:
        ack = messages.Ack(
            command_id.decode(),
            code is None,
            None if code is None else code.decode(),
            None if message is None else message.decode(),
        )
        assert messages.encode_ack(ack) == expected


def test_the_boards_state_is_the_hosts_byte_for_byte_over_played_games() -> None:
    rng = random.Random(16)
    longest = {2: 0, 3: 0}
    checked = 0
    for game_no in range(60):
        players = 2 + game_no % 2
        game = GameState(players, rng.choice((61, 121)), rng.random() < 0.5)
        while True:
            move = rng.random()
            try:
                if move < 0.7:
                    game.peg(rng.randrange(players), rng.randint(1, 29))
                elif move < 0.8:
                    game.set_pending(rng.randrange(players), rng.randint(0, 29))
                elif move < 0.87:
                    game.undo()
                elif move < 0.93:
                    game.next_dealer()
                else:
                    game.set_pegs(0, game.front[0], max(0, game.front[0] - rng.randint(0, 9)))
            except GameError:
                pass
            payload = board_payload(game)
            assert payload == messages.encode_state(board_state(game))
            longest[players] = max(longest[players], len(payload))
            checked += 1
            if game.winner != NO_WINNER and rng.random() < 0.3:
                break
    assert checked > 1000
    # docs/mqtt.md: at most 184 bytes with two players, 197 with three (a game's numbers
    # stay under these here; the extremes are in the core test).
    assert longest[2] <= 184 and longest[3] <= 197 <= STATE_BYTES


@pytest.mark.parametrize(("payload", "expected"), vectors.COMMAND_VECTORS)
def test_the_board_reads_a_command_as_the_host_does(
    payload: bytes, expected: tuple[object, ...]
) -> None:
    host: tuple[object, ...]
    try:
        command = messages.decode_command(payload)
        host = (command.id, command.target, list(command.names))
    except messages.MessageError as err:
        host = ("error", err.command_id)
    try:
        board: tuple[object, ...] = read_command(payload)
    except CommandError as err:
        board = ("error", err.command_id)
    assert list(board) == list(host) == list(expected)


def test_an_ack_for_a_refused_command_is_the_hosts() -> None:
    out = LineWriter(160)
    for message in (None, "the game is over", 'ünïcode "quoted" \\ \n\r\t\x00'):
        write_ack(out, b"r9t99.12", b"game_over", None if message is None else message.encode())
        ack = messages.Ack("r9t99.12", False, "game_over", message)
        assert bytes(out.buf[: out.n]) == messages.encode_ack(ack)
        assert messages.decode_ack(bytes(out.buf[: out.n])) == ack


def test_the_boards_topics_are_the_hosts() -> None:
    for table in (1, 7, 999):
        for leaf in t.TABLE_LEAVES:
            assert core.table_prefix("club-2", table) + leaf == t.table_topic("club-2", table, leaf)
    assert json.loads(messages.encode_command(messages.NewGame("a", 61, ("x", "y"))))["op"] == (
        core.NEW_GAME
    )


def test_umqtt_simple_is_micropython_libs_file_unmodified() -> None:
    data = (ROOT / "firmware" / "umqtt" / "simple.py").read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    assert blob == UMQTT_BLOB
    licence = (ROOT / "firmware" / "umqtt" / "LICENSE").read_text()
    assert "The MIT License (MIT)" in licence and "micropython-lib" in licence
    readme = (ROOT / "firmware" / "umqtt" / "README.md").read_text()
    assert "8380c7bb8f9e5e5260e9539156742925e00366b2" in readme
