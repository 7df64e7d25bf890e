"""The statistics of the record (cribboard.record.stats, `cribboard history`) against a count
made here, from what the generator played (cribdev.recordgen), never from the record: games won
and lost, skunks given and taken, head to head, matches, hands and cribs, pegging per deal,
muggins; and a game's scores deal by deal."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import pytest

from cribboard.cli import main
from cribboard.record.stats import Who, game_graph, hand_counts, statistics
from cribboard.record.store import BoardGame, Record
from cribdev.recordgen import Played, play_games

GAMES = 24


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Played], list[int]]:
    path = tmp_path_factory.mktemp("record") / "record.sqlite"
    with Record.open(path) as record:
        played = play_games(record, GAMES, random.Random(38))
        ids = [row[0] for row in record.db.execute("SELECT id FROM games ORDER BY id")]
        # Two matches: the first three games (best of 3), and games 4-5 (first to 2, going on).
        winner = played[0].winner
        record.add_match("gen:board", 1, kind="best_of", length=3, games=ids[:3], winner=winner)
        record.add_match("gen:board", 2, kind="first_to", length=2, games=ids[3:5])
        # A game from the board's history alone: its players have no names.
        record.add_board_game(BoardGame("gen:other", 5, 121, 2, 1, "skunk", (80, 121), (70, 117)))
    return path, played, ids


def count_by_hand(played: list[Played]) -> dict[str, dict[str, float]]:
    """Each player's figures, counted from the games as played."""
    figures: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for game in played:
        for side, name in enumerate(game.names):
            mine = figures[name]
            if game.winner is not None:
                mine["games"] += 1
                if side == game.winner:
                    mine["won"] += 1
                    mine["skunks_given"] += game.result in ("skunk", "double_skunk")
                else:
                    mine["lost"] += 1
                    skunk = 91 if game.target == 121 else 31
                    mine["skunks_taken"] += game.front[side] < skunk
            mine["deals"] += game.deals
        for side, kind, points in game.scores:
            mine = figures[game.names[side]]
            if kind in ("hand", "crib"):
                mine[f"{kind}s"] += 1
                mine[f"{kind}_points"] += points
                mine[f"{kind}_best"] = max(mine[f"{kind}_best"], points)
            elif kind == "play":
                mine["play"] += points
            elif kind == "muggins":
                mine["muggins"] += 1
                mine["muggins_points"] += points
    return figures


def test_each_players_figures_are_the_games_as_played(
    generated: tuple[Path, list[Played], list[int]],
) -> None:
    path, played, _ids = generated
    expected = count_by_hand(played)
    with Record.open(path) as record:
        stats = statistics(record)
    assert stats.finished == sum(g.winner is not None for g in played) + 1
    assert stats.unfinished == sum(g.winner is None for g in played) > 0
    for name, mine in expected.items():
        (got,) = [p for p in stats.players if p.who == Who(name)]
        assert (got.games, got.won, got.lost) == (mine["games"], mine["won"], mine["lost"])
        assert (got.skunks_given, got.skunks_taken) == (mine["skunks_given"], mine["skunks_taken"])
        assert got.hands.count == mine["hands"] and got.cribs.count == mine["cribs"]
        assert got.hands.average == pytest.approx(mine["hand_points"] / mine["hands"])
        assert got.cribs.average == pytest.approx(mine["crib_points"] / mine["cribs"])
        assert (got.hands.best, got.cribs.best) == (mine["hand_best"], mine["crib_best"])
        assert (got.play_points, got.deals) == (mine["play"], mine["deals"])
        assert got.pegging_per_deal == pytest.approx(mine["play"] / mine["deals"])
        assert (got.muggins, got.muggins_points) == (mine["muggins"], mine["muggins_points"])
    orange = [p for p in stats.players if p.who == Who(None, 1)]
    assert [(p.won, p.lost, p.skunks_given) for p in orange] == [(1, 0, 1)]  # the board's game


def test_head_to_head_and_matches(generated: tuple[Path, list[Played], list[int]]) -> None:
    path, played, _ids = generated
    pairs: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for game in played:
        if game.winner is None:
            continue
        winner, loser = game.names[game.winner], game.names[1 - game.winner]
        pairs[(winner, loser)][0] += 1
        pairs[(loser, winner)][1] += 1
    with Record.open(path) as record:
        stats = statistics(record)
    named = {
        (h.player.name, h.opponent.name): [h.won, h.lost]
        for h in stats.head_to_head
        if h.player.name and h.opponent.name
    }
    assert named == dict(pairs)
    decided, going_on = stats.matches[1], stats.matches[0]  # the latest first
    first = played[0]
    assert decided.winner == first.winner and going_on.winner is None
    assert decided.sides == ((Who(first.names[0]),), (Who(first.names[1]),))
    wins = [0, 0]
    for game in played[:3]:
        if game.winner is not None:
            wins[game.winner] += 1
    assert list(decided.score) == wins
    for name in first.names:
        (got,) = [p for p in stats.players if p.who == Who(name)]
        assert got.matches == 1 and got.matches_won == (name == first.names[first.winner])


def test_a_games_graph_and_a_players_hand_counts(
    generated: tuple[Path, list[Played], list[int]],
) -> None:
    path, played, ids = generated
    with Record.open(path) as record:
        graph = game_graph(record, ids[0])
        assert graph is not None
        assert graph.scores[0] == (0, 0) and graph.scores[-1] == played[0].front
        assert len(graph.dealers) == played[0].deals
        assert all(
            a <= b for row, nxt in zip(graph.scores, graph.scores[1:]) for a, b in zip(row, nxt)
        )
        ann = hand_counts(record, Who("Ann"))
    hands = [0] * 30
    for game in played:
        for side, kind, points in game.scores:
            if kind == "hand" and game.names[side] == "Ann":
                hands[points] += 1
    assert list(ann.hands) == hands


def test_history_on_the_command_line(
    generated: tuple[Path, list[Played], list[int]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, played, ids = generated
    monkeypatch.setenv("XDG_DATA_HOME", str(path.parent.parent))
    (path.parent.parent / "cribboard").mkdir(exist_ok=True)
    (path.parent.parent / "cribboard" / "record.sqlite").symlink_to(path)
    assert main(["history", "--json", "--games", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["finished"] == sum(g.winner is not None for g in played) + 1
    assert len(out["games"]) == 3
    assert main(["history"]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[2].split()[:3] == ["player", "won", "lost"]
    assert "head to head (won-lost)" in table and "best of 3" in table
    assert main(["history", "--game", str(ids[0])]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[-1].split()[1:] == [str(score) for score in played[0].front]
    assert main(["history", "--game", "99999"]) == 2
    assert "no game 99999" in capsys.readouterr().err
