"""One end of a remote game: a board, this end's log of moves, and the broker.

    end = RemoteEnd(address, "friday", lambda: Board.open("/dev/ttyACM0"), state_file,
                    secret="the game's secret, the same at both ends")
    await end.run()         # until cancelled

What it does (docs/mqtt.md, "Remote games"):

- Every change the board makes that this side did not ask for (a button, another host) becomes a
  move of this side (:mod:`cribboard.remote.boardsync`), kept in the state file first, then
  published, retained with QoS 1, on ``.../<side>/move/<seq>``.
- It reads every side's moves (the retained ones come on subscribing), keeps them by id (a
  redelivered move counts once), and brings its board to the merged game
  (:func:`cribboard.remote.moves.merge`) with the board's own requests.
- On every connection it publishes ``online`` ``1`` (its Last Will ``0``), then a marker on its
  own ``sync`` topic: when the marker comes back every retained move has arrived, so it
  publishes those of its own moves the broker lacks (a broker that lost them). A side that
  finds no game at all then starts one from its board as it is.
- Killed and started again with the same state file, it picks up its log, reads what its board
  did meanwhile as moves of its own, and catches up with the other side's moves. Neither a
  broker that is away nor a board that is away stops the other half: moves wait in the state
  file and on the broker.
- The game's secret (:mod:`cribboard.remote.secret`) names its topics and signs every message:
  one not signed with it is dropped, and told in a few lines a minute (unknown sides, however
  many a stranger makes up). A game has two sides: this one and the first other one whose
  signed moves it holds; a third is told and ignored.
- A game is one *instance* (:class:`Handshake`): a random id chosen when it starts, in every
  topic (and so under every signature). Two ends meet by their hellos, each answering the
  other's fresh nonce: a replayed hello of an earlier game answers no nonce of now, so nothing
  of an earlier game under the same name and secret reaches this one. ``online`` carries the
  side's connection count, so a replayed ``online 0`` of an earlier connection changes nothing.
  The client id is random on every connection: nothing in the topics names it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiomqtt

from cribboard.api import (
    Board,
    BoardEvent,
    BoardState,
    HelloEvent,
    LinkEvent,
    RestoredEvent,
    StateEvent,
)
from cribboard.errors import CribboardError
from cribboard.i18n import _, n_
from cribboard.linelimit import LineLimiter
from cribboard.mqtt.address import BrokerAddress, refusal
from cribboard.paths import state_dir
from cribboard.remote import RemoteGameError, topics
from cribboard.remote.boardsync import board_changes, offline_changes, plan, run_step
from cribboard.remote.moves import (
    DEAL,
    GAME,
    UNDO,
    Change,
    Merged,
    Move,
    MoveError,
    MoveLog,
    Position,
    decode_move,
    encode_move,
    game_change,
)
from cribboard.remote.secret import GameKey
from cribboard.watchwords import restored_line

log = logging.getLogger(__name__)

RECONNECT_S = (0.1, 0.2, 0.5, 1.0)  # waits before reconnecting to the broker
# A side with no game waits this long after its first sync for the other end to answer its hello
# (then it joins that end's game) before it starts one from its own board.
JOIN_WAIT_S = 1.5
MAX_ANSWERED = 8  # other sides' hellos answered at once (replays of old ones among them)
MAX_HELLO_BYTES = 512
MAX_STRANGERS = 1024  # unknown side ids remembered (told once each)
ONLINE = topics.ONLINE
BOARD_RETRY_S = 1.0  # between attempts to open a board that is not there
# A deal this side asked for comes back within this (its reply carries no revision to match);
# a deal to the same dealer at the board later than that is the board's own.
DEAL_ECHO_S = 2.0
ECHO_S = 2.0  # the state a request caused comes back at once; this long: it was lost


def default_state_file(game: str) -> Path:
    """``remote-<game>.json`` in the state directory (:func:`cribboard.paths.state_dir`). A
    file of the same game under its name of before (``link-<game>.json``) is renamed to it the
    first time, so an end started again after an upgrade picks its game up."""
    folder = state_dir()
    name = topics.check_game(game)
    path = folder / f"remote-{name}.json"
    old = folder / f"link-{name}.json"
    if old.exists() and not path.exists():
        try:
            os.replace(old, path)
        except OSError:
            return old  # left where it is, still this end's: read and written there
    return path


def new_instance() -> str:
    """A new game instance's id: 16 hex digits, the time it began (milliseconds, 11 digits)
    then 5 random ones, so an older instance sorts first."""
    return f"{int(time.time() * 1000) & 0xFFFFFFFFFFF:011x}{secrets.token_hex(3)[:5]}"


class EndFile:
    """What an end keeps across its own restart: its id, its own moves, the last state it saw
    on its board, the game that board showed (its game move, the moves that counted, the
    highest clock seen), and the position it was bringing the board to (if it was). Written
    whole, atomically (a temporary file renamed over the old one)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.side = secrets.token_hex(4)
        self.instance = new_instance()  # the game instance this side plays in
        self.connections = 0  # this side's connections so far (its `online` count)
        self.peer_online: dict[str, int] = {}  # the highest `online` count of each other side
        self.moves: list[Move] = []
        self.board: BoardState | None = None
        self.game = ""
        self.clock = 0  # the highest clock the side had seen
        self.live: list[str] = []  # the moves that counted in the game the board showed
        self.starts: list[str] = []
        self.applying: Position | None = None
        if path.exists():
            self._load()

    def _load(self) -> None:
        try:
            saved = json.loads(self.path.read_text())
            self.side = topics.check_side(saved["side"])
            self.instance = topics.check_instance(saved.get("instance") or self.instance)
            self.connections = int(saved.get("connections", 0))
            self.peer_online = {
                topics.check_side(str(side)): int(count)
                for side, count in dict(saved.get("peer_online", {})).items()
            }
            self.moves = [decode_move(payload.encode()) for payload in saved["moves"]]
            self.board = BoardState.from_json(saved["board"]) if saved.get("board") else None
            self.game = str(saved.get("game", ""))
            self.clock = int(saved.get("clock", 0))
            self.live = [str(move_id) for move_id in saved.get("live", [])]
            self.starts = [str(move_id) for move_id in saved.get("starts", [])]
            applying = saved.get("applying")
            self.applying = (
                None
                if not applying
                else Position(
                    applying["target"],
                    applying["players"],
                    applying["dealer"],
                    tuple(applying["front"]),
                    tuple(applying["back"]),
                )
            )
        except (OSError, ValueError, KeyError, TypeError, MoveError) as err:
            raise RemoteGameError(
                _("%(path)s: not a remote game's state file: %(error)s", path=self.path, error=err)
            ) from None

    def save(self) -> None:
        saved: dict[str, Any] = {
            "side": self.side,
            "instance": self.instance,
            "connections": self.connections,
            "peer_online": self.peer_online,
            "moves": [encode_move(m).decode() for m in self.moves],
            "board": None if self.board is None else self.board.to_json(),
            "game": self.game,
            "clock": self.clock,
            "live": self.live,
            "starts": self.starts,
            "applying": None if self.applying is None else vars(self.applying),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps(saved, separators=(",", ":")))
        os.replace(temporary, self.path)


class RemoteEnd:
    """One end of a remote game (see the module's docstring). `open_board` opens this side's
    board (again, after it was gone); `say` gets one line per thing worth telling a person."""

    def __init__(
        self,
        address: BrokerAddress,
        game: str,
        open_board: Callable[[], Awaitable[Board]],
        state_file: Path,
        *,
        secret: str,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.address = address
        self.game = topics.check_game(game)
        self.key = GameKey(self.game, secret)
        self.channel = self.key.channel  # the game's name in its topics
        self.file = EndFile(state_file)
        self.side = self.file.side
        self.log = MoveLog(self.file.moves)
        # The other side of the game: the first other side whose signed moves arrive (or are
        # in the state file already); any further side is a stranger.
        others = sorted((m for m in self.file.moves if m.side != self.side), key=lambda m: m.order)
        self.partner: str | None = others[0].side if others else None
        self.instance = self.file.instance  # the game instance this side plays in
        self.strangers: set[str] = set()  # the sides told about (unknown, or a third)
        self.unknown_messages = 0  # messages not signed with the game's secret, dropped
        # Unknown sides are told a few lines a minute, however many a stranger makes up.
        self._warnings = LineLimiter(lambda text: self.say(text))
        self._log = LineLimiter(lambda text: log.warning("%s", text))  # malformed, in the log
        self.say = say or (lambda text: log.info("%s", text))
        self.board: Board | None = None
        self.board_state: BoardState | None = self.file.board
        self.synced = asyncio.Event()  # connected, and every retained move has arrived
        self.converged = asyncio.Event()  # the board shows the merged game (tests, tools)
        self.peers: dict[str, bool] = {}  # the other sides seen, online or not
        self._open_board = open_board
        self._synced_once = False
        # The merged game as the board last showed it: its game move, the moves that counted
        # (an undo at the board takes back the last of them) and the starts among them.
        self._shown_game = self.file.game
        self._shown_live = tuple(self.file.live)
        self._shown_starts = frozenset(self.file.starts)
        self._events: list[BoardEvent] = []
        self._wake = asyncio.Event()
        self._rebase = False
        # Revisions of this side's own requests whose state has not come back yet, and the
        # dealers it set (a deal's reply has no revision), with when.
        self._own_revs: set[int] = set()
        self._own_deals: list[tuple[int, float]] = []
        self._sent_at = 0.0
        self._outbox: asyncio.Queue[Move] = asyncio.Queue()
        self._stuck: tuple[Position, Position] | None = None
        self._told: Position | None = None
        self._client: aiomqtt.Client | None = None
        self._progress = asyncio.Condition()
        # Meeting the other end (this connection's): the hellos answered, the sides that
        # answered ours (alive now), whether this side joined another's instance, and whether
        # it may start the game from its board (JOIN_WAIT_S after its first sync, or once the
        # other end agrees on this instance).
        self._nonce = ""
        self._answers: dict[str, str] = {}
        self._hello_due = asyncio.Event()
        self._joined = False
        self._may_start = bool(self.log.merged().game)

    # --- running -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until cancelled: the broker in the background, the board here. Raises
        RemoteGameError when the broker refuses the login."""
        mqtt = asyncio.create_task(self._mqtt_loop(), name=f"link-{self.game}-mqtt")
        board = asyncio.create_task(self._board_loop(), name=f"link-{self.game}-board")
        try:
            done, _pending = await asyncio.wait({mqtt, board}, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        finally:
            client = self._client
            if client is not None and self.synced.is_set():  # a clean goodbye: offline now
                with contextlib.suppress(aiomqtt.MqttError):
                    topic = topics.side_topic(self.channel, self.instance, self.side, ONLINE)
                    offline = self.key.sign(topic, online_payload(False, self.file.connections))
                    await client.publish(topic, offline, qos=1, retain=True, timeout=2)
            for task in (mqtt, board):
                task.cancel()
            for task in (mqtt, board):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def moves(self) -> list[Move]:
        """Every move known, in the merged order."""
        return sorted(self.log.moves.values(), key=lambda m: m.order)

    async def wait_until(self, condition: Callable[[], bool], timeout: float) -> None:
        """Wait until `condition()` holds, checked after every move that arrives and every
        round with the board (for tests and tools); TimeoutError after `timeout` seconds."""
        async with asyncio.timeout(timeout), self._progress:
            await self._progress.wait_for(condition)

    async def _notify(self) -> None:
        async with self._progress:
            self._progress.notify_all()

    # --- the board -----------------------------------------------------------------------------

    async def _board_loop(self) -> None:
        problem = ""
        while True:
            try:
                board = await self._open_board()
            except (CribboardError, OSError) as err:
                if str(err) != problem:
                    problem = str(err)
                    self.say(_("board: %(error)s (trying again)", error=err))
                await asyncio.sleep(BOARD_RETRY_S)
                continue
            problem = ""
            try:
                # Its own changes are told apart by the revisions its requests return: every
                # request's change must come back on its own, not with others read with it.
                await board.ask_every_change()
                await self._with_board(board)
            except CribboardError as err:
                self.say(_("board: %(error)s (opening it again)", error=err))
            finally:
                self.board = None
                with contextlib.suppress(Exception):
                    await board.close()
            await asyncio.sleep(BOARD_RETRY_S)

    async def _with_board(self, board: Board) -> None:
        def take(event: BoardEvent) -> None:
            self._events.append(event)
            self._wake.set()

        unsubscribe = board.subscribe(take)
        try:
            now = await board.state()
            # What came before the state was read is in it.
            self._events = [
                e for e in self._events if isinstance(e, StateEvent) and e.state.rev > now.rev
            ]
            before, self.board_state = self.board_state, now
            self.board = board
            if before is not None and self._shown_game:
                # Made while this side was away from the board: with the clock it had then, so
                # they are ordered the same whatever this side hears first now.
                clock = self.file.clock
                for change in offline_changes(before, self.file.applying, now):
                    clock += 1
                    self._record(change, clock)
            self._own_revs.clear()
            self._own_deals.clear()
            self._start_if_needed()
            self._save()
            self._wake.set()
            while True:
                await self._wake.wait()
                self._wake.clear()
                if not self._take_events():
                    return  # the board's link is gone for good: open it again
                await self._apply(board)
                await self._notify()
        finally:
            unsubscribe()

    def _take_events(self) -> bool:
        """Read the board's events since last time: its own changes become moves. False when
        the board's link is gone."""
        events, self._events = self._events, []
        seen = False
        for event in events:
            if isinstance(event, LinkEvent):
                if event.state == "gone":
                    return False
                self._stuck = None  # requests lost with the link are worth another try
                self._own_revs.clear()  # their states come back, if at all, in the resync
                continue
            if isinstance(event, RestoredEvent):  # this side's own changes a cut took, put back
                self.say(restored_line(event.fields))
                continue
            if isinstance(event, HelloEvent):
                # The board restarted: its revisions begin again, and the state it reads back
                # is where it is, not a move (a power cut may have lost its last second).
                self._rebase = True
                self._own_revs.clear()
                self._stuck = None
                continue
            if not isinstance(event, StateEvent):
                continue
            state = event.state
            before, self.board_state = self.board_state, state
            seen = True
            if before is None or self._rebase:
                self._rebase = False
                continue
            if state.rev in self._own_revs:
                self._own_revs = {r for r in self._own_revs if r > state.rev}
                continue
            self._own_revs = {r for r in self._own_revs if r > state.rev}
            for change in board_changes(before, state):
                if change.kind == DEAL and self._own_deal(change.player):
                    continue
                self._record(change)
        if seen:
            self._save()
        return True

    def _echoes_due(self) -> float:
        """How much longer to wait for the states this side's own requests caused (0: none
        outstanding, or given up on)."""
        now = time.monotonic()
        self._own_deals = [(d, at) for d, at in self._own_deals if now - at < DEAL_ECHO_S]
        due = [at + DEAL_ECHO_S - now for _, at in self._own_deals]
        if self._own_revs:
            if now - self._sent_at < ECHO_S:
                due.append(self._sent_at + ECHO_S - now)
            else:
                self._own_revs.clear()
        return max(due, default=0.0)

    def _own_deal(self, dealer: int) -> bool:
        """Whether a deal to `dealer` is this side's own request coming back."""
        now = time.monotonic()
        self._own_deals = [(d, at) for d, at in self._own_deals if now - at < DEAL_ECHO_S]
        for i, (d, _at) in enumerate(self._own_deals):
            if d == dealer:
                del self._own_deals[i]
                return True
        return False

    def _record(self, change: Change, clock: int | None = None) -> None:
        """Make a move of this side from its board's change (kept when the caller saves)."""
        if not self._shown_game:
            return  # no game linked yet: the start takes the board as it is
        if change.kind == UNDO:
            undoes = self._undo_target()
            if undoes is None:
                return
            change = Change(UNDO, undoes=undoes)
        move = self.log.make(self.side, change, self._shown_game, clock)
        self.file.moves.append(move)
        self._outbox.put_nowait(move)
        if change.kind == GAME:
            self._show(self.log.merged())  # what follows in the same breath is in this game

    def _undo_target(self) -> str | None:
        """The move an undo at this board takes back: the last that counts as the board
        showed the game (a start excepted), not taken back already."""
        undone = {m.change.undoes for m in self.log.moves.values() if m.change.kind == UNDO}
        for move_id in reversed(self._shown_live):
            if move_id not in self._shown_starts and move_id not in undone:
                return move_id
        return None

    def _start_if_needed(self) -> None:
        """Once every retained move has arrived and no side has started a game: start it from
        this board as it is (unless this side joined another's game, which that side starts,
        or it is still waiting to meet the other end)."""
        if not self._synced_once or self.log.merged().game is not None:
            return
        if self._joined or not self._may_start:
            return
        if self.board_state is None:
            return
        move = self.log.make(self.side, game_change(Position.of_state(self.board_state)), "")
        self.file.moves.append(move)
        self._outbox.put_nowait(move)
        self._show(self.log.merged())
        self._hello_due.set()  # it has a game now: the other end may join it
        self.say(
            _(
                "started the game from this board (%(position)s)",
                position=describe(Position.of_state(self.board_state)),
            )
        )

    async def _apply(self, board: Board) -> None:
        """Bring the board to the merged game."""
        if not self._synced_once or self.board_state is None:
            return
        waiting = self._echoes_due()
        if waiting > 0:
            # The board's states after this side's last requests are on their way: planning
            # from the state before them would send them again. Look again when they are in
            # (each wakes this loop) or, if one was lost, after a while.
            asyncio.get_running_loop().call_later(waiting, self._wake.set)
            return
        merged = self.log.merged()
        target = merged.position
        if target is None:
            return
        same_game = merged.current == self._shown_game  # else a count here was the old game's
        self._show(merged)
        steps = plan(self.board_state, target, same_game=same_game)
        if not steps:
            self._stuck = None
            if self.file.applying is not None:
                self.file.applying = None
                self._save()
            self.converged.set()
            if target != self._told:
                self._told = target
                self.say(_("board: %(position)s", position=describe(target)))
            return
        self.converged.clear()
        attempt = (Position.of_state(self.board_state), target)
        if attempt == self._stuck:
            return  # the same requests made no progress last time: wait for a change
        self._stuck = attempt
        self.file.applying = target
        self._save()
        for step in steps:
            try:
                rev = await run_step(board, step)
            except CribboardError as err:
                log.info("%s: %s %s: %s", self.side, step.verb, step.args, err)
                self._wake.set()
                return  # a change crossed it, or the link dropped: the events tell
            if rev is None:
                self._own_deals.append((step.args[0], time.monotonic()))
            elif rev > self.board_state.rev:  # else it changed nothing: no state comes back
                self._own_revs.add(rev)
                self._sent_at = time.monotonic()

    def _show(self, merged: Merged) -> None:
        self._shown_game = merged.current
        self._shown_live = merged.live
        self._shown_starts = merged.starts

    def _save(self) -> None:
        self.file.board = self.board_state
        self.file.game = self._shown_game
        self.file.live = list(self._shown_live)
        self.file.starts = sorted(self._shown_starts)
        self.file.clock = max(self.file.clock, self.log.clock())
        self.file.save()

    # --- the broker ----------------------------------------------------------------------------

    async def _mqtt_loop(self) -> None:
        attempt = 0
        while True:
            # Counted before the connection: its Last Will carries the count too.
            self.file.connections += 1
            self.file.save()
            count, instance = self.file.connections, self.instance
            online = topics.side_topic(self.channel, instance, self.side, ONLINE)
            will = aiomqtt.Will(
                online, self.key.sign(online, online_payload(False, count)), qos=1, retain=True
            )
            switched = False
            try:
                # A random client id each time: nothing in the topics names it, so nobody can
                # log in with it and knock this side off the broker.
                async with self.address.client(
                    f"link-{secrets.token_hex(8)}", clean_session=True, will=will
                ) as client:
                    attempt = 0
                    self._client = client
                    await self._session(client, count)
            except _Switched:
                switched = True
            except aiomqtt.MqttError as err:
                refused = refusal(err, self.address)
                if refused is not None:
                    raise RemoteGameError(refused) from None
                if self.synced.is_set():
                    self.say(_("lost the broker (%(error)s): reconnecting", error=err))
            finally:
                self._client = None
                self.synced.clear()
            if switched:
                continue  # into the other side's instance at once
            await asyncio.sleep(RECONNECT_S[min(attempt, len(RECONNECT_S) - 1)])
            attempt += 1

    async def _session(self, client: aiomqtt.Client, count: int) -> None:
        game, side, instance = self.channel, self.side, self.instance
        nonce = secrets.token_hex(8)
        self._nonce, self._answers = nonce, {}
        on_broker: set[int] = set()  # this side's moves the broker holds
        await client.subscribe(topics.every_hello(game), qos=1)
        await client.subscribe(topics.every_move(game, instance), qos=1)
        await client.subscribe(topics.every_online(game, instance), qos=1)
        await client.subscribe(topics.side_topic(game, instance, side, topics.SYNC), qos=1)
        online = topics.side_topic(game, instance, side, ONLINE)
        await client.publish(
            online, self.key.sign(online, online_payload(True, count)), qos=1, retain=True
        )
        await self._hello(client)
        # The broker sends the retained moves as it takes the subscriptions: the marker
        # published after them comes back after them.
        await client.publish(topics.side_topic(game, instance, side, topics.SYNC), nonce, qos=1)
        publisher: asyncio.Task[None] | None = None
        hellos = asyncio.create_task(self._hellos(client))
        try:
            async for message in client.messages:
                payload = bytes(message.payload)
                try:
                    name = topics.parse(str(message.topic))
                except RemoteGameError:
                    continue
                if name.leaf in (topics.MOVE, ONLINE, topics.HELLO) and payload:
                    if name.side == side and name.leaf == topics.HELLO:
                        continue  # its own
                    body = self.key.verify(str(message.topic), payload)
                    if body is None:
                        self.unknown_messages += 1
                        self._stranger(
                            name.side,
                            _(
                                "a message as end %(side)s that is not signed with the game's "
                                "secret (someone on the broker without it)",
                                side=name.side,
                            ),
                        )
                        await self._notify()
                        continue
                    payload = body
                if name.leaf == topics.HELLO:
                    if payload:
                        self._take_hello(name.side, payload)
                elif name.leaf == topics.MOVE:
                    self._take_move(name, payload, on_broker)
                elif name.leaf == ONLINE and name.side != side and payload:
                    self._take_online(name.side, payload)
                elif name.leaf == topics.SYNC and payload == nonce.encode() and publisher is None:
                    self._outbox = asyncio.Queue()  # the log is the outbox's source of truth
                    missing = [m for m in self.log.of_side(side) if m.seq not in on_broker]
                    first = not self._synced_once
                    self._synced_once = True
                    if first and not self._may_start:
                        asyncio.get_running_loop().call_later(JOIN_WAIT_S, self._waited)
                    self._start_if_needed()
                    if self.board is not None:
                        self._save()
                    publisher = asyncio.create_task(self._publish(client, missing))
                    self.synced.set()
                    self._wake.set()
                    if first:
                        others = len(self.log.moves) - len(self.log.of_side(side))
                        self.say(synced_line(len(self.log.moves), others))
                await self._notify()
        finally:
            for task in (publisher, hellos):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                        await task

    # --- meeting the other end -----------------------------------------------------------------

    def _waited(self) -> None:
        """JOIN_WAIT_S after the first sync, no other end met: this side may start the game."""
        if not self._may_start:
            self._may_start = True
            self._start_if_needed()
            self._wake.set()

    async def _hello(self, client: aiomqtt.Client) -> None:
        topic = topics.hello_topic(self.channel, self.side)
        hello = Hello(
            self.instance,
            self._nonce,
            self.log.merged().game is not None,
            list(self._answers.values()),
        )
        await client.publish(topic, self.key.sign(topic, hello.encode()), qos=1, retain=True)

    async def _hellos(self, client: aiomqtt.Client) -> None:
        """This side's hello again whenever it changes (a hello answered, a game started)."""
        while True:
            await self._hello_due.wait()
            self._hello_due.clear()
            await self._hello(client)

    def _take_hello(self, side: str, payload: bytes) -> None:
        """Another side's hello (signed): answered in ours; when it answers ours, that side is
        alive now, and the two ends settle on one game instance."""
        try:
            hello = Hello.decode(payload)
        except ValueError as err:
            self._log.say("hello", f"game {self.game}: side {side}: a bad hello ({err})")
            return
        if self._answers.get(side) != hello.nonce:
            self._answers.pop(side, None)
            self._answers[side] = hello.nonce
            while len(self._answers) > MAX_ANSWERED:
                self._answers.pop(next(iter(self._answers)))
            self._hello_due.set()
        if self._nonce not in hello.answers:
            return  # not alive now as far as this side can tell: a replay, or not yet
        if hello.instance == self.instance:
            if not self._may_start:
                self._may_start = True  # the other end agrees on this game: start it
                self._start_if_needed()
                self._wake.set()
            return
        has_game = self.log.merged().game is not None
        if has_game and not hello.has_game:
            return  # it joins this game
        if has_game == hello.has_game and hello.instance > self.instance:
            return  # the older instance stays: it joins this one
        self._switch(side, hello.instance)

    def _switch(self, side: str, instance: str) -> None:
        """Join the game instance of the other end `side`: this side takes the game as it is
        there (its own start, if it made one alone, is dropped)."""
        self.say(_("joined the game of end %(side)s", side=side))
        self.instance = self.file.instance = instance
        self.file.moves = []
        self.log = MoveLog()
        self.partner = side
        self._joined = True
        self._synced_once = False
        self._show(self.log.merged())
        self.file.applying = None
        self.file.clock = 0
        self._save()
        self.converged.clear()
        raise _Switched

    def _take_online(self, side: str, payload: bytes) -> None:
        """Another side's ``online`` (signed): taken only when newer than any seen of that
        side, so a replay of an earlier connection's changes nothing."""
        try:
            online, count = read_online(payload)
        except ValueError:
            return
        last = self.file.peer_online.get(side, -1)
        if count < last or (count == last and online and self.peers.get(side) is False):
            return  # an earlier connection's, or this one's `1` after its `0`
        if not self._partner(side):
            return
        if count != last:
            self.file.peer_online[side] = count
            self.file.save()
        self._peer(side, online)

    def _take_move(self, name: topics.TopicName, payload: bytes, on_broker: set[int]) -> None:
        if not payload:
            return  # a retained move cleared
        if name.instance != self.instance:
            return
        try:
            move = decode_move(payload)
        except MoveError as err:
            self._log.say("moves", f"{name.side}/{name.seq}: {err}")
            return
        if (move.side, move.seq) != (name.side, name.seq):
            self._log.say(
                "moves", f"move {move.id} on the topic of {name.side}.{name.seq}: ignored"
            )
            return
        if move.side == self.side:
            on_broker.add(move.seq)
        elif not self._partner(move.side):
            return
        if self.log.add(move):
            self._wake.set()

    def _partner(self, side: str) -> bool:
        """Whether `side` (signed: it has the secret) is this game's other side: the first
        other side seen is; any further one is told and ignored."""
        if self.partner is None:
            self.partner = side
        if side == self.partner:
            return True
        self._stranger(
            side,
            _(
                "a third end %(side)s (the game's two are %(this)s and %(partner)s)",
                side=side,
                this=self.side,
                partner=self.partner,
            ),
        )
        return False

    def _stranger(self, side: str, what: str) -> None:
        """Tell, once per side and a few lines a minute, that someone not in the game wrote
        on its topics."""
        if side in self.strangers:
            return
        if len(self.strangers) >= MAX_STRANGERS:
            self.strangers.clear()  # made-up sides by the thousand: counted, not kept
        self.strangers.add(side)
        self._warnings.say(
            "strangers", _("WARNING: game %(game)s: %(what)s: ignored", game=self.game, what=what)
        )

    def _peer(self, side: str, online: bool) -> None:
        if self.peers.get(side) != online:
            self.peers[side] = online
            self.say(
                _("end %(side)s online", side=side)
                if online
                else _("end %(side)s offline", side=side)
            )

    async def _publish(self, client: aiomqtt.Client, missing: list[Move]) -> None:
        for move in missing:
            await self._send(client, move)
        while True:
            await self._send(client, await self._outbox.get())

    async def _send(self, client: aiomqtt.Client, move: Move) -> None:
        topic = topics.move_topic(self.channel, self.instance, move.side, move.seq)
        await client.publish(topic, self.key.sign(topic, encode_move(move)), qos=1, retain=True)


class _Switched(Exception):
    """This side joined another side's game instance: connect again, into it."""


@dataclass(frozen=True)
class Hello:
    """A side's hello (signed, retained on ``.../hello/<side>``): the game instance it plays
    in, a fresh nonce of its connection, whether its instance has a game, and the nonces of
    the other sides' hellos it has seen (answering them: whoever finds its own nonce there
    knows the side is alive now, not a replay)."""

    instance: str
    nonce: str
    has_game: bool
    answers: list[str]

    def encode(self) -> bytes:
        return json.dumps(
            {"i": self.instance, "n": self.nonce, "g": self.has_game, "a": self.answers},
            separators=(",", ":"),
        ).encode()

    @classmethod
    def decode(cls, payload: bytes) -> Hello:
        """ValueError for anything that is not a hello."""
        if len(payload) > MAX_HELLO_BYTES:
            raise ValueError("too long")
        obj = json.loads(payload)
        if not isinstance(obj, dict):
            raise ValueError("not a JSON object")
        instance, nonce, has_game, answers = obj.get("i"), obj.get("n"), obj.get("g"), obj.get("a")
        if not isinstance(instance, str) or not isinstance(nonce, str):
            raise ValueError("no instance or nonce")
        try:
            topics.check_instance(instance)
        except RemoteGameError as err:
            raise ValueError(str(err)) from None
        if not isinstance(has_game, bool) or not isinstance(answers, list):
            raise ValueError("no game flag or answers")
        return cls(instance, nonce, has_game, [str(a) for a in answers[:MAX_ANSWERED]])


def online_payload(online: bool, count: int) -> bytes:
    """An ``online`` payload: ``1`` or ``0``, a space, the side's connection count."""
    return f"{int(online)} {count}".encode()


def read_online(payload: bytes) -> tuple[bool, int]:
    """(online, count) of an ``online`` payload; ValueError otherwise."""
    flag, _space, count = payload.partition(b" ")
    if flag not in (b"0", b"1") or not count.isdigit():
        raise ValueError(f"not an online payload: {payload[:40]!r}")
    return flag == b"1", int(count)


def describe(position: Position) -> str:
    """A position in words: ``121 up, blue 12 (8), orange 7 (0), orange deals``."""
    colours = (_("blue"), _("orange"), _("purple"))
    pegs = ", ".join(
        # Translators: a colour's front peg (its back peg), such as "blue 12 (8)".
        _(
            "%(colour)s %(front)d (%(back)d)",
            colour=colours[p],
            front=position.front[p],
            back=position.back[p],
        )
        for p in range(position.players)
    )
    # Translators: "121 up" is the game's length (a game to 121); then each colour's pegs,
    # front (back), and the colour that deals.
    return _(
        "%(target)d up, %(pegs)s, %(dealer)s deals",
        target=position.target,
        pegs=pegs,
        dealer=colours[position.dealer],
    )


def synced_line(moves: int, others: int) -> str:
    """What a side says once its log is in step with the broker's."""
    return n_(
        "synced: %(count)d move (%(others)d from elsewhere)",
        "synced: %(count)d moves (%(others)d from elsewhere)",
        moves,
        others=others,
    )
