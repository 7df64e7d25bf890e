"""`make bench`, bridge part: what `cribboard serve` sustains (bench/run.py calls main()).

Runs the bridge on 127.0.0.1 in this process with the virtual board (the real firmware on
MicroPython's unix port) and two WebSocket subscribers (aiohttp clients, in this process too:
they share its CPU with the bridge). Prints figures only; nothing here asserts speed.

1. Changes per second delivered to both subscribers, from the board: HTTP clients set pegs as
   fast as the board answers (8 requests in flight); a state event carries each change, or
   several that reached the board together (docs/protocol.md, section 5).
2. Events per second of the bridge's fan-out alone: state messages published into the hub as
   fast as the loop allows, until both subscribers have them all.
3. Latency from an HTTP peg (request sent) to its `state` event reaching a subscriber, and the
   HTTP round trip itself, one peg at a time.

    .venv/bin/python bench/bridge_bench.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import aiohttp

from cribboard.bridge.server import Bridge
from cribboard.virtual import VirtualBoard

BOARD_EVENTS = 1000
IN_FLIGHT = 8
FANOUT_EVENTS = 20000
LATENCY_SAMPLES = 300
WARM_UP = 20
SWITCH_INTERVAL = 0.0002  # the virtual board's relay thread shares this process's GIL


class Subscriber:
    """A WebSocket subscriber that notes when each state revision arrived."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url
        self.arrived: dict[int, float] = {}
        self.count = 0
        self.rev = -1  # the newest state's revision
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        ws = await self.session.ws_connect(self.url + "api/ws")
        first = await ws.receive_json()
        assert first["type"] == "boards"
        self.task = asyncio.create_task(self._read(ws))

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for message in ws:
            data = message.json()
            if data["type"] == "state":
                now = time.perf_counter()
                self.arrived.setdefault(data["state"]["rev"], now)
                self.rev = max(self.rev, data["state"]["rev"])
                self.count += 1
                self.changed.set()

    async def wait_count(self, count: int) -> float:
        """Until `count` states have come; the time the last came."""
        return await self._wait(lambda: self.count >= count)

    async def wait_rev(self, rev: int) -> float:
        """Until a state of revision `rev` or later has come; the time it came."""
        return await self._wait(lambda: self.rev >= rev)

    async def _wait(self, done: Callable[[], bool], timeout: float = 60.0) -> float:
        async def reach() -> None:
            while not done():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(reach(), timeout)
        return time.perf_counter()

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def board_events(
    bridge: Bridge, session: aiohttp.ClientSession, subs: list[Subscriber]
) -> tuple[float, float, int]:
    """Changes/s reaching both subscribers, HTTP requests/s, state events that carried them."""
    url = bridge.url
    base = [s.count for s in subs]
    sent = 0
    top = 0  # the newest revision a reply gave

    async def worker() -> None:
        nonlocal sent, top
        while sent < BOARD_EVENTS:
            front = 2 + sent % 100  # always legal, whatever order the board applies them in
            body = {"player": sent % 2, "front": front, "back": front - 1}
            sent += 1
            async with session.post(url + "api/set", json=body) as response:
                assert response.status == 200, await response.text()
                top = max(top, (await response.json())["rev"])

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    http_done = time.perf_counter()
    ends = [await s.wait_rev(top) for s in subs]
    elapsed = max(ends) - started
    events = min(s.count - b for s, b in zip(subs, base))
    return BOARD_EVENTS / elapsed, BOARD_EVENTS / (http_done - started), events


async def fanout_events(bridge: Bridge, subs: list[Subscriber]) -> float:
    state: dict[str, Any] = {
        "rev": 0,
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
    base = [s.count for s in subs]
    started = time.perf_counter()
    for i in range(FANOUT_EVENTS):
        bridge.hub.publish(
            {"type": "state", "board": "bench", "state": {**state, "rev": 10**6 + i}}
        )
        if i % 200 == 199:
            await asyncio.sleep(0)  # let the writers and readers run
    ends = [await s.wait_count(b + FANOUT_EVENTS) for s, b in zip(subs, base)]
    return FANOUT_EVENTS / (max(ends) - started)


async def latency(
    bridge: Bridge, session: aiohttp.ClientSession, sub: Subscriber
) -> tuple[list[float], list[float]]:
    to_event: list[float] = []
    round_trip: list[float] = []
    for i in range(WARM_UP + LATENCY_SAMPLES):
        op, body = ("peg", {"player": 0, "points": 1}) if i % 2 == 0 else ("undo", None)
        sent = time.perf_counter()
        async with session.post(bridge.url + f"api/{op}", json=body) as response:
            reply = await response.json()
        replied = time.perf_counter()
        rev = reply["rev"]
        while rev not in sub.arrived:
            sub.changed.clear()
            await asyncio.wait_for(sub.changed.wait(), 5)
        if i >= WARM_UP:
            to_event.append(1000 * (sub.arrived[rev] - sent))
            round_trip.append(1000 * (replied - sent))
    return to_event, round_trip


async def run() -> None:
    with VirtualBoard() as board:
        async with Bridge([board.port], http_port=0) as bridge:
            await bridge.registry.wait_connected()
            connector = aiohttp.TCPConnector(limit=IN_FLIGHT * 2)
            async with aiohttp.ClientSession(connector=connector) as session:
                subs = [Subscriber(session, bridge.url), Subscriber(session, bridge.url)]
                for sub in subs:
                    await sub.start()
                from_board, http_rate, events = await board_events(bridge, session, subs)
                fanout = await fanout_events(bridge, subs)
                to_event, round_trip = await latency(bridge, session, subs[0])
                for sub in subs:
                    await sub.stop()

    print(
        "\nbridge benchmark (cribboard serve on 127.0.0.1, the virtual board, two WebSocket "
        "subscribers in this process)"
    )
    print(
        f"1. from the board: {from_board:,.0f} changes/s reach both subscribers "
        f"({BOARD_EVENTS} changes over HTTP, {IN_FLIGHT} in flight: "
        f"{http_rate:,.0f} requests/s; each is a board round trip plus a state read; "
        f"{events} state events carried them)"
    )
    print(
        f"2. fan-out alone:  {fanout:,.0f} events/s to both subscribers "
        f"({FANOUT_EVENTS} state messages published into the hub)"
    )
    print(
        f"3. HTTP peg -> its state event at a subscriber, {LATENCY_SAMPLES} one at a time: "
        f"median {statistics.median(to_event):.2f} ms, p90 {pct(to_event, 0.9):.2f} ms, "
        f"p99 {pct(to_event, 0.99):.2f} ms, worst {max(to_event):.2f} ms"
    )
    print(
        f"   (the HTTP round trip itself: median {statistics.median(round_trip):.2f} ms, "
        f"p99 {pct(round_trip, 0.99):.2f} ms)"
    )


def main() -> None:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        asyncio.run(run())
    finally:
        sys.setswitchinterval(previous)


if __name__ == "__main__":
    main()
