"""What the record tells of the games: `statistics` (each player's games won and lost, skunks
given and taken, matches, hands and cribs, pegging points per deal, muggins; head to head),
`finished_games`, a finished game's scores deal by deal (`game_graph`, the classic graph) and a
player's hand counts (`hand_counts`).

A player is a name (the same in any case); a seat without a name is its colour (`Who.side`), so
the games played with the board's buttons alone count too, as blue's and orange's. A game counts
once it is won (the board shows a winner), open or not; a game left unfinished counts for its
hands and deals, never as won or lost. Only live steps count (cribboard.record.store: a step
undone or lost to a power cut is no step). Skunks: given by the winner of a game the board
judged a skunk (or double skunk), taken by each loser who stayed below the skunk line (double:
below the double skunk line). Pegging points per deal: the play's pegs a player made, over the
deals of the games the host kept in detail (`keep` and `play`: they know which pegs were the
play's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from cribboard.playernames import name_key
from cribboard.record.store import Record
from cribcore.layout import skunk_lines

HAND_COUNTS = 30
"""A hand or crib counts 0..29."""

DETAILED = ("keep", "play")
"""The sources that note the play's pegs: their deals count for pegging points per deal."""


@dataclass(frozen=True)
class Who:
    """A player: a `name`, or for a seat without one, its `side` (the board's colour)."""

    name: str | None
    side: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "side": self.side}


@dataclass
class Counts:
    """Hands (or cribs) counted: how many, their points in all, the best."""

    count: int = 0
    points: int = 0
    best: int | None = None

    @property
    def average(self) -> float | None:
        return self.points / self.count if self.count else None

    def add(self, count: int, points: int, best: int) -> None:
        self.count += count
        self.points += points
        self.best = best if self.best is None else max(self.best, best)

    def to_json(self) -> dict[str, Any]:
        average = self.average
        return {
            "count": self.count,
            "average": None if average is None else round(average, 2),
            "best": self.best,
        }


@dataclass
class PlayerStats:
    """One player's figures."""

    who: Who
    games: int = 0
    won: int = 0
    lost: int = 0
    skunks_given: int = 0
    double_skunks_given: int = 0
    skunks_taken: int = 0
    double_skunks_taken: int = 0
    matches: int = 0
    matches_won: int = 0
    hands: Counts = field(default_factory=Counts)
    cribs: Counts = field(default_factory=Counts)
    play_points: int = 0
    deals: int = 0
    muggins: int = 0
    muggins_points: int = 0

    @property
    def pegging_per_deal(self) -> float | None:
        return self.play_points / self.deals if self.deals else None

    def to_json(self) -> dict[str, Any]:
        per_deal = self.pegging_per_deal
        return {
            "player": self.who.to_json(),
            "games": self.games,
            "won": self.won,
            "lost": self.lost,
            "skunks_given": self.skunks_given,
            "double_skunks_given": self.double_skunks_given,
            "skunks_taken": self.skunks_taken,
            "double_skunks_taken": self.double_skunks_taken,
            "matches": self.matches,
            "matches_won": self.matches_won,
            "hands": self.hands.to_json(),
            "cribs": self.cribs.to_json(),
            "pegging": {
                "points": self.play_points,
                "deals": self.deals,
                "per_deal": None if per_deal is None else round(per_deal, 2),
            },
            "muggins": {"taken": self.muggins, "points": self.muggins_points},
        }


@dataclass(frozen=True)
class HeadToHead:
    """Games `player` won and lost against `opponent` (on another side of the same game)."""

    player: Who
    opponent: Who
    won: int
    lost: int

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player.to_json(),
            "opponent": self.opponent.to_json(),
            "won": self.won,
            "lost": self.lost,
        }


@dataclass(frozen=True)
class MatchSummary:
    """A match: best of or first to `length`, its players by side, games won by each side
    (a skunk counting two when `skunk_double`), and the winning side (None: not decided)."""

    id: int
    kind: str
    length: int
    skunk_double: bool
    sides: tuple[tuple[Who, ...], ...]
    score: tuple[int, ...]
    winner: int | None
    ended: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "length": self.length,
            "skunk_double": self.skunk_double,
            "sides": [[who.to_json() for who in side] for side in self.sides],
            "score": list(self.score),
            "winner": self.winner,
            "ended": self.ended,
        }


@dataclass(frozen=True)
class Statistics:
    """Everything `cribboard history` shows: each player's figures (most games won first),
    head to head, the matches, and how many games were finished and left unfinished."""

    players: list[PlayerStats]
    head_to_head: list[HeadToHead]
    matches: list[MatchSummary]
    finished: int
    unfinished: int

    def to_json(self) -> dict[str, Any]:
        return {
            "finished": self.finished,
            "unfinished": self.unfinished,
            "players": [p.to_json() for p in self.players],
            "head_to_head": [h.to_json() for h in self.head_to_head],
            "matches": [m.to_json() for m in self.matches],
        }


def _seats(record: Record, games: list[int] | None = None) -> dict[int, list[tuple[int, int, Who]]]:
    """Each game's seats (of `games`, or of every game): (seat, side, who)."""
    seats: dict[int, list[tuple[int, int, Who]]] = {}
    query = (
        "SELECT seats.game, seats.seat, seats.side, players.name FROM seats"
        " LEFT JOIN players ON players.id = seats.player"
    )
    if games is not None:
        query += f" WHERE seats.game IN ({','.join(str(int(g)) for g in games) or 'NULL'})"
    for game, seat, side, name in record.db.execute(query + " ORDER BY seats.game, seats.seat"):
        seats.setdefault(game, []).append((seat, side, _who(name, side)))
    return seats


def _who(name: str | None, side: int) -> Who:
    return Who(name) if name is not None else Who(None, side)


def statistics(record: Record) -> Statistics:
    """The record's statistics (see the module)."""
    seats = _seats(record)
    players: dict[Who, PlayerStats] = {}

    def stats(who: Who) -> PlayerStats:
        if who not in players:
            players[who] = PlayerStats(who)
        return players[who]

    pairs: dict[tuple[Who, Who], list[int]] = {}
    finished = unfinished = 0
    for game, winner, result, target, front in record.db.execute(
        "SELECT id, winner, result, target, front FROM games"
    ):
        table = seats.get(game, [])
        if winner is None:
            unfinished += 1
            continue
        finished += 1
        scores = json.loads(front)
        double_line, skunk_line = skunk_lines(target)
        for _seat, side, who in table:
            mine = stats(who)
            mine.games += 1
            if side == winner:
                mine.won += 1
                mine.skunks_given += result in ("skunk", "double_skunk")
                mine.double_skunks_given += result == "double_skunk"
                continue
            mine.lost += 1
            mine.skunks_taken += scores[side] < skunk_line
            mine.double_skunks_taken += scores[side] < double_line
        for _seat, side, who in table:
            for _other_seat, other_side, other in table:
                if side == other_side or who == other:
                    continue
                tally = pairs.setdefault((who, other), [0, 0])
                if side == winner:
                    tally[0] += 1
                elif other_side == winner:
                    tally[1] += 1
    _add_counts(record, stats)
    matches = match_summaries(record, seats)
    for match in matches:
        if match.winner is None:
            continue
        for side, whos in enumerate(match.sides):
            for who in set(whos):
                mine = stats(who)
                mine.matches += 1
                mine.matches_won += side == match.winner
    ordered = sorted(players.values(), key=lambda p: (-p.won, p.lost, sort_key(p.who)))
    head_to_head = [
        HeadToHead(who, other, won, lost)
        for (who, other), (won, lost) in sorted(
            pairs.items(), key=lambda item: (sort_key(item[0][0]), sort_key(item[0][1]))
        )
        if won or lost
    ]
    return Statistics(ordered, head_to_head, matches, finished, unfinished)


def sort_key(who: Who) -> tuple[int, str, int]:
    """Named players first (by name, any case), then the colours."""
    if who.name is not None:
        return (0, who.name.casefold(), 0)
    return (1, "", who.side or 0)


# Each seat's player as the statistics key it: the player's id, or (no name) the seat's side.
_SEAT_KEY = "seats.player, CASE WHEN seats.player IS NULL THEN seats.side END"
# A step's player: its seat's, or (no seat told) each player of its side, once.
_STEP_PLAYERS = f"""
SELECT {_SEAT_KEY}, events.kind, COUNT(*), SUM(after - before), MAX(after - before)
FROM events JOIN seats ON seats.game = events.game AND seats.seat = events.seat
WHERE events.live = 1 AND events.kind IN ({{kinds}}) {{where}}
GROUP BY 1, 2, 3
UNION ALL
SELECT player, colour, events.kind, COUNT(*), SUM(after - before), MAX(after - before)
FROM events JOIN (SELECT DISTINCT game, side, player,
                  CASE WHEN player IS NULL THEN side END AS colour FROM seats) AS seats
    ON seats.game = events.game AND seats.side = events.side
WHERE events.seat IS NULL AND events.live = 1 AND events.kind IN ({{kinds}}) {{where}}
GROUP BY 1, 2, 3
"""


def _who_of(names: dict[int, str], player: int | None, colour: int | None) -> Who:
    return Who(names[player]) if player is not None else Who(None, colour)


def _add_counts(record: Record, stats: Any) -> None:
    """Hands, cribs, the play's pegs and muggins from the live steps, and the deals of the
    games kept in detail: grouped by player in SQL."""
    names = dict(record.db.execute("SELECT id, name FROM players"))
    query = _STEP_PLAYERS.format(kinds="'hand', 'crib', 'play', 'muggins'", where="")
    for player, colour, kind, count, points, best in record.db.execute(query):
        mine = stats(_who_of(names, player, colour))
        if kind == "hand":
            mine.hands.add(count, points, best)
        elif kind == "crib":
            mine.cribs.add(count, points, best)
        elif kind == "play":
            mine.play_points += points
        else:
            mine.muggins += count
            mine.muggins_points += points
    places = ",".join("?" * len(DETAILED))
    for player, colour, deals in record.db.execute(
        "SELECT seats.player, seats.colour, COUNT(*) FROM deals"
        " JOIN games ON games.id = deals.game"
        " JOIN (SELECT DISTINCT game, player, CASE WHEN player IS NULL THEN side END AS colour"
        " FROM seats) AS seats ON seats.game = deals.game"
        f" WHERE deals.live = 1 AND games.source IN ({places}) GROUP BY 1, 2",
        DETAILED,
    ):
        stats(_who_of(names, player, colour)).deals += deals


def match_summaries(
    record: Record, seats: dict[int, list[tuple[int, int, Who]]] | None = None
) -> list[MatchSummary]:
    """The matches, the latest first."""
    seats = _seats(record) if seats is None else seats
    found = []
    for match, kind, length, skunk_double, winner, ended in record.db.execute(
        "SELECT id, kind, length, skunk_double, winner, ended FROM matches ORDER BY id DESC"
    ).fetchall():
        games = record.db.execute(
            "SELECT id, sides, winner, result FROM games WHERE match = ? ORDER BY match_game",
            (match,),
        ).fetchall()
        if not games:
            continue
        sides = games[0][1]
        score = [0] * sides
        for _game, _sides, game_winner, result in games:
            if game_winner is not None:
                double = skunk_double and result in ("skunk", "double_skunk")
                score[game_winner] += 2 if double else 1
        table = seats.get(games[0][0], [])
        who = tuple(tuple(w for _seat, s, w in table if s == side) for side in range(sides))
        found.append(
            MatchSummary(match, kind, length, bool(skunk_double), who, tuple(score), winner, ended)
        )
    return found


@dataclass(frozen=True)
class GameSummary:
    """A game as a list shows it: its players by side, final pegs, winner and result."""

    id: int
    board: str
    source: str
    target: int
    started: str
    ended: str | None
    sides: tuple[tuple[Who, ...], ...]
    front: tuple[int, ...]
    winner: int | None
    result: str
    deals: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "board": self.board,
            "source": self.source,
            "target": self.target,
            "started": self.started,
            "ended": self.ended,
            "sides": [[who.to_json() for who in side] for side in self.sides],
            "front": list(self.front),
            "winner": self.winner,
            "result": self.result,
            "deals": self.deals,
        }


def finished_games(record: Record, limit: int = 50, player: str | None = None) -> list[GameSummary]:
    """The finished games, the latest first (at most `limit`); with `player`, only theirs."""
    query = "SELECT id FROM games WHERE winner IS NOT NULL"
    values: list[object] = []
    if player is not None:
        query += (
            " AND id IN (SELECT seats.game FROM seats JOIN players ON players.id = seats.player"
            " WHERE players.key = ?)"
        )
        values.append(name_key(player))
    query += " ORDER BY COALESCE(ended, started) DESC, id DESC LIMIT ?"
    values.append(limit)
    ids = [row[0] for row in record.db.execute(query, values)]
    return _summaries(record, ids)


@dataclass(frozen=True)
class GameGraph:
    """A game's scores deal by deal: `scores[n]` is each side's score when deal n+1 began, the
    last row the final score; `dealers[n]` who dealt deal n+1. `joined`: the host saw the game
    first with these scores (its deals before are not known)."""

    game: GameSummary
    scores: tuple[tuple[int, ...], ...]
    dealers: tuple[int, ...]
    skunk_lines: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game.to_json(),
            "scores": [list(row) for row in self.scores],
            "dealers": list(self.dealers),
            "skunk_lines": list(self.skunk_lines),
        }


def game_graph(record: Record, game: int) -> GameGraph | None:
    """Game `game`'s scores deal by deal, or None when there is no such game."""
    found = _summaries(record, [game])
    if not found:
        return None
    summary = found[0]
    scores: list[tuple[int, ...]] = []
    dealers: list[int] = []
    for front, dealer in record.db.execute(
        "SELECT front, dealer FROM deals WHERE game = ? AND live = 1 ORDER BY start", (game,)
    ):
        scores.append(tuple(json.loads(front)))
        dealers.append(dealer)
    if not scores:  # a game from the board's history alone: its start and its end
        scores.append((0,) * len(summary.front))
    if scores[-1] != summary.front:
        scores.append(summary.front)
    return GameGraph(summary, tuple(scores), tuple(dealers), skunk_lines(summary.target))


def _summaries(record: Record, games: list[int]) -> list[GameSummary]:
    """The games `games` (ids), in that order."""
    seats = _seats(record, games)
    rows = {
        row[0]: row
        for row in record.db.execute(
            "SELECT id, board, source, target, started, ended, sides, front, winner, result,"
            " (SELECT COUNT(*) FROM deals WHERE deals.game = games.id AND deals.live = 1)"
            f" FROM games WHERE id IN ({','.join(str(int(g)) for g in games) or 'NULL'})"
        )
    }
    found = []
    for game in games:
        row = rows.get(game)
        if row is None:
            continue
        table = seats.get(game, [])
        by_side = tuple(tuple(w for _seat, s, w in table if s == side) for side in range(row[6]))
        found.append(
            GameSummary(
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                row[5],
                by_side,
                tuple(json.loads(row[7])),
                row[8],
                row[9],
                row[10],
            )
        )
    return found


@dataclass(frozen=True)
class HandCounts:
    """How often a player's hands and cribs counted each score (index: the count, 0..29)."""

    who: Who
    hands: tuple[int, ...]
    cribs: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"player": self.who.to_json(), "hands": list(self.hands), "cribs": list(self.cribs)}


def hand_counts(record: Record, who: Who) -> HandCounts:
    """`who`'s hands and cribs by their count (see HandCounts)."""
    hands = [0] * HAND_COUNTS
    cribs = [0] * HAND_COUNTS
    if who.name is not None:
        where = "AND seats.player = (SELECT id FROM players WHERE key = ?)"
        value: object = name_key(who.name)
    else:
        where = "AND seats.player IS NULL AND seats.side = ?"
        value = who.side
    for kind, points, count in record.db.execute(
        "SELECT events.kind, after - before, COUNT(*) FROM events JOIN seats"
        " ON seats.game = events.game AND (seats.seat = events.seat OR (events.seat IS NULL"
        " AND seats.side = events.side)) WHERE events.live = 1"
        f" AND events.kind IN ('hand', 'crib') {where} GROUP BY 1, 2",
        (value,),
    ):
        if 0 <= points < HAND_COUNTS:
            (hands if kind == "hand" else cribs)[points] += count
    return HandCounts(who, tuple(hands), tuple(cribs))
