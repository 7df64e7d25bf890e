"""`make bench`, a Wi-Fi board's own table client (firmware/cribfw/hall.py, umqtt.simple): what it
costs the board and what it sends (bench/run.py calls main()). Prints figures only; nothing here
asserts speed.

1. Bytes per message: the state payload over played games (two and three players), the event
   (the same bytes), the ack and online; and each as an MQTT PUBLISH packet on a table's topic.
2. Heap on MicroPython's unix port at 128wK (the virtual board's heap), the firmware as deployed
   (.mpy): free heap with the app built as main() builds it, without and with the table client
   connected to a private mosquitto and its state published; what each module costs once
   imported, the client itself, and the bytes allocated to publish one change (state + event).
   The hall's broker speaks TLS (the board verifies it against the hall's CA): on the unix port
   mbedTLS allocates from the C heap, not MicroPython's, so these figures leave the TLS session
   out; section 5 measures it where it counts.
3. The same on the emulated Pico (the cribboard RPI_PICO image, firmware frozen in flash): that
   image has no network, so `socket` is a stand-in and the figure is the client's modules and
   buffers without a connection.
4. The board while the broker is up, silent (accepts and never answers) and refusing: the
   protocol's ping round trip over the pty and the longest gap between LED frames (a blinking
   preview animates them), 8 s each.
5. TLS on the emulated Pico W (the cribboard RPI_PICO_W image: MicroPython's `tls`, mbedTLS,
   which allocates on MicroPython's heap there): the heap an SSLContext holding the hall's CA
   costs (what cribfw/halltls.py keeps while the board runs), and what wrapping a connection
   adds (mbedTLS's 16 KiB in and 4 KiB out buffers, its session). The emulator has no Wi-Fi, so
   the handshake runs against a TLS server in the same interpreter over in-memory streams: the
   client's CPU time in it (emulated, 125 MHz) and the heap both ends hold between steps. The
   board's clock is the emulator's (2021-01-01, never set): the certificates must be valid then.

    .venv/bin/python bench/hall_firmware_bench.py
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from cribboard.api import Board
from cribboard.hall.broker import Broker, MosquittoNotFound, find_executable
from cribboard.hall.certs import make_ca, make_server, pem_to_der
from cribboard.hall.tablesetup import HallSetup, write_config
from cribboard.virtual.interpreter import find_micropython
from cribboard.virtual.launcher import VirtualBoard
from cribcore import hall as core
from cribcore.protocol import LineWriter
from cribcore.state import NO_WINNER, GameError, GameState
from cribdev.simtable import board_state
from cribfw.hallpayload import STATE_BYTES, write_ack, write_state
from link_bench import mp_env  # bench/link_bench.py

HALL = "club"
TABLE = 3
PHASE_S = 8.0

# Run on the emulated Pico's raw REPL (the app stopped): the client's modules and buffers.
PICO_PROBE = """import gc, sys
class NoSocket:
    pass
sys.modules['socket'] = NoSocket()
from cribcore.state import GameState
class Ctx:
    pass
ctx = Ctx()
ctx.game = GameState()
gc.collect()
before = gc.mem_alloc()
free = gc.mem_free()
from cribfw.hall import HallClient
from cribfw.hallconfig import parse
from cribfw.hallmemory import CommandMemory
gc.collect()
modules = gc.mem_alloc()
config = parse({'hall': 'club', 'table': 3, 'host': '10.0.0.1', 'port': 1883,
                'user': 'table-3', 'password': 'x'})
client = HallClient(ctx, config, CommandMemory(None))
gc.collect()
print(free, modules - before, gc.mem_alloc() - modules)
"""


def packet(topic: str, payload_bytes: int, qos: int) -> int:
    """An MQTT 3.1.1 PUBLISH's size: fixed header, topic, packet id (QoS 1), payload."""
    body = 2 + len(topic) + (2 if qos else 0) + payload_bytes
    return 1 + (1 if body < 128 else 2) + body


def ca_base64(broker: Broker) -> str:
    """The hall CA's DER bytes in base64, as `cribboard deploy` puts them in /hall.json."""
    assert broker.ca_file is not None
    return base64.b64encode(pem_to_der(broker.ca_file.read_bytes())).decode()


def heap_unix(broker: Broker) -> None:
    password = broker.credentials("table-1").password
    ca_file = broker.state_dir / "ca.b64"
    ca_file.write_text(ca_base64(broker))
    result = subprocess.run(
        [str(find_micropython()), "-X", "heapsize=128wK", str(ROOT / "bench" / "hall_heap_mp.py")]
        + ["127.0.0.1", str(broker.port), password, str(ca_file)],
        capture_output=True,
        text=True,
        env=mp_env(),
        timeout=120,
    )
    lines = [line.split() for line in result.stdout.splitlines()]
    if result.returncode != 0 or ["done"] not in lines:
        print(f"   failed: {result.stdout}{result.stderr}")
        return
    values = {line[0]: line[1:] for line in lines if line[0] != "module"}
    free0, alloc0 = (int(v) for v in values["without"])
    free2, _ = (int(v) for v in values["running"])
    free1, alloc1 = (int(v) for v in values["added"])
    print(
        f"   free heap (after a collection): {free0:,} B without the hall client, {free2:,} B "
        f"with it connected and its state published: it costs {free0 - free2:,} B "
        f"(64-bit port: pointers are 8 bytes, about twice a 32-bit board's)"
    )
    previous = alloc0
    parts = []
    for line in lines:
        if line[0] == "module":
            parts.append(f"{line[1]} {int(line[2]) - previous:,}")
            previous = int(line[2])
    print(f"   modules imported (.mpy: bytecode in RAM): {'; '.join(parts)} B")
    print(
        f"   the client (umqtt's object, topics, buffers): {alloc1 - previous:,} B; "
        f"connected: {free1 - free2:,} B more"
    )
    low, high = values["per_change"]
    print(f"   one change published (state + event): {low}-{high} B allocated (garbage)")


def heap_pico() -> None:
    from cribboard.virtual.rp2board import FIRMWARE_IMAGE, RP2Board, emulator_missing, images_dir
    from rp2support import ProtocolLink, RawRepl  # tests/rp2support.py

    missing = emulator_missing()
    if missing:
        print(f"   skipped: {missing}")
        return
    with tempfile.TemporaryDirectory() as scratch:
        with RP2Board(images_dir() / FIRMWARE_IMAGE, flash=Path(scratch) / "f", pace=0) as pico:
            up = ProtocolLink(pico.port)
            try:
                up.wait_up()
            finally:
                up.close()
            repl = RawRepl(pico.port)
            repl.enter()
            try:
                output = repl.exec(PICO_PROBE)
            finally:
                repl.close()
    try:
        free, modules, client = (int(v) for v in output.split())
    except ValueError:
        print(f"   failed: {output!r}")
        return
    print(
        f"   frozen modules (globals only; bytecode in flash): {modules:,} B; the client: "
        f"{client:,} B; {free:,} B were free before (the app stopped)"
    )


# Run on the emulated Pico W's raw REPL (the app stopped): what cribfw/halltls.py does, by hand
# (the image in the repository may predate that module); then a whole TLS handshake with a
# server in the same interpreter (MicroPython's tls server side, the broker's certificate and
# key), the two ends joined by in-memory streams and stepped in turn: the client's time in its
# calls (emulated microseconds) and the heap both sessions hold, sampled between the steps.
PICO_W_TLS_PROBE = """import gc, io, binascii, time, tls
ca = binascii.a2b_base64(%r)
cert = binascii.a2b_base64(%r)
key = binascii.a2b_base64(%r)
class End(io.IOBase):
    def __init__(self, inbox, outbox):
        self.inbox = inbox
        self.outbox = outbox
    def readinto(self, buf):
        box = self.inbox[0]
        n = min(len(buf), len(box))
        if not n:
            return None
        buf[:n] = box[:n]
        self.inbox[0] = box[n:]
        return n
    def write(self, buf):
        self.outbox[0] = self.outbox[0] + bytes(buf)
        return len(buf)
    def ioctl(self, req, arg):
        return 0
gc.collect()
free = gc.mem_free()
a1 = gc.mem_alloc()
client_ctx = tls.SSLContext(tls.PROTOCOL_TLS_CLIENT)
client_ctx.load_verify_locations(ca)
gc.collect()
a2 = gc.mem_alloc()
to_server, to_client = [b''], [b'']
c = client_ctx.wrap_socket(End(to_client, to_server), server_hostname='192.168.1.10',
                           do_handshake_on_connect=False)
gc.collect()
a3 = gc.mem_alloc()
server_ctx = tls.SSLContext(tls.PROTOCOL_TLS_SERVER)
server_ctx.load_cert_chain(cert, key)
s = server_ctx.wrap_socket(End(to_server, to_client), server_side=True,
                           do_handshake_on_connect=False)
gc.collect()
a4 = gc.mem_alloc()
spent = longest = peak = 0
done = False
for _ in range(40):
    t0 = time.ticks_us()
    done = c.write(b'x') is not None
    took = time.ticks_diff(time.ticks_us(), t0)
    spent += took
    longest = max(longest, took)
    peak = max(peak, gc.mem_alloc() - a4)
    if done:
        break
    s.read(1)
    peak = max(peak, gc.mem_alloc() - a4)
print(free, len(ca), a2 - a1, a3 - a2, a4 - a3, int(done), spent, longest, peak)
"""


def heap_pico_tls() -> None:
    from cryptography.hazmat.primitives import serialization

    from cribboard.virtual.rp2board import RP2Board, emulator_missing, images_dir
    from rp2support import RawRepl  # tests/rp2support.py

    missing = emulator_missing()
    if missing:
        print(f"   skipped: {missing}")
        return
    ca_pem, ca_key = make_ca("cribboard hall club CA")
    server_pem, server_key = make_server(ca_pem, ca_key, ["192.168.1.10"])
    key = serialization.load_pem_private_key(server_key, None).private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    der = [base64.b64encode(b).decode() for b in (pem_to_der(ca_pem), pem_to_der(server_pem), key)]
    with tempfile.TemporaryDirectory() as scratch:
        image = images_dir() / "cribboard-RPI_PICO_W.uf2"
        with RP2Board(image, flash=Path(scratch) / "f", pace=0) as pico:
            repl = RawRepl(pico.port)
            repl.enter()  # stops the app (the emulator has no Wi-Fi chip for it)
            try:
                output = repl.exec(PICO_W_TLS_PROBE % tuple(der), timeout=900)
            finally:
                repl.close()
    try:
        free, ca_bytes, context, session, server, done, spent, longest, peak = (
            int(v) for v in output.split()
        )
    except ValueError:
        print(f"   failed: {output!r}")
        return
    print(
        f"   the client's context with the hall's CA ({ca_bytes} B DER, ECDSA P-256): "
        f"{context:,} B, kept while the board runs; a connection's TLS session: {session:,} B "
        f"while it lasts; {free:,} B were free (the app stopped)"
    )
    if not done:
        print("   the handshake did not finish")
        return
    print(
        f"   a whole handshake (against a TLS server in the same interpreter, the broker's "
        f"certificate checked): the client's calls took {spent / 1e6:.2f} s of emulated time, "
        f"the longest one {longest / 1e6:.2f} s (the LEDs and buttons wait that long at each "
        f"connection); between the steps the two ends held at most {peak:,} B more than their "
        f"sessions (the server's: {server:,} B; a peak inside one call is not seen)"
    )


def played_payloads(players: int, games: int = 30) -> list[int]:
    import random

    rng = random.Random(players)
    sizes = []
    out = LineWriter(STATE_BYTES)
    for _ in range(games):
        game = GameState(players, 121)
        while game.winner == NO_WINNER:
            try:
                game.peg(rng.randrange(players), rng.randint(1, 29))
                if rng.random() < 0.3:
                    game.set_pending(rng.randrange(players), rng.randint(1, 29))
            except GameError:
                pass
            write_state(out, game)
            sizes.append(out.n)
    return sizes


def sizes() -> None:
    two, three = played_payloads(2), played_payloads(3)
    prefix = core.table_prefix(HALL, TABLE)
    typical = round(statistics.median(two))
    state_topic, event_topic = prefix + core.STATE, prefix + core.EVENT
    ack = LineWriter(160)
    write_ack(ack, b"r2t3")
    refused = LineWriter(160)
    write_ack(refused, b"r2t3.2", b"game_over", b"the game is over")
    print(
        f"   state payload over {len(two):,} states of two-player games: median {typical} B, "
        f"max {max(two)} B; three players: median {round(statistics.median(three))}, "
        f"max {max(three)} B (buffer {STATE_BYTES})"
    )
    print(
        f"   as MQTT PUBLISH on {state_topic}: {packet(state_topic, typical, 0)} B (state, QoS 0, "
        f"retained); the event, same payload on {event_topic}: "
        f"{packet(event_topic, typical, 1)} B (QoS 1) + its 4-byte PUBACK back"
    )
    print(
        f"   per change: {packet(state_topic, typical, 0) + packet(event_topic, typical, 1)} B "
        f"out, 4 B in; ack {ack.n} B ({packet(prefix + core.ACK, ack.n, 1)} B packet), a refusal "
        f"{refused.n} B; online 1 B ({packet(prefix + core.ONLINE, 1, 1)} B packet)"
    )
    assert board_state(GameState()).rev == 0  # (the host reads what the board writes)


async def stalls(broker: Broker) -> None:
    frames: list[float] = []
    lock = threading.Lock()

    def on_frame(_: bytes) -> None:
        with lock:
            frames.append(time.monotonic())

    user = f"table-{TABLE}"
    assert broker.ca_file is not None
    ca = pem_to_der(broker.ca_file.read_bytes())
    setup = HallSetup(
        "127.0.0.1", broker.port, HALL, TABLE, user, broker.credentials(user).password, ca=ca
    )
    with VirtualBoard(on_frame=on_frame) as virtual:
        await asyncio.to_thread(write_config, virtual.port, setup, progress=lambda _: None)
        board = await Board.open(virtual.port)
        try:
            await board.set_pending(1, 6)  # blinking: the LEDs are drawn all the time
            await asyncio.sleep(1.0)  # connected by now

            async def phase(name: str) -> None:
                pings = []
                start = time.monotonic()
                while time.monotonic() - start < PHASE_S:
                    asked = time.monotonic()
                    await board.ping()
                    pings.append(time.monotonic() - asked)
                    await asyncio.sleep(0.05)
                end = time.monotonic()
                with lock:
                    drawn = [f for f in frames if start <= f <= end]
                gaps = [b - a for a, b in zip([start, *drawn], [*drawn, end])]
                print(
                    f"   {name:<34} ping p50 {1000 * statistics.median(pings):5.1f} ms, max "
                    f"{1000 * max(pings):6.1f} ms; {len(drawn) / (end - start):4.0f} frames/s, "
                    f"longest gap {1000 * max(gaps):6.1f} ms"
                )

            await phase("broker up:")
            assert broker.pid is not None
            os.kill(broker.pid, signal.SIGKILL)
            while broker.running:
                await asyncio.sleep(0.02)
            silent = socket.socket()
            silent.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            silent.bind(("127.0.0.1", broker.port))
            silent.listen(64)
            try:
                await phase("broker silent (accepts, no answer):")
            finally:
                silent.close()
            await phase("broker refusing:")
        finally:
            await board.close()


def main() -> None:
    print("a Wi-Fi board's own table client (cribfw/hall.py, umqtt.simple)")
    print("\n1. Bytes per message (the board's payloads)")
    sizes()
    try:
        find_executable("mosquitto")
    except MosquittoNotFound as err:
        print(f"\n(heap and stall figures skipped: {err})")
        return
    with tempfile.TemporaryDirectory(prefix="cribboard-fwhall-bench-") as work:
        with Broker.create(Path(work) / "broker", HALL, tables=TABLE) as broker:
            print("\n2. Heap, unix port at 128wK, firmware as deployed (.mpy)")
            heap_unix(broker)
            print("\n3. Heap, emulated Pico (cribboard-RPI_PICO.uf2, frozen), no network")
            heap_pico()
            print(f"\n4. The board while the broker is up, then gone ({PHASE_S:g} s each)")
            asyncio.run(stalls(broker))
    print("\n5. TLS on the emulated Pico W (cribboard-RPI_PICO_W.uf2, mbedTLS), no network")
    heap_pico_tls()


if __name__ == "__main__":
    main()
