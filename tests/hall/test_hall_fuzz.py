"""Hostile messages on every topic a table may write, through the real broker, at a running
director (issue 22): malformed, oversized, deeply nested, out of range, retained. After each
burst the director is still connected, still taking messages in order, and the results are
what the games played made them; a director started again over what stayed retained comes up
and keeps them.

The hall runs in a thread of its own (its own event loop), so that Hypothesis drives the
examples from a plain test function; each example's messages go out with the credentials of
table 2 (as an attacker holding them would), followed by a marker state that the director must
take before the example ends: every message before it was taken, or refused, first."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import aiomqtt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cribboard.hall.broker import Broker
from cribboard.hall.director import Director
from cribboard.hall.store import Store
from cribboard.hallwire import topics as t
from cribdev.simtable import SimTable
from hallsupport import HALL, WAIT_S, address, need_mosquitto

T = TypeVar("T")
ATTACKER = 2  # the table whose credentials send the hostile messages
EXAMPLES = 25  # `make test`; more with HYPOTHESIS settings of one's own


class HallThread:
    """A broker, a store and a director with its event loop in a thread of its own."""

    def __init__(self, tmp: Path) -> None:
        need_mosquitto()
        self.broker = Broker.create(tmp / "broker", HALL, tables=2)
        self.broker.start()
        self.store = Store.open(tmp / "hall.sqlite")
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.director: Director | None = None
        self.task: asyncio.Future[None] | None = None
        self.attacker: aiomqtt.Client | None = None
        self.marker = 1_000_000

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(WAIT_S * 3)

    async def start_director(self) -> Director:
        director = Director(
            self.store, address(self.broker, "director"), HALL, rounds=1, max_tables=2
        )
        self.task = asyncio.ensure_future(director.run())
        async with asyncio.timeout(WAIT_S):
            await director.connected.wait()
        self.director = director
        return director

    async def stop_director(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def play_round(self) -> None:
        """Round 1: table 1 plays its game to the end; table 2 starts its own, then leaves
        (its credentials are the attacker's from then on)."""
        director = await self.start_director()
        director.register(["Ann", "Bob", "Cid", "Dee"])
        tables = [SimTable(address(self.broker, f"table-{n}"), HALL, n) for n in (1, 2)]
        for table in tables:
            await table.start()
        report = await director.next_round()
        assert all(answer is not None and answer.ok for answer in report.answers.values())
        await tables[0].finish(0, 77)
        await director.wait_until(lambda: (1, 1) in self.store.tournament.results, WAIT_S)
        await director.wait_until(lambda: self.store.command(1, ATTACKER).fresh, WAIT_S)
        await tables[1].peg(0, 4)
        for table in tables:
            await table.stop()
        self.attacker = address(self.broker, f"table-{ATTACKER}").client("attacker")
        await self.attacker.__aenter__()

    async def burst(self, messages: list[tuple[str, bytes, bool]]) -> None:
        """Send the messages, then a marker state, and wait until the director took it."""
        assert self.attacker is not None and self.director is not None
        for leaf, payload, retain in messages:
            await self.send(t.table_topic(HALL, ATTACKER, leaf), payload, retain=retain)
        self.marker += 1
        marker = self.marker
        mark = json.dumps(dict(MID_GAME, rev=marker)).encode()
        if not await self.send(t.table_topic(HALL, ATTACKER, t.EVENT), mark):
            await self.send(t.table_topic(HALL, ATTACKER, t.EVENT), mark)
        director = self.director

        def marked() -> bool:
            latest = director.latest.get(ATTACKER)
            return latest is not None and latest.rev == marker

        await director.wait_until(marked, WAIT_S)

    async def send(self, topic: str, payload: bytes, *, retain: bool = False) -> bool:
        """Publish as the attacker; False when the broker cut it off (a packet above its
        limit): it logs in again for what comes next."""
        assert self.attacker is not None
        try:
            # (cut off, its publication waits for an answer that never comes: a bound, then on)
            await self.attacker.publish(topic, payload, qos=1, retain=retain, timeout=5)
            return True
        except aiomqtt.MqttError:
            with contextlib.suppress(aiomqtt.MqttError):
                await self.attacker.__aexit__(None, None, None)
            self.attacker = address(self.broker, f"table-{ATTACKER}").client("attacker")
            await self.attacker.__aenter__()
            return False

    def close(self) -> None:
        async def down() -> None:
            if self.attacker is not None:
                with contextlib.suppress(aiomqtt.MqttError):
                    await self.attacker.__aexit__(None, None, None)
            await self.stop_director()

        with contextlib.suppress(Exception):
            self.run(down())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT_S)
        self.loop.close()
        self.store.close()
        self.broker.stop()


MID_GAME: dict[str, Any] = {
    "rev": 5,
    "target": 121,
    "players": 2,
    "dealer": 1,
    "winner": None,
    "result": "playing",
    "front": [4, 0],
    "back": [0, 0],
    "games": [0, 0],
    "pending": [0, 0],
    "undo": 2,
    "skunk_double": False,
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@st.composite
def deep(draw: st.DrawFn) -> bytes:
    depth = draw(st.integers(5, 100_000))  # under the broker's packet limit (it cuts off above)
    opening, closing = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
    return opening * depth + b"1" + closing * depth


@st.composite
def out_of_range_state(draw: st.DrawFn) -> bytes:
    """A board state with one field replaced by any JSON value (a win or a number far out of
    range, a list of the wrong length, a string)."""
    state = dict(MID_GAME)
    field = draw(st.sampled_from(sorted(state)))
    state[field] = draw(
        json_values | st.integers(-(10**12), 10**12) | st.lists(st.integers(-500, 500), max_size=5)
    )
    state["rev"] = draw(st.integers(0, 999_999)) if field != "rev" else state["rev"]
    return json.dumps(state).encode()


payloads = st.one_of(
    st.binary(max_size=600),
    deep(),
    st.integers(1025, 200_000).map(lambda n: b'{"rev":1,"x":"' + b"x" * n + b'"}'),
    json_values.map(lambda v: json.dumps(v).encode()),
    out_of_range_state(),
    st.builds(
        lambda i, ok: json.dumps({"id": i, "ok": ok}).encode(),
        st.text(max_size=20),
        json_values,
    ),
)
bursts = st.lists(
    st.tuples(st.sampled_from(t.TABLE_PUBLISHES), payloads, st.booleans()), min_size=1, max_size=6
)


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallThread]:
    running = HallThread(tmp_path_factory.mktemp("fuzz"))
    try:
        running.run(running.play_round())
        yield running
    finally:
        running.close()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(burst=bursts)
def test_hostile_messages_stop_nothing_and_change_no_result(
    hall: HallThread, burst: list[tuple[str, bytes, bool]]
) -> None:
    before = dict(hall.store.tournament.results)
    hall.run(hall.burst(burst))
    assert hall.director is not None and hall.director.connected.is_set()
    assert hall.task is not None and not hall.task.done()
    assert hall.store.tournament.results == before
    assert (1, ATTACKER) not in hall.store.tournament.results


def test_a_director_started_over_whatever_stayed_retained_keeps_the_results(
    hall: HallThread,
) -> None:
    async def retained_junk_then_restart() -> None:
        assert hall.attacker is not None
        for leaf in t.TABLE_PUBLISHES:
            for payload in (b"[" * 5000 + b"]" * 5000, b'{"winner":7}', b"\xff\xfe"):
                await hall.send(t.table_topic(HALL, ATTACKER, leaf), payload, retain=True)
        await hall.stop_director()
        await hall.start_director()
        await hall.burst([])

    results = dict(hall.store.tournament.results)
    hall.run(retained_junk_then_restart())
    assert hall.store.tournament.results == results and (1, 1) in results
