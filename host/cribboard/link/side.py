"""One end of a linked game: a board, this side's log of moves, and the broker.

    side = LinkedGameSide(address, "friday", lambda: Board.open("/dev/ttyACM0"), state_file,
                          secret="the game's secret, the same at both ends")
    await side.run()        # until cancelled

What it does (docs/mqtt.md, "Linked boards"):

- Every change the board makes that this side did not ask for (a button, another host) becomes a
  move of this side (:mod:`cribboard.link.boardsync`), kept in the state file first, then
  published, retained with QoS 1, on ``.../<side>/move/<seq>``.
- It reads every side's moves (the retained ones come on subscribing), keeps them by id (a
  redelivered move counts once), and brings its board to the merged game
  (:func:`cribboard.link.moves.merge`) with the board's own requests.
- On every connection it publishes ``online`` ``1`` (its Last Will ``0``), then a marker on its
  own ``sync`` topic: when the marker comes back every retained move has arrived, so it
  publishes those of its own moves the broker lacks (a broker that lost them). A side that
  finds no game at all then starts one from its board as it is.
- Killed and started again with the same state file, it picks up its log, reads what its board
  did meanwhile as moves of its own, and catches up with the other side's moves. Neither a
  broker that is away nor a board that is away stops the other half: moves wait in the state
  file and on the broker.
- The game's secret (:mod:`cribboard.link.secret`) names its topics and signs every move and
  ``online``: a message not signed with it is dropped, and its side is told once, in one line,
  as an unknown side. A game has two sides: this one and the first other one whose signed
  moves it holds; a third is told and ignored.
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
from pathlib import Path
from typing import Any

import aiomqtt

from cribboard.api import Board, BoardState
from cribboard.client import RESTORED, Event
from cribboard.errors import CribboardError
from cribboard.i18n import _, n_
from cribboard.link import LinkedGameError, topics
from cribboard.link.boardsync import board_changes, offline_changes, plan, run_step
from cribboard.link.moves import (
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
from cribboard.link.secret import GameKey
from cribboard.mqtt.address import BrokerAddress, refusal
from cribboard.watchwords import restored_line

log = logging.getLogger(__name__)

RECONNECT_S = (0.1, 0.2, 0.5, 1.0)  # waits before reconnecting to the broker
BOARD_RETRY_S = 1.0  # between attempts to open a board that is not there
# A deal this side asked for comes back within this (its reply carries no revision to match);
# a deal to the same dealer at the board later than that is the board's own.
DEAL_ECHO_S = 2.0
ECHO_S = 2.0  # the state a request caused comes back at once; this long: it was lost
STATE_ENV = "XDG_STATE_HOME"


def default_state_file(game: str) -> Path:
    """``$XDG_STATE_HOME/cribboard/link-<game>.json`` (``~/.local/state`` by default)."""
    base = os.environ.get(STATE_ENV) or str(Path.home() / ".local" / "state")
    return Path(base) / "cribboard" / f"link-{topics.check_game(game)}.json"


class SideFile:
    """What a side keeps across its own restart: its id, its own moves, the last state it saw
    on its board, the game that board showed (its game move, the moves that counted, the
    highest clock seen), and the position it was bringing the board to (if it was). Written
    whole, atomically (a temporary file renamed over the old one)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.side = secrets.token_hex(4)
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
            self.moves = [decode_move(payload.encode()) for payload in saved["moves"]]
            self.board = BoardState(**saved["board"]) if saved.get("board") else None
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
            raise LinkedGameError(
                _("%(path)s: not a linked game's state file: %(error)s", path=self.path, error=err)
            ) from None

    def save(self) -> None:
        saved: dict[str, Any] = {
            "side": self.side,
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


class LinkedGameSide:
    """One end of a linked game (see the module's docstring). `open_board` opens this side's
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
        self.file = SideFile(state_file)
        self.side = self.file.side
        self.log = MoveLog(self.file.moves)
        # The other side of the game: the first other side whose signed moves arrive (or are
        # in the state file already); any further side is a stranger.
        others = sorted((m for m in self.file.moves if m.side != self.side), key=lambda m: m.order)
        self.partner: str | None = others[0].side if others else None
        self.strangers: set[str] = set()  # the sides told about (unknown, or a third)
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
        self._events: list[Event] = []
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

    # --- running -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until cancelled: the broker in the background, the board here. Raises
        LinkedGameError when the broker refuses the login."""
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
                    topic = topics.side_topic(self.channel, self.side, topics.ONLINE)
                    offline = self.key.sign(topic, b"0")
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
        def take(event: Event) -> None:
            self._events.append(event)
            self._wake.set()

        unsubscribe = board.subscribe(take)
        try:
            now = await board.state()
            # What came before the state was read is in it.
            self._events = [
                e for e in self._events if e.name == "st" and int(e.fields.get("r", -1)) > now.rev
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
            if event.name == "link":
                if event.fields.get("state") == "gone":
                    return False
                self._stuck = None  # requests lost with the link are worth another try
                self._own_revs.clear()  # their states come back, if at all, in the resync
                continue
            if event.name == RESTORED:  # this side's own changes a power cut took, put back
                self.say(restored_line(event.fields))
                continue
            if event.name == "hello":
                # The board restarted: its revisions begin again, and the state it reads back
                # is where it is, not a move (a power cut may have lost its last second).
                self._rebase = True
                self._own_revs.clear()
                self._stuck = None
                continue
            if event.name != "st":
                continue
            try:
                state = (
                    self.board_state.updated(event.fields)
                    if self.board_state is not None and not self._rebase
                    else BoardState.from_fields(event.fields)
                )
            except CribboardError:
                continue
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
        this board as it is."""
        if not self._synced_once or self.log.merged().game is not None:
            return
        if self.board_state is None:
            return
        move = self.log.make(self.side, game_change(Position.of_state(self.board_state)), "")
        self.file.moves.append(move)
        self._outbox.put_nowait(move)
        self._show(self.log.merged())
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
        online = topics.side_topic(self.channel, self.side, topics.ONLINE)
        will = aiomqtt.Will(online, self.key.sign(online, b"0"), qos=1, retain=True)
        attempt = 0
        while True:
            try:
                async with self.address.client(
                    f"link-{self.channel[:8]}-{self.side}", clean_session=True, will=will
                ) as client:
                    attempt = 0
                    self._client = client
                    await self._session(client)
            except aiomqtt.MqttError as err:
                refused = refusal(err, self.address)
                if refused is not None:
                    raise LinkedGameError(refused) from None
                if self.synced.is_set():
                    self.say(_("lost the broker (%(error)s): reconnecting", error=err))
            finally:
                self._client = None
                self.synced.clear()
            await asyncio.sleep(RECONNECT_S[min(attempt, len(RECONNECT_S) - 1)])
            attempt += 1

    async def _session(self, client: aiomqtt.Client) -> None:
        game, side = self.channel, self.side
        nonce = secrets.token_hex(8).encode()
        on_broker: set[int] = set()  # this side's moves the broker holds
        await client.subscribe(topics.every_move(game), qos=1)
        await client.subscribe(topics.every_online(game), qos=1)
        await client.subscribe(topics.side_topic(game, side, topics.SYNC), qos=1)
        online = topics.side_topic(game, side, topics.ONLINE)
        await client.publish(online, self.key.sign(online, b"1"), qos=1, retain=True)
        # The broker sends the retained moves as it takes the subscriptions: the marker
        # published after them comes back after them.
        await client.publish(topics.side_topic(game, side, topics.SYNC), nonce, qos=1)
        publisher: asyncio.Task[None] | None = None
        try:
            async for message in client.messages:
                payload = bytes(message.payload)
                try:
                    name = topics.parse(str(message.topic))
                except LinkedGameError:
                    continue
                if name.leaf in (topics.MOVE, topics.ONLINE) and payload:
                    body = self.key.verify(str(message.topic), payload)
                    if body is None:
                        self._stranger(
                            name.side,
                            _(
                                "a message as side %(side)s that is not signed with the game's "
                                "secret (someone on the broker without it)",
                                side=name.side,
                            ),
                        )
                        await self._notify()
                        continue
                    payload = body
                if name.leaf == topics.MOVE:
                    self._take_move(name, payload, on_broker)
                elif name.leaf == topics.ONLINE and name.side != side and payload:
                    if self._partner(name.side):
                        self._peer(name.side, payload == b"1")
                elif name.leaf == topics.SYNC and payload == nonce and publisher is None:
                    self._outbox = asyncio.Queue()  # the log is the outbox's source of truth
                    missing = [m for m in self.log.of_side(side) if m.seq not in on_broker]
                    first = not self._synced_once
                    self._synced_once = True
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
            if publisher is not None:
                publisher.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await publisher

    def _take_move(self, name: topics.TopicName, payload: bytes, on_broker: set[int]) -> None:
        if not payload:
            return  # a retained move cleared
        try:
            move = decode_move(payload)
        except MoveError as err:
            log.warning("%s/%s: %s", name.side, name.seq, err)
            return
        if (move.side, move.seq) != (name.side, name.seq):
            log.warning("move %s on the topic of %s.%s: ignored", move.id, name.side, name.seq)
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
                "a third side %(side)s (the game's two are %(this)s and %(partner)s)",
                side=side,
                this=self.side,
                partner=self.partner,
            ),
        )
        return False

    def _stranger(self, side: str, what: str) -> None:
        """Tell, once per side, that someone not in the game wrote on its topics."""
        if side not in self.strangers:
            self.strangers.add(side)
            self.say(_("WARNING: game %(game)s: %(what)s: ignored", game=self.game, what=what))

    def _peer(self, side: str, online: bool) -> None:
        if self.peers.get(side) != online:
            self.peers[side] = online
            self.say(
                _("side %(side)s online", side=side)
                if online
                else _("side %(side)s offline", side=side)
            )

    async def _publish(self, client: aiomqtt.Client, missing: list[Move]) -> None:
        for move in missing:
            await self._send(client, move)
        while True:
            await self._send(client, await self._outbox.get())

    async def _send(self, client: aiomqtt.Client, move: Move) -> None:
        topic = topics.move_topic(self.channel, move.side, move.seq)
        await client.publish(topic, self.key.sign(topic, encode_move(move)), qos=1, retain=True)


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
