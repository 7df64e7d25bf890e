"""The projector page's door: who may come in, how many at once, and for how long they may stand
in the doorway.

The page listens on the club's network, where anyone may connect without a password. A stranger
who opens a thousand connections and says nothing (or a request's headers a byte a minute) must
not run the director out of file descriptors, nor keep the phones out. So the page accepts its
connections itself (:class:`Door`):

- at most `max_connections` at once (below what the process's descriptors allow, with room kept
  for the director), and `per_address` from one address; one more is answered ``503`` and
  closed at once;
- a request's headers whole within `header_timeout_s` of their first byte (of the connection,
  for the first), and at most MAX_HEADER_BYTES of them; else the connection is cut;
- an accept that fails (the process out of descriptors after all) pauses accepting for
  ACCEPT_PAUSE_S and is said in a few lines a minute, never a line an attempt.

Idle keep-alive connections and WebSockets have their own time limits (aiohttp's keep-alive
timeout, the WebSocket's heartbeat); a WebSocket upgrade ends the header watch.

    door = Door(runner.server, DoorLimits.for_fd_limit(raise_fd_limit()))
    task = asyncio.create_task(door.serve(listening_socket))
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import logging
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cribboard.linelimit import LineLimiter

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 1000
PER_ADDRESS = 64  # a phone opens six at most; a projector, a few tabs
RESERVED_FDS = 256  # kept for the director: its store, broker connection, control socket, logs
HEADER_TIMEOUT_S = 10.0
MAX_HEADER_BYTES = 16 * 1024
ACCEPT_PAUSE_S = 0.5
# The kernel's send buffer of a connection (Linux doubles it): what a reader that stops reading
# can hold of the page's memory there; the page's messages for a slow reader wait in user space,
# a bounded while (cribboard.hall.fanout).
SEND_BUFFER = 64 * 1024
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
_END = b"\r\n\r\n"
_WEBSOCKET = re.compile(rb"\r\nupgrade:[ \t]*websocket")


@dataclass(frozen=True)
class DoorLimits:
    """How many connections, from one address, and how long a request's headers may take."""

    max_connections: int = MAX_CONNECTIONS
    per_address: int = PER_ADDRESS
    header_timeout_s: float = HEADER_TIMEOUT_S

    @classmethod
    def for_fd_limit(cls, fd_limit: int, **changes: Any) -> DoorLimits:
        """The limits for a process that may hold `fd_limit` descriptors: RESERVED_FDS kept
        for the rest of the process."""
        most = max(16, min(MAX_CONNECTIONS, fd_limit - RESERVED_FDS))
        # One address never takes more than a quarter: the others still get in.
        per_address = min(PER_ADDRESS, max(4, most // 4))
        return cls(**{"max_connections": most, "per_address": per_address, **changes})


class Door:
    """Accepts the page's connections within `limits` and hands each to a protocol from
    `factory` (aiohttp's server)."""

    def __init__(self, factory: Callable[[], asyncio.BaseProtocol], limits: DoorLimits) -> None:
        self.factory = factory
        self.limits = limits
        self.open = 0
        self.by_address: dict[str, int] = {}
        self.refused = 0  # connections answered 503: too many
        self.cut = 0  # connections cut: headers too slow or too long
        self._lines = LineLimiter(lambda text: log.warning("%s", text))

    async def serve(self, listener: socket.socket) -> None:
        """Accept on `listener` (bound, listening, non-blocking) until cancelled."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, address = await loop.sock_accept(listener)
            except OSError as err:
                if err.errno in _OUT_OF_DESCRIPTORS:
                    self._lines.say(
                        "accept",
                        f"the page cannot accept a connection ({err.strerror}): pausing "
                        f"{ACCEPT_PAUSE_S} s",
                    )
                    await asyncio.sleep(ACCEPT_PAUSE_S)
                continue  # a connection reset before it was accepted, and the like
            host = str(address[0]) if isinstance(address, tuple) else ""
            if (
                self.open >= self.limits.max_connections
                or self.by_address.get(host, 0) >= self.limits.per_address
            ):
                self._turn_away(conn, host)
                continue
            self.came(host)
            with contextlib.suppress(OSError):
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
            try:
                await loop.connect_accepted_socket(functools.partial(_Guarded, self, host), conn)
            except OSError:
                self.left(host)
                conn.close()

    def _turn_away(self, conn: socket.socket, host: str) -> None:
        self.refused += 1
        with contextlib.suppress(OSError):
            conn.setblocking(False)
            conn.send(_BUSY)
        conn.close()
        self._lines.say(
            "busy",
            f"the page turned a connection from {host} away: {self.open} open, "
            f"{self.by_address.get(host, 0)} from that address",
        )

    def came(self, host: str) -> None:
        """A connection from `host` came in."""
        self.open += 1
        self.by_address[host] = self.by_address.get(host, 0) + 1

    def left(self, host: str) -> None:
        """A connection from `host` is gone."""
        self.open -= 1
        left = self.by_address.get(host, 1) - 1
        if left:
            self.by_address[host] = left
        else:
            self.by_address.pop(host, None)


class _Guarded(asyncio.Protocol):
    """One connection: aiohttp's protocol inside, its headers timed, its place counted."""

    def __init__(self, door: Door, host: str) -> None:
        self.door = door
        self.host = host
        self.inner: Any = door.factory()
        self.transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._head = bytearray()  # the headers so far (None once a WebSocket)
        self._watching = True  # False once upgraded to a WebSocket
        self._gone = False

    # --- the header watch ------------------------------------------------------------------

    def _start_timer(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.door.limits.header_timeout_s, self._cut)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _cut(self) -> None:
        self._timer = None
        self.door.cut += 1
        if self.transport is not None:
            self.transport.abort()

    def _watch(self, data: bytes) -> None:
        """Follow the request heads in `data`: time each from its first byte to its end."""
        while data:
            if self._timer is None:
                self._start_timer()
            tail = bytes(self._head[-3:])
            end = (tail + data).find(_END)
            if end < 0:
                self._head += data
                if len(self._head) > MAX_HEADER_BYTES:
                    self._cut()
                return
            used = end + len(_END) - len(tail)
            self._head += data[:used]
            data = data[used:]
            self._stop_timer()
            head, self._head = bytes(self._head).lower(), bytearray()
            if _WEBSOCKET.search(head):
                self._watching = False  # frames from now on: the WebSocket's own rules
                return

    # --- asyncio's protocol, passed on -----------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self._start_timer()  # an idle connection that never says anything is cut too
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._watching:
            self._watch(data)
        if not self._gone:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        result: bool | None = self.inner.eof_received()
        return result

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        if not self._gone:
            self._gone = True
            self.door.left(self.host)
        self.inner.connection_lost(exc)
