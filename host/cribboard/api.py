"""The library API: an async `Board` first, and `SyncBoard`, a thin wrapper for scripts.

async with await Board.open("/dev/ttyACM0") as board:
    await board.peg(0, 12)
    print((await board.state()).front)

with SyncBoard.open("/dev/ttyACM0") as board:
    board.peg(1, 4)
    board.peg(0, 6, key="hand-17", if_front=40)   # safe to repeat: counts once


async with await Board.open_ble("Cribboard-71A3") as board:   # Bluetooth LE (bleak)
    ...
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

from cribboard import portshare, wire
from cribboard.boarddata import (
    MATCH_KINDS,
    Admission,
    BoardState,
    Frame,
    Health,
    History,
    HistoryEntry,
    Match,
    Settings,
)
from cribboard.client import Client, Hello
from cribboard.clientcore import new_game_args, player_refused
from cribboard.discovery import resolve_port
from cribboard.errors import BoardRejected, CribboardError, KeyReused
from cribboard.events import (
    AdmitEvent,
    BoardEvent,
    ButtonEvent,
    EventReader,
    HelloEvent,
    LinkEvent,
    OtherEvent,
    RestoredEvent,
    SettingsEvent,
    StateEvent,
)
from cribboard.names import PLAYER_HELP, player_number
from cribboard.sharing import ble_shared, serial_transport, shared_board
from cribboard.transport import Transport

__all__ = [
    "Admission",
    "AdmitEvent",
    "Board",
    "BoardEvent",
    "BoardState",
    "ButtonEvent",
    "Frame",
    "Health",
    "Hello",
    "History",
    "HistoryEntry",
    "Match",
    "MATCH_KINDS",
    "HelloEvent",
    "KeyReused",
    "key_id",
    "LinkEvent",
    "OtherEvent",
    "Player",
    "RestoredEvent",
    "Settings",
    "SettingsEvent",
    "StateEvent",
    "Subscription",
    "SyncBoard",
    "SyncSubscription",
]

T = TypeVar("T")
Fields = dict[str, str]
Player = int | str
"""A player as the API takes it: 0, 1, 2, or a name (``"blue"``, ``"orange"``, ``"purple"``;
``"a"``, ``"b"``, ``"c"``), the same words as the command line and the bridge."""

HISTORY_READ_MOST = 1024
"""The most finished games read from a board's own history (a board keeps 32: cribcore.limits)."""
HISTORY_FIELDS = ("next", "kept", "most", "at")

KEY_CHARS = "".join(chr(c) for c in range(0x21, 0x7F))
"""What a program's idempotency key may hold: printable ASCII without spaces."""
MAX_KEY = 64
"""The longest idempotency key."""
KEYS_KEPT = 1024
"""Keys a Board remembers with their answers; the board itself remembers the last 8 requests
of this computer (docs/protocol.md, section 2), through a power cut too."""
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def key_id(key: str) -> str:
    """The request id a program's idempotency key travels as: 8 characters, a `K` and seven
    base-62 digits of its SHA-256 (the client's own ids are shorter: they never meet). Raises
    CribboardError for a key that is empty, longer than MAX_KEY or not of KEY_CHARS."""
    if not 0 < len(key) <= MAX_KEY or any(c not in KEY_CHARS for c in key):
        raise CribboardError(
            f"a key is 1 to {MAX_KEY} printable ASCII characters without spaces: {key!r}"
        )
    n = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    digits = []
    for _ in range(7):
        n, d = divmod(n, 62)
        digits.append(_BASE62[d])
    return "K" + "".join(digits)


class Subscription(Generic[T]):
    """What a board pushes, from the moment this was made: `async for` over it. Leave a `with`
    block or call close() to stop (a subscription dropped without either stops when it is
    garbage). Made by Board.events() and Board.states()."""

    def __init__(self, board: Board, pick: Callable[[BoardEvent], T | None]) -> None:
        queue: asyncio.Queue[BoardEvent] = asyncio.Queue()
        self._queue = queue
        self._pick = pick
        self._unsubscribe = board.subscribe(queue.put_nowait)
        self._finalizer = weakref.finalize(self, self._unsubscribe)

    def __aiter__(self) -> Subscription[T]:
        return self

    async def __anext__(self) -> T:
        while True:
            item = self._pick(await self._queue.get())
            if item is not None:
                return item

    def close(self) -> None:
        """Stop receiving."""
        self._finalizer()

    def __enter__(self) -> Subscription[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _every_event(event: BoardEvent) -> BoardEvent:
    return event


def _state_of(event: BoardEvent) -> BoardState | None:
    return event.state if isinstance(event, StateEvent) else None


def _player(player: Player) -> int:
    """A player's number from the API's words (CribboardError for a word that names none)."""
    number = player_number(player)
    if number is None:
        raise CribboardError(f"unknown player {player!r}: use {PLAYER_HELP}")
    return number


def _renamed(old: str, new: str) -> None:
    """A method called by its old name, kept for one release: a DeprecationWarning at the
    caller's line naming the new one (docs/architecture.md, "Old spellings")."""
    warnings.warn(
        f"Board.{old} is deprecated: it is Board.{new} now", DeprecationWarning, stacklevel=3
    )


class Board:
    """An open connection to one board (USB, the virtual board, Bluetooth LE)."""

    def __init__(self, client: Client, on_close: Callable[[], Awaitable[None]] | None = None):
        self._client = client
        self._on_close = on_close
        # A program's keys: what each asked and the board's answer (KEYS_KEPT, the oldest go),
        # and the ones on their way.
        self._keys: OrderedDict[str, tuple[object, Fields]] = OrderedDict()
        self._keys_asked: dict[str, asyncio.Future[Fields]] = {}

    @classmethod
    async def open(
        cls, port: str | None = None, *, timeout: float = 2.0, reconnect: bool = True
    ) -> Board:
        """Connect to a board on a serial port or pyserial URL; None: the one on
        $CRIBBOARD_PORT, else the only board found (as the command line finds it; NoBoardFound
        says what to do when there is none, or several). With `reconnect`, a link that drops
        is opened again by itself (requests wait for it; see :meth:`events`). A port another
        cribboard program of this user has open is not opened twice: this board rides on that
        program's connection (cribboard.sharing)."""
        if port is None:
            port = (await resolve_port()).port
        return await cls.open_transport(
            lambda: serial_transport(port), timeout=timeout, reconnect=reconnect
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
        :meth:`admission`). A board another cribboard program of this user is connected to
        is not connected to twice: this board rides on that program's connection
        (cribboard.sharing)."""
        from cribboard.ble import BleTransport, FoundBleBoard, find

        held = shared_board(target, adapter)
        if held is not None:  # another process of ours is connected: ride on its link
            address, alias = portshare.ble_address(held.key), held.alias

            def riding() -> Transport:
                plain = BleTransport(address, adapter=adapter, scan_timeout=scan_timeout)
                return ble_shared(plain, address, adapter, alias)

            return await cls.open_transport(riding, timeout=timeout, reconnect=reconnect)
        found = await find(target, scan_timeout, adapter=adapter)
        first = [found]

        def transport() -> Transport:
            # The first connection uses the device just found; a reconnect finds it again.
            device: FoundBleBoard | str = first.pop() if first else found.address
            plain = BleTransport(device, adapter=adapter, scan_timeout=scan_timeout)
            return ble_shared(plain, found.address, adapter, found.name)

        return await cls.open_transport(transport, timeout=timeout, reconnect=reconnect)

    @classmethod
    async def open_transport(
        cls,
        factory: Callable[[], Transport],
        *,
        timeout: float = 2.0,
        reconnect: bool = True,
        on_close: Callable[[], Awaitable[None]] | None = None,
        brief: bool = True,
    ) -> Board:
        """Connect through any transport (the factory makes a fresh one per (re)connect).
        `brief`: ask a board that has them for brief events (a peg in one short line; the
        library turns them back into whole states); False talks as a protocol 1.1 host."""
        client = Client(factory, timeout=timeout, reconnect=reconnect, brief=brief)
        await client.connect()
        return cls(client, on_close)

    @property
    def name(self) -> str:
        """Where the board is: its serial port or URL, or ``ble:ADDRESS``."""
        return self._client.name

    @property
    def hello(self) -> Hello:
        """What the board said about itself when the link (last) opened."""
        assert self._client.hello is not None
        return self._client.hello

    @property
    def connected(self) -> bool:
        """Whether the link is up now (False while it reconnects)."""
        return self._client.connected

    async def close(self) -> None:
        await self._client.close()
        if self._on_close is not None:
            await self._on_close()

    async def __aenter__(self) -> Board:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _fields(self, verb: str, *args: int | str, timeout: float | None = None) -> Fields:
        fields: Fields = (await self._client.request(verb, *args, timeout=timeout)).fields
        return fields

    async def _change(
        self, verb: str, args: tuple[int | str, ...], key: str | None, if_rev: int | None
    ) -> Fields:
        """A change, under a program's key (sent as the request's id: the board applies it once
        however often it comes; this Board answers a key it remembers without asking) and on the
        board's revision when given (`stale` otherwise)."""
        if key is None:
            reply = await self._client.request(verb, *args, if_rev=if_rev)
            return reply.fields
        request_id = key_id(key)
        asked = (verb, args, if_rev)
        while True:
            known = self._keys.get(key)
            if known is not None:
                if known[0] != asked:
                    raise KeyReused(key)
                self._keys.move_to_end(key)
                return dict(known[1])
            on_its_way = self._keys_asked.get(key)
            if on_its_way is None:
                break
            with contextlib.suppress(Exception):  # (failed: asked again, below)
                await asyncio.shield(on_its_way)  # the same key twice at once: its one answer
        future: asyncio.Future[Fields] = asyncio.get_running_loop().create_future()
        self._keys_asked[key] = future
        try:
            reply = await self._client.request(verb, *args, request_id=request_id, if_rev=if_rev)
            self._keys[key] = (asked, reply.fields)
            while len(self._keys) > KEYS_KEPT:
                self._keys.popitem(last=False)
            future.set_result(reply.fields)
            return dict(reply.fields)
        except BaseException as err:
            future.set_exception(err if isinstance(err, Exception) else CribboardError("stopped"))
            future.exception()  # (retrieved here: a repeat that waited asks again)
            raise
        finally:
            del self._keys_asked[key]

    # --- reading -------------------------------------------------------------------------------

    async def state(self) -> BoardState:
        return BoardState.from_fields(await self._fields("st"))

    async def frame(self) -> Frame:
        return Frame.from_fields(await self._fields("frame"))

    async def ping(self) -> None:
        await self._fields("ping")

    async def ask_every_change(self) -> None:
        """Have the board push its state after every request, even for requests that reach it
        together (by default it answers those, then pushes once): for a program that tells its
        own changes from others' by the revisions its requests return. Kept across
        reconnects."""
        await self._client.ask_every()

    async def self_test(self, timeout: float | None = None) -> None:
        """Light every LED in chain order, one at a time (the wiring check); the game stays.
        `timeout`: seconds to wait for the reply (default: the board's open timeout)."""
        await self._fields("test", timeout=timeout)

    # --- changing ------------------------------------------------------------------------------

    # Every change below takes, by keyword: `key`, the program's own name for this change (an
    # idempotency key, 1 to 64 printable ASCII characters): the same key again counts once and
    # gets the first answer, even after a power cut of the board (KeyReused when it names
    # another change); `if_rev`, apply it only while the board's revision (BoardState.rev) is
    # still that. A change whose condition no longer holds is refused, BoardRejected with the
    # code `stale`, and changes nothing (protocol 1.3: see Board.hello).

    async def peg(
        self,
        player: Player,
        points: int,
        *,
        key: str | None = None,
        if_front: int | None = None,
        if_rev: int | None = None,
    ) -> int:
        """Score `points` for `player` (0, 1, 2 or a name: see :data:`Player`); returns the
        board's new revision. `if_front`: only while the player's front peg (their score) is
        still that."""
        args = (points,) if if_front is None else (points, if_front)
        return await self._for_player("r", "peg", player, args, key, if_rev)

    async def set_pegs(
        self,
        player: Player,
        front: int,
        back: int | None = None,
        *,
        key: str | None = None,
        if_rev: int | None = None,
    ) -> int:
        """Place a player's pegs; `back` None keeps the back peg where it is. Returns the
        board's new revision."""
        args = (front,) if back is None else (front, back)
        return await self._for_player("r", "set", player, args, key, if_rev)

    async def undo(self, *, key: str | None = None, if_rev: int | None = None) -> int:
        """Take back the last change; returns the board's new revision."""
        return int((await self._change("undo", (), key, if_rev))["r"])

    async def new_game(
        self,
        target: int | None = None,
        players: int | None = None,
        *,
        key: str | None = None,
        if_rev: int | None = None,
    ) -> int:
        """Start a new game (a target of limits.TARGETS, 61 or 121; 2 or 3 players); None keeps
        the current setting. Returns the board's new revision."""
        return int((await self._change("new", new_game_args(target, players), key, if_rev))["r"])

    async def set_dealer(
        self, player: Player | None = None, *, key: str | None = None, if_rev: int | None = None
    ) -> int:
        """Make `player` the dealer, or pass the deal on when None; returns the dealer."""
        if player is None:
            return int((await self._change("deal", (), key, if_rev))["d"])
        return await self._for_player("d", "deal", player, (), key, if_rev)

    async def set_pending(
        self, player: Player, points: int, *, key: str | None = None, if_rev: int | None = None
    ) -> int:
        """Show a pending count on the board: a count entered but not yet pegged, blinking
        where the peg would land (0 clears it); returns the board's revision."""
        return await self._for_player("r", "pend", player, (points,), key, if_rev)

    async def preview(
        self, player: Player, points: int, *, key: str | None = None, if_rev: int | None = None
    ) -> int:
        """Deprecated: the old name of :meth:`set_pending`, kept for one release. It does the
        same and returns the same, with a DeprecationWarning."""
        _renamed("preview", "set_pending")
        return await self.set_pending(player, points, key=key, if_rev=if_rev)

    async def _for_player(
        self,
        field: str,
        verb: str,
        player: Player,
        args: tuple[int, ...],
        key: str | None,
        if_rev: int | None,
    ) -> int:
        """A change about one player; the reply's number under `field`. A player the game does
        not have is refused naming the players it has."""
        try:
            return int((await self._change(verb, (_player(player), *args), key, if_rev))[field])
        except BoardRejected as err:
            if err.code != "bad_player":
                raise
            raise player_refused(err, (await self.state()).players) from None

    async def start_match(
        self,
        length: int,
        kind: str = "best_of",
        *,
        skunk_double: bool | None = None,
        key: str | None = None,
        if_rev: int | None = None,
    ) -> int:
        """Start a match (protocol 1.4: see `hello`): best of `length` games (3, 5, .., 15) or
        first to `length` wins (2..15), `kind` one of MATCH_KINDS; with a new game and the
        games-won tally at 0 (the match's score). `skunk_double`: whether a skunk wins two of
        its games (None: as the board has it; set after the match started). Returns the
        board's revision after the new game."""
        self._needs("match")
        if kind not in MATCH_KINDS:
            raise CribboardError(f"a match is one of {', '.join(MATCH_KINDS)}, not {kind!r}")
        word = "first" if kind == "first_to" else "best"
        rev = int((await self._change("match", (word, length), key, if_rev))["r"])
        if skunk_double is not None:
            await self.set_skunk_double(skunk_double)
        return rev

    async def end_match(self, *, key: str | None = None, if_rev: int | None = None) -> int:
        """No more match play (the game and the tally go on); returns the board's revision."""
        self._needs("match")
        return int((await self._change("match", ("clear",), key, if_rev))["r"])

    async def history(self, since: int = 0) -> History | None:
        """The finished games the board remembers (protocol 1.4; None from an older board),
        oldest first, from its game number `since` on (0: all it keeps), read page by page.
        Every entry is final: a game whose win is taken back is never in it."""
        if "hist" not in self.hello.capabilities:
            return None
        entries: list[HistoryEntry] = []
        start = max(0, since)
        for _page in range(HISTORY_READ_MOST):  # (a page holds one game at least)
            reply = await self._client.request("hist", start)
            entries += [HistoryEntry.from_word(word) for word in reply.words]
            try:
                page = {name: int(reply.fields.get(name, "0")) for name in HISTORY_FIELDS}
            except ValueError:
                raise CribboardError(f"a history page the board sent is not one: {reply.fields}")
            start = page["next"]
            # (A board that pages backwards, or on past what any board keeps, is not followed.)
            if start <= (entries[-1].game if entries else 0) or len(entries) >= HISTORY_READ_MOST:
                break
        return History(entries, page["kept"], page["most"], page["at"])

    def _needs(self, verb: str) -> None:
        """Refuse a verb the board's firmware does not have, saying what to do."""
        if verb not in self.hello.capabilities:
            raise CribboardError(
                f"the board's firmware has no `{verb}` (protocol {self.hello.protocol[0]}."
                f"{self.hello.protocol[1]}): update it (cribboard deploy)"
            )

    async def games(self) -> list[int]:
        return [int(g) for g in (await self._fields("games"))["g"].split(",")]

    async def clear_games(self) -> None:
        await self._fields("games", "clear")

    async def set_skunk_double(self, on: bool) -> None:
        await self._fields("games", "x2", 1 if on else 0)

    async def brightness(self, value: int | None = None) -> int:
        args = () if value is None else (value,)
        return int((await self._fields("bright", *args))["bright"])

    async def budget(self, milliamps: int | None = None) -> int:
        args = () if milliamps is None else (milliamps,)
        return int((await self._fields("budget", *args))["budget"])

    async def settings(self) -> Settings:
        """The brightness and the current budget, read in one request."""
        return Settings.from_fields(await self._fields("bright"))

    async def health(self) -> Health | None:
        """How the board is doing (see :class:`Health`); None from a board whose firmware is
        older than the report (protocol 1.1)."""
        if "health" not in self.hello.capabilities:
            return None
        return Health.from_fields(await self._fields("health"))

    # --- who may change the board -------------------------------------------------------------

    async def admission(self) -> Admission:
        """Whether this link may change the board (a Bluetooth device must be admitted by a tap
        of the board's deal button), open mode, and how many devices are admitted."""
        return Admission.from_fields(await self._fields("admit"))

    async def set_open(self, on: bool) -> Admission:
        """Open mode: every Bluetooth device may change the board (from a link that may)."""
        return Admission.from_fields(await self._fields("admit", "open", 1 if on else 0))

    async def clear_admitted(self) -> Admission:
        """Forget every admitted Bluetooth device (from a link that may change the board)."""
        return Admission.from_fields(await self._fields("admit", "clear"))

    # --- watching ------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[BoardEvent], None]) -> Callable[[], None]:
        """Call `callback(event)` for every event the board pushes (cribboard.events: the
        state, settings, a button, a restart, admission) and for the link's own (lost, back,
        gone); after a reconnect or a board restart, the state read again comes as a
        StateEvent. Returns a function that unsubscribes. The callback runs on the event loop:
        it must not block."""
        reader = EventReader()

        def deliver(line: wire.Line) -> None:
            event = reader.read(line)
            if event is not None:
                callback(event)

        return self._client.subscribe(deliver)

    def events(self) -> Subscription[BoardEvent]:
        """Every event the board pushes from now on, as it comes (see :meth:`subscribe`).
        Subscribe before you change the board, or its event may come before you listen::

        with board.events() as events:
            await board.peg(0, 5)          # its StateEvent is not missed
            async for event in events:
                print(event.to_json())     # {"type": "state", "state": {...}}
        """
        return Subscription(self, _every_event)

    def states(self) -> Subscription[BoardState]:
        """The board's whole state each time it changes from now on, whatever changed it.
        Changes whose requests reach the board together (pipelined, or sent the moment the
        reply before came) share one state: ask_every_change() for one state each."""
        return Subscription(self, _state_of)


class SyncBoard:
    """A blocking wrapper around `Board` for scripts: the same methods, no `await`. It runs an
    event loop on a background thread; callbacks given to subscribe() run on that thread."""

    def __init__(
        self, board: Board, loop: asyncio.AbstractEventLoop, thread: threading.Thread
    ) -> None:
        self._board = board
        self._loop = loop
        self._thread = thread

    @classmethod
    def open(
        cls, port: str | None = None, *, timeout: float = 2.0, reconnect: bool = True
    ) -> SyncBoard:
        """A board on a serial port or pyserial URL, or the one found (see Board.open)."""
        return cls._start(lambda: Board.open(port, timeout=timeout, reconnect=reconnect))

    @classmethod
    def open_ble(
        cls,
        target: str | None = None,
        *,
        timeout: float = 2.0,
        reconnect: bool = True,
        scan_timeout: float = 5.0,
        adapter: str | None = None,
    ) -> SyncBoard:
        """A board over Bluetooth LE (see Board.open_ble)."""
        return cls._start(
            lambda: Board.open_ble(
                target,
                timeout=timeout,
                reconnect=reconnect,
                scan_timeout=scan_timeout,
                adapter=adapter,
            )
        )

    @classmethod
    def open_transport(
        cls,
        factory: Callable[[], Transport],
        *,
        timeout: float = 2.0,
        reconnect: bool = True,
        on_close: Callable[[], Awaitable[None]] | None = None,
        brief: bool = True,
    ) -> SyncBoard:
        """A board through any transport (see Board.open_transport); `on_close` runs on the
        wrapper's event loop."""
        return cls._start(
            lambda: Board.open_transport(
                factory, timeout=timeout, reconnect=reconnect, on_close=on_close, brief=brief
            )
        )

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

    def _call(self, function: Callable[[], T]) -> T:
        """Run a plain function on the loop's thread (what touches the client's state)."""

        async def call() -> T:
            return function()

        return self._run(call())

    def close(self) -> None:
        """Close the link and stop the wrapper's loop; closing again does nothing."""
        if not self._thread.is_alive():
            return
        self._run(self._board.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()

    def __enter__(self) -> SyncBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def name(self) -> str:
        return self._board.name

    @property
    def hello(self) -> Hello:
        return self._board.hello

    @property
    def connected(self) -> bool:
        return self._board.connected

    # --- reading -------------------------------------------------------------------------------

    def state(self) -> BoardState:
        return self._run(self._board.state())

    def frame(self) -> Frame:
        return self._run(self._board.frame())

    def ping(self) -> None:
        return self._run(self._board.ping())

    def ask_every_change(self) -> None:
        return self._run(self._board.ask_every_change())

    def self_test(self, timeout: float | None = None) -> None:
        return self._run(self._board.self_test(timeout))

    # --- changing ------------------------------------------------------------------------------

    def peg(
        self,
        player: Player,
        points: int,
        *,
        key: str | None = None,
        if_front: int | None = None,
        if_rev: int | None = None,
    ) -> int:
        return self._run(self._board.peg(player, points, key=key, if_front=if_front, if_rev=if_rev))

    def set_pegs(
        self,
        player: Player,
        front: int,
        back: int | None = None,
        *,
        key: str | None = None,
        if_rev: int | None = None,
    ) -> int:
        return self._run(self._board.set_pegs(player, front, back, key=key, if_rev=if_rev))

    def undo(self, *, key: str | None = None, if_rev: int | None = None) -> int:
        return self._run(self._board.undo(key=key, if_rev=if_rev))

    def new_game(
        self,
        target: int | None = None,
        players: int | None = None,
        *,
        key: str | None = None,
        if_rev: int | None = None,
    ) -> int:
        return self._run(self._board.new_game(target, players, key=key, if_rev=if_rev))

    def set_dealer(
        self, player: Player | None = None, *, key: str | None = None, if_rev: int | None = None
    ) -> int:
        return self._run(self._board.set_dealer(player, key=key, if_rev=if_rev))

    def set_pending(
        self, player: Player, points: int, *, key: str | None = None, if_rev: int | None = None
    ) -> int:
        return self._run(self._board.set_pending(player, points, key=key, if_rev=if_rev))

    def preview(
        self, player: Player, points: int, *, key: str | None = None, if_rev: int | None = None
    ) -> int:
        """Deprecated: the old name of :meth:`set_pending`, kept for one release."""
        return self._run(self._board.preview(player, points, key=key, if_rev=if_rev))

    def start_match(
        self,
        length: int,
        kind: str = "best_of",
        *,
        skunk_double: bool | None = None,
        key: str | None = None,
        if_rev: int | None = None,
    ) -> int:
        return self._run(
            self._board.start_match(length, kind, skunk_double=skunk_double, key=key, if_rev=if_rev)
        )

    def end_match(self, *, key: str | None = None, if_rev: int | None = None) -> int:
        return self._run(self._board.end_match(key=key, if_rev=if_rev))

    def history(self, since: int = 0) -> History | None:
        return self._run(self._board.history(since))

    def games(self) -> list[int]:
        return self._run(self._board.games())

    def clear_games(self) -> None:
        return self._run(self._board.clear_games())

    def set_skunk_double(self, on: bool) -> None:
        return self._run(self._board.set_skunk_double(on))

    def brightness(self, value: int | None = None) -> int:
        return self._run(self._board.brightness(value))

    def budget(self, milliamps: int | None = None) -> int:
        return self._run(self._board.budget(milliamps))

    def settings(self) -> Settings:
        return self._run(self._board.settings())

    def health(self) -> Health | None:
        return self._run(self._board.health())

    # --- who may change the board -------------------------------------------------------------

    def admission(self) -> Admission:
        return self._run(self._board.admission())

    def set_open(self, on: bool) -> Admission:
        return self._run(self._board.set_open(on))

    def clear_admitted(self) -> Admission:
        return self._run(self._board.clear_admitted())

    # --- watching ------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[BoardEvent], None]) -> Callable[[], None]:
        """As Board.subscribe; the callback runs on the wrapper's event-loop thread."""
        unsubscribe = self._call(lambda: self._board.subscribe(callback))
        return lambda: self._call(unsubscribe)

    def events(self) -> SyncSubscription[BoardEvent]:
        """Every event from now on, as a blocking iterator (see Board.events)."""
        return SyncSubscription(self._call(self._board.events), self._loop)

    def states(self) -> SyncSubscription[BoardState]:
        """The whole state each time it changes from now on, as a blocking iterator."""
        return SyncSubscription(self._call(self._board.states), self._loop)


class SyncSubscription(Generic[T]):
    """A Subscription for scripts: `for event in board.events():` blocks for each one;
    next_within() gives up after a timeout. Leave a `with` block or close() to stop."""

    def __init__(self, subscription: Subscription[T], loop: asyncio.AbstractEventLoop) -> None:
        self._subscription = subscription
        self._loop = loop

    def __iter__(self) -> SyncSubscription[T]:
        return self

    def __next__(self) -> T:
        return self.next_within(None)

    def next_within(self, timeout: float | None) -> T:
        """The next item; TimeoutError when none comes within `timeout` seconds (None: wait)."""
        future = asyncio.run_coroutine_threadsafe(anext(self._subscription), self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._subscription.close)

    def __enter__(self) -> SyncSubscription[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
