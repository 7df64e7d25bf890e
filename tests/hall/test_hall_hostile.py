"""The club night on a hostile network (issue 36), against the real mosquitto: a forged result
never counts (it is held, also after a restart, and a counted one the real board contradicts is
held again); a stranger without a password cannot stop the hall, its page or its broker (idle
connections under a low descriptor limit, a 200 MiB CONNECT, slow requests, WebSockets that
never read); a table's flood of bad messages says a few lines; the adoption probe keeps the
director's queued messages; a copied hall directory stops with one line; names cannot pose as
others; an expired CA says what to run."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from test_hall_robust import publish_as, state, won

import rawmqtt
from cribboard.hall.broker import Broker
from cribboard.hall.director import Director
from cribboard.hall.door import DoorLimits
from cribboard.hall.page import Page
from cribboard.hall.store import Store
from cribboard.hall.view import HallView
from cribboard.hallwire import messages
from cribboard.hallwire import topics as t
from cribboard.tournament import TournamentError
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

CLI = [sys.executable, "-m", "cribboard.cli"]
NAMES = ["Ann", "Bob", "Cid", "Dee"]


async def started_at_five(director: Director, broker: Broker) -> SimTable:
    """Round 1 at table 1, its board at 5-0; the table stays connected (the real board)."""
    director.register(NAMES[:2])
    table = SimTable(address(broker, "table-1"), HALL, 1, seed=1)
    await table.start()
    report = await director.next_round()
    assert report.answers[1] is not None and report.answers[1].ok
    await table.peg(0, 5)
    await director.wait_until(
        lambda: director.latest.get(1) is not None and director.latest[1].front == [5, 0], WAIT_S
    )
    return table


# --- forged results ------------------------------------------------------------------------------


async def test_a_win_through_a_revision_gap_is_held_also_after_a_restart(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                table = await started_at_five(director, broker)
                real_rev = table.state.rev
                # The table's password (on the board) publishes a win at revision 70, 121-95:
                # plausible by points, but the director saw revision real_rev last.
                await publish_as(broker, 1, t.EVENT, won(70, 0, 95))
                await director.wait_until(lambda: (1, 1) in store.held(), WAIT_S)
                assert (1, 1) not in store.tournament.results
                reason = store.held()[(1, 1)].reason
                assert f"never received the revisions between {real_rev} (5-0) and 70" in reason
            # A plain stop and start: the doubt is in the store, the game stays held. The real
            # board plays on to a win of its own: held too, never counted until decided.
            async with running_director(store, broker, rounds=1) as director:
                await table.finish(1, 100)
                await director.wait_until(lambda: store.held()[(1, 1)].winner_seat == 1, WAIT_S)
                assert (1, 1) not in store.tournament.results
                assert "never received" in store.held()[(1, 1)].reason
                director.accept_held(1, 1, who="director", why="the board was right")
                assert store.tournament.results[(1, 1)].loser_score == 100
            await table.stop()


async def test_a_forged_win_counted_is_held_again_when_the_real_board_contradicts_it(
    tmp_path: Path,
) -> None:
    said: list[str] = []
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                director.say = said.append
                table = await started_at_five(director, broker)
                rev = table.state.rev
                # The real board is knocked off (its client id taken), and the table's password
                # publishes revision after revision, each a plausible peg: it counts at once.
                await table.stop()
                async with address(broker, "table-1").client("forger") as forger:
                    for blue, orange in ((34, 0), (63, 0), (92, 0), (92, 29), (92, 58),
                                         (92, 87), (92, 95)):  # fmt: skip
                        rev += 1
                        forged = json.dumps(state(rev=rev, front=[blue, orange])).encode()
                        await forger.publish(t.table_topic(HALL, 1, t.EVENT), forged, qos=1)
                    await forger.publish(
                        t.table_topic(HALL, 1, t.EVENT), won(rev + 1, 0, 95), qos=1
                    )
                await director.wait_until(lambda: (1, 1) in store.tournament.results, WAIT_S)
                # The real board comes back, its game where it was, and pegs on.
                await table.start()
                await table.peg(1, 3)
                await director.wait_until(lambda: (1, 1) in store.held(), WAIT_S)
                assert (1, 1) not in store.tournament.results
                held = store.held()[(1, 1)]
                assert (held.winner_seat, held.loser_score) == (0, 95)
                told = [line for line in said if "held again" in line]
                assert len(told) == 1 and "121-95" in told[0], said
                (audit,) = store.tournament.corrections
                assert audit.old is not None and audit.new is None
            await table.stop()


async def test_a_flood_of_bad_messages_says_a_few_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="cribboard.hall.director")
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker, rounds=1) as director:
                async with address(broker, "table-1").client("flood") as flood:
                    for n in range(2000):
                        await flood.publish(t.table_topic(HALL, 1, t.EVENT), b"{%d" % n, qos=1)
                await director.wait_until(lambda: director.refused >= 2000, WAIT_S)
                lines = [r for r in caplog.records if r.name == "cribboard.hall.director"]
                assert 1 <= len(lines) <= 5, len(lines)
                async with sim_tables(broker, 1) as tables:  # the director still follows
                    await tables[0].peg(0, 4)
                    await director.wait_until(
                        lambda: (
                            director.view.tables[1].state is not None
                            and director.view.tables[1].state.front == [4, 0]
                        ),
                        WAIT_S,
                    )


# --- the director's session, a copied hall -------------------------------------------------------


async def test_the_adoption_probe_keeps_what_the_broker_queued_for_the_director(
    tmp_path: Path,
) -> None:
    from cribboard.hall.supervisor import lets_director_in

    with running_broker(tmp_path / "broker", tables=1) as broker:
        director = address(broker, t.DIRECTOR_USER)
        ack_topic = t.table_topic(HALL, 1, t.ACK)
        async with director.client(t.DIRECTOR_USER, clean_session=False) as client:
            await client.subscribe(ack_topic, qos=1)
        # The director is down; a table acknowledges meanwhile: queued for the director.
        ack = messages.encode_ack(messages.Ack("r1t1-abcdefghij", True))
        await publish_as(broker, 1, t.ACK, ack)
        assert await lets_director_in(director)  # `hall start` asks whether the broker is its own
        async with director.client(t.DIRECTOR_USER, clean_session=False) as client:
            await client.subscribe(ack_topic, qos=1)
            async with asyncio.timeout(WAIT_S):
                async for message in client.messages:
                    assert bytes(message.payload) == ack
                    break


async def read_line(process: asyncio.subprocess.Process, start: str) -> str:
    assert process.stdout is not None
    async with asyncio.timeout(WAIT_S):
        while True:
            line = (await process.stdout.readline()).decode()
            assert line, f"the hall stopped before saying {start!r}"
            if line.startswith(start):
                return line


@contextlib.asynccontextmanager
async def hall_start(
    hall_dir: Path, *words: str, nofile: int | None = None
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`cribboard hall start` on loopback (its descriptors capped at `nofile`, soft and hard),
    once its director is connected; stopped afterwards."""

    def capped() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    process = await asyncio.create_subprocess_exec(
        *CLI, "hall", "start", "--dir", str(hall_dir), "--mqtt-host", "127.0.0.1", "--tables", "1",
        *words, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=capped,
    )  # fmt: skip
    try:
        await read_line(process, "director: connected")
        yield process
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(WAIT_S):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()


async def test_a_copy_of_a_running_hall_stops_with_one_line(tmp_path: Path) -> None:
    need_mosquitto()
    original = tmp_path / "hall"
    async with hall_start(original, "--no-page"):
        copy = tmp_path / "restored"
        shutil.copytree(original, copy, ignore=shutil.ignore_patterns("*.sock"))
        second = await asyncio.create_subprocess_exec(
            *CLI, "hall", "start", "--dir", str(copy), "--mqtt-host", "127.0.0.1", "--no-page",
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        async with asyncio.timeout(WAIT_S):
            out, err = await second.communicate()
        lines = err.decode().strip().splitlines()
        assert second.returncode == 1, (out, err)
        assert len(lines) == 1 and f"a copy of the hall in {original}" in lines[0], lines
        assert b"director: connected" not in out


# --- names -------------------------------------------------------------------------------------


def test_names_that_pose_as_others_are_refused_and_old_ones_shown_inert(tmp_path: Path) -> None:
    from cribboard.hall.reports import format_standings

    with Store.open(tmp_path / "hall.sqlite") as store:
        for bad in ("Ann\u202enuJ", "\x1b[31mBob", "Cid\u2066x", "Dee\u0007"):
            with pytest.raises(TournamentError, match="may not hold U\\+"):
                store.register(bad)
        store.register("Zoë")
        store.register("Jo\u200dy")  # a zero-width joiner: scripts and emoji need it
    # A name kept from before the rule (written straight into the file).
    import sqlite3

    db = sqlite3.connect(tmp_path / "hall.sqlite")
    with db:
        db.execute(
            "INSERT INTO players (id, name, registered_at) VALUES (3, ?, 'then')",
            ("=Ann\u202e\x1b[2J",),
        )
    db.close()
    with Store.open(tmp_path / "hall.sqlite") as store:
        shown = format_standings(store.standings())
        assert "\u202e" not in shown and "\x1b" not in shown and "\\u202e\\u001b[2J" in shown
        store.next_round()
        payload = messages.encode_round(store.tournament, store.tournament.rounds[0])
        assert b"\\\\u202e" in payload and "\u202e".encode() not in payload
        standings = messages.encode_standings(1, store.standings())
        assert "\u202e".encode() not in standings
        import io

        out = io.StringIO()
        store.export_standings_csv(out)
        assert "\u202e" not in out.getvalue() and "\x1b" not in out.getvalue()
        assert "'=Ann" in out.getvalue()  # not a formula


# --- the CA ------------------------------------------------------------------------------------


def test_an_expired_ca_says_what_to_run(tmp_path: Path) -> None:
    import datetime

    from cribboard.hall.certs import make_ca, write_private

    need_mosquitto()
    hall_dir = tmp_path / "hall"
    broker = Broker.create(hall_dir / "broker", HALL, tables=1, host="127.0.0.1", viewer=True)
    cert, key = make_ca("cribboard hall club CA", days=-1)  # expired yesterday
    write_private(broker.state_dir / "ca.pem", cert)
    write_private(broker.state_dir / "ca.key", key)
    start = [*CLI, "hall", "start", "--dir", str(hall_dir), "--mqtt-host", "127.0.0.1", "--no-page"]
    refused = subprocess.run(start, capture_output=True, text=True, timeout=60)
    (line,) = refused.stderr.strip().splitlines()
    assert refused.returncode == 1 and "expired on" in line
    assert "cribboard hall start --renew-ca" in line, line
    renewed = subprocess.Popen(
        [*start, "--renew-ca"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert renewed.stdout is not None
        said = []
        while not (said and said[-1].startswith("director: connected")):
            line = renewed.stdout.readline()
            assert line, said
            said.append(line)
        assert any("a new CA" in line for line in said), said
    finally:
        renewed.terminate()
        renewed.wait(WAIT_S)
    expires = broker.certificates.ca_expires
    assert expires > datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=3000)


# --- the broker: strangers without a password ---------------------------------------------------


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_huge_packet_before_login_or_from_a_table_costs_the_broker_nothing(
    tmp_path: Path,
) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        assert broker.pid is not None
        before = rss_kib(broker.pid)
        stream = 16 * 1024 * 1024
        for _ in range(4):
            # TLS needs no password: a CONNECT announcing 200 MiB, then streamed.
            with rawmqtt.open_socket(broker.port, broker.ca_file) as sock:
                sock.sendall(b"\x10" + rawmqtt.remaining_length(200 * 1024 * 1024))
                assert rawmqtt.stream_until_cut(sock, stream) < stream
        # A table's own login, then a 100 MiB PUBLISH.
        password = broker.credentials("table-1").password
        with rawmqtt.open_socket(broker.port, broker.ca_file) as sock:
            sock.sendall(rawmqtt.connect_packet("table-1", "table-1", password))
            assert rawmqtt.read_connack(sock) == 0
            topic = t.table_topic(HALL, 1, t.STATE)
            sock.sendall(rawmqtt.publish_header(topic, 100 * 1024 * 1024))
            assert rawmqtt.stream_until_cut(sock, stream) < stream
        assert rss_kib(broker.pid) - before < 8 * 1024


async def test_a_client_away_holds_no_more_than_its_queue(tmp_path: Path) -> None:
    need_mosquitto()
    broker = Broker.create(tmp_path / "broker", HALL, tables=1, queued_messages=50)
    with broker:
        director = address(broker, t.DIRECTOR_USER)
        events = t.table_topic(HALL, 1, t.EVENT)
        async with director.client(t.DIRECTOR_USER, clean_session=False) as client:
            await client.subscribe(events, qos=1)
        async with address(broker, "table-1").client("table-1") as table:
            for rev in range(1, 201):  # the director away: queued for it, up to the limit
                await table.publish(events, json.dumps(state(rev=rev)).encode(), qos=1)
            await table.publish(t.table_topic(HALL, 1, t.ONLINE), b"1", qos=1, retain=True)
        received = 0
        async with director.client(t.DIRECTOR_USER, clean_session=False) as client:
            await client.subscribe(t.table_topic(HALL, 1, t.ONLINE), qos=1)  # retained: after
            async with asyncio.timeout(WAIT_S):
                async for message in client.messages:
                    if str(message.topic) == events:
                        received += 1
                    elif message.retain:
                        break
        assert 0 < received <= 50 + 20  # the queue, and those in flight (max_inflight_messages)


BROKER_CHILD = textwrap.dedent(
    """
    import resource, sys, time
    from pathlib import Path
    from cribboard.hall.broker import Broker
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # the common soft limit
    broker = Broker.create(Path(sys.argv[1]), "club", tables=1, host="127.0.0.1")
    broker.start()
    print(broker.port, flush=True)
    sys.stdin.read()
    broker.stop()
    """
)


def test_a_thousand_idle_connections_lock_no_table_out_of_the_broker(tmp_path: Path) -> None:
    need_mosquitto()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 4096:
        pytest.skip(f"the hard limit on open files here is {hard}: too low to show it")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 4096), hard))
    child = subprocess.Popen(
        [sys.executable, "-c", BROKER_CHILD, str(tmp_path / "broker")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    idle: list[socket.socket] = []
    try:
        assert child.stdout is not None and child.stdin is not None
        port = int(child.stdout.readline())
        broker = Broker.open(tmp_path / "broker")
        for _ in range(1100):  # no password, no byte sent: each holds a descriptor
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=WAIT_S))
        password = broker.credentials("table-1").password
        with rawmqtt.open_socket(port, broker.ca_file, timeout=WAIT_S) as sock:
            sock.sendall(rawmqtt.connect_packet("table-1", "table-1", password))
            assert rawmqtt.read_connack(sock) == 0  # a table still gets in
    finally:
        for sock in idle:
            sock.close()
        if child.stdin is not None:
            child.stdin.close()
        child.wait(WAIT_S)


# --- the page: strangers without a password -----------------------------------------------------


def connect_from(host: str, port: int) -> socket.socket:
    """A TCP connection to the page on 127.0.0.1 from the loopback address `host`."""
    sock = socket.socket()
    sock.bind((host, 0))
    sock.settimeout(WAIT_S)
    sock.connect(("127.0.0.1", port))
    return sock


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def get_from(host: str, url: str) -> int:
    connector = aiohttp.TCPConnector(local_addr=(host, 0))
    async with (
        aiohttp.ClientSession(connector=connector) as http,
        http.get(url, timeout=aiohttp.ClientTimeout(total=WAIT_S)) as response,
    ):
        return response.status


async def test_idle_connections_under_a_low_descriptor_limit_stop_neither_page_nor_director(
    tmp_path: Path,
) -> None:
    need_mosquitto()
    hall_dir = tmp_path / "hall"
    port = free_port()
    idle: list[socket.socket] = []
    words = ["--http-host", "127.0.0.1", "--http-port", str(port)]
    async with hall_start(hall_dir, *words, nofile=512) as hall:
        try:
            for _ in range(700):  # more than the hall's whole descriptor limit
                with contextlib.suppress(OSError):
                    idle.append(connect_from("127.0.0.1", port))
            # The page still answers another address at once; the director its organiser.
            assert await get_from("127.0.0.2", f"http://127.0.0.1:{port}/api/hall") == 200
            held = await asyncio.create_subprocess_exec(
                *CLI, "hall", "held", "--dir", str(hall_dir), stdout=subprocess.PIPE
            )
            async with asyncio.timeout(WAIT_S):
                out, _ = await held.communicate()
            assert held.returncode == 0 and b"no result is held" in out
            # The broker dies meanwhile: started again, the hall goes on.
            pid = int((hall_dir / "broker" / "mosquitto.pid").read_text())
            os.kill(pid, signal.SIGKILL)
            await read_line(hall, "broker: restarted")
            assert hall.returncode is None
        finally:
            for sock in idle:
                sock.close()
    assert hall.stderr is not None
    lines = (await hall.stderr.read()).decode().splitlines()
    assert len(lines) < 40, lines[:20]


async def test_slow_requests_are_cut_and_one_address_cannot_fill_the_page() -> None:
    limits = DoorLimits(max_connections=12, per_address=3, header_timeout_s=0.5)
    async with Page(HallView(HALL), port=0, limits=limits) as page:
        assert page.door is not None
        # Headers a byte at a time (slow loris): cut once its time is up.
        slow = connect_from("127.0.0.1", page.bound_port)
        slow.sendall(b"GET /api/hall HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        with contextlib.suppress(ConnectionResetError):
            assert await asyncio.to_thread(slow.recv, 1) == b""
        slow.close()
        # Three idle connections from one address: a fourth from it is turned away at once,
        # another address still gets in.
        held = [connect_from("127.0.0.1", page.bound_port) for _ in range(3)]
        turned = connect_from("127.0.0.1", page.bound_port)
        answer = await asyncio.to_thread(turned.recv, 100)
        assert answer.startswith(b"HTTP/1.1 503")
        url = f"http://127.0.0.1:{page.bound_port}/api/hall"
        assert await get_from("127.0.0.2", url) == 200
        for sock in [*held, turned]:
            sock.close()
        assert page.door.cut >= 1 and page.door.refused >= 1


def websocket_request(port: int) -> bytes:
    return (
        f"GET /api/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


def never_reading_websocket(port: int, host: str) -> socket.socket:
    """A WebSocket that reads its handshake's answer, then nothing ever again (a small
    receive buffer: it fills at once)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((host, 0))
    sock.settimeout(WAIT_S)
    sock.connect(("127.0.0.1", port))
    sock.sendall(websocket_request(port))
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


async def test_websockets_that_never_read_are_closed_and_hold_nobody_back() -> None:
    view = HallView(HALL)
    view.fanout.send_timeout_s = 1.0
    async with Page(view, port=0) as page:
        slow = [
            await asyncio.to_thread(
                never_reading_websocket, page.bound_port, f"127.0.0.{2 + n // 16}"
            )
            for n in range(40)
        ]
        url = f"http://127.0.0.1:{page.bound_port}/api/ws"
        async with aiohttp.ClientSession() as http, http.ws_connect(url) as reader:
            # A flood of changes: the slow sockets' buffers fill; the reading page goes on.
            rev = 0
            seen = 0
            async with asyncio.timeout(WAIT_S):
                while view.fanout.closed_slow < len(slow):
                    rev += 1
                    for table in range(1, 41):
                        state_ = messages.decode_state(json.dumps(state(rev=rev)).encode())
                        view.set_state(table, state_)
                    message = await reader.receive()
                    assert message.type == aiohttp.WSMsgType.TEXT
                    seen += 1
            # The last change reaches the reader.
            view.set_state(
                1, messages.decode_state(json.dumps(state(rev=rev + 1, front=[7, 0])).encode())
            )
            async with asyncio.timeout(WAIT_S):
                while True:
                    data = json.loads((await reader.receive()).data)
                    if data.get("table") == 1 and data["state"]["front"] == [7, 0]:
                        break
        for sock in slow:
            sock.close()
    assert seen > 0
