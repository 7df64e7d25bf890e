"""Drives a board over plain links and checks every line it writes against the protocol model
(tests/protocol_model.py): used by the state-machine test (tests/firmware/test_protocol_model.py) and the
soak (bench/soak.py).

The links are what a client written from docs/protocol.md would use: the board's serial port
through pyserial (raw bytes, no host library), and, on the virtual board, a Bluetooth central
speaking straight to the board's simulated radio through the side channel (ble-connect,
ble-write, ble-subscribe: cribboard.virtual.radio), without BlueZ or bleak in between.
"""

from __future__ import annotations

import collections
import re
import socket
import time
from typing import Protocol

import serial

from protocol_model import (
    CAPS,
    FIRMWARE,
    HIST_REPLY_MOST,
    NotModelled,
    Out,
    ProtocolModel,
    Step,
)

TIMEOUT = 10.0  # seconds a line may take (a save to the flash holds the board up a while)
APP_START_S = 60.0  # a bound for a board whose app never starts (not a pause: the reply ends it)
HELLO = re.compile(
    rb"(?:#(\w+) ok|! hello) (proto=1\.4 fw=\S+ board=(?:sim|pico|picow|pico2w|esp32s3) "
    rb"layout=crib121 holes=121 max=64 caps=[a-z,]+(?: uid=[0-9A-F]{2,32})?)"
    rb"((?: store=(?:saved|backup|fresh|fresh-corrupt|fresh-version))?(?: fs=(?:ok|formatted|off))?"
    rb"(?: boots=[1-9]\d*)?(?: ble=Cribboard-[0-9A-F]{4} bmax=[14])?)\n"
)


class Violation(AssertionError):
    """The board wrote something the document does not allow (or nothing where it must)."""


class Wire(Protocol):
    def write(self, data: bytes) -> None: ...

    def readline(self, timeout: float) -> bytes | None: ...

    def close(self) -> None: ...


class SerialWire:
    """The board's serial port, read into lines."""

    def __init__(self, port: str) -> None:
        self.serial = serial.Serial(port, timeout=0.05)
        self._buffer = bytearray()

    def write(self, data: bytes) -> None:
        self.serial.write(data)

    def readline(self, timeout: float) -> bytes | None:
        deadline = time.monotonic() + timeout
        while True:
            at = self._buffer.find(b"\n")
            if at >= 0:
                line = bytes(self._buffer[: at + 1])
                del self._buffer[: at + 1]
                return line
            if time.monotonic() > deadline:
                return None
            self._buffer += self.serial.read(max(1, self.serial.in_waiting))

    def close(self) -> None:
        self.serial.close()


class RadioCentral:
    """A Bluetooth central on the virtual board's simulated radio: it connects, writes request
    bytes to the Nordic UART RX characteristic 20 at a time (the default MTU) and reassembles
    the board's notifications into lines."""

    RX_UUID = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"

    def __init__(self, control: str, address: str) -> None:
        self._commands = _SideSocket(control)
        self._notes = _SideSocket(control)
        if self._notes.request("ble-subscribe") != "ok":
            raise RuntimeError("the radio refused ble-subscribe")
        info = self._commands.request("ble-info")
        gatt = dict(w.partition("=")[::2] for w in info.split()[1:]).get("gatt", "")
        handles = [e.split(":") for e in gatt.split(",") if e.startswith("C:")]
        self.rx = int(next(h[3] for h in handles if h[1] == self.RX_UUID))
        reply = self._commands.request(f"ble-connect random {address}")
        if not reply.startswith("ok "):
            raise RuntimeError(f"ble-connect: {reply}")
        self.conn = int(reply.split()[1])
        self._buffer = bytearray()

    def info(self) -> dict[str, str]:
        """The radio's report (``ble-info``): its advertising, GATT table and counts."""
        return dict(w.partition("=")[::2] for w in self._commands.request("ble-info").split()[1:])

    def exchange_mtu(self, mtu: int) -> int:
        """An ATT MTU exchange: the MTU both ends use after it."""
        reply = self._commands.request(f"ble-mtu {self.conn} {mtu}")
        if not reply.startswith("ok "):
            raise RuntimeError(f"ble-mtu: {reply}")
        return int(reply.split()[1])

    def write(self, data: bytes) -> None:
        for at in range(0, len(data), 20):
            reply = self._commands.request(
                f"ble-write {self.conn} {self.rx} {data[at : at + 20].hex()}"
            )
            if reply != "ok":
                raise RuntimeError(f"ble-write: {reply}")

    def readline(self, timeout: float) -> bytes | None:
        deadline = time.monotonic() + timeout
        while True:
            at = self._buffer.find(b"\n")
            if at >= 0:
                line = bytes(self._buffer[: at + 1])
                del self._buffer[: at + 1]
                return line
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            note = self._notes.read_line(remaining)
            if note is None:
                return None
            words = note.split()
            if words[:2] == ["ble-notify", str(self.conn)]:
                self._buffer += bytes.fromhex(words[3])
            elif words[:2] == ["ble-disconnected", str(self.conn)]:
                raise Violation("the board dropped the Bluetooth central")

    def close(self) -> None:
        try:
            self._commands.request(f"ble-disconnect {self.conn}")
        except OSError:
            pass
        self._commands.close()
        self._notes.close()


class _SideSocket:
    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self._buffer = bytearray()

    def request(self, line: str) -> str:
        self.sock.sendall(line.encode() + b"\n")
        reply = self.read_line(5.0)
        if reply is None:
            raise TimeoutError(f"no answer to {line!r} on the side channel")
        return reply

    def read_line(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                return None
            if not data:
                raise OSError("the side channel closed")
            self._buffer += data
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer[:] = rest
        return line.decode().strip()

    def close(self) -> None:
        self.sock.close()


class Checker:
    """Sends bytes on the links and checks each line the board writes back against the model,
    in order, link by link. Raises Violation at the first difference, with the lines sent
    before it."""

    def __init__(self, model: ProtocolModel, timeout: float = TIMEOUT) -> None:
        self.model = model
        self.wires: dict[str, Wire] = {}
        self.timeout = timeout
        self.sent: collections.deque[tuple[str, bytes]] = collections.deque(maxlen=12)
        self.lines = 0  # request lines checked
        self._sentinel = 0
        self._health: dict[str, int] = {}

    def attach(self, name: str, wire: Wire, usb: bool, address: bytes | None = None) -> None:
        """A link to check: the model connects it, and it is synchronised (a ping answered)."""
        self.wires[name] = wire
        self.model.connect(name, usb, address)

    def start_usb(self, name: str, wire: Wire) -> bytes:
        """Open the board's USB link: skip what came before (the boot's `! hello`, checked
        whole), learn this boot's hello and LED settings, check the state is a fresh game's.
        Returns the hello reply."""
        wire.write(b"#zzh hello\n")
        hello = b""
        while not hello:
            # The request waits for the app: on a busy machine the virtual board's firmware
            # takes a while to compile and start after the interpreter's boot.
            line = wire.readline(max(self.timeout, APP_START_S))
            if line is None:
                raise Violation("no reply to hello")
            if line.startswith(b"#zzh ok "):
                hello = line
            elif line.startswith(b"! hello"):
                self._hello_event = line
        match = HELLO.fullmatch(hello)
        if match is None:
            raise Violation(f"a hello reply the document does not allow: {hello!r}")
        self.model.hello = b" " + match[2] + match[3]
        fields = _fields(hello)
        if fields["fw"] != FIRMWARE or fields["caps"] != CAPS:
            raise Violation(f"the hello names another firmware or other verbs: {hello!r}")
        event = getattr(self, "_hello_event", None)
        if event is not None and event != b"! hello" + self.model.hello + b"\n":
            raise Violation(f"the board's ! hello event differs from its hello reply: {event!r}")
        self.wires[name] = wire
        self.model.connect(name, usb=True)
        # An event after every request, as the model has it (protocol_model's docstring).
        self.send(name, b"#zze every 1\n")
        return hello

    def send(self, name: str, data: bytes, pieces: int = 1) -> None:
        """Write `data` on link `name` (in `pieces` writes) and check what every complete line
        in it makes the board write on every link."""
        step = max(1, len(data) // max(1, pieces))
        wire = self.wires[name]
        for at in range(0, len(data), step):
            wire.write(data[at : at + step])
        for line in list(self.model.lines(name, data)):
            self.check_line(name, line)

    def sync(self) -> None:
        """A ping on every link, so that every line the board wrote before is accounted for."""
        for name in self.wires:
            self._sentinel += 1
            self.send(name, b"#zz%d ping\n" % self._sentinel)

    def check_line(self, name: str, line: bytes) -> Step:
        self.sent.append((name, line))
        self.lines += 1
        try:
            step = self.model.expect(name, line)
        except Violation:
            raise
        except AssertionError as error:  # the game's rules broke one of the document's
            self.fail(f"{name}: {line!r}: {error}")
            raise
        reply = b""
        for link, outs in step.outputs.items():
            for i, out in enumerate(outs):
                got = self.read(link, out)
                if link == name and i == 0:
                    reply = got
                    self._check_id(step, got)
        self.model.settle(step, reply)
        return step

    def expect_outputs(self, outputs: dict[str, list[Out]]) -> None:
        """Lines every link must receive now (a button's doing)."""
        for link, outs in outputs.items():
            for out in outs:
                self.read(link, out)

    def read(self, link: str, out: Out) -> bytes:
        got = self.wires[link].readline(self.timeout)
        if got is None:
            self.fail(f"{link}: nothing within {self.timeout:g} s; expected {out}")
        assert got is not None
        self.check_any(link, got)
        if not out.matches(got):
            self.fail(f"{link}: got {got!r}; expected {out}")
        if out.check == "health":
            self._check_health(link, got)
        if out.check == "hist" and len(got) > HIST_REPLY_MOST:
            self.fail(f"{link}: a page of the history longer than {HIST_REPLY_MOST}: {got!r}")
        return got

    def check_any(self, link: str, line: bytes) -> None:
        """What holds for every line a board writes: printable ASCII and a newline, and a games
        tally never below zero."""
        if any(c < 0x20 or c > 0x7E for c in line[:-1]):
            self.fail(f"{link}: a control or non-ASCII byte in {line!r}")
        at = line.find(b" g=")
        if at >= 0:
            tally = line[at + 3 :].split(b" ", 1)[0].strip()
            if any(int(v) < 0 for v in tally.split(b",")):
                self.fail(f"{link}: games won below zero in {line!r}")

    def _check_id(self, step: Step, reply: bytes) -> None:
        """The reply carries the request's id, as the document reads it, or none."""
        rid = reply[1:].split(b" ", 1)[0] if reply.startswith(b"#") else b""
        if rid != step.rid:
            self.fail(
                f"{step.link}: the reply {reply!r} answers another request than {step.line!r}"
            )

    def _check_health(self, link: str, line: bytes) -> None:
        fields = {k: int(v) for k, v in _fields(line).items() if k != "slast"}
        low, high = self.model.bad
        if not low <= fields["bad"] <= high:
            self.fail(f"{link}: health bad={fields['bad']}; the model counts {low}..{high}")
        for key in ("up", "saves"):
            if fields[key] < self._health.get(key, 0):
                self.fail(f"{link}: health {key} went down: {line!r}")
            self._health[key] = fields[key]
        if fields["serr"] or fields["aerr"] or fields["lost"] or b"slast=" in line:
            self.fail(f"{link}: a failed save or a lost line: {line!r}")

    def fail(self, what: str) -> None:
        sent = "\n".join(f"  {name}: {line!r}" for name, line in self.sent)
        raise Violation(f"{what}\nafter these request lines (oldest first):\n{sent}")

    def quiet(self, wait: float = 0.2) -> None:
        """Nothing more comes on any link."""
        for name, wire in self.wires.items():
            got = wire.readline(wait)
            if got is not None:
                self.fail(f"{name}: an unexpected line {got!r}")

    def close(self) -> None:
        for wire in self.wires.values():
            wire.close()
        self.wires.clear()


def _fields(line: bytes) -> dict[str, str]:
    return dict(w.partition("=")[::2] for w in line.decode().split() if "=" in w)


__all__ = ["Checker", "NotModelled", "RadioCentral", "SerialWire", "Violation"]
