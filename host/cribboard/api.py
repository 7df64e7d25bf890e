"""The library API: an async `Board` first, and `SyncBoard`, a thin wrapper for scripts.

async with await Board.open("/dev/ttyACM0") as board:
    await board.peg(0, 12)
    print((await board.state()).front)

with SyncBoard.open("/dev/ttyACM0") as board:
    board.peg(1, 4)

async with await Board.open_ble("Cribboard-71A3") as board:   # Bluetooth LE (bleak)
    ...
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from cribboard.client import Client, Event, Hello
from cribboard.errors import CribboardError
from cribboard.transport import SerialTransport, Transport
from cribcore import protocol
from cribcore.layout import HOLES

T = TypeVar("T")


@dataclass(frozen=True)
class BoardState:
    """The game a board shows. Lists have one entry per player (or partnership)."""

    rev: int
    target: int
    players: int
    dealer: int
    winner: int | None
    result: str  # playing, won, skunk, double_skunk
    front: list[int]
    back: list[int]
    games: list[int]
    pending: list[int]
    undo: int
    skunk_double: bool

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> BoardState:
        """Build from the protocol's state fields (raises CribboardError if some are missing)."""
        s = protocol.decode_state(fields)
        try:
            return cls(
                rev=s["rev"],
                target=s["target"],
                players=s["players"],
                dealer=s["dealer"],
                winner=None if s["winner"] < 0 else s["winner"],
                result=protocol.RESULT_NAMES[s["result"]],
                front=s["front"],
                back=s["back"],
                games=s["games"],
                pending=s["pending"],
                undo=s["undo"],
                skunk_double=bool(s["skunk_double"]),
            )
        except (KeyError, IndexError) as err:
            raise CribboardError(f"incomplete state from the board: {fields}") from err

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON output."""
        return {
            "rev": self.rev,
            "target": self.target,
            "players": self.players,
            "dealer": self.dealer,
            "winner": self.winner,
            "result": self.result,
            "front": self.front,
            "back": self.back,
            "games": self.games,
            "pending": self.pending,
            "undo": self.undo,
            "skunk_double": self.skunk_double,
        }


@dataclass(frozen=True)
class Admission:
    """Who may change the board (docs/protocol.md, section 11): `open` mode lets every link;
    `you`: this link is USB or an admitted Bluetooth device; `admitted`: devices remembered."""

    open: bool
    you: bool
    admitted: int

    @property
    def may_change(self) -> bool:
        return self.open or self.you

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> Admission:
        return cls(
            fields.get("open") == "1", fields.get("you") == "1", int(fields.get("admitted", "0"))
        )


@dataclass(frozen=True)
class Frame:
    """The LEDs as the board drew them: `rgb` has 3 bytes per hole in hole order (see
    cribcore.layout), before brightness; `scale` (of 256) is the brightness and current limiter
    applied on the strip, `milliamps` the estimated draw."""

    rgb: bytes
    scale: int
    milliamps: int

    def hole(self, hole: int) -> tuple[int, int, int]:
        i = 3 * hole
        return (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])


class Board:
    """An open connection to one board (USB, the virtual board, Bluetooth LE)."""

    def __init__(self, client: Client, on_close: Callable[[], Awaitable[None]] | None = None):
        self.client = client
        self._on_close = on_close

    @classmethod
    async def open(cls, port: str, *, timeout: float = 2.0, reconnect: bool = True) -> Board:
        """Connect to a board on a serial port or pyserial URL."""
        return await cls.open_transport(
            lambda: SerialTransport(port), timeout=timeout, reconnect=reconnect
        )

    @classmethod
    async def open_ble(
        cls,
        target: str | None = None,
        *,
        timeout: float = 2.0,
        reconnect: bool = True,
        scan_timeout: float = 5.0,
        adapter: str | None = None,
    ) -> Board:
        """Connect to a board over Bluetooth LE: `target` is its advertised name
        (``Cribboard-71A3``) or address, or None for the only board advertising. Reconnects
        find it again by address. A board changes only for an admitted device (see
        :meth:`admission`)."""
        from cribboard.ble import BleTransport, find

        found = await find(target, scan_timeout, adapter=adapter)
        first = [found]

        def transport() -> Transport:
            if first:  # the first connection uses the device just found
                return BleTransport(first.pop(), adapter=adapter, scan_timeout=scan_timeout)
            return BleTransport(found.address, adapter=adapter, scan_timeout=scan_timeout)

        return await cls.open_transport(transport, timeout=timeout, reconnect=reconnect)

    @classmethod
    async def open_transport(
        cls,
        factory: Callable[[], Transport],
        *,
        timeout: float = 2.0,
        reconnect: bool = True,
        on_close: Callable[[], Awaitable[None]] | None = None,
    ) -> Board:
        """Connect through any transport (the factory makes a fresh one per (re)connect)."""
        client = Client(factory, timeout=timeout, reconnect=reconnect)
        await client.connect()
        return cls(client, on_close)

    @property
    def hello(self) -> Hello:
        assert self.client.hello is not None
        return self.client.hello

    async def close(self) -> None:
        await self.client.close()
        if self._on_close is not None:
            await self._on_close()

    async def __aenter__(self) -> Board:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- reading -------------------------------------------------------------------------------

    async def state(self) -> BoardState:
        return BoardState.from_fields((await self.client.request("st")).fields)

    async def frame(self) -> Frame:
        fields = (await self.client.request("frame")).fields
        rgb = protocol.decode_frame(fields.get("rgb", ""))
        if len(rgb) != 3 * HOLES:
            raise CribboardError(f"frame has {len(rgb) // 3} holes, expected {HOLES}")
        return Frame(rgb, int(fields.get("scale", 0)), int(fields.get("ma", 0)))

    async def ping(self) -> None:
        await self.client.request("ping")

    async def self_test(self) -> None:
        """Light every LED in chain order, one at a time (the wiring check); the game stays."""
        await self.client.request("test")

    # --- changing ------------------------------------------------------------------------------

    async def peg(self, player: int, points: int) -> int:
        """Score `points` for `player` (0-based); returns the board's new revision."""
        return int((await self.client.request("peg", player, points)).fields["r"])

    async def set_pegs(self, player: int, front: int, back: int | None = None) -> int:
        """Place a player's pegs; `back` None keeps the back peg where it is."""
        args = (player, front) if back is None else (player, front, back)
        return int((await self.client.request("set", *args)).fields["r"])

    async def undo(self) -> int:
        return int((await self.client.request("undo")).fields["r"])

    async def new_game(self, target: int | None = None, players: int | None = None) -> int:
        """Start a new game (61 or 121; 2 or 3 players); None keeps the current setting."""
        args: tuple[int, ...] = ()
        if target is not None or players is not None:
            args = (target or 0,) if players is None else (target or 0, players)
        return int((await self.client.request("new", *args)).fields["r"])

    async def set_dealer(self, player: int | None = None) -> int:
        """Make `player` the dealer, or pass the deal on when None; returns the dealer."""
        args = () if player is None else (player,)
        return int((await self.client.request("deal", *args)).fields["d"])

    async def preview(self, player: int, points: int) -> None:
        """Show a pending count on the board (0 clears it)."""
        await self.client.request("pend", player, points)

    async def games(self) -> list[int]:
        fields = (await self.client.request("games")).fields
        return [int(g) for g in fields["g"].split(",")]

    async def clear_games(self) -> None:
        await self.client.request("games", "clear")

    async def set_skunk_double(self, on: bool) -> None:
        await self.client.request("games", "x2", 1 if on else 0)

    async def brightness(self, value: int | None = None) -> int:
        args = () if value is None else (value,)
        return int((await self.client.request("bright", *args)).fields["bright"])

    async def budget(self, milliamps: int | None = None) -> int:
        args = () if milliamps is None else (milliamps,)
        return int((await self.client.request("budget", *args)).fields["budget"])

    # --- who may change the board -------------------------------------------------------------

    async def admission(self) -> Admission:
        """Whether this link may change the board (a Bluetooth device must be admitted by a tap
        of the board's deal button), open mode, and how many devices are admitted."""
        return Admission.from_fields((await self.client.request("admit")).fields)

    async def set_open(self, on: bool) -> Admission:
        """Open mode: every Bluetooth device may change the board (from a link that may)."""
        return Admission.from_fields(
            (await self.client.request("admit", "open", 1 if on else 0)).fields
        )

    async def clear_admitted(self) -> Admission:
        """Forget every admitted Bluetooth device (from a link that may change the board)."""
        return Admission.from_fields((await self.client.request("admit", "clear")).fields)

    # --- watching ------------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[Event]:
        """Every event the board pushes, as it comes (state, settings, hello, link)."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        unsubscribe = self.client.subscribe(queue.put_nowait)
        try:
            while True:
                yield await queue.get()
        finally:
            unsubscribe()

    async def states(self) -> AsyncIterator[BoardState]:
        """The board's state each time it changes, whatever changed it."""
        async for event in self.events():
            if event.name == "st":
                yield BoardState.from_fields(event.fields)


class SyncBoard:
    """A blocking wrapper around `Board` for scripts: the same methods, no `await`. It runs an
    event loop on a background thread."""

    def __init__(
        self, board: Board, loop: asyncio.AbstractEventLoop, thread: threading.Thread
    ) -> None:
        self._board = board
        self._loop = loop
        self._thread = thread

    @classmethod
    def open(cls, port: str, *, timeout: float = 2.0) -> SyncBoard:
        return cls._start(lambda: Board.open(port, timeout=timeout))

    @classmethod
    def open_ble(cls, target: str | None = None, *, timeout: float = 2.0) -> SyncBoard:
        """A board over Bluetooth LE (see Board.open_ble)."""
        return cls._start(lambda: Board.open_ble(target, timeout=timeout))

    @classmethod
    def _start(cls, opener: Callable[[], Coroutine[Any, Any, Board]]) -> SyncBoard:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="cribboard", daemon=True)
        thread.start()
        try:
            board = asyncio.run_coroutine_threadsafe(opener(), loop).result()
        except BaseException:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            raise
        return cls(board, loop, thread)

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def close(self) -> None:
        self._run(self._board.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()

    def __enter__(self) -> SyncBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def hello(self) -> Hello:
        return self._board.hello

    def state(self) -> BoardState:
        return self._run(self._board.state())

    def frame(self) -> Frame:
        return self._run(self._board.frame())

    def peg(self, player: int, points: int) -> int:
        return self._run(self._board.peg(player, points))

    def set_pegs(self, player: int, front: int, back: int | None = None) -> int:
        return self._run(self._board.set_pegs(player, front, back))

    def undo(self) -> int:
        return self._run(self._board.undo())

    def new_game(self, target: int | None = None, players: int | None = None) -> int:
        return self._run(self._board.new_game(target, players))

    def set_dealer(self, player: int | None = None) -> int:
        return self._run(self._board.set_dealer(player))

    def preview(self, player: int, points: int) -> None:
        self._run(self._board.preview(player, points))

    def brightness(self, value: int | None = None) -> int:
        return self._run(self._board.brightness(value))

    def budget(self, milliamps: int | None = None) -> int:
        return self._run(self._board.budget(milliamps))
