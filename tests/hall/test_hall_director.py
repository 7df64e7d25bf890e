"""The tournament director with the real mosquitto on a free port and simulated tables: a
three-round tournament against a plain computation of the standings; a broker killed mid-round,
a director killed mid-round, a table cut off: nothing lost, nothing counted twice; the command
line (start, players, round next, standings, correct, export); 200 tables through one broker."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cribboard.hall.broker import Broker
from cribboard.hall.director import choose_movement
from cribboard.hall.store import Store
from cribboard.hallwire import topics as t
from cribboard.tournament import CIRCLE, ROTATION
from hallsupport import (
    HALL,
    WAIT_S,
    address,
    broker_words,
    need_mosquitto,
    plain_standings,
    published_rows,
    running_broker,
    running_director,
    sim_tables,
)

NAMES = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal"]
CLI = [sys.executable, "-m", "cribboard.cli"]


async def retained_standings(
    broker: Broker, until: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The hall's standings as a viewer reads them, once `until` holds for them."""
    async with address(broker, "viewer").client() as viewer:
        await viewer.subscribe(t.hall_topic(HALL, t.STANDINGS), qos=1)
        async with asyncio.timeout(WAIT_S):
            async for message in viewer.messages:
                standings: dict[str, Any] = json.loads(bytes(message.payload))
                if until(standings):
                    return standings
    raise AssertionError("unreachable")


def games_counted(standings: dict[str, Any]) -> int:
    return sum(line["played"] for line in standings["standings"]) // 2


def test_the_movement_is_the_clubs_rotation_when_it_pairs_the_planned_rounds() -> None:
    assert choose_movement(20, 9)[0] == ROTATION  # ten boards: 10 rounds without a rematch
    assert choose_movement(17, 9)[0] == ROTATION  # a bye, 9 rounds
    movement, why = choose_movement(12, 9)
    assert movement == CIRCLE and "only 6 rounds" in why and "for 11" in why
    movement, why = choose_movement(8, 9)
    assert movement == CIRCLE and "only 7 rounds" in why
    assert len(why.splitlines()) == 1


async def test_three_rounds_give_the_standings_of_a_plain_computation(tmp_path: Path) -> None:
    rng = random.Random(7)
    players = NAMES[:7]  # an odd count: a bye each round
    with running_broker(tmp_path / "broker", tables=3) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=3) as director:
                async with sim_tables(broker, 3) as tables:
                    director.register(players)
                    games: list[tuple[str, str, int, int]] = []
                    byes: list[str] = []
                    met: set[frozenset[str]] = set()
                    for round_no in (1, 2, 3):
                        report = await director.next_round()
                        if round_no == 1:
                            assert report.movement_note is not None
                            assert "clubs' rotation" in report.movement_note
                        assert all(a is not None and a.ok for a in report.answers.values()), (
                            report.answers
                        )
                        for table in tables:
                            seats = report.names[table.table]
                            assert table.names == seats  # the command carried the names
                            assert frozenset(seats) not in met  # no rematch
                            met.add(frozenset(seats))
                            winner = rng.randrange(2)
                            loser_score = rng.choice([30, 60, 89, 90, 91, 100, 120])
                            await table.finish(winner, loser_score)
                            games.append((seats[winner], seats[1 - winner], loser_score, 121))
                        # A table's last peg is published, not yet recorded: the next round
                        # waits for the director to have every result of this one.
                        played = len(games)
                        await director.wait_until(
                            lambda: len(store.tournament.results) == played, WAIT_S
                        )
                        assert report.bye_name is not None
                        byes.append(report.bye_name)
                    standings = await retained_standings(
                        broker, lambda s: s["round"] == 3 and games_counted(s) == 9
                    )
    assert published_rows(standings) == plain_standings(players, games, byes)


async def test_a_broker_killed_mid_round_loses_nothing_and_counts_nothing_twice(
    tmp_path: Path,
) -> None:
    players = NAMES
    with running_broker(tmp_path / "broker", tables=4) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                async with sim_tables(broker, 4) as tables:
                    director.register(players)
                    report = await director.next_round()
                    games = []
                    ends = [(0, 80), (1, 95), (0, 120), (1, 44)]
                    for table, (winner, loser_score) in zip(tables[:2], ends, strict=False):
                        await table.finish(winner, loser_score)
                    await director.wait_until(lambda: len(store.tournament.results) == 2, WAIT_S)
                    assert broker.pid is not None
                    os.kill(broker.pid, signal.SIGKILL)  # no clean stop: nothing saved since
                    # While it is down: a game ends, another is half played.
                    await tables[2].finish(*ends[2])
                    await tables[3].peg(0, 20)
                    await asyncio.to_thread(broker.start)  # the same port, the same state dir
                    await tables[3].finish(*ends[3])
                    await director.wait_until(lambda: len(store.tournament.results) == 4, WAIT_S)
                    for table, (winner, loser_score) in zip(tables, ends, strict=True):
                        seats = report.names[table.table]
                        games.append((seats[winner], seats[1 - winner], loser_score, 121))
                    standings = await retained_standings(broker, lambda s: games_counted(s) == 4)
                    assert director.results_recorded == 4
    assert published_rows(standings) == plain_standings(players, games, [])


def cli(*words: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "hall", *words], capture_output=True, text=True, env=env, timeout=60
    )


async def start_director(hall_dir: Path, broker: Broker, env: dict[str, str]) -> Any:
    process = await asyncio.create_subprocess_exec(
        *CLI,
        "hall",
        "start",
        "--dir",
        str(hall_dir),
        "--broker",
        *broker_words(broker),
        "--rounds",
        "3",
        "--no-page",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    assert process.stdout is not None
    async with asyncio.timeout(WAIT_S):
        while True:
            line = (await process.stdout.readline()).decode()
            assert line, "the director stopped"
            if line.startswith("director: connected"):
                return process


async def test_the_command_line_runs_the_night_and_a_killed_director_loses_nothing(
    tmp_path: Path,
) -> None:
    need_mosquitto()
    hall_dir = tmp_path / "h"
    env = dict(os.environ)
    players = NAMES[:4]
    assert cli("players", "add", "--dir", str(hall_dir), *players).stdout == (
        "registered Ann, Bob, Cid, Dee (4 players)\n"
    )
    refused = cli("players", "add", "--dir", str(hall_dir), "Eve", "ann")
    assert (refused.returncode, refused.stderr) == (1, "cribboard: ann is already registered\n")
    usage = cli("correct", "--dir", str(hall_dir), "1", "x", "--strike", "--why", "w")
    assert usage.returncode == 2 and len(usage.stderr.splitlines()) == 1
    no_director = cli("round", "next", "--dir", str(hall_dir))
    assert no_director.returncode == 1 and "no director is running" in no_director.stderr
    with running_broker(tmp_path / "broker", tables=2) as broker:
        env["CRIBBOARD_HALL_PASSWORD"] = broker.credentials("director").password
        director = await start_director(hall_dir, broker, env)
        try:
            async with sim_tables(broker, 2) as tables:
                paired = await asyncio.to_thread(cli, "round", "next", "--dir", str(hall_dir))
                assert paired.returncode == 0, paired.stderr
                assert paired.stdout.count("new game started") == 2
                assert "circle method" in paired.stdout  # 4 players: 2 rotation rounds, not 3
                seats = {table.table: table.names for table in tables}
                await tables[0].finish(0, 85)
                await retained_standings(broker, lambda s: games_counted(s) == 1)
                director.kill()  # SIGKILL: no goodbye
                await director.wait()
                await tables[1].finish(1, 110)  # while no director runs: the broker queues it
                director = await start_director(hall_dir, broker, env)
                standings = await retained_standings(broker, lambda s: games_counted(s) == 2)
                games = [
                    (seats[1][0], seats[1][1], 85, 121),
                    (seats[2][1], seats[2][0], 110, 121),
                ]
                assert published_rows(standings) == plain_standings(players, games, [])
                printed = await asyncio.to_thread(cli, "standings", "--dir", str(hall_dir))
                assert "standings after round 1" in printed.stdout
                assert seats[1][0] in printed.stdout.splitlines()[2]  # the skunk leads

                # A correction: table 1's loser actually won, 121-100.
                corrected = await asyncio.to_thread(
                    cli,
                    "correct",
                    "1",
                    "1",
                    "--dir",
                    str(hall_dir),
                    "--winner",
                    seats[1][1],
                    "--loser-score",
                    "100",
                    "--why",
                    "pegged with the wrong colour",
                )
                assert corrected.returncode == 0, corrected.stderr
                assert f"{seats[1][1]} beat {seats[1][0]} 121-100" in corrected.stdout
                games[0] = (seats[1][1], seats[1][0], 100, 121)
                after = await retained_standings(
                    broker, lambda s: published_rows(s) != published_rows(standings)
                )
                assert published_rows(after) == plain_standings(players, games, [])
        finally:
            director.send_signal(signal.SIGTERM)
            await director.wait()
    with Store.open(hall_dir / "hall.sqlite") as store:
        (audit,) = store.tournament.corrections
        assert (audit.round, audit.table, audit.why) == (1, 1, "pegged with the wrong colour")
        assert audit.old is not None and audit.old.loser_score == 85
    exported = cli(
        "export", "--dir", str(hall_dir), "--standings", str(tmp_path / "s.csv"), "--games", "-"
    )
    assert exported.returncode == 0
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    as_json = json.loads(cli("standings", "--json", "--dir", str(hall_dir)).stdout)
    assert [(int(r["rank"]), r["player"], int(r["points"]), int(r["spread"])) for r in rows] == [
        (s["rank"], s["player"], s["points"], s["spread"]) for s in as_json["standings"]
    ]
    game_rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert [(g["table"], g["corrected"]) for g in game_rows] == [("1", "1"), ("2", "0")]


TABLE = [sys.executable, "-m", "cribdev.simtable"]


async def test_a_table_cut_off_shows_offline_and_catches_up(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker) as director:
                director.register(["Ann", "Bob"])
                words = [
                    *TABLE,
                    "--broker",
                    *broker_words(broker),
                    "--hall",
                    HALL,
                    "--table",
                    "1",
                    # (one word with its value: a generated password may start with "-")
                    "--password=" + broker.credentials("table-1").password,
                    "--state-file",
                    str(tmp_path / "board.json"),
                ]

                async def table_process() -> Any:
                    process = await asyncio.create_subprocess_exec(
                        *words, stdin=subprocess.PIPE, stdout=subprocess.PIPE
                    )
                    async with asyncio.timeout(WAIT_S):
                        assert await process.stdout.readline() == b"online\n"
                    return process

                async def say(process: Any, line: str) -> None:
                    process.stdin.write(line.encode() + b"\n")
                    async with asyncio.timeout(WAIT_S):
                        assert (await process.stdout.readline()).startswith(b"state ")

                view = director.view
                table = await table_process()
                try:
                    report = await director.next_round()
                    assert report.answers[1] is not None and report.answers[1].ok
                    await say(table, "peg 0 10")
                    await director.wait_until(
                        lambda: (
                            view.tables[1].state is not None
                            and view.tables[1].state.front == [10, 0]
                        ),
                        WAIT_S,
                    )
                    assert view.tables[1].online is True
                    table.kill()  # the client dies: the broker sends its Last Will
                    await table.wait()
                    await director.wait_until(lambda: view.tables[1].online is False, WAIT_S)
                    table = await table_process()  # the board kept its game
                    # The client publishes `online` before its state: until that state arrives
                    # the view still holds the one from before the cut (rev 2). The restarted
                    # board's own state is the one whose revision counts from 0 again.
                    await director.wait_until(
                        lambda: (
                            view.tables[1].online is True
                            and view.tables[1].state is not None
                            and view.tables[1].state.rev == 0
                        ),
                        WAIT_S,
                    )
                    state = view.tables[1].state
                    assert state is not None and state.front == [10, 0]
                    await say(table, "finish 1 95")
                    await director.wait_until(lambda: len(store.tournament.results) == 1, WAIT_S)
                    (result,) = store.tournament.results.values()
                    blue, orange = report.round.table(1).players
                    assert (result.winner, result.loser, result.loser_score) == (orange, blue, 95)
                finally:
                    table.kill()
                    await table.wait()


async def test_a_win_left_on_a_board_from_the_last_round_is_not_this_rounds(
    tmp_path: Path,
) -> None:
    with running_broker(tmp_path / "broker", tables=2) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=2, ack_timeout=1.0) as director:
                director.register(NAMES[:4])
                async with sim_tables(broker, 2) as tables:
                    await director.next_round()
                    for table in tables:
                        await table.finish(0, 100)
                    await director.wait_until(lambda: len(store.tournament.results) == 2, WAIT_S)
                    await tables[1].stop()  # away when round 2 is paired
                    report = await director.next_round()
                    assert report.answers[1] is not None and report.answers[2] is None
                    # Table 2's board still shows round 1's win: not a result of round 2.
                    assert (2, 2) not in store.tournament.results
                    assert not store.command(2, 2).started
                await director.wait_until(lambda: director.view.tables[2].online is False, WAIT_S)
                # It comes back: the queued command starts its game; only then does it count.
                async with sim_tables(broker, 2) as again:
                    await director.wait_until(lambda: store.command(2, 2).started, WAIT_S)
                    assert [c.id for c in again[1].commands] == [store.command(2, 2).id]
                    await again[1].finish(1, 70)
                    await director.wait_until(lambda: (2, 2) in store.tournament.results, WAIT_S)
                    assert store.tournament.results[(2, 2)].loser_score == 70


async def test_two_hundred_tables_through_one_broker(tmp_path: Path) -> None:
    count = 200
    players = [f"P{n:03}" for n in range(1, 2 * count + 1)]
    with running_broker(tmp_path / "broker", tables=count) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1, target=61) as director:
                async with sim_tables(broker, count) as tables:
                    director.register(players)
                    report = await director.next_round()
                    assert sum(1 for a in report.answers.values() if a and a.ok) == count
                    await asyncio.gather(*(table.play() for table in tables))  # a few pegs each
                    # 200 results take as long as a loaded machine needs: the wait fails only
                    # when none comes for WAIT_S, not when all of them take longer than that.
                    recorded = 0
                    while recorded < count:
                        await director.wait_until(
                            lambda: len(store.tournament.results) > recorded,  # noqa: B023
                            WAIT_S,
                        )
                        recorded = len(store.tournament.results)
                    standings = await retained_standings(
                        broker, lambda s: games_counted(s) == count
                    )
    games = []
    for table in tables:
        state = table.state
        assert state.winner is not None
        seats = report.names[table.table]
        games.append(
            (seats[state.winner], seats[1 - state.winner], state.front[1 - state.winner], 61)
        )
    assert published_rows(standings) == plain_standings(players, games, [])
    assert director.results_recorded == count
