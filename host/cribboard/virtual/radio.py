"""The virtual board's Bluetooth LE radio, on the launcher's side of the side channel.

The firmware's BLE code runs against ``firmware/sim/bluetooth.py``, which follows MicroPython's
documented ``bluetooth.BLE`` API and talks to this radio through the side channel's datagrams
(advertising data and the GATT table come out, connections and writes go in, notifications come
out). A central (a test's, such as tests/modelcheck.py's) uses the radio through the control
socket, one ASCII request per line (docs/virtual-board.md says why the radio stays beside the
real stacks):

==============================  ===========================================================
request                         reply
==============================  ===========================================================
``ble-info``                    ``ble-info addr=ADDR type=random adv=HEX|- resp=HEX|-
                                mtu=N gatt=TABLE|- conns=N notifications=N longest=N``
                                (advertising data and scan response while the board
                                advertises; the GATT table once registered; connections;
                                notifications sent since the launcher started, and the
                                longest one's bytes)
``ble-connect TYPE ADDR``       ``ok CONN``: a central (address type ``public`` or
                                ``random``, address ``XX:XX:XX:XX:XX:XX``) connects; only
                                while the board advertises connectable
``ble-write CONN HANDLE HEX``   ``ok``: the central writes HEX (at most 512 bytes) to HANDLE
``ble-mtu CONN MTU``            ``ok N``: the central exchanges MTUs; N = the smaller of
                                MTU and the board's preferred MTU
``ble-disconnect CONN``         ``ok``: the central disconnects
``ble-subscribe``               ``ok``, then pushed lines: ``ble-notify CONN HANDLE HEX``
                                (a notification), ``ble-disconnected CONN`` (the board
                                disconnected, or restarted)
==============================  ===========================================================

TABLE is ``S:UUID:HANDLE`` for a service and ``C:UUID:FLAGS:VALUE_HANDLE`` for each of its
characteristics (``D:`` for descriptors), comma-separated; UUIDs in lower case, 128-bit form.
"""

from __future__ import annotations

import logging
import random
import re
import struct
from collections.abc import Callable

_log = logging.getLogger("cribboard.virtual")

ADDRESS = re.compile(r"[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}")
MAX_WRITE = 512  # the longest attribute value ATT allows
DEFAULT_MTU = 23


def random_static_address() -> str:
    """A random static Bluetooth address (the two top bits set), as the board uses."""
    data = bytearray(random.getrandbits(8) for _ in range(6))
    data[0] |= 0xC0
    return ":".join(f"{b:02X}" for b in data)


class SimRadio:
    """The radio of one virtual board. Runs on the launcher's relay thread; nothing blocks.

    Args:
        send_board: sends one datagram to the board (False if it could not go now).
        push: queues one line to every ``ble-subscribe`` client.
        address: the board's address (default: a new random static one).
    """

    def __init__(
        self,
        send_board: Callable[[bytes], bool],
        push: Callable[[bytes], None],
        address: str | None = None,
    ) -> None:
        self._send_board = send_board
        self._push = push
        self.address = address or random_static_address()
        self.adv: bytes | None = None  # None: not advertising
        self.resp = b""
        self.connectable = False
        self.gatt = ""
        self.board_mtu = DEFAULT_MTU
        self.conns: dict[int, int] = {}  # conn handle -> MTU
        self._next_conn = 1
        self.notifications = 0
        self.longest_notification = 0

    # -- the board ----------------------------------------------------------------------------

    def from_board(self, message: bytes) -> None:
        """A datagram from the simulated bluetooth module (without the leading b"b")."""
        kind, body = message[:1], message[1:]
        if kind == b"A":
            if len(body) >= 2:
                size = body[1]
                self.connectable = bool(body[0])
                self.adv, self.resp = bytes(body[2 : 2 + size]), bytes(body[2 + size :])
            else:
                self.adv, self.resp, self.connectable = None, b"", False
        elif kind == b"G" and len(body) >= 2:
            self.board_mtu = struct.unpack_from("<H", body)[0]
            self.gatt = body[2:].decode("ascii", "replace")
        elif kind in (b"N", b"I") and len(body) >= 4:
            conn, handle = struct.unpack_from("<HH", body)
            if conn in self.conns:
                data = body[4:]
                self.notifications += 1
                self.longest_notification = max(self.longest_notification, len(data))
                self._push(f"ble-notify {conn} {handle} {data.hex()}\n".encode())
        elif kind == b"K" and len(body) >= 2:
            conn = struct.unpack_from("<H", body)[0]
            if self.conns.pop(conn, None) is not None:
                self._send_board(b"bX" + struct.pack("<H", conn))
                self._push(f"ble-disconnected {conn}\n".encode())
        else:
            _log.debug("unknown radio message %r", message[:16])

    def board_starting(self) -> None:
        """A new interpreter starts: every connection is gone, nothing is advertised."""
        for conn in sorted(self.conns):
            self._push(f"ble-disconnected {conn}\n".encode())
        self.conns.clear()
        self.adv, self.resp, self.connectable = None, b"", False
        self.gatt = ""
        self.board_mtu = DEFAULT_MTU

    # -- centrals -------------------------------------------------------------------------------

    def answer(self, command: str, args: list[str]) -> bytes:
        """The reply to one ``ble-*`` request (``ble-subscribe`` is the side channel's)."""
        try:
            if command == "ble-info" and not args:
                return self._info()
            if command == "ble-connect" and len(args) == 2:
                return self._connect(args[0], args[1])
            if command == "ble-write" and len(args) == 3:
                return self._write(self._conn(args[0]), int(args[1]), bytes.fromhex(args[2]))
            if command == "ble-mtu" and len(args) == 2:
                return self._mtu(self._conn(args[0]), int(args[1]))
            if command == "ble-disconnect" and len(args) == 1:
                return self._disconnect(self._conn(args[0]))
        except _RadioError as err:
            return f"error {err.code} {err}\n".encode()
        except ValueError:
            pass
        return f"error bad-request usage: {command} (see cribboard.virtual.radio)\n".encode()

    def _info(self) -> bytes:
        adv = self.adv.hex() if self.adv is not None else "-"
        resp = self.resp.hex() if self.adv is not None and self.resp else "-"
        if self.adv is not None and not self.connectable:
            adv = "-"  # a central cannot connect: as good as not advertising, here
        return (
            f"ble-info addr={self.address} type=random adv={adv} resp={resp} "
            f"mtu={self.board_mtu} gatt={self.gatt or '-'} conns={len(self.conns)} "
            f"notifications={self.notifications} longest={self.longest_notification}\n"
        ).encode()

    def _conn(self, text: str) -> int:
        conn = int(text)
        if conn not in self.conns:
            raise _RadioError("not-connected", f"no connection {conn}")
        return conn

    def _connect(self, kind: str, address: str) -> bytes:
        if kind not in ("public", "random") or not ADDRESS.fullmatch(address):
            raise ValueError(address)
        if self.adv is None or not self.connectable:
            raise _RadioError("not-advertising", "the board is not advertising")
        conn = self._next_conn
        self._next_conn = self._next_conn % 0xEFFF + 1
        addr = bytes.fromhex(address.replace(":", ""))
        message = b"bC" + struct.pack("<HB", conn, 1 if kind == "random" else 0) + addr
        if not self._send_board(message):
            raise _RadioError("busy", "the board did not take the connection")
        self.conns[conn] = DEFAULT_MTU
        self.adv, self.connectable = None, False  # the stack stops advertising on a connection
        return f"ok {conn}\n".encode()

    def _write(self, conn: int, handle: int, data: bytes) -> bytes:
        if len(data) > MAX_WRITE:
            raise _RadioError("too-long", f"a write carries at most {MAX_WRITE} bytes")
        if not self._send_board(b"bW" + struct.pack("<HH", conn, handle) + data):
            raise _RadioError("busy", "the board did not take the write")
        return b"ok\n"

    def _mtu(self, conn: int, mtu: int) -> bytes:
        agreed = max(DEFAULT_MTU, min(mtu, self.board_mtu))
        self.conns[conn] = agreed
        self._send_board(b"bM" + struct.pack("<HH", conn, agreed))
        return f"ok {agreed}\n".encode()

    def _disconnect(self, conn: int) -> bytes:
        del self.conns[conn]
        self._send_board(b"bX" + struct.pack("<H", conn))
        return b"ok\n"


class _RadioError(Exception):
    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code = code
