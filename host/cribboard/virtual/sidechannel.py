"""The launcher's end of the virtual board's side channel.

Two sockets in the launcher's private directory:

* ``launcher.sock`` (datagrams) talks to the simulated hardware modules in MicroPython
  (``firmware/sim/simlink.py``): LED frames and reset requests come in, button presses go out.
* ``control.sock`` (stream, one request per line) serves tests and demos; see
  ``docs/virtual-board.md`` and :class:`cribboard.virtual.control.VirtualControl`. Its ``ble-*``
  requests are the board's Bluetooth radio (:mod:`cribboard.virtual.radio`).

Everything here runs on the launcher's relay thread; nothing blocks.
"""

from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .radio import SimRadio

_log = logging.getLogger("cribboard.virtual")

FrameCallback = Callable[[bytes], None]
"""Called with each new LED frame: RGB, 3 bytes per LED."""

ENV_LINK = "CRIBBOARD_SIM_LINK"
ENV_BOARD = "CRIBBOARD_SIM_BOARD"
ENV_BLE_ADDR = "CRIBBOARD_SIM_BLE_ADDR"

PIN_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,32}")
DEFAULT_PRESS_MS = 80
MAX_PRESS_MS = 600_000
# The board stopped at a flash point (simlink.py): k GEN KIND BLOCK INDEX TOTAL.
FLASH_STOP = re.compile(rb"k \d{1,10} (erase|program) \d{1,10} \d{1,10} \d{1,10}")
FLASH_KINDS = ("erase", "program", "any")  # what flash-break's KIND may name
HEAP_REPORT = re.compile(rb"M \d{1,12} \d{1,12}")  # the heap after a collection: free, alloc

_MAX_LINE = 1024
_MAX_CLIENT_BACKLOG = 4 << 20  # a subscriber this far behind is cut off


def grb_to_rgb(pixels: bytes, bpp: int) -> bytes:
    """Turn a NeoPixel buffer (GRB or GRBW wire order) into RGB, 3 bytes per LED."""
    count = len(pixels) // bpp
    pixels = pixels[: count * bpp]
    rgb = bytearray(3 * count)
    rgb[0::3] = pixels[1::bpp]
    rgb[1::3] = pixels[0::bpp]
    rgb[2::3] = pixels[2::bpp]
    return bytes(rgb)


@dataclass
class _Client:
    sock: socket.socket
    inbox: bytearray = field(default_factory=bytearray)
    outbox: bytearray = field(default_factory=bytearray)
    subscribed: bool = False
    ble_subscribed: bool = False
    flash_watch: bool = False  # sent flash-break: gets the board's flash-stop lines
    heap_wait: bool = False  # sent heap: gets the board's answer


class SideChannel:
    """Board link and control server, multiplexed by the launcher's relay loop."""

    def __init__(
        self,
        directory: Path,
        on_reset_request: Callable[[bool], None],
        describe: Callable[[], dict[str, str]],
        on_frame: FrameCallback | None = None,
    ) -> None:
        self.scratch = 0  # the board's watchdog scratch register, kept over watchdog resets
        self.watchdog_ms = 0  # the board's watchdog, as last armed (0: stopped)
        self.watchdog_armed_at = 0.0  # time.monotonic() when it was armed
        self.link_path = directory / "launcher.sock"
        self.board_path = directory / "board.sock"
        self.control_path = directory / "control.sock"
        self._on_reset_request = on_reset_request
        self._describe = describe
        self._on_frame = on_frame
        self.frame: bytes | None = None
        self.frame_seq = 0
        self.linked = False  # the current interpreter's simlink is up
        self.booted = False  # the current interpreter has finished its own boot
        self.boots = 0
        self._held: set[str] = set()
        self._queued: list[bytes] = []  # presses sent while the board was not listening
        self._clients: dict[int, _Client] = {}
        self.radio = SimRadio(self._send_board, self._push_ble)

        self._link = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._link.bind(str(self.link_path))
        self._link.setblocking(False)
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.control_path))
        self._server.listen(8)
        self._server.setblocking(False)

    # -- relay loop interface ------------------------------------------------------------

    def read_fds(self) -> list[int]:
        return [self._link.fileno(), self._server.fileno(), *self._clients]

    def write_fds(self) -> list[int]:
        return [fd for fd, client in self._clients.items() if client.outbox]

    def handle_readable(self, fd: int) -> None:
        if fd == self._link.fileno():
            self._read_link()
        elif fd == self._server.fileno():
            self._accept()
        elif fd in self._clients:
            self._read_client(self._clients[fd])

    def handle_writable(self, fd: int) -> None:
        client = self._clients.get(fd)
        if client is None:
            return
        try:
            sent = client.sock.send(client.outbox)
        except BlockingIOError:
            return
        except OSError:
            self._drop(client)
            return
        del client.outbox[:sent]

    def drain(self) -> None:
        """Take in what the board sent before it stopped (its last scratch value, say)."""
        self._read_link()

    def board_starting(self) -> None:
        """A new interpreter is about to start: forget the old one's socket and watchdog."""
        self.watchdog_ms = 0
        self.linked = self.booted = False
        self.radio.board_starting()
        try:
            self.board_path.unlink()
        except FileNotFoundError:
            pass

    def close(self) -> None:
        for client in list(self._clients.values()):
            self._drop(client)
        self._link.close()
        self._server.close()

    # -- buttons ---------------------------------------------------------------------------

    def press(self, pin: str, ms: int) -> None:
        message = f"D {pin} {ms}".encode()
        if self.linked and self._send_board(message):
            return
        self._queued.append(message)

    def hold(self, pin: str) -> None:
        self._held.add(pin)
        self._send_board(f"D {pin} -1".encode())

    def release(self, pin: str) -> None:
        self._held.discard(pin)
        self._queued = [m for m in self._queued if m.split()[1].decode() != pin]
        self._send_board(f"U {pin}".encode())

    def _send_board(self, message: bytes) -> bool:
        try:
            self._link.sendto(message, str(self.board_path))
            return True
        except OSError as err:
            # The board is rebooting or has not bound its socket yet; it is resent on hello.
            _log.debug("board link send failed: %s", err)
            return False

    # -- board link ------------------------------------------------------------------------

    def _read_link(self) -> None:
        while True:
            try:
                message = self._link.recv(1 << 17)
            except BlockingIOError:
                return
            except OSError as err:
                _log.debug("board link receive failed: %s", err)
                return
            if message:
                self._handle_board(message)

    def _handle_board(self, message: bytes) -> None:
        kind = message[:1]
        if kind == b"F" and len(message) >= 2 and message[1] in (3, 4):
            self._new_frame(grb_to_rgb(message[2:], message[1]))
        elif kind == b"B":
            self.booted = True
            self.boots += 1
        elif kind == b"H":
            self.linked = True
            for pin in sorted(self._held):
                self._send_board(f"D {pin} -1".encode())
            queued, self._queued = self._queued, []
            for press in queued:
                self._send_board(press)
        elif kind in (b"R", b"S"):
            self._on_reset_request(kind == b"R")
        elif kind in (b"X", b"W") and message[1:2] == b" " and message[2:].isdigit():
            value = int(message[2:])
            if kind == b"X":
                self.scratch = value & 0xFFFFFFFF
            else:
                self.watchdog_ms = value
                self.watchdog_armed_at = time.monotonic()
        elif kind == b"k" and FLASH_STOP.fullmatch(message):
            line = b"flash-stop " + message[2:] + b"\n"
            for client in list(self._clients.values()):
                if client.flash_watch:
                    self._queue(client, line)
        elif kind == b"M" and HEAP_REPORT.fullmatch(message):
            line = b"heap free=%s alloc=%s\n" % tuple(message[2:].split())
            for client in list(self._clients.values()):
                if client.heap_wait:
                    client.heap_wait = False
                    self._queue(client, line)
        elif kind == b"b":
            self.radio.from_board(message[1:])
        else:
            _log.debug("unknown board message %r", message[:16])

    def _new_frame(self, rgb: bytes) -> None:
        self.frame = rgb
        self.frame_seq += 1
        line = self._frame_line()
        for client in list(self._clients.values()):
            if client.subscribed:
                self._queue(client, line)
        if self._on_frame is not None:
            try:
                self._on_frame(rgb)
            except Exception:
                _log.exception("on_frame callback failed")

    def _push_ble(self, line: bytes) -> None:
        for client in list(self._clients.values()):
            if client.ble_subscribed:
                self._queue(client, line)

    def _frame_line(self) -> bytes:
        assert self.frame is not None
        return f"frame {self.frame_seq} {self.frame.hex()}\n".encode()

    # -- control clients -------------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._server.accept()
            except BlockingIOError:
                return
            except OSError as err:
                _log.debug("control accept failed: %s", err)
                return
            sock.setblocking(False)
            self._clients[sock.fileno()] = _Client(sock)

    def _read_client(self, client: _Client) -> None:
        try:
            data = client.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop(client)
            return
        client.inbox += data
        while b"\n" in client.inbox:
            line, _, rest = bytes(client.inbox).partition(b"\n")
            client.inbox[:] = rest
            self._queue(client, self._answer(client, line.decode("ascii", "replace").strip()))
        if len(client.inbox) > _MAX_LINE:
            self._drop(client)

    def _queue(self, client: _Client, data: bytes) -> None:
        if len(client.outbox) > _MAX_CLIENT_BACKLOG:
            _log.warning("control client too slow; disconnecting it")
            self._drop(client)
            return
        client.outbox += data

    def _drop(self, client: _Client) -> None:
        self._clients.pop(client.sock.fileno(), None)
        try:
            client.sock.close()
        except OSError:
            pass

    def _answer(self, client: _Client, line: str) -> bytes:
        words = line.split()
        if not words:
            return b"error bad-request empty request\n"
        command, args = words[0].lower(), words[1:]
        if command in ("press", "hold", "release"):
            return self._answer_pin(command, args)
        if command == "frame" and not args:
            if self.frame is None:
                return b"error no-frame no LED frame has been written yet\n"
            return self._frame_line()
        if command == "subscribe" and not args:
            client.subscribed = True
            return b"ok\n" + (self._frame_line() if self.frame is not None else b"")
        if command == "info" and not args:
            fields = {"boots": str(self.boots), "booted": "yes" if self.booted else "no"}
            fields.update(self._describe())
            return ("info " + " ".join(f"{k}={v}" for k, v in fields.items()) + "\n").encode()
        if command == "ble-subscribe" and not args:
            client.ble_subscribed = True
            return b"ok\n"
        if command.startswith("ble-"):
            return self.radio.answer(command, args)
        if command == "flash-break":
            return self._answer_flash_break(client, args)
        if command == "heap" and not args:
            if not self.linked or not self._send_board(b"G"):
                return b"error not-linked the board is not running\n"
            client.heap_wait = True
            return b""  # (the board's answer follows)
        if command == "reset" and not args:
            self._on_reset_request(True)
            return b"ok\n"
        return f"error bad-request unknown request: {line[:60]}\n".encode()

    def _answer_flash_break(self, client: _Client, args: list[str]) -> bytes:
        kind = args.pop() if len(args) == 3 else None
        try:
            gen, steps = (int(arg) for arg in args)
        except ValueError:
            return b"error bad-request usage: flash-break GEN N [KIND]\n"
        if not (0 <= gen < 1 << 30 and -1 <= steps < 1 << 30):
            return b"error bad-request GEN 0.., N -1..\n"
        if kind not in (None, *FLASH_KINDS):
            return b"error bad-request KIND erase, program or any\n"
        arm = f"K {gen} {steps}" + (f" {kind}" if kind is not None else "")
        if not self.linked or not self._send_board(arm.encode()):
            return b"error not-linked the board is not running\n"
        client.flash_watch = True
        return b"ok\n"

    def _answer_pin(self, command: str, args: list[str]) -> bytes:
        if not args or not PIN_NAME.fullmatch(args[0]):
            return b"error bad-pin expected a pin name of letters, digits, _ . -\n"
        pin = args[0]
        if command == "press":
            if len(args) > 2:
                return b"error bad-request usage: press PIN [MS]\n"
            try:
                ms = int(args[1]) if len(args) == 2 else DEFAULT_PRESS_MS
            except ValueError:
                ms = -1
            if not 0 <= ms <= MAX_PRESS_MS:
                return f"error bad-request MS must be 0..{MAX_PRESS_MS}\n".encode()
            self.press(pin, ms)
        elif len(args) != 1:
            return f"error bad-request usage: {command} PIN\n".encode()
        elif command == "hold":
            self.hold(pin)
        else:
            self.release(pin)
        return b"ok\n"
