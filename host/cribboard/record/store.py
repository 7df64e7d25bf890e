"""The record's file: the games a host drove on its boards, in one SQLite file.

    record = Record.open()                          # $XDG_DATA_HOME/cribboard/record.sqlite
    game = record.observe("sim:/path/flash.img", seen, source="keep")   # each state the board shows
    record.note(game, Note("hand", side=1, points=12, seat=1, cards="5H 5S 5C JD 5D"))
    record.name_seats(game, ["Ann", "Bob"])

**The board is the truth for the points.** Each state a host sees of a board is told as a `Seen`
(its pegs, dealer, winner, games-won tally, undo depth). A player's back peg is the score before
the last peg and the front the score after, so every state names the step that made it; a step
is kept once by its side and the score it started from (``events``, unique on game, side and
before). Two programs following one board, a resend, a host restarted, or a board that lost its
last second to a power cut and had it put back: each tells the same step, and it is one row. Of
the steps kept, those that lead to the front peg the board shows are *live*; a step undone (on
the board, by any host, by its buttons), or lost in a power cut, is not, and comes back to life
when the board shows it again. Statistics count live steps only.

**One row per game.** A board's game is the row open for it (one at most: a unique index, so two
programs cannot open two). The next state the board shows goes on with it unless it is another
game: another target or number of players, every peg back at 0 by a new game (not by undoing),
or, seen after a gap (the host or the board restarted, a link came back), a games-won tally that
a win in between has moved (`_continues`). Then the row is closed and a new one opened. An undo
of a new game that nothing was pegged in yet opens the game before it again. A row that closes
with no peg in it is dropped.

**Deals** are told by the board's dealer: a new deal starts when the dealer changes, kept by the
points on the board at its start (so a deal passed and taken back is the same deal); the deal
passed at the start of a game (the cut) is deal 1's dealer. **Notes** from the host that knows
more than the board (the scorekeeper, the computer player) say what a step was: a hand or crib
with its cards, the play's pegs, his heels, muggins, the pone's three; a hand that counted
nothing is a row of its own, one per deal, kind and seat.

Durability: WAL with ``synchronous=NORMAL``: a transaction is in the log when the method
returns, so a program killed then loses nothing and the file is never damaged; a power cut of
the computer itself may lose the last transactions (a second of play), never the file. Writers
wait up to `BUSY_TIMEOUT_S` for each other (SQLite's lock), and every change is one
``BEGIN IMMEDIATE`` transaction, so two programs writing at once take turns.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cribboard.errors import CribboardError
from cribboard.paths import data_dir
from cribboard.playernames import check_seats, clean_name, name_key

SCHEMA_VERSION = 1
RECORD_FILE = "record.sqlite"
BUSY_TIMEOUT_S = 10.0
"""How long a write waits for another program's (a few milliseconds each)."""

RESULTS = ("playing", "won", "skunk", "double_skunk")
"""A game's result as the board names it (docs/protocol.md, `x`)."""

KINDS = ("peg", "play", "hand", "crib", "heels", "muggins", "bonus")
"""What a step was: `peg` a step nobody said more of (the board's buttons, another program);
the others as a host noted them (`play`: the play's pegs; `bonus`: the pone's three of the
five-card game)."""

SOURCES = ("keep", "play", "bridge", "link", "board")
"""Who recorded a game: the scorekeeper, the game against the computer, the bridge, a linked
game, or the board's own history alone."""

DETAILED = ("keep", "play")
"""The sources that say what each step was (the play's pegs among them)."""

MATCH_KINDS = ("best_of", "first_to")

_SCHEMA = """
CREATE TABLE players (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    key TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL
);
-- A match of several games (the board's match play): best of `length`, or first to `length`.
CREATE TABLE matches (
    id INTEGER PRIMARY KEY,
    board TEXT NOT NULL,
    board_match INTEGER,
    kind TEXT NOT NULL,
    length INTEGER NOT NULL,
    skunk_double INTEGER NOT NULL DEFAULT 0,
    winner INTEGER,
    started TEXT,
    ended TEXT,
    UNIQUE (board, board_match)
);
-- A game on a board. board: the board's identity as the host knows it (cribboard.boardid),
-- board_game: the board's own number for the game, when the board told it. front, back, games,
-- dealer, undo: the board as last seen (JSON lists: one value a side). joined: the pegs when
-- the host first saw a game already under way (NULL: seen from its start). follows: the game
-- this one was started after, while nothing is pegged in it (an undo may go back to that one).
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    board TEXT NOT NULL,
    board_label TEXT NOT NULL DEFAULT '',
    board_game INTEGER,
    source TEXT NOT NULL,
    variant TEXT,
    target INTEGER NOT NULL,
    sides INTEGER NOT NULL,
    seats INTEGER NOT NULL,
    started TEXT NOT NULL,
    ended TEXT,
    open INTEGER NOT NULL,
    follows INTEGER,
    joined TEXT,
    winner INTEGER,
    result TEXT NOT NULL,
    front TEXT NOT NULL,
    back TEXT NOT NULL,
    games TEXT NOT NULL,
    dealer INTEGER NOT NULL,
    undo INTEGER NOT NULL,
    skunk_double INTEGER NOT NULL,
    match INTEGER REFERENCES matches(id),
    match_game INTEGER,
    UNIQUE (board, board_game)
);
CREATE UNIQUE INDEX games_open ON games (board) WHERE open = 1;
CREATE INDEX games_board ON games (board, id);
-- Who sat where: seat (0..seats-1), the side (the board's player) it pegs for, the player.
CREATE TABLE seats (
    game INTEGER NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    side INTEGER NOT NULL,
    player INTEGER REFERENCES players(id),
    PRIMARY KEY (game, seat)
);
CREATE INDEX seats_player ON seats (player);
-- A deal, kept by the points on the board at its start (start: their sum, front: each side's).
CREATE TABLE deals (
    game INTEGER NOT NULL REFERENCES games(id),
    start INTEGER NOT NULL,
    dealer INTEGER NOT NULL,
    dealer_seat INTEGER,
    starter TEXT,
    front TEXT NOT NULL,
    live INTEGER NOT NULL,
    PRIMARY KEY (game, start)
);
-- A step of a side's score (before -> after), or a hand that counted nothing (before = after).
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    game INTEGER NOT NULL REFERENCES games(id),
    side INTEGER NOT NULL,
    before INTEGER NOT NULL,
    after INTEGER NOT NULL,
    kind TEXT NOT NULL,
    seat INTEGER,
    deal INTEGER,
    cards TEXT,
    claim INTEGER,
    live INTEGER NOT NULL,
    seen INTEGER NOT NULL
);
CREATE UNIQUE INDEX events_step ON events (game, side, before) WHERE after > before;
CREATE UNIQUE INDEX events_nothing ON events (game, deal, kind, seat) WHERE after = before;
CREATE INDEX events_game ON events (game, side);
-- Covering the statistics' reading of the live steps by kind, so it never reads the rows.
CREATE INDEX events_kind ON events (kind, live, game, seat, side, before, after);
"""


class RecordError(CribboardError):
    """The record's file cannot be used (another version's, or not a record)."""


@dataclass(frozen=True)
class Seen:
    """A board's state as the record takes it: lists have one value a side (the board's
    player), the result is one of RESULTS. `board_game`: the board's own number for the game,
    when its state tells it (then it decides which game this is)."""

    target: int
    sides: int
    dealer: int
    winner: int | None
    result: str
    front: tuple[int, ...]
    back: tuple[int, ...]
    games: tuple[int, ...]
    undo: int = 0
    skunk_double: bool = False
    board_game: int | None = None

    @property
    def fresh(self) -> bool:
        """Every peg at the start: a game nothing is pegged in."""
        return not any(self.front) and not any(self.back)

    def looks(self) -> tuple[object, ...]:
        """What the board shows of the game (not its undo depth)."""
        return (self.target, self.sides, self.winner, self.front, self.back, self.games)


@dataclass(frozen=True)
class Note:
    """What a host knows of a step beyond the pegs: its `kind` (KINDS, not `peg`), the side
    that pegged and how many `points` (0: a hand or crib that counted nothing), the `seat`
    (with four players, which partner), the `cards` when they were typed or dealt (the hand's,
    then the starter: ``5H 5S 5C JD 5D``) and the count `claim`ed, when one was."""

    kind: str
    side: int
    points: int
    seat: int | None = None
    cards: str | None = None
    claim: int | None = None


@dataclass(frozen=True)
class BoardGame:
    """A finished game as a board's own history keeps it: enough for a row with no deals.
    `games`: the board's games-won tally after it (None when the history does not keep it);
    `ended`: when, as an ISO time, if the host knows it."""

    board: str
    board_game: int
    target: int
    sides: int
    winner: int
    result: str
    front: tuple[int, ...]
    back: tuple[int, ...]
    games: tuple[int, ...] | None = None
    ended: str | None = None
    board_label: str = ""


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def default_path() -> Path:
    """The record of this user: ``$XDG_DATA_HOME/cribboard/record.sqlite``."""
    return data_dir() / RECORD_FILE


def _json(values: Sequence[int]) -> str:
    return json.dumps(list(values), separators=(",", ":"))


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in json.loads(text))


@dataclass
class _Open:
    """The open game of a board as its row holds it."""

    id: int
    last: Seen
    follows: int | None
    seats: int
    board_game: int | None


class Record:
    """The record's file (see the module). Each method is one transaction; a connection may be
    used from another thread, one call at a time."""

    def __init__(self, db: sqlite3.Connection, path: Path, clock: Callable[[], str]) -> None:
        """Use :meth:`open`."""
        self._db = db
        self.path = path
        self._clock = clock

    @classmethod
    def open(cls, path: Path | None = None, *, clock: Callable[[], str] = utc_now) -> Record:
        """Open the record at `path` (default: :func:`default_path`), creating it when new; its
        owner's alone (0600)."""
        path = path or default_path()
        if str(path) != ":memory:":
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:  # new: made under the write lock (another may be making it)
                with _transaction(db):
                    version = db.execute("PRAGMA user_version").fetchone()[0]
                    if version == 0:
                        for statement in _SCHEMA.split(";"):
                            if statement.strip():
                                db.execute(statement)
                        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                        version = SCHEMA_VERSION
            if version != SCHEMA_VERSION:
                raise RecordError(
                    f"{path} is a record of version {version}; this cribboard reads "
                    f"{SCHEMA_VERSION}"
                )
        except sqlite3.DatabaseError as err:
            db.close()
            raise RecordError(f"{path}: {err}") from None
        except RecordError:
            db.close()
            raise
        return cls(db, path, clock)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Record:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def db(self) -> sqlite3.Connection:
        """The connection, for reading (cribboard.record.stats)."""
        return self._db

    # --- a board's states ------------------------------------------------------------------

    def observe(
        self,
        board: str,
        seen: Seen,
        *,
        source: str,
        gap: bool = False,
        board_label: str = "",
        seats: int | None = None,
        variant: str | None = None,
    ) -> int:
        """The board `board` shows `seen`: the game it is in is kept (see the module); returns
        its row's id. `gap`: states may have been missed since the last one told (this host
        starts following the board, the board restarted, the link came back). `source`,
        `seats` (people at the table: 4 in partnerships), `variant` (the form of the game):
        for a game this state starts."""
        if source not in SOURCES:
            raise ValueError(f"source {source!r}: one of {SOURCES}")
        seen = _trimmed(seen)
        with _transaction(self._db):
            game = self._open_game(board)
            fresh = _New(board, board_label, source, seats, variant)
            if game is None:
                known = self._reopen(board, seen)
                return known if known is not None else self._start(fresh, seen, None)
            if game.follows is not None and game.last.fresh and not seen.fresh:
                before = self._last_of(game.follows)
                if before is not None and before.looks() == seen.looks():
                    # The new game was undone before anything was pegged in it.
                    self._drop(game.id)
                    self._db.execute("UPDATE games SET open = 1 WHERE id = ?", (game.follows,))
                    self._apply(game.follows, before, seen)
                    return game.follows
            if self._another_game(game, seen, gap):
                kept = self._close(game)
                known = self._reopen(board, seen)  # (its number names a game kept before)
                if known is not None:
                    return known
                return self._start(fresh, seen, game.id if seen.fresh and kept else None)
            self._apply(game.id, game.last, seen)
            if source in DETAILED:  # the program that knows the most about it keeps it
                changed = self._db.execute(
                    "UPDATE games SET source = ?, variant = COALESCE(?, variant) WHERE id = ?"
                    " AND source NOT IN (?, ?)",
                    (source, variant, game.id, *DETAILED),
                ).rowcount
                if changed and seats is not None and seats != game.seats:
                    if _seats_fit(seats, seen.sides):
                        self._reseat(game.id, seats, seen.sides)
            return game.id

    def _reopen(self, board: str, seen: Seen) -> int | None:
        """The row of the game `seen` names by the board's number, open again with `seen`
        applied (the board went back to it: an undo of the new game after it); None when the
        record has no such row."""
        if seen.board_game is None:
            return None
        row = self._db.execute(
            "SELECT id FROM games WHERE board = ? AND board_game = ?", (board, seen.board_game)
        ).fetchone()
        if row is None:
            return None
        game = int(row[0])
        last = self._last_of(game)
        assert last is not None
        self._db.execute("UPDATE games SET open = 1, follows = NULL WHERE id = ?", (game,))
        self._apply(game, last, seen)
        return game

    def _another_game(self, game: _Open, seen: Seen, gap: bool) -> bool:
        last = game.last
        if seen.board_game is not None and game.board_game is not None:
            return seen.board_game != game.board_game  # the board says which game it is
        if (seen.target, seen.sides) != (last.target, last.sides):
            return True
        if seen.fresh:
            # Every peg at the start: a new game, unless an undo took the game back there.
            return not last.fresh and (gap or seen.undo >= last.undo)
        if last.winner is not None and seen.winner is None and seen.games == last.games:
            return True  # a won game's undo takes its win off the tally: this is a new game
        return gap and not _continues(last, seen)

    def _open_game(self, board: str) -> _Open | None:
        row = self._db.execute(
            "SELECT id, target, sides, dealer, winner, result, front, back, games, undo,"
            " skunk_double, follows, seats, board_game FROM games WHERE board = ? AND open = 1",
            (board,),
        ).fetchone()
        if row is None:
            return None
        return _Open(row[0], _seen_of(row[1:12]), row[11], row[12], row[13])

    def _last_of(self, game: int) -> Seen | None:
        row = self._db.execute(
            "SELECT target, sides, dealer, winner, result, front, back, games, undo,"
            " skunk_double, board_game FROM games WHERE id = ?",
            (game,),
        ).fetchone()
        return None if row is None else _seen_of(row)

    def _start(self, new: _New, seen: Seen, follows: int | None) -> int:
        """A new game's row, open, from `seen`; the players of the board's last game sit in it
        again (the same people play on), when it had as many seats."""
        seats = new.seats or seen.sides
        cursor = self._db.execute(
            "INSERT INTO games (board, board_label, board_game, source, variant, target, sides,"
            " seats, started, open, follows, joined, winner, result, front, back, games,"
            " dealer, undo, skunk_double) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, NULL,"
            " 'playing', ?, ?, ?, ?, ?, ?)",
            (
                new.board,
                new.board_label,
                seen.board_game,
                new.source,
                new.variant,
                seen.target,
                seen.sides,
                seats,
                self._clock(),
                follows,
                None if seen.fresh else _json(seen.front),
                _json([0] * seen.sides),
                _json([0] * seen.sides),
                _json(seen.games),
                seen.dealer,
                seen.undo,
                int(seen.skunk_double),
            ),
        )
        game = cursor.lastrowid
        assert game is not None
        previous = self._db.execute(
            "SELECT id, seats FROM games WHERE board = ? AND id < ? ORDER BY id DESC LIMIT 1",
            (new.board, game),
        ).fetchone()
        players: list[int | None] = [None] * seats
        if previous is not None and previous[1] == seats:
            for seat, player in self._db.execute(
                "SELECT seat, player FROM seats WHERE game = ?", (previous[0],)
            ):
                players[seat] = player
        self._db.executemany(
            "INSERT INTO seats (game, seat, side, player) VALUES (?, ?, ?, ?)",
            [
                (game, seat, _side_of(seat, seats, seen.sides), players[seat])
                for seat in range(seats)
            ],
        )
        start = _fresh_seen(seen)
        self._apply(game, start, seen)
        return game

    def _close(self, game: _Open) -> bool:
        """The board has gone on to another game: this one is over as it was last seen; False
        when it had nothing pegged and is dropped."""
        if game.last.fresh:
            self._drop(game.id)
            return False
        self._db.execute("UPDATE games SET open = 0, follows = NULL WHERE id = ?", (game.id,))
        return True

    def _drop(self, game: int) -> None:
        for table in ("events", "deals", "seats"):
            self._db.execute(f"DELETE FROM {table} WHERE game = ?", (game,))
        self._db.execute("UPDATE games SET follows = NULL WHERE follows = ?", (game,))
        self._db.execute("DELETE FROM games WHERE id = ?", (game,))

    def _apply(self, game: int, last: Seen, seen: Seen) -> None:
        """The board shows `seen` in this game (last seen as `last`)."""
        ended: Any = None
        if seen.winner is not None:
            ended = self._clock() if last.winner is None else _KEEP
        self._db.execute(
            "UPDATE games SET winner = ?, result = ?, front = ?, back = ?, games = ?, dealer = ?,"
            " undo = ?, skunk_double = ?, board_game = COALESCE(?, board_game),"
            " follows = CASE WHEN ? THEN follows ELSE NULL END,"
            " ended = CASE WHEN ? THEN ended ELSE ? END WHERE id = ?",
            (
                seen.winner,
                seen.result,
                _json(seen.front[: seen.sides]),
                _json(seen.back[: seen.sides]),
                _json(seen.games[: seen.sides]),
                seen.dealer,
                seen.undo,
                int(seen.skunk_double),
                seen.board_game,
                seen.fresh,
                ended is _KEEP,
                None if ended is _KEEP else ended,
                game,
            ),
        )
        for side in range(seen.sides):
            front, back = seen.front[side], seen.back[side]
            if back < front:
                self._step(game, side, back, front)
            self._relive(game, side, front, back)
        self._follow_deal(game, seen)

    def _next_seen(self, game: int) -> int:
        row = self._db.execute(
            "SELECT COALESCE(MAX(seen), 0) + 1 FROM events WHERE game = ?", (game,)
        ).fetchone()
        return int(row[0])

    def _step(self, game: int, side: int, before: int, after: int) -> None:
        """The step `before` -> `after` of `side`: kept once (a step from the same score to
        another is a new step: the old one was undone)."""
        row = self._db.execute(
            "SELECT id, after FROM events WHERE game = ? AND side = ? AND before = ?"
            " AND after > before",
            (game, side, before),
        ).fetchone()
        seen = self._next_seen(game)
        if row is None:
            self._db.execute(
                "INSERT INTO events (game, side, before, after, kind, live, seen)"
                " VALUES (?, ?, ?, ?, 'peg', 1, ?)",
                (game, side, before, after, seen),
            )
        elif row[1] == after:
            self._db.execute("UPDATE events SET seen = ? WHERE id = ?", (seen, row[0]))
        else:
            self._db.execute(
                "UPDATE events SET after = ?, kind = 'peg', seat = NULL, deal = NULL,"
                " cards = NULL, claim = NULL, seen = ? WHERE id = ?",
                (after, seen, row[0]),
            )

    def _relive(self, game: int, side: int, front: int, back: int) -> None:
        """The steps live for `side`: those that lead to its front peg, the last from its back
        peg (the most recently seen where two would do)."""
        steps = self._db.execute(
            "SELECT id, before, after, live, seen FROM events WHERE game = ? AND side = ?"
            " AND after > before",
            (game, side),
        ).fetchall()
        ending: dict[int, list[tuple[int, int, int, int, int]]] = {}
        for step in steps:
            ending.setdefault(step[2], []).append(step)
        chain: set[int] = set()
        score, top = front, True
        while score > 0 and score in ending:
            options = ending[score]
            choice = next((s for s in options if top and s[1] == back), None)
            if choice is None:
                choice = max(options, key=lambda s: s[4])
            chain.add(choice[0])
            score, top = choice[1], False
        changed = [
            (int(step[0] in chain), step[0])
            for step in steps
            if bool(step[3]) != (step[0] in chain)
        ]
        self._db.executemany("UPDATE events SET live = ? WHERE id = ?", changed)

    def _follow_deal(self, game: int, seen: Seen) -> None:
        """Deals follow the board's dealer (see the module); steps not yet in a deal are in
        the one going on; a hand that counted nothing is live while its deal is and the side's
        score has not gone back below it."""
        sides = seen.sides
        total = sum(seen.front[:sides])
        db = self._db
        db.execute(
            "UPDATE deals SET live = 0 WHERE game = ? AND start > ? AND live = 1", (game, total)
        )
        current = db.execute(
            "SELECT start, dealer FROM deals WHERE game = ? AND live = 1 AND start <= ?"
            " ORDER BY start DESC LIMIT 1",
            (game, total),
        ).fetchone()
        if current is None or (current[1] != seen.dealer and current[0] != total):
            self._deal_at(game, total, seen)
        elif current[1] != seen.dealer:
            before = db.execute(
                "SELECT dealer FROM deals WHERE game = ? AND live = 1 AND start < ?"
                " ORDER BY start DESC LIMIT 1",
                (game, total),
            ).fetchone()
            if before is not None and before[0] == seen.dealer:
                db.execute("UPDATE deals SET live = 0 WHERE game = ? AND start = ?", (game, total))
            else:  # the deal changed hands before anything was pegged in it (the cut)
                db.execute(
                    "UPDATE deals SET dealer = ?, dealer_seat = NULL WHERE game = ? AND start = ?",
                    (seen.dealer, game, total),
                )
        now = db.execute(
            "SELECT start FROM deals WHERE game = ? AND live = 1 ORDER BY start DESC LIMIT 1",
            (game,),
        ).fetchone()
        db.execute("UPDATE events SET deal = ? WHERE game = ? AND deal IS NULL", (now[0], game))
        for side in range(sides):
            db.execute(
                "UPDATE events SET live = (before <= ? AND deal IN (SELECT start FROM deals"
                " WHERE game = ? AND live = 1)) WHERE game = ? AND side = ? AND after = before",
                (seen.front[side], game, game, side),
            )

    def _deal_at(self, game: int, total: int, seen: Seen) -> None:
        row = self._db.execute(
            "SELECT dealer FROM deals WHERE game = ? AND start = ?", (game, total)
        ).fetchone()
        if row is not None and row[0] == seen.dealer:
            self._db.execute(
                "UPDATE deals SET live = 1 WHERE game = ? AND start = ?", (game, total)
            )
            return
        self._db.execute(
            "INSERT OR REPLACE INTO deals (game, start, dealer, dealer_seat, starter, front, live)"
            " VALUES (?, ?, ?, NULL, NULL, ?, 1)",
            (game, total, seen.dealer, _json(seen.front[: seen.sides])),
        )

    # --- what a host knows beyond the pegs -------------------------------------------------

    def note(self, game: int, note: Note) -> bool:
        """Say what a step of `game` was: the live step of `note.side` that pegged
        `note.points` last; with 0 points, a hand or crib that counted nothing (one per deal,
        kind and seat: noted again, it replaces the first). A hand or crib noted again in its
        deal (undone and counted anew) replaces the one noted before. False when no such step
        is live (the board refused the peg, or it was undone meanwhile)."""
        if note.kind not in KINDS or note.kind == "peg":
            raise ValueError(f"kind {note.kind!r}: one of {KINDS[1:]}")
        with _transaction(self._db):
            deal = self._current_deal(game)
            if deal is None:
                return False
            step: int | None = None
            if note.points:
                row = self._db.execute(
                    "SELECT events.id, after - before, after = games.target FROM events"
                    " JOIN games ON games.id = events.game WHERE game = ? AND side = ?"
                    " AND live = 1 AND after > before ORDER BY after DESC LIMIT 1",
                    (game, note.side),
                ).fetchone()
                # The side's last step, unless it is another (the peg did not happen); a peg
                # that won the game stops in the game hole, short of its points.
                if row is None or not (row[1] == note.points or (row[2] and row[1] < note.points)):
                    return False
                step = int(row[0])
            if note.kind in ("hand", "crib"):  # counted again: the first count is no more
                self._db.execute(
                    "DELETE FROM events WHERE game = ? AND deal = ? AND kind = ? AND seat IS ?"
                    " AND after = before",
                    (game, deal, note.kind, note.seat),
                )
                self._db.execute(
                    "UPDATE events SET kind = 'peg', seat = NULL, cards = NULL, claim = NULL"
                    " WHERE game = ? AND deal = ? AND kind = ? AND seat IS ? AND id IS NOT ?",
                    (game, deal, note.kind, note.seat, step),
                )
            if step is not None:
                self._db.execute(
                    "UPDATE events SET kind = ?, seat = ?, cards = ?, claim = ? WHERE id = ?",
                    (note.kind, note.seat, note.cards, note.claim, step),
                )
                return True
            front = self._front(game)
            assert front is not None
            self._db.execute(
                "INSERT OR REPLACE INTO events (game, side, before, after, kind, seat, deal,"
                " cards, claim, live, seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
                (
                    game,
                    note.side,
                    front[note.side],
                    front[note.side],
                    note.kind,
                    note.seat,
                    deal,
                    note.cards,
                    note.claim,
                    self._next_seen(game),
                ),
            )
            return True

    def deal(
        self, game: int, *, dealer_seat: int | None = None, starter: str | None = None
    ) -> None:
        """Say who deals the deal going on (a seat: with four players, which partner) or its
        starter card."""
        with _transaction(self._db):
            deal = self._current_deal(game)
            if deal is None:
                return
            if dealer_seat is not None:
                self._db.execute(
                    "UPDATE deals SET dealer_seat = ? WHERE game = ? AND start = ?",
                    (dealer_seat, game, deal),
                )
            if starter is not None:
                self._db.execute(
                    "UPDATE deals SET starter = ? WHERE game = ? AND start = ?",
                    (starter, game, deal),
                )

    def _current_deal(self, game: int) -> int | None:
        row = self._db.execute(
            "SELECT start FROM deals WHERE game = ? AND live = 1 ORDER BY start DESC LIMIT 1",
            (game,),
        ).fetchone()
        return None if row is None else int(row[0])

    def _front(self, game: int) -> tuple[int, ...] | None:
        row = self._db.execute("SELECT front FROM games WHERE id = ?", (game,)).fetchone()
        return None if row is None else _ints(row[0])

    # --- players ---------------------------------------------------------------------------

    def name_seats(self, game: int, names: Sequence[str | None]) -> None:
        """The players of `game`, one name a seat (None: no name). A name is a person: the
        same name (in any case) in another game is the same player. BadName (a ValueError)
        for a name that breaks the rule (cribboard.playernames); the game keeps its names."""
        cleaned = check_seats([None if n is None else clean_name(n) for n in names])
        with _transaction(self._db):
            row = self._db.execute(
                "SELECT seats, sides FROM games WHERE id = ?", (game,)
            ).fetchone()
            if row is None:
                raise RecordError(f"no game {game} in the record")
            seats, sides = row
            if len(cleaned) != seats:
                if not _seats_fit(len(cleaned), sides):
                    raise ValueError(f"{len(cleaned)} names for {seats} seats")
                self._reseat(game, len(cleaned), sides)
            for seat, name in enumerate(cleaned):
                player = None if name is None else self._player(name)
                self._db.execute(
                    "UPDATE seats SET player = ? WHERE game = ? AND seat = ?", (player, game, seat)
                )

    def _reseat(self, game: int, seats: int, sides: int) -> None:
        """`seats` people at `game` (another program opened it, not knowing its players are
        partners): seat n pegs for side n modulo the sides, the players of the first seats
        kept."""
        players = dict(
            self._db.execute("SELECT seat, player FROM seats WHERE game = ?", (game,)).fetchall()
        )
        self._db.execute("DELETE FROM seats WHERE game = ?", (game,))
        self._db.executemany(
            "INSERT INTO seats (game, seat, side, player) VALUES (?, ?, ?, ?)",
            [(game, seat, seat % sides, players.get(seat)) for seat in range(seats)],
        )
        self._db.execute("UPDATE games SET seats = ? WHERE id = ?", (seats, game))

    def _player(self, name: str) -> int:
        key = name_key(name)
        row = self._db.execute("SELECT id FROM players WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return int(row[0])
        cursor = self._db.execute(
            "INSERT INTO players (name, key, created) VALUES (?, ?, ?)",
            (name, key, self._clock()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def seat_names(self, game: int) -> list[str | None]:
        """The names of `game`'s players, one a seat (None: no name)."""
        return [
            row[0]
            for row in self._db.execute(
                "SELECT players.name FROM seats LEFT JOIN players ON players.id = seats.player"
                " WHERE seats.game = ? ORDER BY seats.seat",
                (game,),
            )
        ]

    def open_game(self, board: str) -> int | None:
        """The game open for `board` (the one it shows, as last seen), if any."""
        game = self._open_game(board)
        return None if game is None else game.id

    # --- the board's own history -----------------------------------------------------------

    def add_board_game(self, game: BoardGame) -> int:
        """A finished game from the board's own history, once (its row's id): a game this
        record has by the board's number already changes nothing; else the host's row of the
        same game (the same board, target, players, final pegs, winner and result, and games-won
        tally when both have one; not yet given a board number; the latest such) takes the
        board's number; else a row of its own, with no deals, no players' names."""
        if game.result not in RESULTS[1:]:
            raise ValueError(f"result {game.result!r}: one of {RESULTS[1:]}")
        with _transaction(self._db):
            row = self._db.execute(
                "SELECT id FROM games WHERE board = ? AND board_game = ?",
                (game.board, game.board_game),
            ).fetchone()
            if row is not None:
                return int(row[0])
            for row in self._db.execute(
                "SELECT id, games FROM games WHERE board = ? AND board_game IS NULL AND"
                " target = ? AND sides = ? AND winner = ? AND result = ? AND front = ? AND"
                " back = ? ORDER BY id DESC",
                (
                    game.board,
                    game.target,
                    game.sides,
                    game.winner,
                    game.result,
                    _json(game.front),
                    _json(game.back),
                ),
            ).fetchall():
                if game.games is None or _ints(row[1]) == game.games:
                    self._db.execute(
                        "UPDATE games SET board_game = ? WHERE id = ?", (game.board_game, row[0])
                    )
                    return int(row[0])
            cursor = self._db.execute(
                "INSERT INTO games (board, board_label, board_game, source, target, sides, seats,"
                " started, ended, open, winner, result, front, back, games, dealer, undo,"
                " skunk_double) VALUES (?, ?, ?, 'board', ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, 0, 0,"
                " 0)",
                (
                    game.board,
                    game.board_label,
                    game.board_game,
                    game.target,
                    game.sides,
                    game.sides,
                    game.ended or self._clock(),
                    game.ended,
                    game.winner,
                    game.result,
                    _json(game.front),
                    _json(game.back),
                    _json(game.games or [0] * game.sides),
                ),
            )
            new = cursor.lastrowid
            assert new is not None
            self._db.executemany(
                "INSERT INTO seats (game, seat, side, player) VALUES (?, ?, ?, NULL)",
                [(new, side, side) for side in range(game.sides)],
            )
            return new

    def add_match(
        self,
        board: str,
        board_match: int | None,
        *,
        kind: str,
        length: int,
        games: Sequence[int],
        winner: int | None = None,
        skunk_double: bool = False,
        places: Sequence[int] | None = None,
    ) -> int:
        """A match of `games` (row ids, in order) on `board`: best of `length` or first to
        `length` (`kind`, MATCH_KINDS), won by the side `winner` (None: not decided yet); the
        board's own number for it, when it has one (the same number again changes only its
        games and winner). `places`: each game's place in the match (by default 1, 2, ...: a
        board's match whose early games this record lacks gives theirs). Returns its id."""
        if kind not in MATCH_KINDS:
            raise ValueError(f"kind {kind!r}: one of {MATCH_KINDS}")
        with _transaction(self._db):
            row = (
                None
                if board_match is None
                else self._db.execute(
                    "SELECT id FROM matches WHERE board = ? AND board_match = ?",
                    (board, board_match),
                ).fetchone()
            )
            now = self._clock()
            if row is None:
                cursor = self._db.execute(
                    "INSERT INTO matches (board, board_match, kind, length, skunk_double, winner,"
                    " started, ended) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        board,
                        board_match,
                        kind,
                        length,
                        int(skunk_double),
                        winner,
                        now,
                        None if winner is None else now,
                    ),
                )
                match = cursor.lastrowid
                assert match is not None
            else:
                match = int(row[0])
                self._db.execute(
                    "UPDATE matches SET winner = ?, ended = CASE WHEN ? IS NULL THEN NULL"
                    " ELSE COALESCE(ended, ?) END WHERE id = ?",
                    (winner, winner, now, match),
                )
            numbers = places if places is not None else range(1, len(games) + 1)
            self._db.executemany(
                "UPDATE games SET match = ?, match_game = ? WHERE id = ?",
                [(match, number, game) for number, game in zip(numbers, games, strict=True)],
            )
            return match

    def board_games(self, board: str, numbers: Sequence[int]) -> dict[int, int]:
        """The rows of `board`'s games by the board's own numbers, for those the record has:
        {number: row id}."""
        found: dict[int, int] = {}
        for number in numbers:
            row = self._db.execute(
                "SELECT id FROM games WHERE board = ? AND board_game = ?", (board, number)
            ).fetchone()
            if row is not None:
                found[number] = int(row[0])
        return found


class _Keep:
    """`ended` stays as it is."""


_KEEP = _Keep()


@dataclass(frozen=True)
class _New:
    board: str
    board_label: str
    source: str
    seats: int | None
    variant: str | None


def _seen_of(row: Sequence[Any]) -> Seen:
    """A game row's last seen board (target, sides, dealer, winner, result, front, back, games,
    undo, skunk_double, board_game)."""
    return Seen(
        target=row[0],
        sides=row[1],
        dealer=row[2],
        winner=row[3],
        result=row[4],
        front=_ints(row[5]),
        back=_ints(row[6]),
        games=_ints(row[7]),
        undo=row[8],
        skunk_double=bool(row[9]),
        board_game=row[10],
    )


def _trimmed(seen: Seen) -> Seen:
    """`seen` with one value a side in its lists (a board sends one a player it can hold)."""
    sides = seen.sides
    return replace(seen, front=seen.front[:sides], back=seen.back[:sides], games=seen.games[:sides])


def _fresh_seen(seen: Seen) -> Seen:
    zeros = (0,) * seen.sides
    return Seen(seen.target, seen.sides, seen.dealer, None, "playing", zeros, zeros, seen.games)


def _seats_fit(seats: int, sides: int) -> bool:
    """Whether `seats` people can play a game of `sides`: one a side, or two sides of two."""
    return seats == sides or (sides == 2 and seats == 4)


def _side_of(seat: int, seats: int, sides: int) -> int:
    """The side a seat pegs for: itself, or with more seats than sides (partnerships, partners
    opposite) seat modulo the sides."""
    return seat % sides


def _continues(last: Seen, seen: Seen) -> bool:
    """Whether `seen`, after a gap, can be the game last seen as `last`: its games-won tally
    has moved only by this game's own win (won, or its win undone)."""
    moved = [now - then for now, then in zip(seen.games, last.games)]
    if not any(moved):
        return last.winner is None or seen.winner == last.winner
    if last.winner is None and seen.winner is not None:
        winner = seen.winner
        sign = 1
    elif last.winner is not None and seen.winner is None:
        winner = last.winner
        sign = -1
    else:
        return False
    return all(step == 0 for p, step in enumerate(moved) if p != winner) and moved[
        winner
    ] * sign in (
        1,
        2,
    )


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error: the write lock is taken first, so
    two programs never both read the open game and both start one."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
