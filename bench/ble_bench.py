"""`make bench`, Bluetooth LE part: the board over BLE without radios.

Runs unmodified bleak against the BlueZ front on a private dbus-daemon
(cribdev.fakebluez), whose Bumble central reaches the board over a virtual radio
(cribdev.bumbleradio). Sections 1-2: the unchanged firmware on MicroPython's own `bluetooth`
over NimBLE. Section 3: per stack, btstack and NimBLE. Prints figures only.

1. Bytes per typical request, reply and event, and the packets each takes at the default ATT MTU
   (20 bytes per write or notification), counted as the central received them.
2. Round trip through bleak, D-Bus, the BlueZ front, Bumble's central and the link, the
   board's stack and the firmware's BLE link: a raw NUS write -> notification, and the library's Board.ping() / Board.peg(), median
   and p99; the same for the 757-byte frame reply at MTU 23 and after an exchange to 185.
   (The virtual radio has no connection interval: a real link adds 7.5-50 ms per exchange.)
3. Per stack (btstack, nimble): connecting through bleak over the front (BleakClient.connect:
   the LE connection and Bumble's service discovery; and Board.open_ble: scan, connect,
   subscribe, hello, st), and a peg's round trip through the library (Board.peg, median, p99).

    .venv/bin/python bench/ble_bench.py
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import time

from cribboard.api import Board
from cribcore.protocol import NUS_RX, NUS_SERVICE, NUS_TX
from cribdev.fakebluez import FakeBluetooth, fake_bluetooth

ROUND_TRIPS = 300
WARM_UP = 20
PACKET = 20  # bytes per write or notification at ATT MTU 23

# (what, request line, events it causes): sent in this order on a board in open mode.
TYPICAL = [
    ("ping", b"#a1b0 ping\n", 0),
    ("peg (reply + ! st)", b"#a1b1 peg 0 12\n", 1),
    ("peg, 8-char id", b"#12345678 peg 1 29\n", 1),
    ("set", b"#a1b2 set 0 120 110\n", 1),
    ("pend", b"#a1b3 pend 1 29\n", 1),
    ("undo", b"#a1b4 undo\n", 1),
    ("deal", b"#a1b5 deal\n", 1),
    ("games x2", b"#a1b6 games x2 1\n", 1),
    ("bright (reply + ! cfg)", b"#a1b7 bright 120\n", 1),
    ("st", b"#a1b8 st\n", 0),
    ("admit", b"#a1b9 admit\n", 0),
    ("new (3 players)", b"#a1c0 new 121 3\n", 1),
    ("hello", b"#a1c1 hello\n", 0),
    ("frame", b"#a1c2 frame\n", 0),
]


def packets(n: int, size: int = PACKET) -> int:
    return max(1, -(-n // size))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


class Raw:
    """A bare NUS client on bleak: writes a request, waits for whole lines."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.notifications = 0  # received since connecting
        self.arrived = asyncio.Event()
        self.client: object = None

    async def connect(self, name: str) -> None:
        from bleak import BleakClient, BleakScanner

        device = await BleakScanner.find_device_by_filter(
            lambda d, a: a.local_name == name and NUS_SERVICE in a.service_uuids, timeout=5
        )
        assert device is not None
        client = BleakClient(device)
        await client.connect()
        await client.start_notify(NUS_TX, self._notified)
        self.client = client

    def _notified(self, _char: object, data: bytearray) -> None:
        self.data += data
        self.notifications += 1
        self.arrived.set()

    async def exchange(self, line: bytes, lines: int = 1) -> bytes:
        from bleak import BleakClient

        assert isinstance(self.client, BleakClient)
        self.data.clear()
        for start in range(0, len(line), PACKET):
            await self.client.write_gatt_char(NUS_RX, line[start : start + PACKET], response=False)
        while self.data.count(b"\n") < lines:
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), 5)
            except TimeoutError:
                raise RuntimeError(f"no answer to {line!r}: {bytes(self.data)!r}") from None
        return bytes(self.data)

    async def close(self) -> None:
        from bleak import BleakClient

        if isinstance(self.client, BleakClient):
            await self.client.disconnect()


async def sizes(name: str) -> list[tuple[str, int, int, int, int]]:
    """(what, request bytes, request packets, answer bytes, notifications) per typical line."""
    raw = Raw()
    await raw.connect(name)
    rows = []
    try:
        for what, line, events in TYPICAL:
            before = raw.notifications
            answer = await raw.exchange(line, 1 + events)
            sent = raw.notifications - before
            rows.append((what, len(line), packets(len(line)), len(answer), sent))
    finally:
        await raw.close()
    return rows


async def round_trips(name: str) -> dict[str, list[float]]:
    raw = Raw()
    await raw.connect(name)
    times: dict[str, list[float]] = {"raw ping (write -> notify)": []}
    try:
        for i in range(WARM_UP + ROUND_TRIPS):
            start = time.perf_counter()
            await raw.exchange(b"#%x ping\n" % i)
            if i >= WARM_UP:
                times["raw ping (write -> notify)"].append(time.perf_counter() - start)
        key = "raw frame, MTU 23 (757 B)"
        times[key] = []
        for i in range(50):
            start = time.perf_counter()
            await raw.exchange(b"#f%x frame\n" % i)
            times[key].append(time.perf_counter() - start)
    finally:
        await raw.close()
    board = await Board.open_ble(name, timeout=5.0)
    try:
        for key in ("Board.ping()", "Board.peg()/undo()"):
            times[key] = []
        for i in range(WARM_UP + ROUND_TRIPS):
            start = time.perf_counter()
            await board.ping()
            if i >= WARM_UP:
                times["Board.ping()"].append(time.perf_counter() - start)
        for i in range(ROUND_TRIPS):
            start = time.perf_counter()
            if i % 2:
                await board.undo()
            else:
                await board.peg(0, 5)
            times["Board.peg()/undo()"].append(time.perf_counter() - start)
    finally:
        await board.close()
    return times


async def big_mtu(name: str) -> list[float]:
    raw = Raw()
    await raw.connect(name)
    out = []
    try:
        for i in range(50):
            start = time.perf_counter()
            await raw.exchange(b"#g%x frame\n" % i)
            out.append(time.perf_counter() - start)
    finally:
        await raw.close()
    return out


def main() -> None:
    # Bumble's parser logs btstack's vendor command 0xFC09 as an error; the radio answers it
    # (cribdev.bumbleradio, correction 1): not a fault of the run.
    logging.getLogger("bumble.hci").setLevel(logging.CRITICAL)
    print("\nBluetooth LE: the board through bleak, the BlueZ front and Bumble's central")
    if shutil.which("dbus-daemon") is None:
        print("   skipped: dbus-daemon not installed (Debian package dbus: make dbus)")
        return
    started = time.monotonic()
    with (
        fake_bluetooth() as bt,
        tempfile.TemporaryDirectory(prefix="cribboard-bench-") as scratch,
    ):
        try:
            board = bt.bluez.start_board("nimble", scratch)
        except FileNotFoundError as err:  # the interpreter not built
            print(f"   skipped: {err}")
            return
        try:
            open_mode(str(board.virtual.port))
            rows = asyncio.run(sizes(board.name))
            times = asyncio.run(round_trips(board.name))
            bt.bluez.mtu = 185
            times["raw frame, MTU 185 (757 B)"] = asyncio.run(big_mtu(board.name))
        finally:
            bt.bluez.stop_board(board)

    print(f"\n1. Bytes per line and packets of {PACKET} bytes (ATT MTU 23), as the board sent them")
    print(
        f"   {'request':<24}{'bytes':>6}{'writes':>8}{'   reply+events bytes':>22}"
        f"{'notifications':>15}"
    )
    for what, req, req_packets, answer, sent in rows:
        mark = "" if req_packets == 1 else "  (more than one write)"
        print(f"   {what:<24}{req:>6}{req_packets:>8}{answer:>22}{sent:>15}{mark}")
    pad = b"!B11:"
    print(f"   {'control pad packet':<24}{len(pad):>6}{packets(len(pad)):>8}")
    for event in (
        b"! st r=12 t=121 n=2 d=0 w=-1 x=0 f=20,5 b=12,0 g=0,0 q=0,0 u=3 x2=0\n",
        b"! cfg bright=100 budget=400\n",
        b"! admit open=0 you=1 admitted=1\n",
        b"! btn n=A+ a=tap\n",
    ):
        name = event.split()[1].decode()
        print(
            f"   {'! ' + name + ' event':<24}{len(event):>6}{'':>8}{'':>22}"
            f"{packets(len(event)):>15}"
        )

    print(
        f"\n2. Round trip through bleak + D-Bus + BlueZ front + Bumble + NimBLE + firmware "
        f"({ROUND_TRIPS} each)"
    )
    print(f"   {'':<30}{'median':>10}{'p99':>10}")
    for key, values in times.items():
        print(
            f"   {key:<30}{1000 * percentile(values, 0.5):>8.2f}ms"
            f"{1000 * percentile(values, 0.99):>8.2f}ms"
        )
    print(
        f"\n3. Per stack: connecting through bleak ({CONNECTS} times) and a peg's round trip "
        f"({PEGS} pegs)"
    )
    print(f"   {'':<34}{'median':>10}{'p99':>10}")
    with fake_bluetooth() as bt:
        for stack in ("btstack", "nimble"):
            try:
                figures = per_stack(bt, stack)
            except FileNotFoundError as err:  # an interpreter not built
                print(f"   {stack}: skipped ({err})")
                continue
            for key, values in figures.items():
                print(
                    f"   {stack + ': ' + key:<34}{1000 * percentile(values, 0.5):>8.2f}ms"
                    f"{1000 * percentile(values, 0.99):>8.2f}ms"
                )
    print(f"\n(BLE benchmark took {time.monotonic() - started:.1f} s)")


CONNECTS = 10
PEGS = 100


def per_stack(bt: FakeBluetooth, stack: str) -> dict[str, list[float]]:
    """Connect times and peg round trips on one board on the front's radio."""
    with tempfile.TemporaryDirectory(prefix="cribboard-bench-") as scratch:
        board = bt.bluez.start_board(stack, scratch)
        try:
            open_mode(str(board.virtual.port))
            return asyncio.run(stack_times(board.name))
        finally:
            bt.bluez.stop_board(board)


async def stack_times(name: str) -> dict[str, list[float]]:
    from bleak import BleakClient, BleakScanner

    times: dict[str, list[float]] = {
        "BleakClient.connect()": [],
        "Board.open_ble()": [],
        "Board.peg()/undo()": [],
    }
    for _ in range(CONNECTS):
        device = await BleakScanner.find_device_by_filter(
            lambda d, a: a.local_name == name and NUS_SERVICE in a.service_uuids, timeout=5
        )
        assert device is not None, name
        client = BleakClient(device)
        start = time.perf_counter()
        await client.connect()
        times["BleakClient.connect()"].append(time.perf_counter() - start)
        await client.disconnect()
    for _ in range(CONNECTS):
        start = time.perf_counter()
        board = await Board.open_ble(name, timeout=5.0)
        times["Board.open_ble()"].append(time.perf_counter() - start)
        await board.close()
    board = await Board.open_ble(name, timeout=5.0)
    try:
        for i in range(WARM_UP + PEGS):
            start = time.perf_counter()
            if i % 2:
                await board.undo()
            else:
                await board.peg(0, 5)
            if i >= WARM_UP:
                times["Board.peg()/undo()"].append(time.perf_counter() - start)
    finally:
        await board.close()
    return times


def open_mode(port: str) -> None:
    """The owner, on USB, lets every Bluetooth device change the board."""
    import serial

    with serial.Serial(port, timeout=3) as link:
        link.write(b"#o admit open 1\n")
        while not link.readline().startswith(b"#o "):
            pass


if __name__ == "__main__":
    main()
