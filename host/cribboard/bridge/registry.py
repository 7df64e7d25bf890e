"""The boards the bridge holds, each addressed by an id (b1, b2, ...).

Each board has a keeper task that opens it, follows its events and, when the link is gone for
good (the client's own reconnect gave up, or the board was never there), opens it again, for as
long as the bridge runs. Every board event becomes a bridge message for the hub (see
docs/bridge.md, "WebSocket"); the registry also keeps the last state, settings and frame of each
board, so a new subscriber starts from a snapshot."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from cribboard.api import (
    Board,
    BoardEvent,
    BoardState,
    Frame,
    HelloEvent,
    LinkEvent,
    Settings,
    SettingsEvent,
    StateEvent,
)
from cribboard.client import Hello
from cribboard.errors import CribboardError
from cribboard.i18n import _
from cribboard.waiting import within
from cribboard.web.hub import Hub

log = logging.getLogger(__name__)

Opener = Callable[[str], Awaitable[Board]]

RETRY_S = 1.0  # between attempts to open a board that is not there
FRAME_POLL_S = 0.25  # frame refresh while the board animates (a blinking pending count, the winner)
DISCOVERY_S = 3.0  # between scans for newly plugged-in boards


def _message(entry: BoardEntry, event: BoardEvent) -> dict[str, Any]:
    """A board's event as the bridge sends it: its type, the board's id, the rest."""
    message = event.to_json()
    return {"type": message.pop("type"), "board": entry.id, **message}


def frame_json(frame: Frame) -> dict[str, Any]:
    return {"scale": frame.scale, "milliamps": frame.milliamps, "rgb": frame.rgb.hex()}


class BoardEntry:
    """One board: where it is, whether it is connected, and what it last said."""

    def __init__(self, board_id: str, port: str, kind: str) -> None:
        self.id = board_id
        self.port = port
        self.kind = kind  # usb (a serial port or pyserial URL), ble, virtual
        self.board: Board | None = None
        self.connected = False
        self.problem = ""
        self.hello: Hello | None = None
        self.state: BoardState | None = None
        self.settings: Settings | None = None
        self.frame: dict[str, Any] | None = None
        self.frame_dirty = False
        self.frame_task: asyncio.Task[None] | None = None
        self.task: asyncio.Task[None] | None = None
        self.away = False  # its loss was said, its return not yet
        self.epoch = 0
        """Counts the times its states started again (opened, reconnected, restarted): states
        may have been missed between two epochs."""

    def info(self) -> dict[str, Any]:
        hello = self.hello
        return {
            "id": self.id,
            "port": self.port,
            "kind": self.kind,
            "connected": self.connected,
            "problem": self.problem or None,
            "board": hello.board if hello else None,
            "firmware": hello.firmware if hello else None,
            "protocol": f"{hello.protocol[0]}.{hello.protocol[1]}" if hello else None,
            "layout": hello.layout if hello else None,
        }

    def state_json(self) -> dict[str, Any] | None:
        return self.state.to_json() if self.state is not None else None

    def cfg_json(self) -> dict[str, int] | None:
        """The settings as the bridge's `cfg` message carries them."""
        if self.settings is None:
            return None
        return {"bright": self.settings.brightness, "budget": self.settings.budget}

    def animating(self) -> bool:
        state = self.state
        return state is not None and (state.winner is not None or any(state.pending))


BLE_PREFIX = (
    "ble:"  # a board reached over Bluetooth LE: ble:NAME_OR_ADDRESS (ble: alone: the only one)
)


async def _open_board(port: str) -> Board:
    if port.startswith(BLE_PREFIX):
        return await Board.open_ble(port[len(BLE_PREFIX) :] or None, timeout=2.0)
    return await Board.open(port, timeout=2.0)


class Registry:
    def __init__(
        self,
        hub: Hub,
        *,
        opener: Opener = _open_board,
        retry_s: float = RETRY_S,
        frame_poll_s: float = FRAME_POLL_S,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.hub = hub
        # Tells the person running the bridge when a board goes away and comes back.
        self._say = say or (lambda text: log.info("%s", text))
        self.entries: dict[str, BoardEntry] = {}
        self._opener = opener
        self._retry_s = retry_s
        self._frame_poll_s = frame_poll_s
        self._discovery: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        # Called with the board's entry after each new state (a hall table publishes it).
        self.state_listeners: list[Callable[[BoardEntry], None]] = []
        # Every change pushed on its own, even of requests that reach the board together (a
        # hall's director judges a game by every revision): asked of each board opened.
        self.every_change = False

    # --- boards ------------------------------------------------------------------------------

    def add(self, port: str, kind: str = "usb") -> BoardEntry:
        entry = BoardEntry(f"b{len(self.entries) + 1}", port, kind)
        self.entries[entry.id] = entry
        entry.task = asyncio.create_task(self._keep(entry), name=f"cribboard-bridge-{entry.id}")
        self._boards_changed()
        return entry

    def get(self, board_id: str | None) -> BoardEntry | None:
        """The board with this id; None: the first board. None when there is no such board."""
        if board_id is None:
            return next(iter(self.entries.values()), None)
        return self.entries.get(board_id)

    def boards_json(self) -> list[dict[str, Any]]:
        return [entry.info() for entry in self.entries.values()]

    async def wait_connected(self, timeout: float = 10.0) -> None:
        """Wait until every board is connected (tests, the command line's first message)."""

        async def all_up() -> None:
            while not (
                self.entries and all(e.connected and e.state for e in self.entries.values())
            ):
                self._changed.clear()
                await self._changed.wait()

        await within(all_up(), timeout)

    async def wait_board(self, entry: BoardEntry, timeout: float) -> bool:
        """Wait (up to `timeout` s) for a board that is being opened or reopened."""

        async def up() -> None:
            while not (entry.connected and entry.board is not None):
                self._changed.clear()
                await self._changed.wait()

        try:
            await within(up(), timeout)
        except TimeoutError:
            return False
        return True

    def start_discovery(self, interval_s: float = DISCOVERY_S) -> None:
        """Add boards found on USB (supported ids, answering hello), now and as they appear."""
        if self._discovery is None:
            self._discovery = asyncio.create_task(self._discover(interval_s))

    async def close(self) -> None:
        tasks = [
            t
            for t in [self._discovery]
            + [e.task for e in self.entries.values()]
            + [e.frame_task for e in self.entries.values()]
            if t is not None
        ]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for entry in self.entries.values():
            board, entry.board = entry.board, None
            entry.connected = False
            if board is not None:
                with contextlib.suppress(Exception):
                    await board.close()

    # --- keeping a board ---------------------------------------------------------------------

    async def _keep(self, entry: BoardEntry) -> None:
        while True:
            try:
                board = await self._opener(entry.port)
            except (CribboardError, OSError) as err:
                if entry.problem != str(err):
                    entry.problem = str(err)
                    log.info("%s (%s): %s", entry.id, entry.port, err)
                    self._boards_changed()
                await asyncio.sleep(self._retry_s)
                continue
            gone = asyncio.Event()
            # Unsubscribed before this iteration ends, so binding `gone` late is right.
            unsubscribe = board.subscribe(
                lambda event: self._on_event(entry, event, gone)  # noqa: B023
            )
            entry.board = board
            entry.hello = board.hello
            entry.connected = True
            self._back(entry)
            entry.problem = ""
            entry.state = None
            entry.epoch += 1
            try:
                if self.every_change:
                    with contextlib.suppress(CribboardError):
                        await board.ask_every_change()
                await self._resync(entry, board)
                await gone.wait()
            finally:
                unsubscribe()
                entry.board = None
                entry.connected = False
                with contextlib.suppress(Exception):
                    await board.close()
            entry.problem = "link gone: reopening"
            entry.away = True
            self._say(
                _(
                    "board %(board)s (%(port)s) did not come back: opening it again as soon as "
                    "it answers",
                    board=entry.id,
                    port=entry.port,
                )
            )
            self.hub.publish({"type": "link", "board": entry.id, "state": "gone"})
            self._boards_changed()
            await asyncio.sleep(self._retry_s)

    async def _resync(self, entry: BoardEntry, board: Board) -> None:
        try:
            state = await board.state()
            settings = await board.settings()
        except CribboardError as err:
            log.info("%s: resync failed: %s", entry.id, err)
            return
        self._boards_changed()
        if entry.state is None or state.rev >= entry.state.rev:
            entry.state = state
            self._publish_state(entry)
        self._set_settings(entry, settings)

    def _on_event(self, entry: BoardEntry, event: BoardEvent, gone: asyncio.Event) -> None:
        """A board's event as the bridge's message: the library's own shape (cribboard.events)
        with the board's id; the state and settings are also kept for new subscribers."""
        if isinstance(event, StateEvent):
            # A state older than the one kept (a lower rev) is a late copy: passed over.
            if entry.state is None or event.state.rev >= entry.state.rev:
                entry.state = event.state
                self._publish_state(entry)
            return
        if isinstance(event, SettingsEvent):
            self._set_settings(entry, event.settings)
            return
        if isinstance(event, LinkEvent):
            if event.state == "gone":
                gone.set()
                return
            entry.connected = event.state != "lost"
            if event.state == "back":
                entry.state = None
                entry.epoch += 1
                self._back(entry)
            else:
                entry.away = True
                self._say(
                    _(
                        "board %(board)s (%(port)s) is lost: reconnecting",
                        board=entry.id,
                        port=entry.port,
                    )
                )
        elif isinstance(event, HelloEvent):
            # The board restarted: its revisions start again from 0.
            entry.state = None
            entry.epoch += 1
            with contextlib.suppress(CribboardError):
                entry.hello = Hello.from_fields(event.fields)
        self.hub.publish(_message(entry, event))
        if isinstance(event, LinkEvent | HelloEvent):
            self._boards_changed()

    def _back(self, entry: BoardEntry) -> None:
        if entry.away:
            entry.away = False
            self._say(_("board %(board)s (%(port)s) is back", board=entry.id, port=entry.port))

    def _publish_state(self, entry: BoardEntry) -> None:
        self.hub.publish({"type": "state", "board": entry.id, "state": entry.state_json()})
        for listener in self.state_listeners:
            listener(entry)
        self.want_frame(entry)

    def _set_settings(self, entry: BoardEntry, settings: Settings) -> None:
        entry.settings = settings
        self.hub.publish({"type": "cfg", "board": entry.id, **(entry.cfg_json() or {})})
        self.want_frame(entry)

    def _boards_changed(self) -> None:
        self._changed.set()
        self.hub.publish({"type": "boards", "boards": self.boards_json()})

    # --- frames ------------------------------------------------------------------------------

    def want_frame(self, entry: BoardEntry) -> None:
        """Read the board's frame and push it, if some subscriber mirrors the LEDs; keep reading
        it while the board animates."""
        if not self.hub.wants_frames(entry.id):
            entry.frame = None  # nobody watches: do not keep a stale copy
            return
        entry.frame_dirty = True
        if entry.frame_task is None or entry.frame_task.done():
            entry.frame_task = asyncio.create_task(self._frame_loop(entry))

    async def _frame_loop(self, entry: BoardEntry) -> None:
        while entry.frame_dirty:
            entry.frame_dirty = False
            board = entry.board
            if board is None or not entry.connected:
                return
            try:
                frame = frame_json(await board.frame())
            except CribboardError as err:
                log.debug("%s: frame: %s", entry.id, err)
                return
            entry.frame = frame
            self.hub.publish({"type": "frame", "board": entry.id, **frame})
            if entry.animating() and self.hub.wants_frames(entry.id) and not entry.frame_dirty:
                await asyncio.sleep(self._frame_poll_s)
                entry.frame_dirty = True

    # --- discovery ---------------------------------------------------------------------------

    async def _discover(self, interval_s: float) -> None:
        from cribboard.discovery import candidate_ports, find_boards

        while True:
            known = {entry.port for entry in self.entries.values()}
            try:
                ports = [p for p in await asyncio.to_thread(candidate_ports) if p[0] not in known]
                for found in await find_boards(ports) if ports else []:
                    if found.hello is not None and found.port not in known:
                        self.add(found.port, "usb")
            except Exception as err:  # a scan failing must not stop the bridge
                log.info("discovery: %s", err)
            await asyncio.sleep(interval_s)
