"""Helpers for the club hall's tests: a private broker, a director running in the test's loop,
simulated tables, and the standings computed plainly from the games played."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cribboard.hall.broker import Broker, MosquittoNotFound, find_executable
from cribboard.hall.director import Director
from cribboard.hall.store import Store
from cribboard.mqtt.address import BrokerAddress
from cribdev.simtable import SimTable

HALL = "club"
WAIT_S = 20.0  # generous: a loaded 2-core machine is slow, not broken


def need_mosquitto() -> None:
    try:
        find_executable("mosquitto")
    except MosquittoNotFound as err:
        pytest.skip(f"{err} (make mosquitto)")


@contextlib.contextmanager
def running_broker(state_dir: Path, tables: int, *, tls: bool = True) -> Iterator[Broker]:
    """A hall's broker on loopback: TLS with the hall's own CA unless `tls` is False."""
    need_mosquitto()
    broker = Broker.create(state_dir, HALL, tables=tables, viewer=True, tls=tls)
    with broker:
        yield broker


def address(broker: Broker, user: str) -> BrokerAddress:
    """How `user` reaches `broker` from this computer (verifying it against the hall's CA)."""
    ca = broker.ca_file
    return BrokerAddress(
        "127.0.0.1",
        broker.port,
        broker.tls,
        username=user,
        password=broker.credentials(user).password,
        cafile=None if ca is None else str(ca),
    )


def broker_words(broker: Broker) -> list[str]:
    """The broker's URL and CA file as the command lines take them (``--cafile`` follows)."""
    ca = broker.ca_file
    return [broker.url] + ([] if ca is None else ["--cafile", str(ca)])


@contextlib.asynccontextmanager
async def running_director(
    store: Store,
    broker: Broker,
    *,
    rounds: int = 9,
    target: int = 121,
    ack_timeout: float = WAIT_S,
) -> AsyncIterator[Director]:
    director = Director(
        store,
        address(broker, "director"),
        HALL,
        rounds=rounds,
        target=target,
        max_tables=broker.tables,
        ack_timeout=ack_timeout,
    )
    task = asyncio.create_task(director.run())
    try:
        async with asyncio.timeout(WAIT_S):
            await director.connected.wait()
        yield director
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def sim_tables(broker: Broker, count: int, seed: int = 0) -> AsyncIterator[list[SimTable]]:
    tables = [
        SimTable(address(broker, f"table-{n}"), HALL, n, seed=seed + n) for n in range(1, count + 1)
    ]
    try:
        async with asyncio.timeout(WAIT_S):
            await asyncio.gather(*(table.start() for table in tables))
        yield tables
    finally:
        await asyncio.gather(*(table.stop() for table in tables))


def plain_standings(
    players: list[str], games: list[tuple[str, str, int, int]], byes: list[str]
) -> list[tuple[int, str, int, int, int, int]]:
    """The standings as the clubs' paper sheet has them, from (winner, loser, loser's score,
    target) games: 2 points a win, 3 with a skunk (the loser below 91 of 121, 31 of 61), 2 a
    bye; ordered by points, games won, skunks, spread; equal players share a rank. Rows:
    (rank, player, points, won, skunks, spread)."""
    points = {p: 0 for p in players}
    won = {p: 0 for p in players}
    skunks = {p: 0 for p in players}
    spread = {p: 0 for p in players}
    for winner, loser, loser_score, target in games:
        skunk_line = 91 if target == 121 else 31
        margin = target - loser_score
        won[winner] += 1
        spread[winner] += margin
        spread[loser] -= margin
        if loser_score < skunk_line:
            points[winner] += 3
            skunks[winner] += 1
        else:
            points[winner] += 2
    for player in byes:
        points[player] += 2

    def key(p: str) -> tuple[int, int, int, int]:
        return (points[p], won[p], skunks[p], spread[p])

    order = sorted(players, key=lambda p: (-points[p], -won[p], -skunks[p], -spread[p], p.lower()))
    rows = []
    for i, p in enumerate(order):
        rank = rows[-1][0] if rows and key(order[i - 1]) == key(p) else i + 1
        rows.append((rank, p, points[p], won[p], skunks[p], spread[p]))
    return rows


def published_rows(standings: dict[str, object]) -> list[tuple[int, str, int, int, int, int]]:
    """The rows of a `standings` payload, as plain_standings makes them."""
    lines = standings["standings"]
    assert isinstance(lines, list)
    return [
        (s["rank"], s["player"], s["points"], s["won"], s["skunks"], s["spread"]) for s in lines
    ]
