"""What a table may send cannot stop the hall or count a game that was not played (issue 22):
the real mosquitto, the director in the test's loop, simulated tables, and a table's own
credentials used as an attacker would. Hostile payloads (deep, oversized, out of range,
retained) are rejected with a log line; a result that is not consistent is held for the director
with its reason; a forged or retained acknowledgement starts nothing; a client cannot take
another user's client id; a table that comes online after `round next` gets its game."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rawmqtt
from browsersupport import chromium, needs_chromium
from cribboard.api import BoardState
from cribboard.hall.broker import Broker, config_text
from cribboard.hall.store import Store
from cribboard.hallwire import messages
from cribboard.hallwire import topics as t
from cribdev.simtable import SimTable
from hallsupport import (
    HALL,
    WAIT_S,
    address,
    need_mosquitto,
    running_broker,
    running_director,
    sim_tables,
)

NAMES = ["Ann", "Bob", "Cid", "Dee"]


def state(**changes: Any) -> dict[str, Any]:
    """A board's state payload as a dict (a fresh 121 game), with `changes`."""
    base: dict[str, Any] = {
        "rev": 1,
        "target": 121,
        "players": 2,
        "dealer": 0,
        "winner": None,
        "result": "playing",
        "front": [0, 0],
        "back": [0, 0],
        "games": [0, 0],
        "pending": [0, 0],
        "undo": 0,
        "skunk_double": False,
    }
    return {**base, **changes}


def won(rev: int, winner: int, loser_score: int, target: int = 121, **changes: Any) -> bytes:
    front = [loser_score, loser_score]
    front[winner] = target
    games = [0, 0]
    games[winner] = 1
    outcome = "skunk" if loser_score < (91 if target == 121 else 31) else "won"
    if loser_score < (61 if target == 121 else 0):
        outcome = "double_skunk"
    fields = {
        "rev": rev,
        "target": target,
        "winner": winner,
        "result": outcome,
        "front": front,
        "games": games,
    }
    return json.dumps(state(**{**fields, **changes})).encode()


def publish_raw(broker: Broker, table: int, leaf: str, payload: bytes) -> int:
    """Publish with the table's own credentials from a raw socket, retained; returns how many
    bytes of the payload went before the broker cut the connection (all: it did not)."""
    user = f"table-{table}"
    with rawmqtt.open_socket(broker.port, broker.ca_file) as sock:
        sock.sendall(rawmqtt.connect_packet(user, user, broker.credentials(user).password))
        assert rawmqtt.read_connack(sock) == 0
        topic = t.table_topic(HALL, table, leaf)
        sock.sendall(rawmqtt.publish_header(topic, len(payload), retain=True))
        sent = 0
        try:
            while sent < len(payload):
                sent += sock.send(payload[sent : sent + 65536])
        except OSError:
            pass
        return sent


async def publish_as(
    broker: Broker, table: int, leaf: str, payload: bytes, *, retain: bool = False
) -> None:
    """Publish on a table's topic with the table's own credentials (as an attacker holding
    them would), QoS 1: returned once the broker has it."""
    async with address(broker, f"table-{table}").client(f"raw-{table}") as client:
        await client.publish(t.table_topic(HALL, table, leaf), payload, qos=1, retain=retain)


async def test_deep_and_out_of_range_states_stop_nothing_even_retained(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    with running_broker(tmp_path / "broker", tables=2) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                director.register(NAMES)
                async with sim_tables(broker, 2) as tables:
                    await director.next_round()
                    # Table 2's credentials, its board gone (else the two would take turns
                    # knocking each other off: one client id a user).
                    await tables[1].stop()
                    for depth in (100_000, 500):  # too long; short enough, too deep
                        deep = b"[" * depth + b"]" * depth
                        await publish_as(broker, 2, t.STATE, deep, retain=True)
                    bad = json.dumps(state(winner=7, result="won", front=[121, 3])).encode()
                    await publish_as(broker, 2, t.STATE, bad, retain=True)
                    await publish_as(broker, 2, t.EVENT, bad)
                    await tables[0].finish(0, 100)
                    await director.wait_until(lambda: (1, 1) in store.tournament.results, WAIT_S)
            assert "winner" in caplog.text and "too deep" in caplog.text
            # The next start takes the retained bad state and keeps running.
            async with running_director(store, broker, rounds=1) as director:
                async with sim_tables(broker, 1) as again:
                    await again[0].peg(1, 9)
                    await director.wait_until(
                        lambda: (
                            director.view.tables[1].state is not None
                            and director.view.tables[1].state.front == [0, 9]
                        ),
                        WAIT_S,
                    )


def test_the_broker_caps_a_message_and_ties_client_ids_to_users(tmp_path: Path) -> None:
    text = config_text(tmp_path, "127.0.0.1", 1883)
    assert "message_size_limit" in text or "max_packet_size" in text
    assert "use_username_as_clientid true" in text


async def test_an_oversized_message_never_reaches_the_director(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker) as director:
                big = json.dumps(state(filler="x" * 8_000_000)).encode()
                cut = await asyncio.to_thread(publish_raw, broker, 1, t.STATE, big)
                assert cut < len(big)  # the broker cut the table off from the packet's length
                await publish_as(broker, 1, t.STATE, json.dumps(state(rev=2)).encode())
                await director.wait_until(lambda: 1 in director.view.tables, WAIT_S)
                view_state = director.view.tables[1].state
                assert view_state is not None and view_state.rev == 2


def test_a_state_out_of_range_is_refused_by_its_decoder() -> None:
    good = state()
    messages.decode_state(json.dumps(good).encode())
    for bad in (
        state(winner=7),
        state(winner=0),  # a winner whose peg is not in the win hole
        state(winner=0, result="won", front=[10, 20]),
        state(front=[121, 40], result="playing"),  # at the win hole, no winner
        state(front=[200, 0]),
        state(back=[5, 0]),  # back above front
        state(players=5),
        state(target=99),
        state(dealer=3),
        state(front=[0, 0, 0]),
        state(pending=[30, 0]),
        state(games=[-1, 0]),
        state(rev=-1),
        state(result="lost"),
    ):
        with pytest.raises(messages.MessageError):
            messages.decode_state(json.dumps(bad).encode())


async def started_round(director: Any, broker: Broker) -> list[SimTable]:
    """Round 1 paired and started at table 1 by a simulated table that then leaves cleanly:
    the table's credentials are the attacker's from then on."""
    director.register(NAMES[:2])
    async with sim_tables(broker, 1) as tables:
        report = await director.next_round()
        assert report.answers[1] is not None and report.answers[1].ok
        await tables[0].peg(0, 5)
        await director.wait_until(
            lambda: (
                director.view.tables[1].state is not None
                and director.view.tables[1].state.front == [5, 0]
            ),
            WAIT_S,
        )
    return tables


@pytest.mark.parametrize(
    "forged, reason",
    [
        (won(50, 0, 40, games=[99, 0]), "games"),  # 99 games won, a board at 5-0 a moment ago
        (won(3, 0, 40), "revision"),  # 156 points in two revisions
        (won(60, 0, 40, target=61), "61"),  # a 61-point game in a 121 hall
    ],
)
async def test_a_result_that_is_not_consistent_is_held_with_its_reason(
    tmp_path: Path, forged: bytes, reason: str
) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                await started_round(director, broker)
                await publish_as(broker, 1, t.EVENT, forged)
                await director.wait_until(lambda: (1, 1) in store.held(), WAIT_S)
                assert (1, 1) not in store.tournament.results
                held = store.held()[(1, 1)]
                assert reason in held.reason, held.reason
                assert "held" in director.standings_payload().decode()
                # The director decides: rejected, nothing counted; a real win then counts.
                director.reject_held(1, 1, who="director", why="not played")
                assert store.held() == {} and (1, 1) not in store.tournament.results


async def test_a_held_result_can_be_accepted_by_the_director(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                await started_round(director, broker)
                await publish_as(broker, 1, t.EVENT, won(60, 1, 40, target=61))
                await director.wait_until(lambda: (1, 1) in store.held(), WAIT_S)
                director.accept_held(1, 1, who="director", why="they agreed on 61")
                result = store.tournament.results[(1, 1)]
                assert (result.loser_score, result.target) == (40, 61)
                assert store.held() == {}


async def test_a_consistent_win_still_counts_at_once(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                director.register(NAMES[:2])
                async with sim_tables(broker, 1) as tables:
                    await director.next_round()
                    await tables[0].finish(0, 100)
                    await director.wait_until(lambda: (1, 1) in store.tournament.results, WAIT_S)
                    assert store.held() == {}


async def test_a_forged_or_retained_ack_starts_nothing(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=2, ack_timeout=1.0) as director:
                director.register(NAMES[:2] + NAMES[2:3])  # three: table 1 and a bye
                async with sim_tables(broker, 1) as tables:
                    await director.next_round()
                    await tables[0].finish(0, 100)
                    await director.wait_until(lambda: (1, 1) in store.tournament.results, WAIT_S)
                # Away, the table's credentials retain an ack under the id a guess gives, and
                # keep a session that reads round 2's command.
                table_address = address(broker, "table-1")
                async with table_address.client("table-1", clean_session=False) as spy:
                    await spy.subscribe(t.table_topic(HALL, 1, t.CMD), qos=1)
                    for guess in ("r2t1", "r2t1.2"):
                        ack = messages.encode_ack(messages.Ack(guess, True))
                        await spy.publish(t.table_topic(HALL, 1, t.ACK), ack, qos=1, retain=True)
                report = await director.next_round()
                command = store.command(2, 1)
                assert command.id not in ("r2t1", "r2t1.2") and len(command.id) >= 12
                assert report.answers.get(1) is None and not command.started
                async with table_address.client("table-1", clean_session=False) as spy:
                    async with asyncio.timeout(WAIT_S):
                        async for message in spy.messages:
                            command_id = json.loads(bytes(message.payload))["id"]
                            break
                    assert command_id == command.id
                    ack = messages.encode_ack(messages.Ack(command_id, True))
                    # Retained: ignored. Then plain: the table has started, but its board still
                    # shows round 1's win, which is not round 2's.
                    await spy.publish(t.table_topic(HALL, 1, t.ACK), ack, qos=1, retain=True)
                    await spy.publish(t.table_topic(HALL, 1, t.ACK), ack, qos=1)
                    await director.wait_until(lambda: store.command(2, 1).started, WAIT_S)
                    await spy.publish(t.table_topic(HALL, 1, t.EVENT), won(9, 1, 90), qos=1)
                    await spy.publish(t.table_topic(HALL, 1, t.ONLINE), b"1", qos=1)
                    await director.wait_until(
                        lambda: (
                            director.view.tables[1].state is not None
                            and director.view.tables[1].state.rev == 9
                        ),
                        WAIT_S,
                    )
                    assert (2, 1) not in store.tournament.results


async def test_a_client_cannot_take_another_users_client_id(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", tables=2) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker) as director:
                async with sim_tables(broker, 2) as tables:
                    log = broker.state_dir / "mosquitto.log"
                    before = log.stat().st_size
                    for stolen in ("table-2", "director"):
                        # The broker answers the CONNECT after it has dealt with the id.
                        async with address(broker, "table-1").client(stolen) as impostor:
                            await impostor.publish(
                                t.table_topic(HALL, 1, t.ONLINE), b"1", qos=1, retain=True
                            )
                    written = log.read_bytes()[before:].decode(errors="replace")
                    for stolen in ("table-2", "director"):
                        assert f"Client {stolen} already connected" not in written, written
                    # The real table 2 and the director still talk.
                    await tables[1].peg(1, 7)
                    await director.wait_until(
                        lambda: (
                            director.view.tables[2].state is not None
                            and director.view.tables[2].state.front == [0, 7]
                        ),
                        WAIT_S,
                    )


async def test_a_table_that_comes_online_after_round_next_gets_its_game(tmp_path: Path) -> None:
    # docs/club-night.md's order: players, `hall start`, `round next`, then the tables.
    with running_broker(tmp_path / "broker", tables=2) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1, ack_timeout=0.5) as director:
                director.register(NAMES)
                report = await director.next_round()
                assert all(answer is None for answer in report.answers.values())
                async with sim_tables(broker, 2) as tables:
                    await director.wait_until(
                        lambda: all(store.command(1, n).started for n in (1, 2)), WAIT_S
                    )
                    assert [len(table.commands) for table in tables] == [1, 1]
                    await tables[0].finish(0, 100)
                    await director.wait_until(lambda: (1, 1) in store.tournament.results, WAIT_S)


def test_a_state_decodes_back_to_what_a_board_sent() -> None:
    board = BoardState(**state(front=[12, 7], back=[3, 0], rev=4, pending=[4, 0]))
    assert messages.decode_state(messages.encode_state(board)) == board


async def test_a_crash_drawing_the_page_does_not_reach_the_director(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cribboard.hall import view

    def broken(*args: object) -> str:
        raise IndexError("a drawing bug")

    monkeypatch.setattr(view, "frame_hex", broken)
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                director.register(NAMES[:2])
                async with sim_tables(broker, 1) as tables:
                    await director.next_round()
                    await tables[0].finish(1, 80)
                    await director.wait_until(lambda: (1, 1) in store.tournament.results, WAIT_S)


# --- `cribboard hall start` as a process: one director a hall, its broker supervised ----------

CLI = [sys.executable, "-m", "cribboard.cli"]


async def hall_start(hall_dir: Path) -> asyncio.subprocess.Process:
    """`cribboard hall start` on loopback, returned once its director is connected."""
    process = await asyncio.create_subprocess_exec(
        *CLI, "hall", "start", "--dir", str(hall_dir), "--mqtt-host", "127.0.0.1", "--no-page",
        "--tables", "2", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    await read_until(process, "director: connected")
    return process


async def read_until(process: asyncio.subprocess.Process, start: str) -> str:
    assert process.stdout is not None
    async with asyncio.timeout(WAIT_S):
        while True:
            line = (await process.stdout.readline()).decode()
            assert line, f"the hall stopped before saying {start!r}"
            if line.startswith(start):
                return line


async def stopped(process: asyncio.subprocess.Process) -> None:
    """Wait for the hall to exit after a signal: it says what it did last."""
    assert process.stdout is not None
    async with asyncio.timeout(WAIT_S):
        said = (await process.stdout.read()).decode()  # to its end: the process is gone
        await process.wait()
    assert "director: stopped" in said, said


def broker_pid(hall_dir: Path) -> int:
    return int((hall_dir / "broker" / "mosquitto.pid").read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_one_director_a_hall_its_broker_restarted_and_signals_stop_everything(
    tmp_path: Path,
) -> None:
    need_mosquitto()
    hall_dir = tmp_path / "h"
    hall = await hall_start(hall_dir)
    try:
        second = await asyncio.create_subprocess_exec(
            *CLI, "hall", "start", "--dir", str(hall_dir), "--mqtt-host", "127.0.0.1", "--no-page",
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        out, err = await second.communicate()
        assert second.returncode == 1 and out == b""
        assert len(err.decode().splitlines()) == 1 and f"pid {hall.pid}" in err.decode()
        # The broker dies: the hall starts it again, on the same port, and tells.
        first_broker = broker_pid(hall_dir)
        os.kill(first_broker, signal.SIGKILL)
        await read_until(hall, "broker: restarted")
        restarted = broker_pid(hall_dir)
        assert restarted != first_broker and alive(restarted)
        broker = Broker.open(hall_dir / "broker")
        async with SimTable(address(broker, "table-1"), HALL, 1):
            pass  # it answers
        hall.send_signal(signal.SIGTERM)
        await stopped(hall)
        assert not alive(restarted)
        # SIGINT as Ctrl-C sends it (to the hall alone: its broker is in a session of its own).
        hall = await hall_start(hall_dir)
        started = broker_pid(hall_dir)
        hall.send_signal(signal.SIGINT)
        await stopped(hall)
        assert not alive(started)
    finally:
        if hall.returncode is None:
            hall.kill()
            await hall.wait()


def hall_cli(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "hall", *words], capture_output=True, text=True, timeout=60)


def test_the_command_line_shows_held_results_and_the_round_being_played(tmp_path: Path) -> None:
    from cribboard.hall.wins import FinishedGame

    hall_dir = tmp_path / "h"
    hall_dir.mkdir()
    with Store.open(hall_dir / "hall.sqlite") as store:
        for name in NAMES:
            store.register(name)
        store.next_round()
        store.hold(1, 2, FinishedGame(0, 40, 61, 60), "a 61-point game in a 121-point hall")
    shown = hall_cli("standings", "--dir", str(hall_dir))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "standings during round 1: 0 of 2 games finished"
    assert "round 1 table 2:" in shown.stdout and "61-point game" in shown.stdout
    as_json = json.loads(hall_cli("standings", "--json", "--dir", str(hall_dir)).stdout)
    assert [h["table"] for h in as_json["held"]] == [2]
    listed = hall_cli("held", "--dir", str(hall_dir))
    assert "61-point game" in listed.stdout
    accepted = hall_cli("held", "accept", "1", "2", "--dir", str(hall_dir), "--why", "agreed")
    assert accepted.returncode == 0, accepted.stderr
    assert "61-40" in accepted.stdout
    refused = hall_cli("held", "reject", "1", "2", "--dir", str(hall_dir), "--why", "x")
    assert refused.returncode == 1 and "no result held" in refused.stderr
    with Store.open(hall_dir / "hall.sqlite") as store:
        assert (1, 2) in store.tournament.results and store.held() == {}
        (audit,) = store.tournament.corrections
        assert "agreed" in audit.why and "61-point" in audit.why
    after = hall_cli("standings", "--dir", str(hall_dir)).stdout.splitlines()[0]
    assert after == "standings during round 1: 1 of 2 games finished"


def test_the_director_says_what_happens_past_the_rounds_without_a_rematch() -> None:
    from cribboard.hall.director import choose_movement

    _, why = choose_movement(6, 9)
    assert why.endswith("the evening ends after round 5")


async def test_round_next_past_the_rounds_without_a_rematch_says_why(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=9, ack_timeout=0.2) as director:
                director.register(NAMES[:2])  # two players: one round without a rematch
                await director.next_round()
                store.correct(
                    1, 1, store.tournament.make_result(1, 1, 0, 50, 121), who="t", why="t"
                )
                with pytest.raises(Exception, match="no round 2 without a rematch"):
                    await director.next_round()


def test_a_hall_of_schema_2_keeps_its_commands_and_its_started_games(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "hall.sqlite"
    with Store.open(path) as store:
        for name in NAMES:
            store.register(name)
        store.next_round()
        store.mark_started(1, 1, store.command(1, 1).id)
    db = sqlite3.connect(path)
    with db:
        db.execute("DROP TABLE held")
        for column in ("nonce", "fresh_rev", "fresh_games", "watch"):
            db.execute(f"ALTER TABLE commands DROP COLUMN {column}")
        db.execute("PRAGMA user_version = 2")
    db.close()
    with Store.open(path) as store:
        started, waiting = store.command(1, 1), store.command(1, 2)
        assert (started.id, started.started, started.fresh_rev) == ("r1t1", True, 0)
        assert (waiting.id, waiting.started, waiting.fresh) == ("r1t2", False, False)
        assert len(store.retry_command(1, 2).id) == 16  # a new attempt gets a nonce
        assert store.held() == {}


@needs_chromium
async def test_the_page_shows_the_results_held_for_the_director() -> None:
    from cribboard.hall.page import Page
    from cribboard.hall.view import HallView

    view = HallView(HALL)
    held = {
        "round": 1,
        "table": 2,
        "result": "Cid beat Fay 121-40, a skunk",
        "reason": "the board's games won went from [0, 0] to [99, 0] in one game",
    }
    payload = {"round": 1, "standings": [], "held": [held]}
    view.feed(t.hall_topic(HALL, t.STANDINGS), json.dumps(payload).encode())
    errors: list[str] = []
    async with chromium(1920, 1080) as browser, Page(view, port=0) as site:
        page = await browser.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.set_default_timeout(WAIT_S * 1000)
        await page.goto(site.url)
        await page.wait_for_selector("#held:not([hidden])")
        shown = await page.inner_text("#held-list")
    assert "Round 1, table 2: Cid beat Fay 121-40" in shown and "[99, 0]" in shown
    assert errors == []


async def test_another_result_from_a_table_that_has_one_is_held(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                director.register(NAMES[:2])
                async with sim_tables(broker, 1) as tables:
                    await director.next_round()
                    await tables[0].finish(0, 100)
                    await director.wait_until(lambda: (1, 1) in store.tournament.results, WAIT_S)
                    # A correction at the board: the win taken back, orange wins instead.
                    tables[0].game.undo()
                    await tables[0].client.publish(tables[0].state)
                    shown = await tables[0].finish(1, 0)  # blue stays where the undo left it
                    await director.wait_until(lambda: (1, 1) in store.held(), WAIT_S)
                    assert store.tournament.results[(1, 1)].loser_score == 100
                    assert "121-100" in store.held()[(1, 1)].reason
                    director.accept_held(1, 1, who="director", why="the board was right")
                    result = store.tournament.results[(1, 1)]
                    assert result.loser_score == shown.front[0] < 121
                    assert result.winner == store.tournament.rounds[0].table(1).players[1]
