"""`make bench`, club hall part: 200 simulated tables, one private mosquitto, the director and its
projector page (bench/run.py calls main()). Prints figures only; nothing here asserts speed.

Three processes share the machine's cores: mosquitto; this one (the director, the page's server
and a WebSocket client reading the page's feed, like a browser would); and a second Python
process running the 200 simulated tables (cribdev.simtable: GameState plays the pegs;
each peg publishes the board's state to `state` and `event`, as a board's table client does).

1. Latency from a table's peg (just before it publishes) to the page's WebSocket message for it,
   p50 / p99, with pegs spread over all 200 tables at a steady rate. Clocks: both processes read
   the system's monotonic clock.
2. Messages per second the hall sustains: every table pegs as fast as it can; counted from the
   first peg to the director having taken the last state (each peg is two messages in, `state`
   and `event`).
3. Recovery after a broker restart (stopped cleanly, started on the same port): until the
   director is connected again, and until every table is back (its `online` 1 seen again).
4. Bytes per state message: the JSON payload, and the whole MQTT PUBLISH packet.
5. One table flooding (issue 36): table 1 changes its board as fast as its client publishes (a
   count being entered, again and again: every change a new revision, state and event); the
   states per second the director judges and keeps, and how long another table's peg takes to
   reach the page meanwhile. Then the same with 300 WebSockets open on the page that never read
   (from ten addresses: the page takes 32 from one).

    .venv/bin/python bench/hall_bench.py
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from cribboard.api import BoardState
from cribboard.hall.broker import Broker, MosquittoNotFound, find_executable
from cribboard.hall.director import Director
from cribboard.hall.page import Page
from cribboard.hall.store import Store
from cribboard.hallwire import messages
from cribboard.hallwire import topics as t
from cribboard.mqtt.address import BrokerAddress
from cribdev.simtable import SimTable, board_state

TABLES = 200
HALL = "club"
LATENCY_PEGS = 1000
LATENCY_RATE = 200  # pegs a second, spread over the tables
BURST_PEGS = 10  # per table
FLOOD = 6000  # changes of the flooding table
SLOW_WEBSOCKETS = 300
WAIT_S = 120.0


# --- the tables' process -------------------------------------------------------------------------


async def run_tables(port: int, credentials: dict[str, str], ca: Path) -> None:
    """The 200 tables, driven by lines on stdin; answers on stdout (over TLS, verified against
    the hall's CA `ca`)."""
    tables = [
        SimTable(
            BrokerAddress.parse(
                f"mqtts://127.0.0.1:{port}", None, credentials[t.table_user(n)], str(ca)
            ),
            HALL,
            n,
            seed=n,
        )
        for n in range(1, TABLES + 1)
    ]
    await asyncio.gather(*(table.start() for table in tables))
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    rng = random.Random(1)
    flooding: set[asyncio.Task[None]] = set()
    while words := (await reader.readline()).decode().split():
        if words[0] == "latency":
            count, rate = int(words[1]), float(words[2])
            start = time.monotonic()
            for i in range(count):
                await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
                table = tables[i % TABLES]
                sent = time.monotonic()
                state = await table.peg(rng.randrange(2), rng.randint(1, 3))
                print(f"sent {table.table} {state.rev} {sent}", flush=True)
            print("done", flush=True)
        elif words[0] == "burst":

            async def burst(table: SimTable, pegs: int = int(words[1])) -> None:
                for _ in range(pegs):
                    await table.peg(rng.randrange(2), 1)

            start = time.monotonic()
            await asyncio.gather(*(burst(table) for table in tables))
            print(f"burst {start} {time.monotonic()}", flush=True)
        elif words[0] == "flood":  # in the background: a peg elsewhere meanwhile
            if tables[0].online.is_set():
                await tables[0].stop()  # its credentials flood instead (one client id a user)
            flooding.add(asyncio.create_task(flood_table(tables[0], int(words[1]))))
        elif words[0] == "peg":
            table = tables[int(words[1]) - 1]
            sent = time.monotonic()
            state = await table.peg(1, 1)
            print(f"pegged {table.table} {state.rev} {sent}", flush=True)
        elif words[0] == "quit":
            break
    await asyncio.gather(*(table.stop() for table in tables))


async def flood_table(table: SimTable, changes: int) -> None:
    """Table 1's board changing as fast as a client can publish: a count being entered, again
    and again (each a new revision), to `state` and `event`, many QoS 1 publications in flight
    at once; then `flooded LAST_REV START END`."""
    game = table.game
    async with table.client.address.client(t.table_user(1)) as client:
        start = time.monotonic()
        for first in range(0, changes, 20):
            sends = []
            for n in range(first, min(changes, first + 20)):
                game.set_pending(0, 1 + n % 29)
                payload = messages.encode_state(board_state(game))
                sends.append(
                    client.publish(
                        table.client.topic(t.STATE), payload, retain=True, timeout=WAIT_S
                    )
                )
                sends.append(
                    client.publish(table.client.topic(t.EVENT), payload, qos=1, timeout=WAIT_S)
                )
            await asyncio.gather(*sends)
        print(f"flooded {game.rev} {start} {time.monotonic()}", flush=True)


# --- the director's side -------------------------------------------------------------------------


class Feed:
    """The page's WebSocket, read as a browser would: when each table's state arrived."""

    def __init__(self) -> None:
        self.arrived: dict[tuple[int, int], float] = {}
        self.changed = asyncio.Event()
        self.connected = asyncio.Event()

    async def read(self, url: str) -> None:
        async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
            async for message in ws:
                data = json.loads(message.data)
                self.connected.set()  # the snapshot's first message
                if data["type"] == "table" and data["state"] is not None:
                    self.arrived[(data["table"], data["state"]["rev"])] = time.monotonic()
                    self.changed.set()


async def expect(process: Any, word: str) -> list[str]:
    async with asyncio.timeout(WAIT_S):
        while True:
            line = (await process.stdout.readline()).decode()
            if not line:
                raise RuntimeError("the tables' process stopped")
            if line.startswith(word):
                return line.split()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def run(work: Path) -> None:
    broker = Broker.create(work / "broker", HALL, tables=TABLES, viewer=True)
    broker.start()
    store = Store.open(work / "hall.sqlite")
    password = broker.credentials(t.DIRECTOR_USER).password
    director = Director(
        store,
        BrokerAddress.parse(broker.url, t.DIRECTOR_USER, password, str(broker.ca_file)),
        HALL,
        max_tables=TABLES,
        ack_timeout=WAIT_S,
    )
    running = asyncio.create_task(director.run())
    tables = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--tables",
        str(broker.port),
        str(broker.state_dir / "credentials.json"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert tables.stdin is not None
    try:
        await asyncio.wait_for(director.connected.wait(), WAIT_S)
        await expect(tables, "ready")
        director.register(f"P{n:03}" for n in range(1, 2 * TABLES + 1))
        report = await director.next_round()
        started = sum(1 for a in report.answers.values() if a is not None and a.ok)
        async with Page(director.view, port=0) as page:
            feed = Feed()
            reading = asyncio.create_task(feed.read(f"{page.url}api/ws"))
            await asyncio.wait_for(feed.connected.wait(), WAIT_S)

            # 1. Peg to page.
            tables.stdin.write(f"latency {LATENCY_PEGS} {LATENCY_RATE}\n".encode())
            sent: dict[tuple[int, int], float] = {}
            while True:
                words = await expect(tables, "")
                if words[0] == "done":
                    break
                sent[(int(words[1]), int(words[2]))] = float(words[3])
            async with asyncio.timeout(WAIT_S):
                while not all(key in feed.arrived for key in sent):
                    feed.changed.clear()
                    await feed.changed.wait()
            latencies = [1000 * (feed.arrived[key] - at) for key, at in sent.items()]

            # 2. Throughput.
            before = director.view.updates
            tables.stdin.write(f"burst {BURST_PEGS}\n".encode())
            words = await expect(tables, "burst")
            burst_start, burst_sent = float(words[1]), float(words[2])
            want = 2 * TABLES * BURST_PEGS  # state + event per peg
            await director.wait_until(lambda: director.view.updates - before >= want, WAIT_S)
            burst_done = time.monotonic()

            # 3. Broker restart: a viewer with a persistent session counts the tables' live
            # `online` 1 (queued for it while it reconnects), not the retained ones.
            viewer_address = BrokerAddress.parse(
                broker.url,
                t.VIEWER_USER,
                broker.credentials(t.VIEWER_USER).password,
                str(broker.ca_file),
            )
            online = t.table_topic(HALL, "+", t.ONLINE)
            async with viewer_address.client("bench-viewer", clean_session=False) as viewer:
                await viewer.subscribe(online, qos=1)
            restart_began = time.monotonic()
            await asyncio.to_thread(broker.stop)
            stopped = time.monotonic()
            await asyncio.to_thread(broker.start)
            up = time.monotonic()
            await director.wait_until(director.connected.is_set, WAIT_S)
            reconnected = time.monotonic()
            back: set[str] = set()
            async with viewer_address.client("bench-viewer", clean_session=False) as viewer:
                await viewer.subscribe(online, qos=1)
                async with asyncio.timeout(WAIT_S):
                    async for message in viewer.messages:
                        if not message.retain and message.payload == messages.ONLINE:
                            back.add(str(message.topic))
                            if len(back) == TABLES:
                                break
            all_back = time.monotonic()

            # 5. One table flooding, then with 300 WebSockets that never read.
            floods = []
            for slow_sockets in (0, SLOW_WEBSOCKETS):
                slow = [
                    await asyncio.to_thread(
                        never_reading, page.bound_port, f"127.0.0.{2 + n // 30}"
                    )
                    for n in range(slow_sockets)
                ]
                floods.append(await flood(director, tables, feed, slow_sockets))
                for sock in slow:
                    sock.close()
            reading.cancel()

        # 4. Bytes.
        typical = messages.encode_state(
            BoardState(
                118, 121, 2, 1, None, "playing", [97, 104], [88, 96], [0, 0], [0, 0], 24, False
            )
        )
        topic = t.table_topic(HALL, 123, t.STATE)
        largest = messages.encode_state(
            BoardState(
                99999,
                121,
                2,
                1,
                1,
                "double_skunk",
                [120, 121],
                [119, 120],
                [99, 99],
                [29, 29],
                64,
                True,
            )
        )

        def packet(payload: bytes, qos: int) -> int:
            body = 2 + len(topic.encode()) + (2 if qos else 0) + len(payload)
            length_bytes = 1 if body < 128 else 2
            return 1 + length_bytes + body

        elapsed = burst_done - burst_start
        print("cribboard club hall benchmark")
        print(
            f"   {TABLES} simulated tables (one process), one private mosquitto, the director and"
            f" its page (this process); {started} tables acknowledged round 1's new game"
        )
        print(
            f"\n1. Peg to the page's WebSocket ({len(latencies)} pegs at {LATENCY_RATE}/s over "
            f"{TABLES} tables): p50 {pct(latencies, 50):.2f} ms, p99 {pct(latencies, 99):.2f} ms,"
            f" worst {max(latencies):.2f} ms (mean {statistics.mean(latencies):.2f} ms)"
        )
        print(
            f"\n2. Sustained: {TABLES} tables x {BURST_PEGS} pegs as fast as they go: "
            f"{want} messages (state + event) taken by the director in {elapsed:.2f} s = "
            f"{want / elapsed:.0f} messages/s ({TABLES * BURST_PEGS / elapsed:.0f} pegs/s; the "
            f"tables' process sent its last after {burst_sent - burst_start:.2f} s)"
        )
        print(
            f"\n3. Broker restart (clean stop {1000 * (stopped - restart_began):.0f} ms, start "
            f"{1000 * (up - stopped):.0f} ms): director reconnected "
            f"{1000 * (reconnected - up):.0f} ms after the broker was up; all {TABLES} tables "
            f"back (online again) after {1000 * (all_back - up):.0f} ms (they retry every 0.5 s)"
        )
        print(
            f"\n4. A state message: {len(typical)} bytes of JSON mid-game, {len(largest)} at most "
            f"(two players); the MQTT PUBLISH on `{topic}`: {packet(typical, 0)} bytes "
            f"(state, QoS 0), {packet(typical, 1)} (event, QoS 1)"
        )
        print(f"\n5. One table flooding ({FLOOD} changes as fast as its client publishes them):")
        for slow_sockets, (rate, sent_rate, peg_ms) in zip(
            (0, SLOW_WEBSOCKETS), floods, strict=True
        ):
            with_what = (
                f"with {slow_sockets} page WebSockets that never read"
                if slow_sockets
                else "the page's one reader"
            )
            print(
                f"   {with_what}: the director judged and kept {rate:.0f} states/s (the table "
                f"sent {sent_rate:.0f}/s); another table's peg on the page after "
                f"{peg_ms:.0f} ms"
            )
    finally:
        if tables.returncode is None:
            tables.stdin.write(b"quit\n")
            try:
                await asyncio.wait_for(tables.wait(), 20)
            except TimeoutError:
                tables.kill()
        running.cancel()
        try:
            await running
        except asyncio.CancelledError:
            pass
        store.close()
        broker.stop()


def never_reading(port: int, host: str) -> socket.socket:
    """A page WebSocket that reads its handshake's answer, then never again."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((host, 0))
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        f"GET /api/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    return sock


async def flood(
    director: Director, tables: Any, feed: Feed, slow_sockets: int
) -> tuple[float, float, float]:
    """Table 1 floods; returns the director's states/s, the table's, and how long a peg at
    table 2 took to reach the page meanwhile (ms)."""
    start_rev = director.latest[1].rev if 1 in director.latest else 0
    tables.stdin.write(f"flood {FLOOD}\n".encode())
    await asyncio.sleep(0.5)  # well into the flood
    tables.stdin.write(b"peg 2\n")
    words = await expect(tables, "pegged")
    key, sent = (int(words[1]), int(words[2])), float(words[3])
    async with asyncio.timeout(WAIT_S):
        while key not in feed.arrived:
            feed.changed.clear()
            await feed.changed.wait()
    peg_ms = 1000 * (feed.arrived[key] - sent)
    words = await expect(tables, "flooded")
    last_rev, began, ended = int(words[1]), float(words[2]), float(words[3])
    await director.wait_until(
        lambda: director.latest[1].rev >= last_rev,
        WAIT_S,  # every one of them judged
    )
    taken = time.monotonic() - began
    changes = last_rev - start_rev
    return changes / taken, changes / (ended - began), peg_ms


def main() -> None:
    try:
        find_executable("mosquitto")
    except MosquittoNotFound as err:
        print(f"club hall benchmark skipped: {err}")
        return
    with tempfile.TemporaryDirectory(prefix="cribboard-hall-bench-") as work:
        asyncio.run(run(Path(work)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--tables"]:
        credentials = json.loads(Path(sys.argv[3]).read_text())
        ca = Path(sys.argv[3]).parent / "ca.pem"  # the hall's CA, beside its credentials
        asyncio.run(run_tables(int(sys.argv[2]), credentials, ca))
    else:
        main()
