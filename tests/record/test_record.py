"""The record of games (cribboard.record.store) against the board's own rules: the states a
host sees are made by the core's GameState (what the board runs), and the record must keep each
game once, each step once, undo and power cuts included, whatever order programs tell it in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cribboard.playernames import MAX_NAME, BadName, clean_name, parse_names
from cribboard.record.stats import Who, statistics
from cribboard.record.store import BoardGame, Note, Record, RecordError, Seen
from cribcore.state import RESULT_NAMES, GameState

BOARD = "sim:/flash.img"


def seen(game: GameState, board_game: int | None = None) -> Seen:
    """The state a host reads from a board running `game`."""
    sides = game.players
    return Seen(
        target=game.target,
        sides=sides,
        dealer=game.dealer,
        winner=None if game.winner < 0 else game.winner,
        result=RESULT_NAMES[game.result()],
        front=tuple(game.front[:sides]),
        back=tuple(game.back[:sides]),
        games=tuple(game.games[:sides]),
        undo=game.undo_count,
        skunk_double=game.skunk_double,
        board_game=board_game,
    )


@pytest.fixture
def record(tmp_path: Path) -> Record:
    with Record.open(tmp_path / "record.sqlite") as opened:
        yield opened


def look(record: Record, board: GameState, gap: bool = False, source: str = "keep") -> int:
    return record.observe(BOARD, seen(board), source=source, gap=gap)


def steps(record: Record, game: int, live: bool = True) -> list[tuple[int, int, int, str]]:
    """A game's steps (side, before, after, kind), live ones (or the others), in score order."""
    return record.db.execute(
        "SELECT side, before, after, kind FROM events WHERE game = ? AND live = ?"
        " ORDER BY side, before, after",
        (game, int(live)),
    ).fetchall()


def games(record: Record) -> list[tuple[int, int | None, str, str, int]]:
    return record.db.execute(
        "SELECT id, winner, result, front, open FROM games ORDER BY id"
    ).fetchall()


def test_each_step_once_told_twice_or_by_two_programs(record: Record, tmp_path: Path) -> None:
    """A state told again (a resend, a second program following the same board) is the same
    step: one row; and the first program's note is kept when the second tells the step."""
    board = GameState()
    game = look(record, board, gap=True)
    board.peg(0, 5)
    assert look(record, board) == game
    assert record.note(game, Note("play", 0, 5, 0))
    with Record.open(record.path) as other:  # another program, its own connection
        assert other.observe(BOARD, seen(board), source="bridge", gap=True) == game
        board.peg(1, 12)
        assert other.observe(BOARD, seen(board), source="bridge") == game
    assert look(record, board) == game
    assert steps(record, game) == [(0, 0, 5, "play"), (1, 0, 12, "peg")]
    assert len(games(record)) == 1


def test_an_undo_takes_a_step_out_and_a_new_count_replaces_it(record: Record) -> None:
    board = GameState()
    game = look(record, board, gap=True)
    board.peg(1, 12)
    look(record, board)
    assert record.note(game, Note("hand", 1, 12, 1, "5H 5S 5C JD 5D", 12))
    board.undo()
    look(record, board)
    assert steps(record, game) == []
    assert steps(record, game, live=False) == [(1, 0, 12, "hand")]
    board.peg(1, 8)  # counted again: 8, from the same score
    look(record, board)
    assert record.note(game, Note("hand", 1, 8, 1))
    assert steps(record, game) == [(1, 0, 8, "hand")]
    assert steps(record, game, live=False) == []  # one step from 0: the 12 is gone
    assert not record.note(game, Note("hand", 1, 5, 1))  # not what the board pegged last


def test_a_power_cut_that_took_steps_and_the_host_that_put_them_back(record: Record) -> None:
    """The board comes back without its last second (the steps are not live), then the host
    puts them back with the same requests: the same steps, their notes kept, counted once."""
    board = GameState()
    game = look(record, board, gap=True)
    for side, points in ((0, 3), (1, 4), (0, 12), (1, 2)):
        board.peg(side, points)
        look(record, board)
        record.note(game, Note("play", side, points, side))
    saved = GameState()  # what the flash had: the first two pegs
    saved.peg(0, 3)
    saved.peg(1, 4)
    assert look(record, saved, gap=True) == game  # the board restarted: the same game
    assert steps(record, game) == [(0, 0, 3, "play"), (1, 0, 4, "play")]
    assert look(record, board, gap=True) == game  # put back, the states between unseen
    assert steps(record, game) == [
        (0, 0, 3, "play"),
        (0, 3, 15, "play"),
        (1, 0, 4, "play"),
        (1, 4, 6, "play"),
    ]
    assert len(games(record)) == 1


def test_a_new_game_an_undone_new_game_and_a_new_game_after_a_win(record: Record) -> None:
    board = GameState(target=61)
    first = look(record, board, gap=True)
    board.peg(0, 20)
    look(record, board)
    board.new_game()
    second = look(record, board)
    assert second != first
    board.undo()  # the new game taken back: the first goes on, the empty one is gone
    assert look(record, board) == first
    assert [g[0] for g in games(record)] == [first]
    board.peg(0, 29)
    board.peg(0, 29)  # 78 -> 61: won (a skunk: orange below 31)
    look(record, board)
    assert games(record) == [(first, 0, "skunk", "[61,0]", 1)]
    board.new_game()
    board.peg(1, 6)  # a new game and a peg in one event: the win's tally is unchanged
    second = look(record, board)
    assert second != first
    assert games(record) == [
        (first, 0, "skunk", "[61,0]", 0),
        (second, None, "playing", "[0,6]", 1),
    ]


def test_after_a_gap_the_tally_tells_another_game_from_the_same(record: Record) -> None:
    board = GameState()
    first = look(record, board, gap=True)
    board.peg(0, 20)
    board.peg(1, 7)
    look(record, board)
    board.undo()  # while this host was away: undone, so the same game
    board.peg(1, 9)
    assert look(record, board, gap=True) == first
    while board.winner < 0:
        board.peg(0, 29)  # won while this host was away
    board.new_game()
    for _ in range(3):
        board.peg(1, 29)  # and the next game begun (lower pegs than the first's)
    assert board.games[:2] == [1, 0]
    second = look(record, board, gap=True)
    assert second != first
    board.peg(0, 3)
    assert look(record, board, gap=True) == second  # nobody won meanwhile: the same game
    assert [g[0] for g in games(record)] == [first, second]


def test_the_boards_game_number_decides_which_game(record: Record) -> None:
    board = GameState()
    board.peg(0, 5)
    first = record.observe(BOARD, seen(board, board_game=7), source="bridge", gap=True)
    board.peg(0, 5)
    assert record.observe(BOARD, seen(board, board_game=7), source="bridge") == first
    assert record.observe(BOARD, seen(board, board_game=8), source="bridge") != first


def test_deals_follow_the_dealer_the_cut_and_an_undone_pass(record: Record) -> None:
    board = GameState()
    game = look(record, board, gap=True)
    board.set_dealer(1)  # the cut: orange deals deal 1
    look(record, board)
    board.peg(0, 2)
    look(record, board)
    board.next_dealer()
    look(record, board)
    board.undo()  # the pass taken back
    look(record, board)
    board.peg(1, 3)
    look(record, board)
    board.next_dealer()
    look(record, board)
    board.peg(0, 9)
    look(record, board)
    deals = record.db.execute(
        "SELECT start, dealer, front FROM deals WHERE game = ? AND live = 1 ORDER BY start",
        (game,),
    ).fetchall()
    assert deals == [(0, 1, "[0,0]"), (5, 0, "[2,3]")]
    in_deal = record.db.execute(
        "SELECT side, after, deal FROM events WHERE game = ? AND live = 1 ORDER BY id", (game,)
    ).fetchall()
    assert in_deal == [(0, 2, 0), (1, 3, 0), (0, 11, 5)]


def test_a_hand_that_counted_nothing_is_kept_once_a_deal(record: Record) -> None:
    board = GameState()
    game = look(record, board, gap=True)
    assert record.note(game, Note("hand", 1, 0, 1, "2H 4C 6S 8H KC"))
    assert record.note(game, Note("hand", 1, 0, 1, "2H 4C 6S 8H QC"))  # typed again
    board.peg(1, 4)  # then counted 4 after all (undone and typed again)
    look(record, board)
    assert record.note(game, Note("hand", 1, 4, 1))
    hands = record.db.execute(
        "SELECT after - before, cards FROM events WHERE game = ? AND kind = 'hand' AND live = 1",
        (game,),
    ).fetchall()
    assert hands == [(4, None)]


def test_names_follow_a_person_across_colours_and_games(record: Record) -> None:
    board = GameState()
    first = look(record, board, gap=True)
    record.name_seats(first, ["Ann", "Bob"])
    board.peg(0, 5)
    look(record, board)
    board.new_game()
    second = look(record, board)
    assert record.seat_names(second) == ["Ann", "Bob"]  # the same people play on
    record.name_seats(second, ["bob", None])  # Bob (any case) at blue now
    assert record.seat_names(second) == ["Bob", None]
    assert record.db.execute("SELECT COUNT(*) FROM players").fetchone() == (2,)
    with pytest.raises(BadName):
        record.name_seats(second, ["Ann", "ANN"])
    assert record.seat_names(second) == ["Bob", None]


@pytest.mark.parametrize(
    "name",
    ["Ann\u202eevil", "\x1b[31mred", "Ann\nBob", "x" * (MAX_NAME + 1), "   ", "a\u200bb"],
)
def test_a_hostile_name_is_refused_whole(name: str) -> None:
    with pytest.raises(BadName):
        clean_name(name)


def test_names_are_spaced_and_counted_as_people_type_them() -> None:
    assert clean_name("  Ann   Marie ") == "Ann Marie"
    assert clean_name("Åsa\u200dB") == "Åsa\u200dB"  # a joiner that scripts and emoji need
    assert parse_names("Ann, ,Cy", 3) == ["Ann", None, "Cy"]
    with pytest.raises(BadName, match="2 names for 3 players"):
        parse_names("Ann,Bob", 3)


def test_a_game_from_the_boards_history_merges_with_the_hosts_row(record: Record) -> None:
    board = GameState(target=61)
    game = look(record, board, gap=True)
    board.peg(0, 29)
    board.peg(1, 10)
    board.peg(0, 29)
    board.peg(0, 3)
    look(record, board)
    final = seen(board)
    merged = BoardGame(BOARD, 41, 61, 2, 0, final.result, final.front, final.back, final.games)
    assert record.add_board_game(merged) == game  # the host's row, now with the board's number
    assert record.add_board_game(merged) == game  # and once only
    alone = BoardGame(BOARD, 42, 121, 2, 1, "won", (100, 121), (96, 117))
    other = record.add_board_game(alone)  # played on the buttons alone: a row of its own
    assert other != game and record.add_board_game(alone) == other
    assert len(games(record)) == 2


def test_another_versions_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "record.sqlite"
    Record.open(path).close()
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(RecordError, match="version 99"):
        Record.open(path)


_WRITER = """
import sys
sys.path.insert(0, {firmware!r})
from pathlib import Path
from cribboard.record.store import Record, Seen
from cribcore.state import GameState, RESULT_NAMES

record = Record.open(Path({path!r}))
for board_no in range(2):  # the same board as the other program, and one of its own
    board = GameState()
    key = "shared" if board_no == 0 else "own-" + sys.argv[1]
    for n in range(40):
        board.peg(n % 2, 1 + n % 5)
        record.observe(key, Seen(board.target, 2, board.dealer, None, "playing",
                                 tuple(board.front[:2]), tuple(board.back[:2]),
                                 tuple(board.games[:2]), board.undo_count), source="bridge",
                       gap=n == 0)
print("done")
"""


def test_two_programs_write_at_once(tmp_path: Path) -> None:
    """Two processes write the same record at once (one board they both follow, one each):
    neither fails on the other's lock, and the shared board's game is one row, its steps once."""
    path = tmp_path / "record.sqlite"
    firmware = str(Path(__file__).resolve().parents[2] / "firmware")
    script = _WRITER.format(firmware=firmware, path=str(path))
    runs = [
        subprocess.Popen([sys.executable, "-c", script, str(n)], stdout=subprocess.PIPE, text=True)
        for n in range(2)
    ]
    assert [run.communicate(timeout=120)[0] for run in runs] == ["done\n", "done\n"]
    with Record.open(path) as record:
        boards = record.db.execute("SELECT board, COUNT(*) FROM games GROUP BY board").fetchall()
        assert sorted(boards) == [("own-0", 1), ("own-1", 1), ("shared", 1)]
        (shared,) = record.db.execute("SELECT id, front FROM games WHERE board = 'shared'")
        assert json.loads(shared[1]) == [60, 60]
        assert len(steps(record, shared[0])) == 40


def test_the_scorekeeper_of_four_takes_a_game_the_bridge_opened(record: Record) -> None:
    """The bridge saw the board first (two sides, two seats); keep follows it with four people
    in partnerships: the game is keep's, with four seats, and a partner's hand is theirs."""
    board = GameState()
    game = record.observe(BOARD, seen(board), source="bridge", gap=True)
    assert record.observe(BOARD, seen(board), source="keep", gap=True, seats=4) == game
    assert record.db.execute("SELECT source, seats FROM games").fetchall() == [("keep", 4)]
    record.name_seats(game, ["Ann", "Bob", "Cy", "Di"])
    board.peg(1, 8)
    record.observe(BOARD, seen(board), source="keep")
    assert record.note(game, Note("hand", 1, 8, 3))  # Di, orange's second
    (di,) = [p for p in statistics(record).players if p.who == Who("Di")]
    assert di.hands.count == 1 and di.hands.best == 8
