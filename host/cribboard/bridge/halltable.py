"""The bridge's board at a club hall's table: ``cribboard serve --broker URL --hall H --table N``.

The board's every state, as the bridge serves it (``GET /api/state``: the same object, built by
the same code), goes to the table's ``state`` and ``event`` topics, and the director's new-game
commands run on the board (docs/mqtt.md, "A table client"). The MQTT side is the one every
table client on a computer uses (:class:`cribboard.hallwire.tableclient.TableClient`); it runs in
the background, so a broker that is away never holds up the bridge's HTTP and WebSocket side
nor the board. The last command run is kept in a small file, so a command the director sends
again after the bridge restarted is answered, not run again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cribboard.api import Board, BoardState
from cribboard.bridge.registry import BoardEntry, Registry
from cribboard.errors import BoardRejected, CribboardError
from cribboard.hallwire import messages, topics
from cribboard.hallwire.tableclient import CommandMemory, TableClient
from cribboard.mqtt.address import BrokerAddress
from cribboard.plaintext import inert

BOARD_WAIT_S = 5.0  # a command for a board that is being (re)opened waits this long for it
COLOURS = ("blue", "orange", "purple")


def default_memory_file(hall: str, table: int) -> Path:
    """``$XDG_STATE_HOME/cribboard/table-<hall>-<N>.json`` (``~/.local/state`` by default)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return (
        Path(base)
        / "cribboard"
        / f"table-{topics.check_hall(hall)}-{topics.check_table(table)}.json"
    )


@dataclass(frozen=True)
class TableSettings:
    """Where the table's broker is, who logs in, which hall and table, and where the last
    command run is kept."""

    address: BrokerAddress
    hall: str
    table: int
    memory_file: Path


class HallTable:
    """The registry's first board at a hall's table (see the module's docstring)."""

    def __init__(
        self, registry: Registry, settings: TableSettings, say: Callable[[str], None]
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.say = say
        self.names: tuple[str, ...] = ()  # the players of the game the director started
        self._asking: asyncio.Task[None] | None = None
        self.client = TableClient(
            settings.address,
            settings.hall,
            settings.table,
            state=self._state,
            run=self._new_game,
            memory=CommandMemory(settings.memory_file),
            say=say,
        )

    def start(self) -> None:
        """Join the hall in the background (see TableClient.start_background)."""
        self.registry.state_listeners.append(self._changed)
        # The director judges a game by every revision: no two changes pushed as one.
        self.registry.every_change = True
        entry = self._entry()
        if entry is not None and entry.board is not None:
            self._asking = asyncio.create_task(self._ask_every_change(entry.board))
        self.client.start_background()

    async def _ask_every_change(self, board: Board) -> None:
        with contextlib.suppress(CribboardError):
            await board.ask_every_change()

    async def stop(self) -> None:
        if self._changed in self.registry.state_listeners:
            self.registry.state_listeners.remove(self._changed)
        await self.client.stop()

    def _entry(self) -> BoardEntry | None:
        return self.registry.get(None)

    def _state(self) -> BoardState | None:
        entry = self._entry()
        return None if entry is None else entry.state

    def _changed(self, entry: BoardEntry) -> None:
        if entry is self._entry() and entry.state is not None:
            self.client.post(entry.state)

    async def _new_game(self, command: messages.NewGame) -> messages.Ack:
        entry = self._entry()
        if entry is not None and not (entry.connected and entry.board is not None):
            await self.registry.wait_board(entry, BOARD_WAIT_S)
        board = None if entry is None else entry.board
        if entry is None or board is None or not entry.connected:
            return messages.Ack(
                command.id, False, "board_unavailable", "the table's board is not connected"
            )
        try:
            await board.new_game(command.target, len(command.names))
        except BoardRejected as err:
            self.say(f"table {self.settings.table}: the board refused the new game: {err.text}")
            return messages.Ack(command.id, False, err.code, err.text)
        except CribboardError as err:
            return messages.Ack(command.id, False, "board_unavailable", str(err))
        self.names = command.names
        players = " against ".join(
            f"{inert(name)} ({COLOURS[seat]})" for seat, name in enumerate(command.names)
        )
        self.say(f"table {self.settings.table}: new game to {command.target}: {players}")
        return messages.Ack(command.id, True)
