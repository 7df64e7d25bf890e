"""The tournament in one SQLite file: every change a transaction, durable once a method returns.

    store = Store.open(Path("club.sqlite"), scoring=Scoring())    # creates it, or opens it
    ann = store.register("Ann")
    round_1 = store.next_round()
    store.record_finished(round_no=1, table=3, game=finished)  # from the board's state
    store.correct(1, 3, new_result, who="director", why="board misread")
    store.export_standings_csv(sys.stdout)

Commands: pairing a round also keeps, for each of its tables, the new-game command the director
sends (:class:`TableCommand`: its id, its attempt, whether the table has started the game). A
table's win counts for the round only once the table has acknowledged that command
(:meth:`Store.mark_started`) and its board has shown the new game (:meth:`Store.mark_fresh`), so
the previous round's win still on a board is never taken for this round's. Command ids carry a
random nonce: nobody can answer a command they did not receive. A result the director does not
count (not consistent with the round's game) is held with its reason (:meth:`Store.hold`) until
the director accepts it (a correction) or rejects it.

Durability: the file is in WAL mode with ``synchronous=FULL``: each transaction's commit
appends it to the write-ahead log and fsyncs the log before the method returns. A process
killed right after a method returned loses nothing (the log is in the file system already,
and SQLite replays it on the next open); FULL also keeps it across a power cut or an OS crash
(``NORMAL`` would not: it fsyncs only at checkpoints). The price is one fsync a change, a few
milliseconds: fine on the event loop at a club's pace, or run it in ``asyncio.to_thread`` (the
connection may be used from another thread, one call at a time).

Idempotency: a result arrives with a key (:func:`cribboard.hall.wins.result_key`: table,
round, the board's revision at the win). A key seen before, or the same result under another
key (a board that restarted republishes its win with a new revision), changes nothing; a
different result for a table that has one raises ResultConflict: only a correction replaces a
result, and every correction is kept (who, when, old, new, why).
"""

from __future__ import annotations

import csv
import json
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from cribboard.errors import HallError
from cribboard.hall.wins import FinishedGame, result_key
from cribboard.plaintext import csv_cell
from cribboard.tournament import (
    Correction,
    Player,
    Result,
    Round,
    Scoring,
    Standing,
    Table,
    Tournament,
    TournamentError,
)

SCHEMA_VERSION = 4

_SCHEMA = """
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE players (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    registered_at TEXT NOT NULL
);
CREATE TABLE rounds (
    number INTEGER PRIMARY KEY,
    bye INTEGER REFERENCES players(id),
    paired_at TEXT NOT NULL
);
-- The games of a round: one per table, seat 0 (blue) and seat 1 (orange).
CREATE TABLE games (
    round INTEGER NOT NULL REFERENCES rounds(number),
    table_no INTEGER NOT NULL,
    blue INTEGER NOT NULL REFERENCES players(id),
    orange INTEGER NOT NULL REFERENCES players(id),
    PRIMARY KEY (round, table_no)
);
-- A game's result as it stands (after corrections). key: the delivery that set it, NULL when
-- a correction did.
CREATE TABLE results (
    round INTEGER NOT NULL,
    table_no INTEGER NOT NULL,
    winner INTEGER NOT NULL REFERENCES players(id),
    loser INTEGER NOT NULL REFERENCES players(id),
    loser_score INTEGER NOT NULL,
    target INTEGER NOT NULL,
    key TEXT,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (round, table_no),
    FOREIGN KEY (round, table_no) REFERENCES games(round, table_no)
);
-- Every result key delivered, so a redelivery changes nothing.
CREATE TABLE deliveries (
    key TEXT PRIMARY KEY,
    round INTEGER NOT NULL,
    table_no INTEGER NOT NULL,
    received_at TEXT NOT NULL
);
-- The audit trail: old and new are a result as JSON, or NULL (none).
CREATE TABLE corrections (
    id INTEGER PRIMARY KEY,
    round INTEGER NOT NULL,
    table_no INTEGER NOT NULL,
    who TEXT NOT NULL,
    at TEXT NOT NULL,
    why TEXT NOT NULL,
    old TEXT,
    new TEXT
);
"""
# Version 2 adds the tables' new-game commands (a version 1 file gains the table on opening).
_SCHEMA_2 = """
-- The new-game command of each table of a round: its latest attempt, and when the table
-- acknowledged it (NULL: not yet, and its wins do not count for the round until then).
CREATE TABLE commands (
    round INTEGER NOT NULL,
    table_no INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    started_at TEXT,
    PRIMARY KEY (round, table_no),
    FOREIGN KEY (round, table_no) REFERENCES games(round, table_no)
);
"""

# Version 3: a command's id carries a random nonce (nobody can guess the id of a command, nor
# forge its answer); the fresh game each table showed once it acknowledged its command (its
# revision and games-won tally: what its result is checked against); the results held for the
# director, with the reason.
_SCHEMA_3 = """
ALTER TABLE commands ADD COLUMN nonce TEXT;
ALTER TABLE commands ADD COLUMN fresh_rev INTEGER;
ALTER TABLE commands ADD COLUMN fresh_games TEXT;
CREATE TABLE held (
    round INTEGER NOT NULL,
    table_no INTEGER NOT NULL,
    winner_seat INTEGER NOT NULL,
    loser_score INTEGER NOT NULL,
    target INTEGER NOT NULL,
    rev INTEGER NOT NULL,
    reason TEXT NOT NULL,
    held_at TEXT NOT NULL,
    PRIMARY KEY (round, table_no),
    FOREIGN KEY (round, table_no) REFERENCES games(round, table_no)
);
"""

# Version 4: the director's watch over each table's game (the last state it received, whether the
# table's connection changed since, and its doubts): a restarted director judges the next state
# against it, and a held game stays held.
_SCHEMA_4 = """
ALTER TABLE commands ADD COLUMN watch TEXT;
"""

STANDINGS_COLUMNS = (
    "rank",
    "player",
    "points",
    "played",
    "won",
    "lost",
    "skunks",
    "double_skunks",
    "byes",
    "spread",
)
GAMES_COLUMNS = (
    "round",
    "table",
    "blue",
    "orange",
    "winner",
    "loser",
    "loser_score",
    "target",
    "outcome",
    "points",
    "margin",
    "corrected",
)


class StoreError(HallError):
    """The file is not a hall store this version can use."""


class ResultConflict(HallError):
    """A table that has a result reported a different one: the director corrects it or not."""

    def __init__(self, stored: Result, reported: Result) -> None:
        super().__init__(
            f"round {stored.round} table {stored.table} already has a result "
            f"(winner {stored.winner}, loser {stored.loser_score}); the table reported "
            f"winner {reported.winner}, loser {reported.loser_score}: correct it if it is right"
        )
        self.stored = stored
        self.reported = reported


@dataclass(frozen=True)
class TableCommand:
    """The new-game command of a round's table: `attempt` counts the sends that asked for a
    new game (a table refused the earlier ones, or never answered them); `started`: the table
    acknowledged the latest; `fresh_rev` and `fresh_games`: the board's revision and games-won
    tally when it showed the new game (None until the director saw it)."""

    round: int
    table: int
    attempt: int
    started: bool
    nonce: str | None = None
    fresh_rev: int | None = None
    fresh_games: tuple[int, ...] | None = None

    @property
    def id(self) -> str:
        """The command's id (docs/mqtt.md): ``r2t3-`` and a random nonce (``r2t3-Xq3v_9aZk2P``),
        new for every attempt, so that nobody can answer a command they did not receive. A
        table runs each id once, so a resent id never restarts a game. (A hall made before
        version 3 has ids without a nonce: ``r2t3``, ``r2t3.2``.)"""
        base = f"r{self.round}t{self.table}"
        if self.nonce:
            return f"{base}-{self.nonce}"
        return base if self.attempt == 1 else f"{base}.{self.attempt}"

    @property
    def fresh(self) -> bool:
        return self.fresh_rev is not None


def command_nonce(round_no: int, table: int) -> str:
    """A random nonce that fills a command id to its 16 characters (at least 6: 36 bits)."""
    room = 16 - len(f"r{round_no}t{table}-")
    return secrets.token_urlsafe(12)[: max(6, room)]


@dataclass(frozen=True)
class Held:
    """A result a table's board showed that the director did not count: `reason` says why
    (`cribboard hall held accept` counts it, `reject` drops it)."""

    round: int
    table: int
    winner_seat: int
    loser_score: int
    target: int
    rev: int
    reason: str
    at: str


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _result_json(result: Result | None) -> str | None:
    return None if result is None else json.dumps(asdict(result), separators=(",", ":"))


def _result_from_json(text: str | None) -> Result | None:
    return None if text is None else Result(**json.loads(text))


class Store:
    """A hall's tournament on disk; :attr:`tournament` is its state in memory (read it, change
    it only through the store's methods)."""

    def __init__(self, db: sqlite3.Connection, tournament: Tournament, clock: Callable[[], str]):
        """Use :meth:`open`."""
        self._db = db
        self.tournament = tournament
        self._clock = clock
        # The tables' commands as last read or written (the director asks on every state).
        self._commands: dict[tuple[int, int], TableCommand] = {}

    @classmethod
    def open(
        cls, path: Path, *, scoring: Scoring | None = None, clock: Callable[[], str] = utc_now
    ) -> Store:
        """Open the store at `path`, creating it (with `scoring`, default Scoring()) if new. For an
        existing store `scoring` must be None or the scoring it was made with. The file is its
        owner's alone (0600; SQLite gives its WAL the same mode)."""
        if str(path) != ":memory:":
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            os.chmod(path, 0o600)
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA foreign_keys=ON")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                with _transaction(db):
                    _create(db, scoring or Scoring())
            elif version in (1, 2, 3):
                with _transaction(db):
                    if version < 3:
                        _execute_script(db, (_SCHEMA_2 if version == 1 else "") + _SCHEMA_3)
                        # A game started before: its fresh game was not recorded; its revisions
                        # count from 0, its games-won tally is not checked.
                        db.execute("UPDATE commands SET fresh_rev = 0 WHERE started_at IS NOT NULL")
                    _execute_script(db, _SCHEMA_4)
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise StoreError(
                    f"{path} has schema version {version}; this cribboard reads {SCHEMA_VERSION}"
                )
            tournament = _load(db)
        except sqlite3.DatabaseError as err:
            db.close()
            raise StoreError(f"{path}: {err}")
        except HallError:
            db.close()
            raise
        if scoring is not None and scoring != tournament.scoring:
            db.close()
            raise StoreError(f"{path} was made with another scoring: {tournament.scoring}")
        return cls(db, tournament, clock)

    def close(self) -> None:
        """Close the file (everything is already on disk)."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- players and rounds ------------------------------------------------------------------

    def register(self, name: str) -> Player:
        """Add a player (before round 1)."""
        tournament = self.tournament
        clean = tournament.check_new_player(name)
        player = Player(max(tournament.players, default=0) + 1, clean)
        with _transaction(self._db):
            self._db.execute(
                "INSERT INTO players (id, name, registered_at) VALUES (?, ?, ?)",
                (player.id, player.name, self._clock()),
            )
        tournament.players[player.id] = player
        return player

    def choose_movement(self, movement: str) -> None:
        """Set the pairing movement (:data:`~cribboard.tournament.CIRCLE` or
        :data:`~cribboard.tournament.ROTATION`) before round 1 is paired; never after."""
        scoring = replace(self.tournament.scoring, movement=movement)
        if scoring == self.tournament.scoring:
            return
        if self.tournament.rounds:
            raise TournamentError("the movement is fixed once round 1 is paired")
        with _transaction(self._db):
            self._db.execute(
                "UPDATE settings SET value = ? WHERE key = 'rules'", (json.dumps(asdict(scoring)),)
            )
        self.tournament.scoring = scoring

    def next_round(self) -> Round:
        """Pair the next round and keep it, with each table's first new-game command."""
        round_ = self.tournament.next_round_pairing()
        with _transaction(self._db):
            self._db.execute(
                "INSERT INTO rounds (number, bye, paired_at) VALUES (?, ?, ?)",
                (round_.number, round_.bye, self._clock()),
            )
            self._db.executemany(
                "INSERT INTO games (round, table_no, blue, orange) VALUES (?, ?, ?, ?)",
                [(round_.number, t.number, *t.players) for t in round_.tables],
            )
            self._db.executemany(
                "INSERT INTO commands (round, table_no, attempt, nonce) VALUES (?, ?, 1, ?)",
                [
                    (round_.number, t.number, command_nonce(round_.number, t.number))
                    for t in round_.tables
                ],
            )
        self.tournament.add_round(round_)
        return round_

    # --- the tables' new-game commands -------------------------------------------------------

    def command(self, round_no: int, table: int) -> TableCommand:
        """The latest new-game command of a round's table."""
        cached = self._commands.get((round_no, table))
        if cached is not None:
            return cached
        row = self._db.execute(
            "SELECT attempt, started_at, nonce, fresh_rev, fresh_games FROM commands"
            " WHERE round = ? AND table_no = ?",
            (round_no, table),
        ).fetchone()
        if row is None:
            raise TournamentError(f"round {round_no} has no table {table}")
        games = None if row[4] is None else tuple(json.loads(row[4]))
        command = TableCommand(round_no, table, row[0], row[1] is not None, row[2], row[3], games)
        self._commands[(round_no, table)] = command
        return command

    def retry_command(self, round_no: int, table: int) -> TableCommand:
        """A new attempt (a new id) for a table that has not started its game: the table
        refused the last one (busy) or never answered it."""
        current = self.command(round_no, table)
        if current.started:
            raise TournamentError(
                f"round {round_no} table {table} has started its game: a new one would lose it"
            )
        nonce = command_nonce(round_no, table)
        with _transaction(self._db):
            self._db.execute(
                "UPDATE commands SET attempt = attempt + 1, nonce = ?, fresh_rev = NULL,"
                " fresh_games = NULL, watch = NULL WHERE round = ? AND table_no = ?",
                (nonce, round_no, table),
            )
        self._commands.pop((round_no, table), None)
        return replace(current, attempt=current.attempt + 1, nonce=nonce)

    def mark_started(self, round_no: int, table: int, command_id: str) -> bool:
        """Note that a table acknowledged `command_id` (ok). True when this is news: the id is
        the latest attempt of that round's table, not yet marked; False otherwise."""
        try:
            current = self.command(round_no, table)
        except TournamentError:
            return False
        if current.started or current.id != command_id:
            return False
        with _transaction(self._db):
            self._db.execute(
                "UPDATE commands SET started_at = ? WHERE round = ? AND table_no = ?",
                (self._clock(), round_no, table),
            )
        self._commands.pop((round_no, table), None)
        return True

    def mark_fresh(self, round_no: int, table: int, rev: int, games: list[int]) -> None:
        """Note the board's new game as the table showed it after acknowledging its command:
        its revision and games-won tally, the base its result is checked against."""
        with _transaction(self._db):
            self._db.execute(
                "UPDATE commands SET fresh_rev = ?, fresh_games = ? WHERE round = ? AND"
                " table_no = ?",
                (rev, json.dumps(games), round_no, table),
            )
        self._commands.pop((round_no, table), None)

    # --- the director's watch over a table's game --------------------------------------------

    def watch(self, round_no: int, table: int) -> dict[str, Any] | None:
        """What the director kept of a round's table game (:meth:`keep_watches`); None: nothing
        yet."""
        row = self._db.execute(
            "SELECT watch FROM commands WHERE round = ? AND table_no = ?", (round_no, table)
        ).fetchone()
        if row is None or row[0] is None:
            return None
        kept: dict[str, Any] = json.loads(row[0])
        return kept

    def keep_watches(self, watches: dict[tuple[int, int], dict[str, Any]]) -> None:
        """Keep the director's watch over round's table games (JSON, by (round, table)): the
        last state it received, whether the table's connection changed since, its doubts.
        Kept with every state, so without the fsync of the other changes
        (``synchronous=NORMAL`` for this transaction): a killed director loses none of it, a
        power cut at most the last moments (whose next state then looks like a gap: held, not
        lost)."""
        self._db.execute("PRAGMA synchronous=NORMAL")
        try:
            with _transaction(self._db):
                self._db.executemany(
                    "UPDATE commands SET watch = ? WHERE round = ? AND table_no = ?",
                    [
                        (json.dumps(watch, separators=(",", ":")), round_no, table)
                        for (round_no, table), watch in watches.items()
                    ],
                )
        finally:
            self._db.execute("PRAGMA synchronous=FULL")

    # --- results held for the director -------------------------------------------------------

    def hold(self, round_no: int, table: int, game: FinishedGame, reason: str) -> bool:
        """Keep a result the director did not count, with the reason. True when it is news
        (not held already with the same result and reason)."""
        held = self.held().get((round_no, table))
        if held is not None and (
            held.winner_seat,
            held.loser_score,
            held.target,
            held.reason,
        ) == (game.winner_seat, game.loser_score, game.target, reason):
            return False
        with _transaction(self._db):
            self._db.execute(
                "INSERT OR REPLACE INTO held (round, table_no, winner_seat, loser_score, target,"
                " rev, reason, held_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    round_no,
                    table,
                    game.winner_seat,
                    game.loser_score,
                    game.target,
                    game.rev,
                    reason,
                    self._clock(),
                ),
            )
        return True

    def counted_from_board(self, round_no: int, table: int) -> FinishedGame | None:
        """The game a table's counted result was taken from (its board's win: the director
        watches it), None when the table has no result or a correction set it."""
        row = self._db.execute(
            "SELECT key FROM results WHERE round = ? AND table_no = ?", (round_no, table)
        ).fetchone()
        if row is None or row[0] is None:
            return None
        result = self.tournament.results[(round_no, table)]
        seat = self.tournament.round(round_no).table(table).players.index(result.winner)
        rev = int(row[0].rpartition("rev")[2] or 0)
        return FinishedGame(seat, result.loser_score, result.target, rev)

    def hold_counted(self, round_no: int, table: int, reason: str, *, who: str) -> Correction:
        """Take back a result counted from a table's board that the board's later states make
        doubtful: no longer counted, held for the director with `reason` (accepting it counts
        it again), and the audit trail keeps the change."""
        game = self.counted_from_board(round_no, table)
        if game is None:
            raise TournamentError(f"round {round_no} table {table} has no result from its board")
        return self.correct(round_no, table, None, who=who, why=reason, hold=(game, reason))

    def held(self) -> dict[tuple[int, int], Held]:
        """The results held for the director, by (round, table)."""
        rows = self._db.execute(
            "SELECT round, table_no, winner_seat, loser_score, target, rev, reason, held_at"
            " FROM held ORDER BY round, table_no"
        )
        return {(row[0], row[1]): Held(*row) for row in rows}

    def held_result(self, round_no: int, table: int) -> tuple[Held, Result]:
        """A held result and the result it would be; TournamentError when none is held."""
        held = self.held().get((round_no, table))
        if held is None:
            raise TournamentError(f"round {round_no} table {table} has no result held")
        result = self.tournament.make_result(
            round_no, table, held.winner_seat, held.loser_score, held.target
        )
        return held, result

    # --- results -----------------------------------------------------------------------------

    def record_result(self, result: Result, key: str) -> bool:
        """Keep a table's result under its idempotency `key`. True: stored now; False: already
        had it (this key, or the same result). ResultConflict: the table has another result."""
        tournament = self.tournament
        tournament.check_result(result)
        table = (result.round, result.table)
        now = self._clock()
        with _transaction(self._db):
            if self._db.execute("SELECT 1 FROM deliveries WHERE key = ?", (key,)).fetchone():
                return False
            stored = tournament.results.get(table)
            if stored is not None and stored != result:
                raise ResultConflict(stored, result)
            self._db.execute(
                "INSERT INTO deliveries (key, round, table_no, received_at) VALUES (?, ?, ?, ?)",
                (key, *table, now),
            )
            if stored is not None:
                return False
            self._db.execute(
                "INSERT INTO results (round, table_no, winner, loser, loser_score, target, key,"
                " recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*table, result.winner, result.loser, result.loser_score, result.target, key, now),
            )
        tournament.record(result)
        return True

    def record_finished(self, round_no: int, table: int, game: FinishedGame) -> bool:
        """Keep the result a table's board showed (see :func:`wins.finished_game`), keyed by
        table, round and the board's revision. Returns as :meth:`record_result`."""
        result = self.tournament.make_result(
            round_no, table, game.winner_seat, game.loser_score, game.target
        )
        return self.record_result(result, result_key(table, round_no, game.rev))

    def correct(
        self,
        round_no: int,
        table: int,
        new: Result | None,
        *,
        who: str,
        why: str,
        hold: tuple[FinishedGame, str] | None = None,
    ) -> Correction:
        """Replace a table's result by `new` (None: strike it); the audit trail keeps who,
        when, the old and the new result, and why. A result held for the table is dropped (the
        correction decided it), unless `hold` names the game and reason to hold now."""
        probe = replace(self.tournament, results=dict(self.tournament.results), corrections=[])
        correction = probe.correct(round_no, table, new, who=who, why=why, when=self._clock())
        with _transaction(self._db):
            self._db.execute(
                "DELETE FROM results WHERE round = ? AND table_no = ?", (round_no, table)
            )
            # A correction settles the table: a result held for it is decided.
            self._db.execute("DELETE FROM held WHERE round = ? AND table_no = ?", (round_no, table))
            if hold is not None:
                game, reason = hold
                self._db.execute(
                    "INSERT INTO held (round, table_no, winner_seat, loser_score, target, rev,"
                    " reason, held_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        round_no,
                        table,
                        game.winner_seat,
                        game.loser_score,
                        game.target,
                        game.rev,
                        reason,
                        correction.when,
                    ),
                )
            if new is not None:
                self._db.execute(
                    "INSERT INTO results (round, table_no, winner, loser, loser_score, target,"
                    " key, recorded_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
                    (
                        round_no,
                        table,
                        new.winner,
                        new.loser,
                        new.loser_score,
                        new.target,
                        correction.when,
                    ),
                )
            self._db.execute(
                "INSERT INTO corrections (round, table_no, who, at, why, old, new)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    round_no,
                    table,
                    who,
                    correction.when,
                    why,
                    _result_json(correction.old),
                    _result_json(new),
                ),
            )
        self.tournament.results = probe.results
        self.tournament.corrections.append(correction)
        return correction

    def standings(self) -> list[Standing]:
        """The standings now (see :meth:`Tournament.standings`)."""
        return self.tournament.standings()

    # --- CSV ---------------------------------------------------------------------------------

    def export_standings_csv(self, out: TextIO) -> None:
        """The standings as CSV: a header row (STANDINGS_COLUMNS), then one row a player."""
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(STANDINGS_COLUMNS)
        for s in self.standings():
            writer.writerow(
                [
                    s.rank,
                    csv_cell(s.player.name),
                    s.points,
                    s.played,
                    s.won,
                    s.lost,
                    s.skunks,
                    s.double_skunks,
                    s.byes,
                    s.spread,
                ]
            )

    def export_games_csv(self, out: TextIO) -> None:
        """Every game of every round as CSV: a header row (GAMES_COLUMNS), then one row a
        table; a game without a result has its result columns empty. `corrected`: 1 when a
        correction touched it."""
        tournament = self.tournament
        corrected = {(c.round, c.table) for c in tournament.corrections}

        def name(player_id: int) -> str:
            return csv_cell(tournament.player(player_id).name)

        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(GAMES_COLUMNS)
        for round_ in tournament.rounds:
            for table in round_.tables:
                key = (round_.number, table.number)
                row: list[Any] = [round_.number, table.number, *map(name, table.players)]
                result = tournament.results.get(key)
                if result is None:
                    row += [""] * 7
                else:
                    outcome = tournament.scoring.outcome(result.loser_score, result.target)
                    row += [
                        name(result.winner),
                        name(result.loser),
                        result.loser_score,
                        result.target,
                        outcome,
                        tournament.scoring.points(outcome),
                        result.margin,
                    ]
                writer.writerow(row + [int(key in corrected)])


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT (fsynced: synchronous=FULL), or ROLLBACK on any error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _execute_script(db: sqlite3.Connection, script: str) -> None:
    # One statement at a time: executescript() would commit the open transaction.
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _create(db: sqlite3.Connection, scoring: Scoring) -> None:
    _execute_script(db, _SCHEMA + _SCHEMA_2 + _SCHEMA_3 + _SCHEMA_4)
    db.execute(
        "INSERT INTO settings (key, value) VALUES ('rules', ?)", (json.dumps(asdict(scoring)),)
    )
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _load(db: sqlite3.Connection) -> Tournament:
    # The settings key is 'rules', as files made before the rename hold it.
    (scoring_json,) = db.execute("SELECT value FROM settings WHERE key = 'rules'").fetchone()
    tournament = Tournament(scoring=Scoring(**json.loads(scoring_json)))
    for pid, name in db.execute("SELECT id, name FROM players ORDER BY id"):
        tournament.players[pid] = Player(pid, name)
    games: dict[int, list[Table]] = {}
    for round_no, table_no, blue, orange in db.execute(
        "SELECT round, table_no, blue, orange FROM games ORDER BY round, table_no"
    ):
        games.setdefault(round_no, []).append(Table(table_no, (blue, orange)))
    for number, bye in db.execute("SELECT number, bye FROM rounds ORDER BY number"):
        tournament.add_round(Round(number, tuple(games.get(number, [])), bye))
    for row in db.execute(
        "SELECT round, table_no, winner, loser, loser_score, target FROM results"
    ):
        tournament.results[(row[0], row[1])] = Result(*row)
    for round_no, table_no, who, at, why, old, new in db.execute(
        "SELECT round, table_no, who, at, why, old, new FROM corrections ORDER BY id"
    ):
        tournament.corrections.append(
            Correction(
                round_no, table_no, _result_from_json(old), _result_from_json(new), who, at, why
            )
        )
    return tournament
