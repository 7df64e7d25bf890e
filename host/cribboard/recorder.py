"""A program that drives or follows a board keeps the record of its games (cribboard.record):
`keep`, `play`, the bridge and a linked game each hold a `Recording` of their board.

    recording = Recording.open(identity, source="keep", say=print)   # None if no record
    stop = await recording.follow(board)      # every state the board shows, from now on
    await recording.note(Note("hand", side=1, points=12, seat=1, cards="5H 5S 5C JD 5D"))
    await recording.close()

The board's states are told to the record in the order the board sent them, in the background
(the file is written off the event loop, one change at a time), so a program never waits on the
disk, nor on another program writing at once. A note waits for the states before it: it is about
the step they made. A record that cannot be written (a full disk, a locked file) is said once in
one line and the program plays on: the game on the board matters more than its record.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from cribboard.api import Board, BoardEvent, BoardState, HelloEvent, LinkEvent, StateEvent
from cribboard.boardid import BoardIdentity
from cribboard.errors import CribboardError
from cribboard.i18n import _
from cribboard.playernames import check_seats, clean_name
from cribboard.record.store import Note, Record, Seen

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
        gap = gap or self._gap
        self._gap = False
        self._rev = state.rev if gap else max(self._rev, state.rev)
        self._taken.set()
        seen = seen_of(state)
        self._submit(lambda: self._observe(seen, gap))

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

    @property
    def following(self) -> bool:
        """Whether it follows a board (:meth:`follow`)."""
        return self._unfollow is not None

    async def follow(self, board: Board) -> Callable[[], None]:
        """Take every state `board` shows from now on (its state now first), until it is
        closed or the returned function is called."""

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
        self.gap()
        self.take(await board.state())
        return stop

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
        if self._worker is not None:
            await self.flush()
            self._queue.put_nowait(None)
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None
        self._closed = True
        await asyncio.to_thread(self.record.close)

    # --- the background writer -------------------------------------------------------------

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
