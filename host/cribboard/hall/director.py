"""The tournament director: the hall's one client that keeps the score.

It connects to the hall's broker as ``director`` with a persistent session (the broker queues
every ``event`` and ``ack`` while it is away), follows every table's ``state``, ``event``,
``online`` and ``ack``, and keeps the tournament in its store (:mod:`cribboard.hall.store`):

- **Results.** The moment a board shows a winner (:func:`cribboard.hall.wins.finished_game`),
  the result is stored under its idempotency key before anything else, then the ``standings``
  are published (retained). A win counts for the round once the table has acknowledged the
  round's new-game command (the previous round's win, still on a board, is not this round's).
- **Nothing lost.** On every connection it subscribes again, so the broker hands it every
  table's retained state, and it records any win not stored yet: a director killed between the
  broker's delivery and its own write, or a broker restart, loses nothing. It sends again the
  command of each table that has not acknowledged it (same id: a table that ran it only answers
  again), republishes ``round`` and ``standings``, and reconnects by itself until stopped.
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
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import aiomqtt

from cribboard.api import BoardState
from cribboard.hall import HallError, messages
from cribboard.hall import topics as t
from cribboard.hall.address import BrokerAddress, refusal
from cribboard.hall.store import ResultConflict, Store
from cribboard.hall.tournament import (
    CIRCLE,
    ROTATION,
    Correction,
    Player,
    Result,
    Round,
    TournamentError,
    max_rounds,
)
from cribboard.hall.view import HallView, view_filters
from cribboard.hall.wins import finished_game

log = logging.getLogger(__name__)

ACK_TIMEOUT_S = 10.0
RECONNECT_S = (0.1, 0.2, 0.5, 1.0)  # waits before reconnecting: quick first, then calmer
DEFAULT_ROUNDS = 9
_COMMAND_ID = re.compile(r"r(\d+)t(\d+)(?:\.\d+)?\Z")


def choose_movement(players: int, rounds: int) -> tuple[str, str]:
    """The movement for a tournament of `rounds` rounds, and one line saying why: the clubs'
    rotation when it pairs that many rounds without a rematch, else the circle method."""
    rotation, circle = max_rounds(players, ROTATION), max_rounds(players, CIRCLE)
    if rotation >= rounds:
        return ROTATION, (
            f"pairing by the clubs' rotation: it pairs {players} players for {rounds} rounds "
            f"without a rematch (up to {rotation})"
        )
    if circle >= rounds:
        return CIRCLE, (
            f"pairing by the circle method: the clubs' rotation pairs {players} players for "
            f"only {rotation} rounds without a rematch, the circle method for {circle}"
        )
    return CIRCLE, (
        f"pairing by the circle method: {players} players have only {circle} rounds without a "
        f"rematch, not the {rounds} planned (the clubs' rotation: {rotation})"
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
        self.hall = t.check_hall(hall)
        self.target = target
        self.rounds = rounds
        self.max_tables = max_tables
        self.ack_timeout = ack_timeout
        self.say = say or (lambda text: log.info("%s", text))
        self.view = HallView(hall)
        self.connected = asyncio.Event()
        self.conflicts: dict[tuple[int, int], ResultConflict] = {}
        self.latest: dict[int, BoardState] = {}  # each table's latest state
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
                    raise HallError(f"director: {refused}") from None
                if self.connected.is_set():
                    attempt = 0  # it was up: try again at once
                self.say(f"lost the broker ({err}): reconnecting")
            finally:
                self._client = None
                self.connected.clear()
                for future in self._pending.futures.values():
                    if not future.done():
                        future.cancel()  # sent again on reconnecting
            await asyncio.sleep(RECONNECT_S[min(attempt, len(RECONNECT_S) - 1)])
            attempt += 1

    async def _session(self) -> None:
        async with self.address.client(t.DIRECTOR_USER, clean_session=False) as client:
            self._client = client
            # The retained states come with these subscriptions: every table's board as it is.
            for topic in view_filters(self.hall):
                await client.subscribe(topic, qos=1)
            await client.subscribe(t.table_topic(self.hall, "+", t.ACK), qos=1)
            await self._publish_round(client)
            self._standings_due.set()
            await self._resend_unstarted(client)
            self.connected.set()
            # Ends with the connection: a publication in flight on a dead link is dropped, and
            # the next connection publishes the standings as they are then.
            publisher = asyncio.create_task(self._publish_standings_when_due(client))
            try:
                async for message in client.messages:
                    self._take(str(message.topic), bytes(message.payload))
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

    def _take(self, topic: str, payload: bytes) -> None:
        self.view.feed(topic, payload)
        try:
            name = t.parse(topic)
        except HallError:
            return
        if name.table is None:
            return
        try:
            if name.leaf in (t.STATE, t.EVENT):
                self._table_state(name.table, messages.decode_state(payload))
            elif name.leaf == t.ACK:
                self._ack(name.table, messages.decode_ack(payload))
        except messages.MessageError as err:
            log.warning("table %d: %s", name.table, err)

    def _table_state(self, table: int, state: BoardState) -> None:
        self.latest[table] = state
        game = finished_game(state)
        tournament = self.store.tournament
        if game is None or not tournament.rounds:
            return
        round_ = tournament.rounds[-1]
        if table not in {tb.number for tb in round_.tables}:
            return
        if not self.store.command(round_.number, table).started:
            return  # the board still shows the game before this round's
        try:
            stored = self.store.record_finished(round_.number, table, game)
        except ResultConflict as err:
            if (round_.number, table) not in self.conflicts:
                self.conflicts[(round_.number, table)] = err
                self.say(f"table {table} reported another result: {err}")
            return
        except TournamentError as err:
            self.say(f"table {table}: result refused: {err}")
            return
        if stored:
            self.results_recorded += 1
            result = tournament.results[(round_.number, table)]
            self.say(f"round {round_.number} table {table}: {self.describe(result)}")
            self._standings_due.set()

    def _ack(self, table: int, ack: messages.Ack) -> None:
        future = self._pending.futures.pop(ack.id, None)
        if future is not None and not future.done():
            future.set_result(ack)
        match = _COMMAND_ID.match(ack.id)
        if not ack.ok or match is None or int(match.group(2)) != table:
            return
        round_no = int(match.group(1))
        if self.store.mark_started(round_no, table, ack.id):
            # A re-sent command's answer: the game may be over already (the director was
            # away); the table's latest state tells.
            latest = self.latest.get(table)
            if latest is not None:
                self._table_state(table, latest)

    # --- what it publishes ---------------------------------------------------------------------

    async def _publish_round(self, client: aiomqtt.Client) -> None:
        tournament = self.store.tournament
        if tournament.rounds:
            payload = messages.encode_round(tournament, tournament.rounds[-1])
            await client.publish(t.hall_topic(self.hall, t.ROUND), payload, qos=1, retain=True)

    def standings_payload(self) -> bytes:
        return messages.encode_standings(len(self.store.tournament.rounds), self.store.standings())

    async def _publish_standings_when_due(self, client: aiomqtt.Client) -> None:
        # One publication for a burst of results: the latest standings are what counts.
        topic = t.hall_topic(self.hall, t.STANDINGS)
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
        names = tuple(tournament.player(p).name for p in round_.table(table).players)
        payload = messages.encode_command(messages.NewGame(command.id, self.target, names))
        future = self._pending.futures.get(command.id)
        if future is None or future.done():
            future = self._pending.futures[command.id] = asyncio.get_running_loop().create_future()
        await client.publish(t.table_topic(self.hall, table, t.CMD), payload, qos=1)
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
            raise HallError(f"the director is not connected to the broker at {self.address.url}")
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
                raise TournamentError(
                    f"round {current.number} is not over: table{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(missing)} {'have' if len(missing) > 1 else 'has'} no result yet "
                    "(`cribboard hall correct` enters one by hand)"
                )
        planned = min(self.rounds, max_rounds(len(tournament.players), tournament.rules.movement))
        if tournament.rounds and len(tournament.rounds) >= planned:
            raise TournamentError(f"all {len(tournament.rounds)} rounds are played")
        note = None
        if not tournament.rounds:
            if len(tournament.players) < 2:
                raise TournamentError("register at least two players first")
            movement, note = choose_movement(len(tournament.players), self.rounds)
            store.choose_movement(movement)  # once, before round 1: never switched after
            self.say(note)
        pairing = tournament.next_round_pairing()
        if self.max_tables is not None and len(pairing.tables) > self.max_tables:
            raise TournamentError(
                f"round {pairing.number} needs {len(pairing.tables)} tables; the hall's broker "
                f"has users for {self.max_tables}"
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
            raise TournamentError("no round is paired yet: `cribboard hall round next`")
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
            raise TournamentError(f"{clean} is named twice")
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
            raise TournamentError(
                f"round {round_no} table {table} is "
                + " against ".join(tournament.player(p).name for p in seats)
                + f", not {winner}"
            )
        if loser_score is None:
            raise TournamentError("a corrected result needs the loser's score")
        new = tournament.make_result(round_no, table, seat, loser_score, target)
    return store.correct(round_no, table, new, who=who, why=why)


def describe(store: Store, result: Result) -> str:
    """A result in words: ``Ann beat Bob 121-88, a skunk``."""
    tournament = store.tournament
    outcome = tournament.rules.outcome(result.loser_score, result.target)
    kind = {"win": "", "skunk": ", a skunk", "double_skunk": ", a double skunk"}[outcome]
    return (
        f"{tournament.player(result.winner).name} beat {tournament.player(result.loser).name} "
        f"{result.target}-{result.loser_score}{kind}"
    )
