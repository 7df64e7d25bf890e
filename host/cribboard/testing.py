"""A board played by a function, for tests of what sits on a transport (the protocol client, the
API, an app) where the board itself is not what they test: in the way of httpx's
`MockTransport` and pyserial's ``loop://``, no virtual board, no port, no waiting for one.

    def board(request: Request) -> list[bytes]:
        if request.verb == "hello":
            return [request.ok(proto="1.4", fw="test", board="fake", layout="crib121", caps="")]
        if request.verb == "peg":
            return [request.ok(r=1), b"! st r=1 f=5,0"]
        return [request.err("unknown", "no such verb")]

    link = FakeTransport(board)
    client = Client(lambda: link)          # a reconnecting client: a fresh FakeTransport(board)
    ...
    link.push(b"! hello proto=1.4")        # the board says something unasked (an event)
    link.stall()                           # it stops answering (the port stays open)
    link.drop()                            # the link goes (a cable pulled)

It behaves as the real transports are documented to (cribboard.transport.Transport): what the
board says reaches `on_data` later, from the event loop, never from inside `write` (in pieces of
`chunk` bytes when given, as a Bluetooth link delivers them); `on_lost` fires once when the link
goes, never after `close()`; a write to a closed or lost link raises LinkError; it is opened
once (stricter than a serial port: a client makes a new transport to reconnect). Whatever lives
longer than one connection (the board's state, what it remembers) is the handler's: a
reconnecting client gets a new FakeTransport on the same handler."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cribboard.errors import LinkError
from cribboard.transport import DataCallback, LostCallback, Transport


@dataclass(frozen=True)
class Request:
    """One request line the host wrote (without its newline), read: its id (None without one),
    the `@REV` it is conditional on (None without), its verb and its other words."""

    line: bytes
    id: str | None
    if_rev: int | None
    verb: str
    args: tuple[str, ...]

    @classmethod
    def read(cls, line: bytes) -> Request:
        """`line` read as the board reads a request; anything else is a request whose verb is
        its first word (the handler answers it as a board answers nonsense)."""
        words = line.decode("ascii", "replace").split(" ")
        request_id = if_rev = None
        if words[0].startswith("#"):
            request_id = words.pop(0)[1:]
        if words and words[0].startswith("@") and words[0][1:].isdigit():
            if_rev = int(words.pop(0)[1:])
        return cls(line, request_id, if_rev, words[0] if words else "", tuple(words[1:]))

    def ok(self, *words: object, **fields: object) -> bytes:
        """The reply `ok`, with this request's id, `words` and then `fields` as KEY=VALUE."""
        return self._reply("ok", *words, *(f"{key}={value}" for key, value in fields.items()))

    def err(self, code: str, text: str = "") -> bytes:
        """The reply `err CODE TEXT`, with this request's id."""
        return self._reply("err", code, *([text] if text else []))

    def _reply(self, *words: object) -> bytes:
        head = [f"#{self.id}"] if self.id is not None else []
        return " ".join([*head, *map(str, words)]).encode()


Handler = Callable[[Request], Iterable[bytes | str] | None]
"""What the fake board does with a request: the lines it says back (replies and events,
without their newlines), in order; None or nothing for silence."""


class FakeTransport(Transport):
    """A transport to a board played by `handler` (see the module's documentation).

    Args:
        handler: each request line to the lines the board says back.
        name: what the link is called (a client's messages say it).
        chunk: pieces of at most this many bytes reach `on_data` (None: a line at a time).
    """

    def __init__(self, handler: Handler, *, name: str = "fake", chunk: int | None = None):
        self.name = name
        self.requests: list[Request] = []
        """Every request the host wrote on this link, in order (blank lines left out)."""
        self._handler = handler
        self._chunk = chunk
        self._on_data: DataCallback | None = None
        self._on_lost: LostCallback | None = None
        self._pending = bytearray()
        self._stalled: list[Request] | None = None
        self._state = "new"  # new, open, lost, closed

    @property
    def is_open(self) -> bool:
        """Whether the link is open: opened, and neither lost nor closed."""
        return self._state == "open"

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        if self._state != "new":
            raise LinkError(f"{self.name}: a transport is opened once")
        self._on_data, self._on_lost = on_data, on_lost
        self._state = "open"

    async def write(self, data: bytes) -> None:
        if not self.is_open:
            raise LinkError(f"{self.name} is not open")
        self._pending += data
        while (end := self._pending.find(b"\n")) >= 0:
            line = bytes(self._pending[:end]).rstrip(b"\r")
            del self._pending[: end + 1]
            if line:
                self._received(Request.read(line))

    def _received(self, request: Request) -> None:
        self.requests.append(request)
        if self._stalled is not None:
            self._stalled.append(request)
            return
        for said in self._handler(request) or ():
            self.say(said)

    def say(self, line: bytes | str) -> None:
        """The board says `line` (a newline is added): it reaches `on_data` soon after, from
        the event loop. Nothing while the link is not open."""
        if not self.is_open:
            return
        data = (line.encode() if isinstance(line, str) else line) + b"\n"
        size = self._chunk or len(data)
        loop = asyncio.get_running_loop()
        for start in range(0, len(data), size):
            loop.call_soon(self._deliver, data[start : start + size])

    push = say
    """The board says something unasked: an event (``! st ...``, ``! hello ...``)."""

    def _deliver(self, piece: bytes) -> None:
        if self.is_open and self._on_data is not None:  # never after a loss or a close
            self._on_data(piece)

    def stall(self) -> None:
        """The board stops answering (hung, the link still open): requests are kept."""
        if self._stalled is None:
            self._stalled = []

    def resume(self) -> None:
        """The board answers again, the requests it kept first."""
        kept, self._stalled = self._stalled or [], None
        for request in kept:
            for said in self._handler(request) or ():
                self.say(said)

    def drop(self, error: Exception | None = None) -> None:
        """The link goes (a cable pulled, a radio out of range): `on_lost(error)` once, soon
        after, unless the link is closed first; nothing more is delivered."""
        if not self.is_open:
            return
        self._state = "lost"
        asyncio.get_running_loop().call_soon(self._lost, error or LinkError(f"{self.name}: lost"))

    def _lost(self, error: Exception) -> None:
        if self._state == "lost" and self._on_lost is not None:  # not once closed
            self._on_lost(error)

    async def close(self) -> None:
        self._state = "closed"
