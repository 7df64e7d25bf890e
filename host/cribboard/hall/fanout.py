"""The projector page's feed to its WebSockets: the latest of each thing (a table, the round, the
standings), never a queue of every change.

A table that changes a thousand times a second costs a page's socket at most one message per
MIN_INTERVAL_S for it (a change after a quiet while goes at once): each socket sends what changed since it last sent, the latest of each,
built and serialised once for every socket (a table's drawing is made then, not on every
change). Publishing is a dictionary write, whatever the number of sockets. A socket that does
not take what it is sent (its send buffer stays full: a phone gone to sleep, a stranger that
never reads) is closed after SEND_TIMEOUT_S; it holds nothing meanwhile but its place.

    fanout = Fanout()
    fanout.publish("table/3", lambda: {"type": "table", ...})
    await fanout.serve(request, ws, first=[...])   # a prepared WebSocket, until it closes
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import WSMsgType, web

from cribboard.linelimit import LineLimiter

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 0.05  # a socket sends at most this often (a page needs no more)
SEND_TIMEOUT_S = 10.0  # a socket whose sends wait longer is closed

Build = Callable[[], dict[str, Any]]


@dataclass
class _Entry:
    version: int
    build: Build
    text: str | None = None


class Fanout:
    """The latest message of each key, and the sockets that follow them."""

    def __init__(
        self, *, min_interval_s: float = MIN_INTERVAL_S, send_timeout_s: float = SEND_TIMEOUT_S
    ) -> None:
        self.min_interval_s = min_interval_s
        self.send_timeout_s = send_timeout_s
        self.version = 0
        self.published = 0
        self.closed_slow = 0  # sockets closed because they did not take what was sent
        self._latest: dict[str, _Entry] = {}
        self._changed: asyncio.Event | None = None
        self._faults = LineLimiter(lambda text: log.warning("%s", text))

    def publish(self, key: str, build: Build) -> None:
        """`build()` makes the message for `key` now (called later, once, when a socket sends
        it; it may raise: logged, that message is not sent)."""
        self.version += 1
        self.published += 1
        self._latest[key] = _Entry(self.version, build)
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def text(self, key: str) -> str | None:
        """The message of `key` as sent (None: its drawing failed)."""
        entry = self._latest[key]
        if entry.text is None:
            try:
                entry.text = json.dumps(entry.build(), separators=(",", ":"))
            except Exception:
                self._faults.say("page", f"the page could not show {key}: ignored")
                log.debug("the page could not show %s", key, exc_info=True)
                return None
        return entry.text

    def _since(self, version: int) -> list[str]:
        """The keys changed after `version`, oldest change first."""
        changed = [(e.version, k) for k, e in self._latest.items() if e.version > version]
        return [k for _, k in sorted(changed)]

    async def _next_change(self, version: int) -> None:
        if self.version != version:
            return
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    async def serve(
        self, request: web.Request, ws: web.WebSocketResponse, first: list[dict[str, Any]]
    ) -> None:
        """Send `first` (the hall as it is), then every change, on `ws` (prepared for
        `request`) until either end closes it. What the page sends is read and ignored."""
        version = self.version  # `first` holds everything up to here: nothing can overtake it
        writer = asyncio.create_task(self._write(request, ws, first, version))
        try:
            async for message in ws:
                if message.type == WSMsgType.ERROR:
                    break
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer

    async def _write(
        self,
        request: web.Request,
        ws: web.WebSocketResponse,
        first: list[dict[str, Any]],
        version: int,
    ) -> None:
        texts = [json.dumps(message, separators=(",", ":")) for message in first]
        loop = asyncio.get_running_loop()
        while True:
            try:
                async with asyncio.timeout(self.send_timeout_s):
                    for text in texts:
                        await ws.send_str(text)
            except TimeoutError:
                self.closed_slow += 1
                # Its buffer is full: a close frame would wait behind it. Cut it.
                transport = request.transport
                if transport is not None:
                    transport.abort()
                return
            except (ConnectionError, RuntimeError):
                return
            sent = loop.time()
            await self._next_change(version)
            # A change after a quiet while goes at once; in a stream of them, one send every
            # min_interval_s carries the latest of each.
            await asyncio.sleep(max(0.0, sent + self.min_interval_s - loop.time()))
            keys = self._since(version)
            version = self.version
            texts = [text for text in map(self.text, keys) if text is not None]
