"""The tournament's pure logic: pairings without rematches, scoring, standings, corrections."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cribboard.tournament import (
    CIRCLE,
    DOUBLE_SKUNK,
    MOVEMENTS,
    ROTATION,
    SKUNK,
    WIN,
    Result,
    Scoring,
    Tournament,
    TournamentError,
    max_rounds,
    pair_round,
)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(2, 60), movement=st.sampled_from(MOVEMENTS))
def test_no_pair_meets_twice_up_to_the_movements_limit(n: int, movement: str) -> None:
    players = list(range(100, 100 + n))
    met: set[frozenset[int]] = set()
    byes: list[int] = []
    limit = max_rounds(n, movement)
    assert limit == ((n + n % 2) - 1 if movement == CIRCLE else (n + 1) // 2)
    for round_no in range(1, limit + 1):
        tables, bye = pair_round(players, round_no, movement)
        seated = [p for table in tables for p in table.players]
        assert sorted(seated + ([bye] if bye is not None else [])) == players
        assert (bye is not None) == (n % 2 == 1)
        assert [table.number for table in tables] == list(range(1, n // 2 + 1))
        for table in tables:
            pair = frozenset(table.players)
            assert len(pair) == 2 and pair not in met
            met.add(pair)
        if bye is not None:
            byes.append(bye)
    assert len(byes) == len(set(byes))  # nobody sits out twice
    if movement == CIRCLE:  # the round robin: everyone met everyone
        assert len(met) == n * (n - 1) // 2
    with pytest.raises(TournamentError, match="without a rematch"):
        pair_round(players, limit + 1, movement)


def test_the_rotation_moves_one_side_one_table_a_round() -> None:
    first, _ = pair_round(list(range(1, 9)), 1, ROTATION)
    second, _ = pair_round(list(range(1, 9)), 2, ROTATION)
    side = lambda tables: [min(t.players) for t in tables]  # noqa: E731
    movers = lambda tables: [max(t.players) for t in tables]  # noqa: E731
    assert side(first) == side(second) == [1, 2, 3, 4]
    assert movers(second) == movers(first)[1:] + movers(first)[:1]


@pytest.mark.parametrize(
    ("loser", "target", "double", "outcome"),
    [
        (91, 121, False, WIN),
        (90, 121, False, SKUNK),
        (60, 121, False, SKUNK),
        (61, 121, True, SKUNK),
        (60, 121, True, DOUBLE_SKUNK),
        (31, 61, True, WIN),
        (30, 61, True, SKUNK),
        (0, 61, True, SKUNK),
    ],
)
def test_skunk_lines(loser: int, target: int, double: bool, outcome: str) -> None:
    assert Scoring(double_skunk=double).outcome(loser, target) == outcome


def two_player_tournament() -> Tournament:
    tournament = Tournament()
    for name in ("Ann", "Bob", "Cid"):
        tournament.register(name)
    tournament.next_round()
    return tournament


def test_results_must_fit_their_table() -> None:
    tournament = two_player_tournament()
    table = tournament.rounds[0].tables[0]
    a, b = table.players
    stranger = ({1, 2, 3} - {a, b}).pop()
    for bad in (
        Result(1, 1, a, stranger, 80, 121),  # not at this table
        Result(1, 1, a, b, 121, 121),  # the loser cannot reach the target
        Result(1, 1, a, b, 50, 100),  # no such game
        Result(1, 2, a, b, 50, 121),  # no such table
        Result(2, 1, a, b, 50, 121),  # no such round
    ):
        with pytest.raises(TournamentError):
            tournament.record(bad)
    assert tournament.results == {}
    with pytest.raises(TournamentError, match="fixed"):
        tournament.register("Dee")


def test_a_correction_replaces_the_result_and_is_kept() -> None:
    tournament = two_player_tournament()
    a, b = tournament.rounds[0].tables[0].players
    first = tournament.make_result(1, 1, 0, 95, 121)
    tournament.record(first)
    with pytest.raises(TournamentError, match="correct it"):
        tournament.record(Result(1, 1, b, a, 100, 121))
    fixed = Result(1, 1, b, a, 100, 121)
    with pytest.raises(TournamentError, match="who made it and why"):
        tournament.correct(1, 1, fixed, who="", why="x", when="t")
    assert tournament.results[(1, 1)] == first and tournament.corrections == []
    entry = tournament.correct(1, 1, fixed, who="Eve", why="pegs misread", when="t1")
    assert (entry.old, entry.new, entry.who, entry.why, entry.when) == (
        first,
        fixed,
        "Eve",
        "pegs misread",
        "t1",
    )
    assert tournament.results[(1, 1)] == fixed
    tournament.correct(1, 1, None, who="Eve", why="to be replayed", when="t2")
    assert (1, 1) not in tournament.results and len(tournament.corrections) == 2


def plain_standings(
    names: dict[int, str], games: list[Result], byes: list[int], scoring: Scoring
) -> list[tuple[str, int, int, int, int]]:
    """The standings worked out the way the club's paper sheet does, independently."""
    points = dict.fromkeys(names, 0)
    won = dict.fromkeys(names, 0)
    skunks = dict.fromkeys(names, 0)
    spread = dict.fromkeys(names, 0)
    for game in games:
        if game.target == 121:
            skunked, double_skunked = game.loser_score <= 90, game.loser_score <= 60
        else:
            skunked, double_skunked = game.loser_score <= 30, False
        if double_skunked and scoring.double_skunk:
            points[game.winner] += scoring.double_skunk_points
        elif skunked:
            points[game.winner] += scoring.skunk_points
        else:
            points[game.winner] += scoring.win_points
        won[game.winner] += 1
        if skunked:
            skunks[game.winner] += 1
        margin = game.target - game.loser_score
        spread[game.winner] += margin
        spread[game.loser] -= margin
    for player in byes:
        points[player] += scoring.bye_points
        spread[player] += scoring.bye_spread
    rows = [(names[p], points[p], won[p], skunks[p], spread[p]) for p in names]
    return sorted(rows, key=lambda r: (-r[1], -r[2], -r[3], -r[4], r[0].lower()))


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 14),
    data=st.data(),
    double=st.booleans(),
    double_points=st.integers(2, 5),
    bye_points=st.integers(0, 3),
    bye_spread=st.integers(0, 30),
)
def test_standings_match_a_plain_computation(
    n: int, data: st.DataObject, double: bool, double_points: int, bye_points: int, bye_spread: int
) -> None:
    scoring = Scoring(
        double_skunk=double,
        double_skunk_points=double_points,
        bye_points=bye_points,
        bye_spread=bye_spread,
    )
    tournament = Tournament(scoring=scoring)
    names = {tournament.register(f"P{i:02}").id: f"P{i:02}" for i in range(n)}
    rounds = data.draw(st.integers(1, max_rounds(n)))
    games: list[Result] = []
    byes: list[int] = []
    for _ in range(rounds):
        round_ = tournament.next_round()
        if round_.bye is not None:
            byes.append(round_.bye)
        for table in round_.tables:
            if not data.draw(st.booleans()):
                continue  # not played yet
            target = data.draw(st.sampled_from((61, 121)))
            result = tournament.make_result(
                round_.number,
                table.number,
                data.draw(st.integers(0, 1)),
                data.draw(st.integers(0, target - 1)),
                target,
            )
            tournament.record(result)
            games.append(result)
    standings = tournament.standings()
    got = [(s.player.name, s.points, s.won, s.skunks, s.spread) for s in standings]
    assert got == plain_standings(names, games, byes, scoring)
    for earlier, later in itertools.pairwise(standings):
        assert later.rank == (
            earlier.rank if later.key() == earlier.key() else standings.index(later) + 1
        )
    assert sum(s.won for s in standings) == sum(s.lost for s in standings) == len(games)
