"""Helpers the tests share (the fixtures are in conftest.py): following a board's events, waiting
for a state, plain request lines on a serial link, a running bridge and its WebSocket messages, and the game a virtual board saved on
its flash."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import serial

from cribboard.api import Board, BoardEvent, BoardState, ButtonEvent, StateEvent
from cribboard.bridge.server import Bridge
from cribboard.client import Event
from cribboard.virtual import VirtualControl
from cribcore.profiles import PROFILES
from cribcore.state import GameState
from cribfw import gamerecord
from cribfw.buttons import Button

WAIT_S = 20.0
"""How long a test waits for an event before it fails: only a bound for a test that is broken.
A passing test never waits it out (it goes on at the event), so a busy machine's slowness
must not reach it: generous, like hallsupport's."""

Spawn = Callable[..., "subprocess.Popen[Any]"]
"""The `spawn` fixture (tests/conftest.py): subprocess.Popen's arguments, a process killed
after the test if it still runs."""


AnyEvent = BoardEvent | Event
"""What a Board's subscribers get (typed events), or a Client's (the protocol's lines)."""


class EventLog:
    """Keeps the events a board (or a client) pushes: `board.subscribe(log)`, or
    `EventLog.of(board)`. wait() takes out the first one that matches, waiting for it."""

    def __init__(self) -> None:
        self.events: list[AnyEvent] = []
        self._changed = asyncio.Event()

    @classmethod
    def of(cls, board: Board) -> EventLog:
        log = cls()
        board.subscribe(log)
        return log

    def __call__(self, event: AnyEvent) -> None:
        self.events.append(event)
        self._changed.set()

    async def wait(self, match: Callable[[Any], bool], timeout: float = WAIT_S) -> Any:
        async def scan() -> AnyEvent:
            while True:
                for event in self.events:
                    if match(event):
                        self.events.remove(event)
                        return event
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(scan(), timeout)


def state_event(check: Callable[[BoardState], bool]) -> Callable[[BoardEvent], bool]:
    """An EventLog match: a state event whose state passes `check`."""
    return lambda e: isinstance(e, StateEvent) and check(e.state)


async def wait_state(
    board: Board, check: Callable[[BoardState], bool], timeout: float = WAIT_S
) -> BoardState:
    """The board's state once `check` passes: now, or at one of the changes to come."""
    with board.states() as states:
        state = await board.state()
        try:
            async with asyncio.timeout(timeout):
                while not check(state):
                    state = await anext(states)
        except TimeoutError:
            raise AssertionError(f"state never matched: {state}") from None
    return state


def raw_exchange(port: str, lines: list[bytes], timeout: float = 3.0) -> list[bytes]:
    """Send request lines one by one on a plain serial link; collect every line that comes back
    until each request has had its reply (leaving out the board's boot announcement). The link
    asks for an event after every request meanwhile (`every 1`, taken back at the end): the
    ping that marks where a request's events end may otherwise be read with the request, and
    the board pushes once after both."""
    got: list[bytes] = []
    with serial.Serial(port, timeout=timeout) as link:
        _ask_every(link, 1)
        for line in lines:
            link.write(line)
            while True:
                reply = link.readline()
                assert reply.endswith(b"\n"), f"no reply to {line!r}: {got!r}"
                if not reply.startswith(b"! hello "):
                    got.append(reply)
                if not reply.startswith(b"!"):
                    break
            # The events a request causes follow its reply at once: a ping behind it marks
            # where they end.
            link.write(b"#zz9 ping\n")
            while (event := link.readline()) != b"#zz9 ok\n":
                assert event.startswith(b"!"), f"unexpected line {event!r}"
                got.append(event)
        _ask_every(link, 0)
    return got


def _ask_every(link: serial.Serial, on: int) -> None:
    link.write(b"every %d\n" % on)  # (no id: an id's reply is remembered, an id resends)
    while (line := link.readline()) != b"ok every=%d\n" % on:
        assert line.startswith(b"!"), f"unexpected line {line!r}"  # (the boot's hello)


# --- the bridge --------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def running_bridge(*ports: str, **options: Any) -> AsyncIterator[Bridge]:
    """A bridge on a free port of 127.0.0.1, its boards connected."""
    options.setdefault("http_port", 0)
    async with Bridge(list(ports), **options) as bridge:
        if ports:
            await bridge.registry.wait_connected(10.0)
        yield bridge


async def next_message(
    ws: aiohttp.ClientWebSocketResponse,
    match: Callable[[dict[str, Any]], bool],
    timeout: float = WAIT_S,
) -> dict[str, Any]:
    """The next WebSocket message of the bridge that matches."""

    async def scan() -> dict[str, Any]:
        while True:
            message = await ws.receive_json()
            if match(message):
                return message  # type: ignore[no-any-return]

    return await asyncio.wait_for(scan(), timeout)


async def wait_bridge_state(
    bridge: Bridge, check: Callable[[dict[str, Any]], bool], timeout: float = WAIT_S
) -> dict[str, Any]:
    """The first board's state (as JSON) once `check` passes: the WebSocket's snapshot, or a
    change to come."""
    seen: list[dict[str, Any]] = []

    def matches(message: dict[str, Any]) -> bool:
        if message["type"] != "state":
            return False
        seen.append(message["state"])
        return check(message["state"])

    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(bridge.url + "api/ws") as ws:
            try:
                message = await next_message(ws, matches, timeout)
            except TimeoutError:
                raise AssertionError(f"state never matched: {seen[-1:]}") from None
    return message["state"]  # type: ignore[no-any-return]


# --- the flash ---------------------------------------------------------------------------------


def saved_games(image: Path) -> list[GameState]:
    """The games the store saved in a virtual board's flash image, oldest first: every intact
    record in it (littlefs writes a file's bytes whole, and keeps older copies until it reuses
    their blocks). The record's layout is cribfw/gamerecord.py's; `decode` checks it."""
    data = image.read_bytes()
    found: list[tuple[int, GameState]] = []
    at = data.find(b"CRIB")
    while at >= 0:
        body = int.from_bytes(data[at + 6 : at + 8], "little")  # the header's body length
        record = gamerecord.decode(data[at : at + 12 + body + 4])  # header, body, crc32
        if isinstance(record, tuple):
            game = GameState()
            gamerecord.apply(record, game, SimpleNamespace(brightness=0, budget_ma=0))
            found.append((record[0], game))
        at = data.find(b"CRIB", at + 1)
    return [game for _, game in sorted(found, key=lambda seq_game: seq_game[0])]


def wait_saved_sync(
    image: Path, check: Callable[[GameState], bool], timeout: float = WAIT_S
) -> GameState:
    """wait_saved for tests without an event loop."""
    return asyncio.run(wait_saved(image, check, timeout))


async def wait_saved(
    image: Path, check: Callable[[GameState], bool], timeout: float = WAIT_S
) -> GameState:
    """The newest game saved on the flash once it passes `check` (the store saves a quiet
    moment after a change). Reads the image each time it is written."""
    deadline = time.monotonic() + timeout
    seen = -1
    while True:
        written = os.stat(image).st_mtime_ns
        if written != seen:
            seen = written
            games = saved_games(image)
            if games and check(games[-1]):
                return games[-1]
        if time.monotonic() > deadline:
            raise AssertionError(f"no matching game saved within {timeout:g} s")
        await asyncio.sleep(0.02)  # the next look at the file's modification time


PINS = PROFILES["sim"].buttons
HOLD_MS = Button.LONG_MS + 100  # a hold: long enough for the long-press action
TAP_MS = 60
GAP_S = 0.08


class Presser:
    """Presses the virtual board's buttons as fingers would. A simulated press starts when the
    firmware first looks at its pin (firmware/sim/simlink.py), late on a busy machine, so a
    press sent by the test's clock alone could overlap the one before and merge with it: each
    waits for the board to report it first. A tap waits for its `btn` event (sent once the
    firmware saw it released); a hold for its `hold` event, then for the rest of its length,
    counted from there."""

    def __init__(self, sim: VirtualControl, host: Board) -> None:
        self.sim = sim
        self.log = EventLog.of(host)

    async def reported(self, name: str, action: str) -> None:
        await self.log.wait(lambda e: e == ButtonEvent(name, action))

    async def tap(self, name: str, times: int = 1) -> None:
        for _ in range(times):
            self.sim.press(str(PINS[name]), ms=TAP_MS)
            await self.reported(name, "tap")

    async def hold(self, name: str, ms: int = HOLD_MS) -> None:
        self.sim.press(str(PINS[name]), ms=ms)
        await self.reported(name, "hold")  # LONG_MS into the press, by the board's clock
        await asyncio.sleep((ms - Button.LONG_MS) / 1000 + GAP_S)  # the rest of the press

    async def count(self, name: str, points: int) -> None:
        """Enter `points` on a player's "+": holds for the fives, taps for the rest."""
        fives, ones = divmod(points, 5)
        if fives:
            # held: 5 at LONG_MS, then 5 more every REPEAT_MS
            ms = Button.DEBOUNCE_MS + Button.LONG_MS + (fives - 1) * Button.REPEAT_MS + 100
            await self.hold(name, ms)
        await self.tap(name, ones)
