"""The tournament director: the hall's one client that keeps the score.

It connects to the hall's broker as ``director`` with a persistent session (the broker queues
every ``event`` and ``ack`` while it is away), follows every table's ``state``, ``event``,
``online`` and ``ack``, and keeps the tournament in its store (:mod:`cribboard.hall.store`):

- **Results.** The moment a board shows a winner (:func:`cribboard.hall.wins.finished_game`),
  the result is stored under its idempotency key before anything else, then the ``standings``
  are published (retained). A win counts for the round once the table has acknowledged the
  round's new-game command (its id carries a nonce; a retained ack or event is ignored) and the
  board has shown that fresh game (the previous round's win, still on a board, is not this
  round's). A win counts only when the events the director received make it plausible, one
  revision after the other (:mod:`cribboard.hall.watch`: no gap, no revision falling while the
  table stays online, the round's target, points no faster than the revisions allow, the
  games-won tally up by the win alone); the watch and its doubts are kept in the store. A game
  with a doubt, or a held row, is held for the director with the reasons
  (:meth:`Director.accept_held`, :meth:`Director.reject_held`); a result counted from the board
  that a later state puts in doubt is held again.
- **Hostile messages.** Whatever a table publishes is size-, depth- and range-checked
  (:mod:`cribboard.hallwire.messages`) and refused with a log line (a few a table a minute);
  nothing a message holds, nor a fault in drawing the page, stops the director.
- **Nothing lost.** It acknowledges a message only once it has taken it: one it had not taken
  when it was killed comes again with its session. On every connection it subscribes again,
  sends again the command of each table that has not acknowledged it (same id: a table that ran
  it only answers again), republishes ``round`` and ``standings``, and reconnects by itself
  until stopped; when the broker lost its session, a table's retained state stands in for the
  events of the meantime. A table that comes online later gets its command then (a table that
  was never connected has no session on the broker to queue it in).
- **Rounds.** :meth:`Director.next_round` pairs the next round (choosing the movement before
  round 1, see :func:`choose_movement`), publishes ``round`` (retained), sends each table a new
  game with the players' names and waits for the acks.

    director = Director(store, BrokerAddress("127.0.0.1", 1883, username="director",
                        password=PW), "club")
    task = asyncio.create_task(director.run())
    await director.connected.wait()
    report = await director.next_round()
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import aiomqtt

from cribboard.api import BoardState
from cribboard.errors import HallError
from cribboard.hall.store import ResultConflict, Store
from cribboard.hall.view import HallView, view_filters
from cribboard.hall.watch import GameWatch, doubt_about_win, is_fresh
from cribboard.hall.wins import FinishedGame, finished_game
from cribboard.hallwire import messages, topics
from cribboard.i18n import N_, _, n_
from cribboard.linelimit import LineLimiter
from cribboard.mqtt.address import BrokerAddress, refusal
from cribboard.plaintext import inert
from cribboard.tournament import (
    CIRCLE,
    ROTATION,
    Correction,
    Player,
    Result,
    Round,
    TournamentError,
    max_rounds,
)

log = logging.getLogger(__name__)

ACK_TIMEOUT_S = 10.0
RECONNECT_S = (0.1, 0.2, 0.5, 1.0)  # waits before reconnecting: quick first, then calmer
DEFAULT_ROUNDS = 9


def choose_movement(players: int, rounds: int) -> tuple[str, str]:
    """The movement for a tournament of `rounds` rounds, and one line saying why: the clubs'
    rotation when it pairs that many rounds without a rematch, else the circle method."""
    rotation, circle = max_rounds(players, ROTATION), max_rounds(players, CIRCLE)
    if rotation >= rounds:
        return ROTATION, _(
            "pairing by the clubs' rotation: it pairs %(players)d players for %(rounds)d rounds "
            "without a rematch (up to %(rotation)d)",
            players=players,
            rounds=rounds,
            rotation=rotation,
        )
    if circle >= rounds:
        return CIRCLE, _(
            "pairing by the circle method: the clubs' rotation pairs %(players)d players for "
            "only %(rotation)d rounds without a rematch, the circle method for %(circle)d",
            players=players,
            rotation=rotation,
            circle=circle,
        )
    return CIRCLE, _(
        "pairing by the circle method: %(players)d players have only %(circle)d rounds without "
        "a rematch, not the %(rounds)d planned (the clubs' rotation: %(rotation)d): the evening "
        "ends after round %(circle)d",
        players=players,
        circle=circle,
        rounds=rounds,
        rotation=rotation,
    )


@dataclass
class RoundReport:
    """What became of a round's commands: `answers[table]` is the table's ack, or None when
    it did not answer in time (offline: the broker keeps the command for it)."""

    round: Round
    names: dict[int, tuple[str, str]]
    answers: dict[int, messages.Ack | None]
    movement_note: str | None = None
    bye_name: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "round": self.round.number,
            "movement_note": self.movement_note,
            "bye": self.bye_name,
            "tables": [
                {
                    "table": number,
                    "players": list(self.names[number]),
                    "ok": None if ack is None else ack.ok,
                    "error": None if ack is None else ack.error,
                    "message": None if ack is None else ack.message,
                }
                for number, ack in sorted(self.answers.items())
            ],
        }


@dataclass
class _Pending:
    """Commands sent and waiting for their acks."""

    futures: dict[str, asyncio.Future[messages.Ack]] = field(default_factory=dict)


class Director:
    """The director of one hall (see the module's docstring). `max_tables`: how many tables
    the broker has users for (None: not known, no check)."""

    def __init__(
        self,
        store: Store,
        address: BrokerAddress,
        hall: str,
        *,
        target: int = 121,
        rounds: int = DEFAULT_ROUNDS,
        max_tables: int | None = None,
        ack_timeout: float = ACK_TIMEOUT_S,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.address = address
        self.hall = topics.check_hall(hall)
        self.target = target
        self.rounds = rounds
        self.max_tables = max_tables
        self.ack_timeout = ack_timeout
        self.say = say or (lambda text: log.info("%s", text))
        self.view = HallView(hall)
        self.connected = asyncio.Event()
        self.conflicts: dict[tuple[int, int], ResultConflict] = {}
        self.latest: dict[int, BoardState] = {}  # each table's latest state
        self.refused = 0  # messages refused (malformed, oversized, out of range, retained)
        self._watch: dict[int, GameWatch] = {}  # each table's game this round
        self._changed_watches: dict[int, GameWatch] = {}  # not written to the store yet
        self._connections = 0  # connections to the broker so far (a gap across one is a crash's)
        self._session_kept = True  # whether the broker kept the director's session this time
        # A table that floods the director with refused messages or doubtful wins fills no
        # terminal and no log: a few lines a table a minute.
        self._warnings = LineLimiter(lambda text: log.warning("%s", text))
        self._told = LineLimiter(lambda text: self.say(text))
        self._tasks: set[asyncio.Task[None]] = set()
        self.results_recorded = 0  # new results stored by this director (not redeliveries)
        self._client: aiomqtt.Client | None = None
        self._pending = _Pending()
        self._standings_due = asyncio.Event()
        self._progress = asyncio.Condition()

    # --- running -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, follow the hall, reconnect after any loss; until cancelled. A refused
        login raises HallError at once."""
        attempt = 0
        while True:
            try:
                await self._session()
            except aiomqtt.MqttError as err:
                refused = refusal(err, self.address)
                if refused is not None:
                    raise HallError(_("director: %(refused)s", refused=refused)) from None
                if self.connected.is_set():
                    attempt = 0  # it was up: try again at once
                self.say(_("lost the broker (%(error)s): reconnecting", error=err))
            finally:
                self._client = None
                self.connected.clear()
                for future in self._pending.futures.values():
                    if not future.done():
                        future.cancel()  # sent again on reconnecting
            await asyncio.sleep(RECONNECT_S[min(attempt, len(RECONNECT_S) - 1)])
            attempt += 1

    async def _session(self) -> None:
        client = self.address.client(topics.DIRECTOR_USER, clean_session=False)
        # An event is acknowledged once taken (its result and the game's watch stored): a
        # director killed in between gets it again, so no state of a game goes missing.
        client.acknowledge_when_taken()
        async with client:
            self._client = client
            self._connections += 1
            self._session_kept = client.session_present
            # The retained states come with these subscriptions: every table's board as it is.
            for topic in view_filters(self.hall):
                await client.subscribe(topic, qos=1)
            await client.subscribe(topics.table_topic(self.hall, "+", topics.ACK), qos=1)
            await self._publish_round(client)
            self._standings_due.set()
            await self._resend_unstarted(client)
            self.connected.set()
            # Ends with the connection: a publication in flight on a dead link is dropped, and
            # the next connection publishes the standings as they are then.
            publisher = asyncio.create_task(self._publish_standings_when_due(client))
            try:
                async for message in client.messages:
                    # With what else has come meanwhile: one write of the games' watches for
                    # them all, then each acknowledged.
                    batch = [message, *client.received_now()]
                    for each in batch:
                        self._take_one(
                            str(each.topic),
                            messages.payload_bytes(each.payload),
                            retained=bool(each.retain),
                        )
                    self._keep_watches()
                    for each in batch:
                        client.acknowledge(each)
                    async with self._progress:
                        self._progress.notify_all()
            finally:
                publisher.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await publisher

    async def wait_until(self, condition: Callable[[], bool], timeout: float) -> None:
        """Wait until `condition()` holds, checked after every message (for tests and tools);
        TimeoutError after `timeout` seconds."""
        async with asyncio.timeout(timeout), self._progress:
            await self._progress.wait_for(condition)

    # --- what arrives --------------------------------------------------------------------------

    def take(self, topic: str, payload: bytes, *, retained: bool = False) -> None:
        """Take one message from the broker. Never raises: a message that is not what its
        topic carries is refused with a log line, and a fault anywhere in taking it (the page's
        drawing included) is logged and leaves the director running."""
        self._take_one(topic, payload, retained=retained)
        self._keep_watches()

    def _take_one(self, topic: str, payload: bytes, *, retained: bool) -> None:
        try:
            self._take(topic, payload, retained)
        except Exception:
            self.refused += 1
            log.exception("%s: a message the director could not take: ignored", topic)

    def _keep_watches(self) -> None:
        """Write the watches changed since the last time (one transaction)."""
        if self._changed_watches:
            changed = {(w.round, t): w.to_json() for t, w in self._changed_watches.items()}
            self._changed_watches.clear()
            try:
                self.store.keep_watches(changed)
            except Exception:
                log.exception("the games' watches could not be kept")

    def _take(self, topic: str, payload: bytes, retained: bool) -> None:
        try:
            name = topics.parse(topic)
        except HallError:
            return
        if name.table is not None and retained and name.leaf in (topics.EVENT, topics.ACK):
            # Never retained by a table client: one that is was left there to be read again.
            self._refuse(name.table, f"a retained {name.leaf}: ignored")
            return
        if name.table is None:
            self.view.feed(topic, payload)
            return
        try:
            if name.leaf in (topics.EVENT, topics.STATE):
                state = messages.decode_state(payload)
                self.view.set_state(name.table, state)
                if name.leaf == topics.EVENT:
                    # Every change, in order, queued while the director is away: what it
                    # judges a game by. (`state`, the latest alone, retained, feeds the page.)
                    self._table_state(name.table, state)
                elif retained and not self._session_kept:
                    # The broker lost the director's session (it died before saving it): the
                    # events of the meantime are gone, the retained state is all there is.
                    self._table_state(name.table, state, newer_only=True)
            elif name.leaf == topics.ACK:
                self._ack(name.table, messages.decode_ack(payload))
            elif name.leaf == topics.ONLINE:
                online = messages.decode_online(payload)
                self.view.set_online(name.table, online)
                if not retained:
                    self._connection_changed(name.table)
                    if online:
                        self._came_online(name.table)
        except messages.MessageError as err:
            self._refuse(name.table, str(err))

    def _refuse(self, table: int, why: str) -> None:
        """A table's message refused: counted, and said (a few lines a table a minute)."""
        self.refused += 1
        self._warnings.say(f"table {table}", f"table {table}: {why}")  # the log: English

    def _current(self, table: int) -> Round | None:
        """The current round, if `table` plays in it."""
        rounds = self.store.tournament.rounds
        if not rounds or table not in {tb.number for tb in rounds[-1].tables}:
            return None
        return rounds[-1]

    def _table_state(self, table: int, state: BoardState, *, newer_only: bool = False) -> None:
        """A table's state, in the order the table made them (`newer_only`: a retained state,
        taken only when newer than the last state seen)."""
        latest = self.latest.get(table)
        if newer_only and latest is not None and state.rev <= latest.rev:
            return
        self.latest[table] = state
        round_ = self._current(table)
        if round_ is None:
            return
        key = (round_.number, table)
        command = self.store.command(*key)
        if not command.started:
            return  # the board still shows the game before this round's
        if not command.fresh:
            if is_fresh(state):
                self.store.mark_fresh(round_.number, table, state.rev, state.games)
                self._keep(table, GameWatch(round_.number, state, connection=self._connections))
            return  # not yet the round's game on the board
        watch = self._watch_of(table, round_.number)
        if state != watch.last:
            broker_lost = watch.connection != self._connections
            watch.connection = self._connections
            doubt = watch.take(state, self.target, broker_lost=broker_lost)
            self._keep(table, watch)
            if doubt is not None and self.store.counted_from_board(*key) is not None:
                self._hold_counted(round_.number, table, watch.reason())
        game = finished_game(state)
        if game is None:
            return
        if key not in self.store.tournament.results:
            final = doubt_about_win(state, command, self.target)
            held = self.store.held().get(key)
            if watch.doubts or final is not None or held is not None:
                # A held game is never counted until the director decides.
                reason = watch.reason(*([] if final is None else [final]))
                self._hold(round_.number, table, game, reason or (held.reason if held else ""))
                return
        self._record(round_.number, table, game)

    def _watch_of(self, table: int, round_no: int) -> GameWatch:
        """The watch over a table's game of this round: in memory, else as the store kept it
        (a director started again)."""
        watch = self._watch.get(table)
        if watch is None or watch.round != round_no:
            kept = self.store.watch(round_no, table)
            if kept is not None:
                watch = GameWatch.from_json(round_no, kept)
            else:  # a hall of an earlier cribboard: the fresh game as the store kept it
                watch = GameWatch.from_command(
                    round_no, self.store.command(round_no, table), self.target
                )
            watch.connection = self._connections
            self._watch[table] = watch
        return watch

    def _keep(self, table: int, watch: GameWatch) -> None:
        """The watch changed: written with the messages taken with it, before they are
        acknowledged."""
        self._watch[table] = watch
        self._changed_watches[table] = watch

    def _connection_changed(self, table: int) -> None:
        """The table's connection changed (an `online` message): a board that restarted may
        count its revisions from 0 again, its game as it was."""
        round_ = self._current(table)
        if round_ is None:
            return
        command = self.store.command(round_.number, table)
        if command.started and command.fresh:
            watch = self._watch_of(table, round_.number)
            if not watch.reconnected:
                watch.reconnected = True
                self._keep(table, watch)

    def _hold_counted(self, round_no: int, table: int, reason: str) -> None:
        """A result counted from the board, which the board's later states put in doubt: no
        longer counted, held for the director (one line says so)."""
        result = self.store.tournament.results[(round_no, table)]
        what = self.describe(result)
        self.store.hold_counted(round_no, table, reason, who=topics.DIRECTOR_USER)
        self._say_about(
            table,
            _(
                "round %(round)d table %(table)d: %(result)s is held again, no longer counted: "
                "%(reason)s; `cribboard hall held accept %(round)d %(table)d` counts it, "
                "`cribboard hall held reject %(round)d %(table)d` drops it",
                round=round_no,
                table=table,
                result=what,
                reason=reason,
            ),
        )
        self._standings_due.set()

    def _say_about(self, table: int, text: str) -> None:
        """Tell the organiser about a table (a few lines a table a minute: a table that
        floods the director cannot flood its terminal)."""
        self._told.say(_("table %(table)d", table=table), text)

    def _record(self, round_no: int, table: int, game: FinishedGame) -> None:
        tournament = self.store.tournament
        try:
            stored = self.store.record_finished(round_no, table, game)
        except ResultConflict as err:
            # Held like any result not counted: accepting it replaces the one counted.
            self.conflicts[(round_no, table)] = err
            counted = self.describe(err.stored)
            why = _("the table's result was %(counted)s; its board now differs", counted=counted)
            self._hold(round_no, table, game, why)
            return
        except TournamentError as err:
            self._say_about(
                table, _("table %(table)d: result refused: %(error)s", table=table, error=err)
            )
            return
        if stored:
            self.results_recorded += 1
            result = tournament.results[(round_no, table)]
            self.say(
                _(
                    "round %(round)d table %(table)d: %(result)s",
                    round=round_no,
                    table=table,
                    result=self.describe(result),
                )
            )
            self._standings_due.set()

    def _hold(self, round_no: int, table: int, game: FinishedGame, reason: str) -> None:
        if not self.store.hold(round_no, table, game, reason):
            return
        try:
            result = self.store.held_result(round_no, table)[1]
            what = self.describe(result)
        except TournamentError as err:
            what = str(err)
        self._say_about(
            table,
            _(
                "round %(round)d table %(table)d: held, not counted: %(result)s (%(reason)s); "
                "`cribboard hall held accept %(round)d %(table)d` counts it, "
                "`cribboard hall held reject %(round)d %(table)d` drops it",
                round=round_no,
                table=table,
                result=what,
                reason=reason,
            ),
        )
        self._standings_due.set()

    def _ack(self, table: int, ack: messages.Ack) -> None:
        future = self._pending.futures.pop(ack.id, None)
        if future is not None and not future.done():
            future.set_result(ack)
        round_ = self._current(table)
        if not ack.ok or round_ is None:
            return
        # Only the latest attempt's id (its nonce) of this table's command in this round.
        if self.store.mark_started(round_.number, table, ack.id):
            # The table's new game came before its ack (or a re-sent command's answer: the
            # director was away, the game may be over already): the latest state tells.
            latest = self.latest.get(table)
            if latest is not None:
                self._table_state(table, latest)

    def _came_online(self, table: int) -> None:
        """A table came online: send it its round's command if it has not started it (a table
        that never connected before has no session on the broker that kept the command)."""
        round_ = self._current(table)
        client = self._client
        if round_ is None or client is None:
            return
        if self.store.command(round_.number, table).started:
            return

        async def send() -> None:
            with contextlib.suppress(aiomqtt.MqttError):
                await self._send(client, round_, table)

        task = asyncio.get_running_loop().create_task(send())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- what it publishes ---------------------------------------------------------------------

    async def _publish_round(self, client: aiomqtt.Client) -> None:
        tournament = self.store.tournament
        if tournament.rounds:
            payload = messages.encode_round(tournament, tournament.rounds[-1])
            await client.publish(
                topics.hall_topic(self.hall, topics.ROUND), payload, qos=1, retain=True
            )

    def standings_payload(self) -> bytes:
        return messages.encode_standings(
            len(self.store.tournament.rounds), self.store.standings(), held_json(self.store)
        )

    async def _publish_standings_when_due(self, client: aiomqtt.Client) -> None:
        # One publication for a burst of results: the latest standings are what counts.
        topic = topics.hall_topic(self.hall, topics.STANDINGS)
        while True:
            await self._standings_due.wait()
            self._standings_due.clear()
            try:
                await client.publish(topic, self.standings_payload(), qos=1, retain=True)
            except BaseException:
                self._standings_due.set()  # not published: the next connection does it
                raise

    async def _send(
        self, client: aiomqtt.Client, round_: Round, table: int
    ) -> asyncio.Future[messages.Ack]:
        """Send a table its round's latest command; the future holds the table's answer."""
        command = self.store.command(round_.number, table)
        tournament = self.store.tournament
        names = tuple(inert(tournament.player(p).name) for p in round_.table(table).players)
        payload = messages.encode_command(messages.NewGame(command.id, self.target, names))
        future = self._pending.futures.get(command.id)
        if future is None or future.done():
            future = self._pending.futures[command.id] = asyncio.get_running_loop().create_future()
        await client.publish(topics.table_topic(self.hall, table, topics.CMD), payload, qos=1)
        return future

    async def _resend_unstarted(self, client: aiomqtt.Client) -> None:
        tournament = self.store.tournament
        if not tournament.rounds:
            return
        round_ = tournament.rounds[-1]
        for table in round_.tables:
            if not self.store.command(round_.number, table.number).started:
                await self._send(client, round_, table.number)

    def _connected_client(self) -> aiomqtt.Client:
        client = self._client
        if client is None or not self.connected.is_set():
            raise HallError(
                _("the director is not connected to the broker at %(url)s", url=self.address.url)
            )
        return client

    async def _await_acks(
        self, futures: dict[int, asyncio.Future[messages.Ack]]
    ) -> dict[int, messages.Ack | None]:
        """The tables' answers, None for those that did not answer within the timeout."""
        if futures:
            await asyncio.wait(futures.values(), timeout=self.ack_timeout)
        return {
            table: future.result() if future.done() and not future.cancelled() else None
            for table, future in futures.items()
        }

    # --- the organiser's requests ------------------------------------------------------------

    def register(self, names: Iterable[str]) -> list[Player]:
        """Register players (before round 1); all or none (a bad name changes nothing)."""
        players = register_players(self.store, names)
        self._standings_due.set()
        return players

    async def next_round(self) -> RoundReport:
        """Pair the next round, publish it, send each table its new game, wait for the acks.
        Refused while the current round has a table without a result, or when the planned
        rounds are played."""
        client = self._connected_client()
        store, tournament = self.store, self.store.tournament
        if tournament.rounds:
            current = tournament.rounds[-1]
            missing = [
                str(tb.number)
                for tb in current.tables
                if (current.number, tb.number) not in tournament.results
            ]
            if missing:
                held = [str(table) for _, table in store.held() if str(table) in missing]
                words = n_(
                    "round %(round)d is not over: table %(tables)s has no result yet",
                    "round %(round)d is not over: tables %(tables)s have no result yet",
                    len(missing),
                    round=current.number,
                    tables=", ".join(missing),
                )
                if held:
                    words += " " + n_(
                        "(held for the director: table %(tables)s; `cribboard hall held`)",
                        "(held for the director: tables %(tables)s; `cribboard hall held`)",
                        len(held),
                        tables=", ".join(held),
                    )
                words += " " + _("(`cribboard hall correct` enters one by hand)")
                raise TournamentError(words)
        planned = min(self.rounds, max_rounds(len(tournament.players), tournament.scoring.movement))
        if tournament.rounds and len(tournament.rounds) >= planned:
            played = len(tournament.rounds)
            if planned == self.rounds:
                raise TournamentError(_("all %(count)d rounds are played", count=played))
            raise TournamentError(
                _(
                    "all %(count)d rounds are played: %(players)d players have no round "
                    "%(next)d without a rematch",
                    count=played,
                    players=len(tournament.players),
                    next=planned + 1,
                )
            )
        note = None
        if not tournament.rounds:
            if len(tournament.players) < 2:
                raise TournamentError(_("register at least two players first"))
            movement, note = choose_movement(len(tournament.players), self.rounds)
            store.choose_movement(movement)  # once, before round 1: never switched after
            self.say(note)
        pairing = tournament.next_round_pairing()
        if self.max_tables is not None and len(pairing.tables) > self.max_tables:
            raise TournamentError(
                _(
                    "round %(round)d needs %(tables)d tables; the hall's broker has users for "
                    "%(users)d",
                    round=pairing.number,
                    tables=len(pairing.tables),
                    users=self.max_tables,
                )
            )
        round_ = store.next_round()
        await self._publish_round(client)
        self._standings_due.set()
        sent = {tb.number: await self._send(client, round_, tb.number) for tb in round_.tables}
        answers = await self._await_acks(sent)
        return self._report(round_, answers, note)

    async def resend(self, tables: Iterable[int] = ()) -> RoundReport:
        """Send a new attempt of the current round's command to these tables (all that have not
        started their game when none are named): for a table that refused it (busy) or never
        answered."""
        client = self._connected_client()
        tournament = self.store.tournament
        if not tournament.rounds:
            raise TournamentError(_("no round is paired yet: `cribboard hall round next`"))
        round_ = tournament.rounds[-1]
        chosen = list(tables) or [
            tb.number
            for tb in round_.tables
            if not self.store.command(round_.number, tb.number).started
        ]
        for table in chosen:
            round_.table(table)  # TournamentError for a table the round does not have
        sent = {}
        for table in chosen:
            self.store.retry_command(round_.number, table)
            sent[table] = await self._send(client, round_, table)
        return self._report(round_, await self._await_acks(sent), None)

    def correct(
        self,
        round_no: int,
        table: int,
        *,
        winner: str | None,
        loser_score: int | None,
        target: int | None,
        who: str,
        why: str,
    ) -> Correction:
        """Replace a table's result (or strike it: `winner` None) and republish the standings
        (see :func:`correct_result`)."""
        correction = correct_result(
            self.store,
            round_no,
            table,
            winner=winner,
            loser_score=loser_score,
            target=target or self.target,
            who=who,
            why=why,
        )
        self.conflicts.pop((round_no, table), None)
        self._standings_due.set()
        return correction

    def accept_held(self, round_no: int, table: int, *, who: str, why: str) -> Correction:
        """Count a held result (a correction in the audit trail) and republish the standings."""
        correction = accept_held(self.store, round_no, table, who=who, why=why)
        self._standings_due.set()
        return correction

    def reject_held(self, round_no: int, table: int, *, who: str, why: str) -> Correction:
        """Drop a held result (kept in the audit trail) and republish the standings."""
        correction = reject_held(self.store, round_no, table, who=who, why=why)
        self._standings_due.set()
        return correction

    def describe(self, result: Result) -> str:
        return describe(self.store, result)

    def _report(
        self, round_: Round, answers: dict[int, messages.Ack | None], note: str | None
    ) -> RoundReport:
        tournament = self.store.tournament

        def names(table: int) -> tuple[str, str]:
            blue, orange = round_.table(table).players
            return tournament.player(blue).name, tournament.player(orange).name

        return RoundReport(
            round_,
            {table: names(table) for table in answers},
            answers,
            note,
            None if round_.bye is None else tournament.player(round_.bye).name,
        )


def register_players(store: Store, names: Iterable[str]) -> list[Player]:
    """Register players (before round 1): all or none (a bad or repeated name changes
    nothing)."""
    names = list(names)
    seen: set[str] = set()
    for name in names:
        clean = store.tournament.check_new_player(name)
        if clean.casefold() in seen:
            raise TournamentError(_("%(name)s is named twice", name=clean))
        seen.add(clean.casefold())
    return [store.register(name) for name in names]


def correct_result(
    store: Store,
    round_no: int,
    table: int,
    *,
    winner: str | None,
    loser_score: int | None,
    target: int,
    who: str,
    why: str,
) -> Correction:
    """Replace a table's result by the organiser's words: the winner's name and the loser's
    score (`winner` None: strike it). The audit trail keeps who, when, the old and the new
    result, and why."""
    new: Result | None = None
    if winner is not None:
        tournament = store.tournament
        seats = tournament.round(round_no).table(table).players
        names = {tournament.player(p).name.casefold(): seat for seat, p in enumerate(seats)}
        seat = names.get(" ".join(winner.split()).casefold())
        if seat is None:
            first, second = (inert(tournament.player(p).name) for p in seats)
            raise TournamentError(
                _(
                    "round %(round)d table %(table)d is %(first)s against %(second)s, not "
                    "%(winner)s",
                    round=round_no,
                    table=table,
                    first=first,
                    second=second,
                    winner=winner,
                )
            )
        if loser_score is None:
            raise TournamentError(_("a corrected result needs the loser's score"))
        new = tournament.make_result(round_no, table, seat, loser_score, target)
    return store.correct(round_no, table, new, who=who, why=why)


def accept_held(store: Store, round_no: int, table: int, *, who: str, why: str) -> Correction:
    """Count the result held for a table: it becomes the table's result, the audit trail says
    who accepted it, why, and why it was held."""
    held, result = store.held_result(round_no, table)
    return store.correct(
        round_no,
        table,
        result,
        who=who,
        why=_("%(why)s (accepted; it was held: %(reason)s)", why=why, reason=held.reason),
    )


def reject_held(store: Store, round_no: int, table: int, *, who: str, why: str) -> Correction:
    """Drop the result held for a table: the table keeps the result it had (none, usually);
    the audit trail says who rejected it and why."""
    held = store.held_result(round_no, table)[0]
    current = store.tournament.results.get((round_no, table))
    return store.correct(
        round_no,
        table,
        current,
        who=who,
        why=_("%(why)s (rejected; it was held: %(reason)s)", why=why, reason=held.reason),
    )


def held_json(store: Store) -> list[dict[str, Any]]:
    """The results held for the director, as the standings payload and the control socket
    carry them."""
    out: list[dict[str, Any]] = []
    for held in store.held().values():
        try:
            result = store.held_result(held.round, held.table)[1]
            what = describe(store, result)
        except TournamentError as err:
            what = str(err)
        out.append(
            {"round": held.round, "table": held.table, "result": what, "reason": held.reason}
        )
    return out


def describe(store: Store, result: Result) -> str:
    """A result in words: ``Ann beat Bob 121-88, a skunk``."""
    tournament = store.tournament
    outcome = tournament.scoring.outcome(result.loser_score, result.target)
    words = {
        "win": N_("%(winner)s beat %(loser)s %(target)d-%(score)d"),
        "skunk": N_("%(winner)s beat %(loser)s %(target)d-%(score)d, a skunk"),
        "double_skunk": N_("%(winner)s beat %(loser)s %(target)d-%(score)d, a double skunk"),
    }[outcome]
    return _(
        words,
        winner=inert(tournament.player(result.winner).name),
        loser=inert(tournament.player(result.loser).name),
        target=result.target,
        score=result.loser_score,
    )
