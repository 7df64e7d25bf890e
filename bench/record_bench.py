"""`make bench`: the record of games (cribboard.record): what writing a game costs a host, and
what `cribboard history` (and the bridge's history page) costs over many games.

1. `GENERATED` games made up by cribdev.recordgen go into a fresh record the way a host tells
   them (each state of the board, each note: one transaction each): the time a state takes.
2. Those games copied until the record holds `GAMES` (ten thousand: a club's boards for years),
   then each question timed, the median of `RUNS`: the statistics, the last games, one game's
   graph, one player's hand counts. And the file's size per game.

Prints figures only: nothing here asserts speed.

    .venv/bin/python bench/record_bench.py [--games N]
"""

from __future__ import annotations

import argparse
import random
import statistics as stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cribboard.record import stats
from cribboard.record.store import Record
from cribdev.recordgen import play_games

GENERATED = 200
GAMES = 10_000
RUNS = 5

_COPY = """
INSERT INTO games (board, board_label, board_game, source, variant, target, sides, seats,
    started, ended, open, follows, joined, winner, result, front, back, games, dealer, undo,
    skunk_double)
SELECT board || ':' || :copy, board_label, board_game, source, variant, target, sides, seats,
    started, ended, 0, NULL, joined, winner, result, front, back, games, dealer, undo,
    skunk_double FROM games WHERE id <= :last ORDER BY id;
INSERT INTO seats (game, seat, side, player)
SELECT game + :shift, seat, side, player FROM seats WHERE game <= :last;
INSERT INTO deals (game, start, dealer, dealer_seat, starter, front, live)
SELECT game + :shift, start, dealer, dealer_seat, starter, front, live FROM deals
    WHERE game <= :last;
INSERT INTO events (game, side, before, after, kind, seat, deal, cards, claim, live, seen)
SELECT game + :shift, side, before, after, kind, seat, deal, cards, claim, live, seen
    FROM events WHERE game <= :last
"""


def timed(call: Callable[[], object], runs: int = RUNS) -> float:
    """The median seconds of `runs` calls."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return stat.median(times)


def fill(record: Record, games: int) -> None:
    """Copy the record's games (ids 1..n, made by the generator) until it holds `games`."""
    last = record.db.execute("SELECT MAX(id) FROM games").fetchone()[0]
    copy = 0
    while record.db.execute("SELECT COUNT(*) FROM games").fetchone()[0] < games:
        copy += 1
        shift = record.db.execute("SELECT MAX(id) FROM games").fetchone()[0]
        record.db.execute("BEGIN")
        for statement in _COPY.split(";"):
            record.db.execute(statement, {"copy": copy, "last": last, "shift": shift})
        record.db.execute("COMMIT")
    extra = record.db.execute("SELECT COUNT(*) FROM games").fetchone()[0] - games
    if extra > 0:  # exactly `games`: the last copy's surplus goes
        record.db.execute("BEGIN")
        for table in ("events", "deals", "seats"):
            record.db.execute(
                f"DELETE FROM {table} WHERE game IN (SELECT id FROM games ORDER BY id DESC"
                " LIMIT ?)",
                (extra,),
            )
        record.db.execute(
            "DELETE FROM games WHERE id IN (SELECT id FROM games ORDER BY id DESC LIMIT ?)",
            (extra,),
        )
        record.db.execute("COMMIT")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=GAMES)
    args = parser.parse_args(argv)
    print("record of games (cribboard.record, SQLite)")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "record.sqlite"
        with Record.open(path) as record:
            started = time.perf_counter()
            played = play_games(record, GENERATED, random.Random(38))
            spent = time.perf_counter() - started
            states = record.db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            per_game = spent / len(played)
            print(
                f"   writing: {GENERATED} games as a host tells them, {per_game * 1000:.0f} ms a "
                f"game (states and notes, ~{states / GENERATED:.0f} steps a game, one "
                "transaction each)"
            )
            fill(record, args.games)
            games = record.db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            events = record.db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            record.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size = path.stat().st_size
            print(
                f"   {games} games, {events} steps: {size / 1e6:.1f} MB, "
                f"{size / games / 1024:.1f} KiB a game"
            )
            figures = {
                "statistics (cribboard history)": lambda: stats.statistics(record),
                "the last 10 games": lambda: stats.finished_games(record, 10),
                "one game's graph": lambda: stats.game_graph(record, games // 2),
                "one player's hand counts": lambda: stats.hand_counts(record, stats.Who("Ann")),
            }
            for name, call in figures.items():
                print(f"   {name:<32}{timed(call) * 1000:>8.0f} ms (median of {RUNS})")


if __name__ == "__main__":
    main()
