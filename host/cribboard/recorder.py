"""A program that drives or follows a board keeps the record of its games (cribboard.record):
`keep`, `play`, the bridge and a remote game each hold a `Recording` of their board.

    recording = Recording.open(identity, source="keep", say=print)   # None if no record
    stop = await recording.follow(board)      # every state the board shows, from now on
    await recording.note(Note("hand", side=1, points=12, seat=1, cards="5H 5S 5C JD 5D"))
    await recording.close()

The board's states are told to the record in the order the board sent them, in the background
(the file is written off the event loop, one change at a time), so a program never waits on the
disk, nor on another program writing at once. A note waits for the states before it: it is about
the step they made. A record that cannot be written (a full disk, a locked file) is said once in
one line and the program plays on: the game on the board matters more than its record.

A board's own history (protocol 1.4: the games it finished, its buttons' too) is merged in when
a recording starts following it and each time the board leaves a game (its number moves on):
each game once (`Record.add_board_game`, by the board's identity and its number for the game),
and the games of a match grouped as the board numbers them (`Record.add_match`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from cribboard.api import (
    Board,
    BoardEvent,
    BoardState,
    HelloEvent,
    History,
    LinkEvent,
    Match,
    StateEvent,
)
from cribboard.boardid import BoardIdentity
from cribboard.errors import CribboardError
from cribboard.i18n import _
from cribboard.playernames import check_seats, clean_name
from cribboard.record.store import BoardGame, Note, Record, Seen

log = logging.getLogger(__name__)

T = TypeVar("T")

STATE_WAIT_S = 2.0
"""How long a note waits for the state its step made (it comes at once, unless the link
dropped: then the note is tried on what the record has)."""


def seen_of(state: BoardState) -> Seen:
    """A board's state as the record takes it."""
    sides = state.players
    return Seen(
        target=state.target,
        sides=sides,
        dealer=state.dealer,
        winner=state.winner,
        result=state.result,
        front=tuple(state.front[:sides]),
        back=tuple(state.back[:sides]),
        games=tuple(state.games[:sides]),
        undo=state.undo,
        skunk_double=state.skunk_double,
        board_game=state.game,
    )


class Recording:
    """One board's games kept in `record` (see the module). `source`: the program (a source of
    cribboard.record.store); `seats` and `variant`: the game's form, for the games it starts."""

    def __init__(
        self,
        record: Record,
        identity: BoardIdentity,
        source: str,
        *,
        seats: int | None = None,
        variant: str | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.record = record
        self.identity = identity
        self.source = source
        self.seats = seats
        self.variant = variant
        self._say = say or (lambda text: log.warning("%s", text))
        self._queue: asyncio.Queue[Callable[[], None] | None] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._gap = True  # the next state follows a gap: nothing was seen before it
        self._rev = -1  # the revision of the last state taken
        self._taken = asyncio.Event()  # set at each state taken
        self._failed = False
        self._closed = False
        self._unfollow: Callable[[], None] | None = None
        self._merges: set[asyncio.Task[None]] = set()
        self._board: Board | None = None  # whose history is merged as its states come
        self._board_game: int | None = None  # the board's number for its game, as last taken
        self._state: BoardState | None = None  # the state last taken
        self._match: tuple[object, ...] | None = None  # its match as last told to the record
        self.game: int | None = None
        """The record's row of the game the board shows, as last told."""

    @classmethod
    def open(
        cls,
        identity: BoardIdentity,
        source: str,
        *,
        path: Path | None = None,
        seats: int | None = None,
        variant: str | None = None,
        say: Callable[[str], None] | None = None,
    ) -> Recording | None:
        """A recording in the user's record (or the file `path`); None, said in one line, when
        the record cannot be opened."""
        try:
            record = Record.open(path)
        except (CribboardError, OSError) as err:
            (say or log.warning)(_("the games are not recorded: %(error)s", error=err))
            return None
        return cls(record, identity, source, seats=seats, variant=variant, say=say)

    # --- the board's states ----------------------------------------------------------------

    def take(self, state: BoardState, gap: bool = False) -> None:
        """The board shows `state` (`gap`: states may have been missed before it)."""
        if self._closed:
            return
        left = self._board_game
        self._board_game = state.game
        self._state = state
        gap = gap or self._gap
        self._gap = False
        if self._board is not None:
            if gap:  # (anything may have happened before: all it keeps)
                self._merge_soon(self._board, 0)
            elif state.game is not None and left is not None and state.game > left:
                self._merge_soon(self._board, left)  # the board left game `left`: in its history
        self._rev = state.rev if gap else max(self._rev, state.rev)
        self._taken.set()
        seen = seen_of(state)
        self._submit(lambda: self._observe(seen, gap))
        match = state.match
        if match is not None and state.game is not None:
            told = (state.game, match, state.skunk_double)
            if told != self._match:
                self._match = told
                board_game, skunk_double = state.game, state.skunk_double
                self._submit(lambda: self._group(match, board_game, skunk_double))

    def attach(self, board: Board) -> None:
        """Merge `board`'s own history as its states are taken: after a gap (all it keeps),
        and each time it leaves a game (its number moves on: that game is in it now)."""
        self._board = board

    def gap(self) -> None:
        """States may be missed from now on (the board restarted, the link is being reopened)."""
        self._gap = True

    def _observe(self, seen: Seen, gap: bool) -> None:
        self.game = self.record.observe(
            self.identity.key,
            seen,
            source=self.source,
            gap=gap,
            board_label=self.identity.label,
            seats=self.seats,
            variant=self.variant,
        )

    def _group(self, match: Match, board_game: int, skunk_double: bool) -> None:
        """The board's games of `match` (its number for the match), the last of them
        `board_game`, grouped in the record as their numbers say: a match's games are the
        board's games numbered from its first to its last, one after another."""
        first = board_game - match.game + 1
        rows = self.record.board_games(self.identity.key, range(first, board_game + 1))
        if not rows:
            return
        self.record.add_match(
            self.identity.key,
            match.number,
            kind=match.kind,
            length=match.length,
            games=list(rows.values()),
            places=[number - first + 1 for number in rows],
            winner=match.winner,
            skunk_double=skunk_double,
        )

    # --- the board's own history -----------------------------------------------------------

    async def merge(self, board: Board, since: int = 0) -> int:
        """Read `board`'s own history from its game number `since` on (0: all it keeps) and
        put its games in the record, each once, and their matches; returns how many games it
        read (0 from a board without one). A board that cannot be read is left for the next
        time."""
        try:
            history = await board.history(since)
        except CribboardError as err:
            log.debug("record: the board's history: %s", err)
            return 0
        if history is None or not history.entries:
            return 0
        await self._call_always(lambda: self._merge(history))
        return len(history.entries)

    def _merge(self, history: History) -> None:
        now = datetime.now(UTC)
        key = self.identity.key
        last: dict[int, tuple[Match, int, bool]] = {}  # each match's last game read
        for entry in history.entries:
            ago = history.at - entry.ended
            ended = (now - timedelta(seconds=ago)).isoformat(timespec="milliseconds")
            self.record.add_board_game(
                BoardGame(
                    board=key,
                    board_game=entry.game,
                    target=entry.target,
                    sides=entry.players,
                    winner=entry.winner,
                    result=entry.result,
                    front=tuple(entry.front),
                    back=tuple(entry.back),
                    games=tuple(entry.games),
                    ended=ended if 0 <= ago else None,
                    board_label=self.identity.label,
                )
            )
            if entry.match is not None:
                last[entry.match.number] = (entry.match, entry.game, entry.skunk_double)
        state = self._state
        for number, (match, board_game, skunk_double) in last.items():
            on_board = None if state is None else state.match
            if (
                state is not None
                and state.game is not None
                and on_board is not None
                and on_board.number == number
            ):
                # The match goes on on the board: its games up to the one there, its winner
                # as the board shows it.
                match, board_game, skunk_double = on_board, state.game, state.skunk_double
            self._group(match, board_game, skunk_double)

    @property
    def following(self) -> bool:
        """Whether it follows a board (:meth:`follow`)."""
        return self._unfollow is not None

    async def follow(self, board: Board) -> Callable[[], None]:
        """Take every state `board` shows from now on (its state now first), until it is
        closed or the returned function is called; its own history merged in (`attach`)."""

        def on_event(event: BoardEvent) -> None:
            if isinstance(event, StateEvent):
                self.take(event.state)
            elif isinstance(event, HelloEvent) or (
                isinstance(event, LinkEvent) and event.state != "lost"
            ):
                self.gap()

        if self._unfollow is not None:  # one board at a time: the one before is left
            self._unfollow()
        unsubscribe = board.subscribe(on_event)

        def stop() -> None:
            unsubscribe()
            self._unfollow = None

        self._unfollow = stop
        self.attach(board)
        self.gap()
        self.take(await board.state())
        return stop

    def _merge_soon(self, board: Board, since: int) -> None:
        async def merge() -> None:
            await self.merge(board, since)

        task = asyncio.get_running_loop().create_task(merge())
        self._merges.add(task)
        task.add_done_callback(self._merges.discard)

    # --- what the program knows beyond the pegs --------------------------------------------

    async def note(self, note: Note, rev: int | None = None) -> bool:
        """Say what the last step was (cribboard.record.store.Record.note), once the states
        before it are kept; `rev`: the board's revision after the step (the reply to a peg
        comes before the state it made: that state is waited for, `STATE_WAIT_S` at most).
        False when it was not kept."""
        if rev is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._state_at(rev), STATE_WAIT_S)
        return bool(await self._call(lambda game: self.record.note(game, note), False))

    async def _state_at(self, rev: int) -> None:
        while self._rev < rev:
            self._taken.clear()
            await self._taken.wait()

    async def deal(self, *, dealer_seat: int | None = None, starter: str | None = None) -> None:
        """Say who deals the deal going on (a seat), or its starter card."""
        await self._call(
            lambda game: self.record.deal(game, dealer_seat=dealer_seat, starter=starter), None
        )

    async def name_seats(self, names: Sequence[str | None]) -> None:
        """The players of the game the board shows, a name a seat (None: none); they sit on in
        the games after it. BadName (a ValueError) for a name that breaks the rule."""
        checked = check_seats([None if name is None else clean_name(name) for name in names])
        await self._call(lambda game: self.record.name_seats(game, checked), None, raising=True)

    async def seat_names(self) -> list[str | None]:
        """The names of the players of the game the board shows (None: no name), one a seat."""
        none: list[str | None] = []
        return await self._call(self.record.seat_names, none)

    async def flush(self) -> None:
        """Wait until everything told so far is in the record."""
        done = asyncio.get_running_loop().create_future()
        self._submit(lambda: None, done)
        await done

    async def close(self) -> None:
        """Stop following the board, write what is left, then close the record's file."""
        if self._unfollow is not None:
            self._unfollow()
        for task in list(self._merges):
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task
        if self._worker is not None:
            await self.flush()
            self._queue.put_nowait(None)
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None
        self._closed = True
        await asyncio.to_thread(self.record.close)

    # --- the background writer -------------------------------------------------------------

    async def _call_always(self, action: Callable[[], None]) -> None:
        """`action()` in turn after what was told before, whatever game the board shows."""
        done = asyncio.get_running_loop().create_future()
        self._submit(action, done)
        await done

    async def _call(self, action: Callable[[int], T], failed: T, *, raising: bool = False) -> T:
        """`action(game)` in turn after what was told before (`failed` when there is no game or
        the record cannot be written; `raising`: its error is the caller's)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[object] = loop.create_future()
        result: list[T] = [failed]
        errors: list[Exception] = []

        def run() -> None:
            if self.game is None:
                return
            try:
                result[0] = action(self.game)
            except Exception as err:
                if not raising:
                    raise
                errors.append(err)

        self._submit(run, done)
        await done
        if errors:
            raise errors[0]
        return result[0]

    def _submit(
        self, action: Callable[[], None], done: asyncio.Future[object] | None = None
    ) -> None:
        def job() -> None:
            try:
                action()
            except Exception as err:  # a record that cannot be written must not stop play
                if not self._failed:  # said once; the next changes are tried all the same
                    self._failed = True
                    self._say(_("the games are not all recorded: %(error)s", error=err))
                log.debug("record: %s", err, exc_info=True)
            finally:
                if done is not None:
                    loop.call_soon_threadsafe(_settle, done)

        loop = asyncio.get_running_loop()
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="cribboard-record")
        self._queue.put_nowait(job)

    async def _work(self) -> None:
        while True:
            job = await self._queue.get()
            if job is None:
                return
            await asyncio.to_thread(job)


def _settle(future: asyncio.Future[object]) -> None:
    if not future.done():
        future.set_result(None)
