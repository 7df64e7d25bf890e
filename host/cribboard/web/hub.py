"""Fan-out of bridge messages to WebSocket subscribers. A message is serialised once and queued
for every subscriber that wants it; a subscriber too slow to keep up is dropped (its queue is
replaced by a final None) rather than slowing the others or growing without bound."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from aiohttp import WSMsgType, web

QUEUE_LIMIT = 2000  # messages waiting for one subscriber before it is dropped as too slow


class Subscriber:
    """One WebSocket's view: the messages of one board (or all) and, if asked, frames."""

    def __init__(self, board: str | None, frames: bool) -> None:
        self.board = board
        self.frames = frames
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.dropped = False

    def wants(self, message: dict[str, Any]) -> bool:
        if message.get("type") == "frame" and not self.frames:
            return False
        board = message.get("board")
        return self.board is None or board is None or board == self.board

    def offer(self, text: str) -> None:
        if self.dropped:
            return
        if self.queue.qsize() >= QUEUE_LIMIT:
            self.dropped = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)  # tells the writer to close: too slow
            return
        self.queue.put_nowait(text)


class Hub:
    def __init__(self) -> None:
        self.subscribers: list[Subscriber] = []
        self.published = 0

    def subscribe(self, board: str | None = None, frames: bool = False) -> Subscriber:
        sub = Subscriber(board, frames)
        self.subscribers.append(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        if sub in self.subscribers:
            self.subscribers.remove(sub)

    def wants_frames(self, board: str) -> bool:
        return any(s.frames and (s.board is None or s.board == board) for s in self.subscribers)

    def publish(self, message: dict[str, Any]) -> None:
        self.published += 1
        text: str | None = None
        for sub in self.subscribers:
            if sub.wants(message):
                if text is None:
                    text = json.dumps(message, separators=(",", ":"))
                sub.offer(text)

    @staticmethod
    def send_to(sub: Subscriber, message: dict[str, Any]) -> None:
        """Queue a message for one subscriber only (the snapshot a new subscriber starts with)."""
        if sub.wants(message):
            sub.offer(json.dumps(message, separators=(",", ":")))


async def follow(
    ws: web.WebSocketResponse, hub: Hub, sub: Subscriber, sockets: set[web.WebSocketResponse]
) -> None:
    """Sends `sub`'s messages on the prepared WebSocket `ws` until either end closes it, then
    unsubscribes. What the client sends is read and ignored: subscribers only listen. `ws` is in
    `sockets` meanwhile, so the server can close it when it stops."""
    sockets.add(ws)
    writer = asyncio.create_task(_write(ws, sub))
    try:
        async for message in ws:
            if message.type == WSMsgType.ERROR:
                break
    finally:
        hub.unsubscribe(sub)
        sockets.discard(ws)
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await writer


async def _write(ws: web.WebSocketResponse, sub: Subscriber) -> None:
    while True:
        text = await sub.queue.get()
        if text is None:
            await ws.close(code=1013, message=b"too slow: messages were piling up")
            return
        try:
            await ws.send_str(text)
        except (ConnectionError, RuntimeError):
            return
