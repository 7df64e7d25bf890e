"""The bridge's boards in the record of games (cribboard.record), and the record as the page
reads it: the players' names of each board's game, the statistics, a game's graph, a player's
hand counts (docs/bridge.md, "The record of games").

Every state the bridge keeps of a board (the registry's) is told to the record, as `keep` and
`play` tell theirs: a board that keep drives while the bridge follows it is one game, each step
once. The record is read off the event loop (a statistics over many games takes a moment).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from cribboard.boardid import board_identity
from cribboard.bridge.registry import BoardEntry, Registry
from cribboard.playernames import MAX_NAME, BadName, check_seats, clean_name
from cribboard.record import stats
from cribboard.record.store import Record, RecordError, default_path
from cribboard.recorder import Recording
from cribboard.web.hub import Hub

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_SEATS = 4
"""The most names a game takes (four players in partnerships)."""
MOST_GAMES = 100
"""The most games one request lists."""


class RecordUnavailable(Exception):
    """The record cannot be read or written (the bridge says so, and serves the board)."""


class BridgeRecords:
    """The registry's boards in the record at `path` (default: the user's). `flashes`: the
    flash image of each virtual board the bridge runs, by its port (its identity)."""

    def __init__(
        self,
        registry: Registry,
        hub: Hub,
        *,
        path: Path | None = None,
        flashes: dict[str, Path] | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.registry = registry
        self.hub = hub
        self.path = path
        self.flashes = flashes if flashes is not None else {}
        self._say = say or (lambda text: log.warning("%s", text))
        self._recordings: dict[str, Recording] = {}
        self._epochs: dict[str, int] = {}
        self._failed = False

    def start(self) -> None:
        self.registry.state_listeners.append(self._changed)

    async def stop(self) -> None:
        if self._changed in self.registry.state_listeners:
            self.registry.state_listeners.remove(self._changed)
        for recording in self._recordings.values():
            await recording.close()
        self._recordings.clear()

    async def flush(self) -> None:
        """Wait until every state told so far is in the record."""
        for recording in list(self._recordings.values()):
            await recording.flush()

    # --- writing -----------------------------------------------------------------------------

    def _changed(self, entry: BoardEntry) -> None:
        if entry.state is None or self._failed:
            return
        gap = self._epochs.get(entry.id) != entry.epoch
        self._epochs[entry.id] = entry.epoch
        recording = self._recordings.get(entry.id)
        if gap or recording is None:  # (re)opened: which board it is, once an opening
            recording = self._recording(entry)
        if recording is not None:
            if entry.board is not None:
                recording.attach(entry.board)  # its own history, its buttons' games too
            recording.take(entry.state, gap)

    def _recording(self, entry: BoardEntry) -> Recording | None:
        identity = board_identity(entry.port, entry.hello, self.flashes.get(entry.port))
        recording = self._recordings.get(entry.id)
        if recording is not None and recording.identity == identity:
            return recording
        if recording is not None:  # another board on this port: its own games
            asyncio.ensure_future(recording.close())
        recording = Recording.open(identity, "bridge", path=self.path, say=self._say)
        if recording is None:
            self._failed = True  # said once: the bridge serves the board all the same
            return None
        self._recordings[entry.id] = recording
        return recording

    async def names(self, entry: BoardEntry) -> dict[str, Any]:
        """The names of the players of `entry`'s game (one a seat, null for none)."""
        recording = self._recordings.get(entry.id)
        if recording is None:
            raise RecordUnavailable("this board's games are not recorded (yet: no state seen)")
        names = await recording.seat_names()
        return {"board": entry.id, "game": recording.game, "names": names, "max_name": MAX_NAME}

    async def set_names(self, entry: BoardEntry, names: object) -> dict[str, Any]:
        """Name the players of `entry`'s game (and the games after it); BadName (ValueError)
        for a list or a name that breaks the rules. Every page is told (`names`)."""
        if not isinstance(names, list) or not 1 <= len(names) <= MAX_SEATS:
            raise BadName(f"names: a list of 1 to {MAX_SEATS} names (null: no name)")
        checked: list[str | None] = []
        for name in names:
            if name is not None and not isinstance(name, str):
                raise BadName("each name is a string or null")
            if isinstance(name, str) and len(name) > 4 * MAX_NAME:
                raise BadName(f"a name is at most {MAX_NAME} characters")
            checked.append(None if name is None or not name.strip() else clean_name(name))
        check_seats(checked)
        recording = self._recordings.get(entry.id)
        if recording is None:
            raise RecordUnavailable("this board's games are not recorded (yet: no state seen)")
        await recording.flush()
        seats = len(await recording.seat_names())
        if seats and len(checked) != seats:
            raise BadName(f"{len(checked)} names for {seats} seats: one for each (null: none)")
        await recording.name_seats(checked)
        result = await self.names(entry)
        self.hub.publish({"type": "names", **result})
        return result

    # --- reading -----------------------------------------------------------------------------

    async def read(self, question: Callable[[Record], T]) -> T:
        """`question` asked of the record, in a thread with a connection of its own."""

        def ask() -> T:
            try:
                with Record.open(self.path or default_path()) as record:
                    return question(record)
            except (RecordError, OSError) as err:
                raise RecordUnavailable(f"the record of games cannot be read: {err}") from err

        return await asyncio.to_thread(ask)

    async def statistics(self, games: int, player: str | None) -> dict[str, Any]:
        def question(record: Record) -> dict[str, Any]:
            found = stats.statistics(record)
            last = stats.finished_games(record, games, player)
            return {**found.to_json(), "games": [g.to_json() for g in last]}

        return await self.read(question)

    async def game(self, game: int) -> dict[str, Any] | None:
        def question(record: Record) -> dict[str, Any] | None:
            graph = stats.game_graph(record, game)
            return None if graph is None else graph.to_json()

        return await self.read(question)

    async def hands(self, who: stats.Who) -> dict[str, Any]:
        return await self.read(lambda record: stats.hand_counts(record, who).to_json())
