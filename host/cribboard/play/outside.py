"""Changes made to a board by something other than the app at the table: its own buttons,
another program (the bridge's page, a script, `cribboard peg` in another terminal) or a phone.

An app that changes the board itself (the scorekeeper, the game against the computer) tells
`OutsideChanges` each state it reads after its own changes (`known`); every state the board
pushes beyond that is a change made elsewhere, handed out in order with the state before it and
where it came from as far as the board tells. A button's `! btn` event comes when it is let go:
after the count its press started (a pending count, which is said without a source), before what
comes next; a count the buttons entered is theirs until it commits, by itself a moment later or
at the deal button. Anything else is another program or a phone (the board's events do not say
which link a request came on)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import Enum

from cribboard.api import Board, BoardState
from cribboard.events import BoardEvent, ButtonEvent, HelloEvent, StateEvent
from cribboard.i18n import _
from cribboard.watchwords import changes

_MOST_QUEUED = 256  # states kept while the app is busy; more (a flood) are read again whole


class Source(Enum):
    """Where a change came from, as far as the board tells."""

    BUTTONS = "buttons"
    ELSEWHERE = "elsewhere"
    UNTOLD = "untold"
    """A pending count that no event says more of (a press, or a program's `set_pending`)."""


@dataclass(frozen=True)
class Outside:
    """A change made elsewhere: the board `before` and `after` it, and where it came from."""

    before: BoardState
    after: BoardState
    source: Source

    def describe(self) -> str:
        """What changed and where, in a line: `orange pegs 3: 15 (from another program or a
        phone)`."""
        what = "; ".join(changes(self.before, self.after)) or _("the board changed")
        if self.source is Source.BUTTONS:
            return _("%(change)s (on the board's buttons)", change=what)
        if self.source is Source.UNTOLD:
            return what
        return _("%(change)s (from another program or a phone)", change=what)

    @property
    def new_game(self) -> bool:
        """Whether it started a new game, by a step of its own (an undo takes one away): another
        target or number of players, or every peg back at the start."""
        before, after = self.before, self.after
        if after.undo < before.undo:
            return False
        if (after.target, after.players) != (before.target, before.players):
            return True
        at_start = not any(after.front) and not any(after.back)
        return at_start and (any(before.front) or any(before.back))


class OutsideChanges:
    """Follows `board`'s pushes from now on; `known` is the board as the app last saw it (set
    it after reading the board for its own changes). Close it when done."""

    def __init__(self, board: Board, known: BoardState) -> None:
        self.known = known
        self._button = False  # a button event since the last state
        self._restarted = False  # the board restarted: its revisions start again from 0
        self._entered: set[int] = set()  # players whose pending count is the buttons'
        self._queue: asyncio.Queue[tuple[BoardState, bool, bool]] = asyncio.Queue()
        self._unsubscribe = board.subscribe(self._on_event)

    def close(self) -> None:
        """Stop following the board."""
        self._unsubscribe()

    def _on_event(self, event: BoardEvent) -> None:
        if isinstance(event, ButtonEvent):
            self._button = True
            return
        if isinstance(event, HelloEvent):
            self._restarted = True
            return
        if not isinstance(event, StateEvent):
            return
        state = event.state
        if self._queue.qsize() < _MOST_QUEUED:
            self._queue.put_nowait((state, self._button, self._restarted))
        self._button = self._restarted = False

    def pending(self) -> list[Outside]:
        """The changes made elsewhere that came in since they were last asked for, in order
        (each becomes `known`)."""
        found = []
        while not self._queue.empty():
            state, button, restarted = self._queue.get_nowait()
            if self._new(state, restarted):
                found.append(self._outside(state, button))
        return found

    async def wait(self) -> Outside:
        """The next change made elsewhere (it becomes `known`)."""
        while True:
            state, button, restarted = await self._queue.get()
            if self._new(state, restarted):
                return self._outside(state, button)

    def _new(self, state: BoardState, restarted: bool) -> bool:
        """Whether `state` is news: later than the one known (a state from before it, the app's
        own changes among them, is not), or the first after the board restarted and differs."""
        if restarted and looks(state) == looks(self.known):
            self.known = state  # the same game, counted from 0 again
            return False
        return restarted or state.rev > self.known.rev

    def _outside(self, state: BoardState, button: bool) -> Outside:
        before = self.known
        players = range(min(state.players, before.players))
        entered = self._entered
        if button:
            entered = entered | {p for p in players if state.pending[p] or before.pending[p]}
        moved = [p for p in players if state.pending[p] != before.pending[p]]
        counting = looks(state) == looks(before) and bool(moved)
        committed = any(
            p in entered
            and before.pending[p]
            and not state.pending[p]
            and state.front[p] - before.front[p] == before.pending[p]
            for p in players
        )
        if button or committed or (counting and all(p in entered for p in moved)):
            source = Source.BUTTONS
        else:
            source = Source.UNTOLD if counting else Source.ELSEWHERE
        self._entered = {p for p in entered if p in players and state.pending[p]}
        self.known = state
        return Outside(before, state, source)


def looks(state: BoardState) -> tuple[object, ...]:
    """What the board shows of the game: not its revision (a restart starts it again from 0),
    nor a pending count (that is no undo step)."""
    players = state.players
    return (
        state.target,
        players,
        state.dealer,
        state.winner,
        tuple(state.front[:players]),
        tuple(state.back[:players]),
        tuple(state.games[:players]),
    )
