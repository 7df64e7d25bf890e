"""The hall's SQLite store: idempotent results, durability across SIGKILL, the audit trail,
CSV export."""

from __future__ import annotations

import csv
import io
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cribboard.hall.store import (
    GAMES_COLUMNS,
    STANDINGS_COLUMNS,
    ResultConflict,
    Store,
    StoreError,
)
from cribboard.hall.wins import FinishedGame, result_key
from cribboard.tournament import Result, Scoring, TournamentError
from support import Spawn

NAMES = ("Ann", "Bob", "Cid", "Dee", "Eve")


def new_store(path: Path, scoring: Scoring | None = None) -> Store:
    store = Store.open(path, scoring=scoring)
    for name in NAMES:
        store.register(name)
    store.next_round()
    return store


def count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        rows: int = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        return rows


def test_a_result_delivered_twice_is_stored_once(tmp_path: Path) -> None:
    path = tmp_path / "hall.sqlite"
    with new_store(path) as store:
        won = FinishedGame(winner_seat=1, loser_score=88, target=121, rev=118)
        assert store.record_finished(1, 2, won) is True
        assert store.record_finished(1, 2, won) is False  # a QoS 1 redelivery
        # The board restarted and republished the same win under a new revision.
        assert store.record_finished(1, 2, FinishedGame(1, 88, 121, 3)) is False
        with pytest.raises(ResultConflict, match="correct it"):
            store.record_finished(1, 2, FinishedGame(0, 100, 121, 140))
        stored = dict(store.tournament.results)
    assert count(path, "results") == 1 and count(path, "deliveries") == 2
    with Store.open(path) as reopened:
        assert reopened.tournament.results == stored
        assert reopened.record_finished(1, 2, won) is False


WRITER = """
import sys
from pathlib import Path
from cribboard.hall.store import Store
from cribboard.tournament import Scoring
store = Store.open(Path(sys.argv[1]), scoring=Scoring())
for i in range(20):
    store.register("P%02d" % i)
while True:
    round_ = store.next_round()
    for table in round_.tables:
        result = store.tournament.make_result(round_.number, table.number, 0, 70 + table.number, 121)
        key = "t%d/r%d/rev1" % (table.number, round_.number)
        store.record_result(result, key)
        print("ack", key, result.winner, result.loser, flush=True)
"""


def test_a_writer_killed_right_after_an_ack_loses_nothing(tmp_path: Path, spawn: Spawn) -> None:
    path = tmp_path / "hall.sqlite"
    writer = spawn([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    acked: list[list[str]] = []
    try:
        assert writer.stdout is not None
        while len(acked) < 60:
            line = writer.stdout.readline()
            assert line.startswith("ack "), line
            acked.append(line.split()[1:])
        os.kill(writer.pid, signal.SIGKILL)  # mid-round: round 7 of 19 is being recorded
    finally:
        writer.kill()
        writer.wait()
    assert writer.returncode == -signal.SIGKILL
    with Store.open(path) as store:
        results = store.tournament.results
        for key, winner, loser in acked:
            table, round_no = (int(part[1:]) for part in key.split("/")[:2])
            result = results[(round_no, table)]
            assert (result.winner, result.loser) == (int(winner), int(loser))
        assert len(results) >= len(acked)
        assert len(store.tournament.players) == 20


def test_corrections_keep_the_audit_trail(tmp_path: Path) -> None:
    path = tmp_path / "hall.sqlite"
    times = iter(["2026-11-07T19:00:00Z", "2026-11-07T19:40:00Z", "2026-11-07T19:41:00Z"])
    new_store(path).close()
    with Store.open(path, clock=lambda: next(times)) as store:
        table = store.tournament.rounds[0].tables[0]
        a, b = table.players
        first = Result(1, 1, a, b, 95, 121)
        store.record_result(first, result_key(1, 1, 50))
        fixed = Result(1, 1, b, a, 89, 121)
        store.correct(1, 1, fixed, who="director", why="seats swapped")
        with pytest.raises(TournamentError, match="who made it and why"):
            store.correct(1, 1, None, who="director", why=" ")
        assert store.tournament.results[(1, 1)] == fixed
    with Store.open(path) as store:
        assert store.tournament.results[(1, 1)] == fixed
        (entry,) = store.tournament.corrections
        assert (entry.who, entry.when, entry.old, entry.new, entry.why) == (
            "director",
            "2026-11-07T19:40:00Z",
            first,
            fixed,
            "seats swapped",
        )
        # A redelivery of the original win does not undo the correction.
        with pytest.raises(ResultConflict):
            store.record_result(first, result_key(1, 1, 51))
        assert store.record_result(first, result_key(1, 1, 50)) is False
        assert store.tournament.results[(1, 1)] == fixed


def test_csv_export_round_trips(tmp_path: Path) -> None:
    with new_store(tmp_path / "hall.sqlite", Scoring(double_skunk=True)) as store:
        round_ = store.tournament.rounds[0]
        first, second = round_.tables
        store.record_finished(1, first.number, FinishedGame(0, 55, 121, 9))
        store.record_finished(1, second.number, FinishedGame(1, 30, 61, 4))
        store.next_round()
        store.correct(
            1,
            second.number,
            store.tournament.make_result(1, second.number, 1, 40, 61),
            who="director",
            why="typo",
        )
        standings_csv, games_csv = io.StringIO(), io.StringIO()
        store.export_standings_csv(standings_csv)
        store.export_games_csv(games_csv)
        standings = store.standings()
        tournament = store.tournament
    standings_csv.seek(0)
    games_csv.seek(0)
    rows = list(csv.DictReader(standings_csv))
    assert tuple(rows[0]) == STANDINGS_COLUMNS
    assert [
        (r["player"], int(r["rank"]), int(r["points"]), int(r["won"]), int(r["spread"]))
        for r in rows
    ] == [(s.player.name, s.rank, s.points, s.won, s.spread) for s in standings]
    games = list(csv.DictReader(games_csv))
    assert tuple(games[0]) == GAMES_COLUMNS
    assert len(games) == sum(len(r.tables) for r in tournament.rounds)
    name = {p.id: p.name for p in tournament.players.values()}
    by_table = {(int(g["round"]), int(g["table"])): g for g in games}
    win = by_table[(1, first.number)]
    assert (win["winner"], win["loser_score"], win["outcome"], win["points"], win["margin"]) == (
        name[first.players[0]],
        "55",
        "double_skunk",
        "3",
        "66",
    )
    fixed = by_table[(1, second.number)]
    assert (fixed["winner"], fixed["outcome"], fixed["corrected"]) == (
        name[second.players[1]],
        "win",
        "1",
    )
    assert all(g["winner"] == "" for (round_no, _), g in by_table.items() if round_no == 2)


def test_an_unknown_schema_or_other_rules_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "hall.sqlite"
    new_store(path).close()
    with pytest.raises(StoreError, match="another scoring"):
        Store.open(path, scoring=Scoring(bye_points=1))
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="schema version 99"):
        Store.open(path)
