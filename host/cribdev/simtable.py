"""Simulated tables: a table client without a board, for tests, benchmarks and a dry run.

The game is the shared core's (:class:`cribcore.state.GameState` plays every peg) and what goes
over MQTT is exactly what a board's table client sends (docs/mqtt.md, "A table client"): the
client id and user ``table-N``, a persistent session, the Last Will ``online`` = ``0``; on every
connection: subscribe to ``cmd``, publish ``online`` = ``1``, then the board's state to
``state`` (retained, QoS 0) and ``event`` (QoS 1); after each change the new state to both; each
command answered on ``ack``, a command id run once. The state is the board's own ``! st`` line,
written by the firmware's code (:func:`cribcore.protocol.write_state_event`) and read as any
host reads it (:meth:`BoardState.from_fields`).

    async with SimTable(address, "club", 3, seed=3) as table:   # connected, online
        await table.peg(0, 12)
        await table.play()                                      # seeded pegs to a winner

``python -m cribdev.simtable --broker mqtt://127.0.0.1:1883 --hall club --table 3
--password PW`` runs one in a process of its own (tests kill it to fire its Last Will); it
takes ``peg SEAT POINTS``, ``play [PEGS]``, ``finish SEAT LOSER_SCORE`` and ``quit`` on its
standard input and prints ``online`` when connected and ``state REV`` after each change.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from pathlib import Path

from cribboard import wire
from cribboard.api import BoardState
from cribboard.hallwire import messages, topics
from cribboard.hallwire.tableclient import CommandMemory, TableClient
from cribboard.mqtt.address import BrokerAddress
from cribcore import protocol
from cribcore.limits import MAX_POINTS
from cribcore.state import NO_WINNER, GameError, GameState

_LINE_BYTES = 200  # the firmware's event buffer


def board_state(game: GameState) -> BoardState:
    """The state a board running `game` reports: its ``! st`` line, decoded by the host."""
    out = protocol.LineWriter(_LINE_BYTES)
    protocol.write_state_event(out, game)
    line = wire.decode_line(bytes(out.buf[: out.n]))
    return BoardState.from_fields(line.fields)


class SimTable:
    """One simulated table on a hall's broker. `address` carries the broker and the table's
    password (the user is ``table-N``). `state_file` keeps the game across a restart of the
    process, as a board keeps it across its table client's (the revision starts again at 0,
    as a board's does after a power cut). The MQTT side is the one every table client on a
    computer uses (:class:`cribboard.hallwire.tableclient.TableClient`)."""

    def __init__(
        self,
        address: BrokerAddress,
        hall: str,
        table: int,
        *,
        seed: int | None = None,
        state_file: Path | None = None,
    ) -> None:
        self.hall = topics.check_hall(hall)
        self.table = table
        self.rng = random.Random(seed)
        self.state_file = state_file
        self.game = GameState()
        self.names: tuple[str, ...] = ()
        self.commands: list[messages.NewGame] = []  # each command run, in order
        self.on_state: list[asyncio.Queue[BoardState]] = []  # optional watchers
        memory = CommandMemory(on_change=self._keep)
        plain = address.with_login(None, address.password)
        self.client = TableClient(
            plain, hall, table, state=lambda: self.state, run=self._new_game, memory=memory
        )
        if state_file is not None and state_file.exists():
            self._load(state_file)

    @property
    def online(self) -> asyncio.Event:
        """Set while connected, its state published."""
        return self.client.online

    @property
    def state(self) -> BoardState:
        return board_state(self.game)

    # --- running -------------------------------------------------------------------------------

    async def start(self) -> SimTable:
        """Connect (and keep reconnecting) in the background; returns once online."""
        await self.client.start()
        return self

    async def stop(self) -> None:
        """Go offline cleanly: ``online`` = ``0``, then disconnect."""
        await self.client.stop()

    async def __aenter__(self) -> SimTable:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _changed(self) -> BoardState:
        """After a change: keep it (state file), tell the watchers, publish it if online."""
        state = self.state
        self._keep()
        for queue in self.on_state:
            queue.put_nowait(state)
        await self.client.publish(state)
        return state

    async def _new_game(self, command: messages.NewGame) -> messages.Ack:
        try:
            self.game.new_game(command.target, len(command.names))
        except GameError as err:
            return messages.Ack(command.id, False, err.code, err.text)
        self.names = command.names
        self.commands.append(command)
        await self._changed()
        return messages.Ack(command.id, True)

    # --- playing ---------------------------------------------------------------------------

    async def peg(self, seat: int, points: int) -> BoardState:
        """Peg `points` for `seat` (GameError as the board refuses: a finished game...)."""
        self.game.peg(seat, points)
        return await self._changed()

    async def set_pending(self, seat: int, points: int) -> BoardState:
        """Show a pending count for `seat` (0 clears it): a change, no points."""
        self.game.set_pending(seat, points)
        return await self._changed()

    async def play(self, pegs: int | None = None) -> BoardState:
        """Seeded random pegging, the players in turn from the dealer's left, until a player
        wins (or `pegs` pegs were made)."""
        made = 0
        seat = 1 - self.game.dealer if self.game.players == 2 else 0
        while self.game.winner == NO_WINNER and (pegs is None or made < pegs):
            await self.peg(seat, self.rng.randint(1, MAX_POINTS))
            seat = (seat + 1) % self.game.players
            made += 1
        return self.state

    async def finish(self, winner_seat: int, loser_score: int) -> BoardState:
        """Peg a game to this end: the loser to `loser_score`, then the winner to the target
        (for tests that choose each result)."""
        game = self.game
        for seat, goal in ((1 - winner_seat, loser_score), (winner_seat, game.target)):
            while game.front[seat] < goal:
                await self.peg(seat, min(MAX_POINTS, goal - game.front[seat]))
        return self.state

    # --- the board's memory ------------------------------------------------------------------

    def _keep(self) -> None:
        if self.state_file is not None:
            self._save(self.state_file)

    def _save(self, path: Path) -> None:
        g = self.game
        saved = {
            "players": g.players,
            "target": g.target,
            "dealer": g.dealer,
            "front": g.front,
            "back": g.back,
            "games": g.games,
            "names": list(self.names),
            "last_command": self.client.memory.to_json(),
        }
        path.write_text(json.dumps(saved))

    def _load(self, path: Path) -> None:
        saved = json.loads(path.read_text())
        game = GameState(saved["players"], saved["target"])
        game.dealer = saved["dealer"]
        for p in range(game.players):
            game.set_pegs(p, saved["front"][p], saved["back"][p])
        game.games[:] = saved["games"]
        game.rev = 0  # a board counts its revisions again from 0 after a restart
        game.undo_count = 0
        self.game = game
        self.names = tuple(saved["names"])
        self.client.memory.load_json(saved["last_command"])


# --- a simulated table in a process of its own -------------------------------------------------


async def _serve_stdin(table: SimTable) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    await table.start()
    print("online", flush=True)
    while line := (await reader.readline()).decode():
        words = line.split()
        try:
            if not words:
                continue
            if words[0] == "quit":
                break
            if words[0] == "peg":
                state = await table.peg(int(words[1]), int(words[2]))
            elif words[0] == "play":
                state = await table.play(int(words[1]) if len(words) > 1 else None)
            elif words[0] == "finish":
                state = await table.finish(int(words[1]), int(words[2]))
            else:
                print(f"error unknown command {words[0]}", flush=True)
                continue
        except (GameError, ValueError, IndexError) as err:
            print(f"error {err}", flush=True)
            continue
        print(f"state {state.rev}", flush=True)
    await table.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cribdev.simtable")
    parser.add_argument("--broker", required=True, help="mqtts://HOST:PORT or mqtt://HOST:PORT")
    parser.add_argument("--cafile", help="the CA that signed the broker's certificate")
    parser.add_argument("--hall", required=True)
    parser.add_argument("--table", type=int, required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--state-file", type=Path)
    args = parser.parse_args(argv)
    address = BrokerAddress.parse(args.broker, password=args.password, cafile=args.cafile)
    table = SimTable(address, args.hall, args.table, seed=args.seed, state_file=args.state_file)
    asyncio.run(_serve_stdin(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
