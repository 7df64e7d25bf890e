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

``python -m cribboard.hall.simtable --broker mqtt://127.0.0.1:1883 --hall club --table 3
--password PW`` runs one in a process of its own (tests kill it to fire its Last Will); it
takes ``peg SEAT POINTS``, ``play [PEGS]``, ``finish SEAT LOSER_SCORE`` and ``quit`` on its
standard input and prints ``online`` when connected and ``state REV`` after each change.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
from pathlib import Path

import aiomqtt

from cribboard import wire
from cribboard.api import BoardState
from cribboard.hall import HallError, messages
from cribboard.hall import topics as t
from cribboard.hall.address import BrokerAddress
from cribcore import protocol
from cribcore.limits import MAX_POINTS
from cribcore.state import NO_WINNER, GameError, GameState

RECONNECT_S = 0.5
# A change published while the link is dying waits at most this long (a board's client would
# block; a simulated one moves on: the state goes out again on reconnecting).
PUBLISH_TIMEOUT_S = 2.0
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
    as a board's does after a power cut)."""

    def __init__(
        self,
        address: BrokerAddress,
        hall: str,
        table: int,
        *,
        seed: int | None = None,
        state_file: Path | None = None,
    ) -> None:
        self.user = t.table_user(table)
        self.address = BrokerAddress(
            address.host, address.port, address.tls, self.user, address.password
        )
        self.hall = t.check_hall(hall)
        self.table = table
        self.rng = random.Random(seed)
        self.state_file = state_file
        self.game = GameState()
        self.names: tuple[str, ...] = ()
        self.commands: list[messages.NewGame] = []  # each command run, in order
        self.online = asyncio.Event()  # connected and its state published
        self.on_state: list[asyncio.Queue[BoardState]] = []  # optional watchers
        self._client: aiomqtt.Client | None = None
        self._last_ack: tuple[str, bytes] | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        if state_file is not None and state_file.exists():
            self._load(state_file)

    def topic(self, leaf: str) -> str:
        return t.table_topic(self.hall, self.table, leaf)

    @property
    def state(self) -> BoardState:
        return board_state(self.game)

    # --- running -------------------------------------------------------------------------------

    async def start(self) -> SimTable:
        """Connect (and keep reconnecting) in the background; returns once online."""
        self._task = asyncio.create_task(self._run(), name=f"simtable-{self.table}")
        waiter = asyncio.create_task(self.online.wait())
        done, _ = await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if self._task in done:
            waiter.cancel()
            self._task.result()  # raises what stopped it
        return self

    async def stop(self) -> None:
        """Go offline cleanly: ``online`` = ``0``, then disconnect."""
        self._closing = True
        client = self._client
        if client is not None and self.online.is_set():
            with contextlib.suppress(aiomqtt.MqttError):
                await client.publish(
                    self.topic(t.ONLINE), messages.OFFLINE, qos=1, retain=True, timeout=5
                )
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def __aenter__(self) -> SimTable:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _run(self) -> None:
        will = aiomqtt.Will(self.topic(t.ONLINE), messages.OFFLINE, qos=1, retain=True)
        while True:
            try:
                async with self.address.client(self.user, clean_session=False, will=will) as client:
                    self._client = client
                    await client.subscribe(self.topic(t.CMD), qos=1)
                    await client.publish(self.topic(t.ONLINE), messages.ONLINE, qos=1, retain=True)
                    await self._publish_state(client)
                    self.online.set()
                    async for message in client.messages:
                        await self._command(client, bytes(message.payload))
            except aiomqtt.MqttError as err:
                if "authori" in str(err):
                    raise HallError(f"{self.user}: the broker refused the login: {err}")
            finally:
                self._client = None
                self.online.clear()
            if self._closing:
                return
            await asyncio.sleep(RECONNECT_S)  # the broker is away: try again shortly

    async def _publish_state(self, client: aiomqtt.Client) -> None:
        payload = messages.encode_state(self.state)
        await client.publish(
            self.topic(t.STATE), payload, qos=0, retain=True, timeout=PUBLISH_TIMEOUT_S
        )
        await client.publish(self.topic(t.EVENT), payload, qos=1, timeout=PUBLISH_TIMEOUT_S)

    async def _changed(self) -> BoardState:
        """After a change: keep it (state file), tell the watchers, publish it if online."""
        state = self.state
        if self.state_file is not None:
            self._save(self.state_file)
        for queue in self.on_state:
            queue.put_nowait(state)
        client = self._client
        if client is not None and self.online.is_set():
            with contextlib.suppress(aiomqtt.MqttError):  # offline: sent again on reconnecting
                await self._publish_state(client)
        return state

    async def _command(self, client: aiomqtt.Client, payload: bytes) -> None:
        try:
            command = messages.decode_command(payload)
        except messages.MessageError as err:
            if err.command_id is not None:
                ack = messages.Ack(err.command_id, False, "bad_command", str(err))
                await client.publish(self.topic(t.ACK), messages.encode_ack(ack), qos=1)
            return
        if self._last_ack is not None and self._last_ack[0] == command.id:
            # Delivered again (QoS 1, a director's resend): answered, never run twice.
            await client.publish(self.topic(t.ACK), self._last_ack[1], qos=1)
            return
        try:
            self.game.new_game(command.target, len(command.names))
            ack = messages.Ack(command.id, True)
        except GameError as err:
            ack = messages.Ack(command.id, False, err.code, err.text)
        else:
            self.names = command.names
            self.commands.append(command)
            await self._changed()
        self._last_ack = (command.id, messages.encode_ack(ack))
        await client.publish(self.topic(t.ACK), self._last_ack[1], qos=1)

    # --- playing ---------------------------------------------------------------------------

    async def peg(self, seat: int, points: int) -> BoardState:
        """Peg `points` for `seat` (GameError as the board refuses: a finished game...)."""
        self.game.peg(seat, points)
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
            "last_ack": None if self._last_ack is None else [self._last_ack[0]],
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
        if saved["last_ack"]:
            self._last_ack = (
                saved["last_ack"][0],
                messages.encode_ack(messages.Ack(saved["last_ack"][0], True)),
            )


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
    parser = argparse.ArgumentParser(prog="python -m cribboard.hall.simtable")
    parser.add_argument("--broker", required=True, help="mqtt://HOST:PORT")
    parser.add_argument("--hall", required=True)
    parser.add_argument("--table", type=int, required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--state-file", type=Path)
    args = parser.parse_args(argv)
    address = BrokerAddress.parse(args.broker, password=args.password)
    table = SimTable(address, args.hall, args.table, seed=args.seed, state_file=args.state_file)
    asyncio.run(_serve_stdin(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
