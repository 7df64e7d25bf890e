"""The MQTT side of a hall table (docs/mqtt.md, "A table client"), once for every table client
that runs on a computer: the bridge's (``cribboard serve --broker``, a USB or Bluetooth board)
and the simulated tables' (:mod:`cribdev.simtable`).

It connects as the client ``table-N`` with a persistent session and the Last Will ``online`` =
``0``; on every connection it subscribes to ``cmd``, publishes ``online`` = ``1`` and the
board's state to ``state`` (retained, QoS 0) and ``event`` (QoS 1); after each change the new
state goes to both; each command is run once per id (a command delivered again is only
answered again, also after the table client's own restart when its memory has a file) and
answered on ``ack``. It reconnects by itself to a broker that went away; the changes made while
it was away (up to MISSED_MAX) go to ``event`` in order when it is back, then the state as it
is then: the director judges a game by every one of its revisions (a gap is doubtful).

    client = TableClient(address, "club", 3, state=lambda: latest, run=start_game)
    await client.start()              # connected and online (start_background(): no waiting)
    client.post(state)                # after each change, never blocks
    await client.stop()               # online 0, then disconnect
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiomqtt

from cribboard.api import BoardState
from cribboard.errors import HallError
from cribboard.hallwire import messages, topics
from cribboard.i18n import _
from cribboard.mqtt import AddressError
from cribboard.mqtt.address import BrokerAddress, refusal

RECONNECT_S = (0.1, 0.2, 0.5, 1.0)  # waits before reconnecting: quick first, then calmer
# A change published while the link is dying waits at most this long (it goes out again with
# the state on reconnecting).
PUBLISH_TIMEOUT_S = 2.0
# Changes kept while the broker is away, published in order when it is back (a game is a few
# hundred changes; beyond this the oldest go, and the director holds the game for a gap).
MISSED_MAX = 2000

StateSource = Callable[[], BoardState | None]
CommandRunner = Callable[[messages.NewGame], Awaitable[messages.Ack]]


class CommandMemory:
    """The last command a table ran and its answer. With a `path` it survives the table
    client's restart (JSON, replaced atomically); `on_change` runs after each change (a
    simulated table keeps it in its own file)."""

    def __init__(
        self, path: Path | None = None, on_change: Callable[[], None] | None = None
    ) -> None:
        self.path = path
        self.on_change = on_change
        self.last: messages.Ack | None = None
        if path is not None and path.exists():
            try:
                self.last = messages.decode_ack(path.read_bytes())
            except (OSError, messages.MessageError) as err:
                raise HallError(
                    _("%(path)s: not a table's command memory: %(error)s", path=path, error=err)
                ) from None

    def remember(self, ack: messages.Ack) -> None:
        self.last = ack
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(self.path.name + ".tmp")
            temporary.write_bytes(messages.encode_ack(ack))
            os.replace(temporary, self.path)
        if self.on_change is not None:
            self.on_change()

    def to_json(self) -> dict[str, object] | None:
        return None if self.last is None else json.loads(messages.encode_ack(self.last))

    def load_json(self, saved: dict[str, object] | None) -> None:
        self.last = None if saved is None else messages.decode_ack(json.dumps(saved).encode())


class TableClient:
    """One table on a hall's broker (see the module's docstring). `address` carries the
    broker, and the user and password (the user is ``table-N`` when it names none); `state`
    gives the board's state now (None: not known yet); `run` starts a commanded game and says
    how it went."""

    def __init__(
        self,
        address: BrokerAddress,
        hall: str,
        table: int,
        *,
        state: StateSource,
        run: CommandRunner,
        memory: CommandMemory | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.hall = topics.check_hall(hall)
        self.table = topics.check_table(table)
        self.client_id = topics.table_user(table)
        self.address = address.with_login(address.username or self.client_id, address.password)
        self.memory = memory or CommandMemory()
        self.online = asyncio.Event()  # connected and the state published
        self._state = state
        self._run_command = run
        self._say = say
        self._client: aiomqtt.Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._publisher: asyncio.Task[None] | None = None
        self._posted: asyncio.Queue[BoardState] = asyncio.Queue()
        # Changes not published yet, in order (the broker away, or a publish that failed).
        self._missed: deque[BoardState] = deque(maxlen=MISSED_MAX)
        self._publishing = asyncio.Lock()  # one publication at a time: in order
        self._closing = False

    def topic(self, leaf: str) -> str:
        return topics.table_topic(self.hall, self.table, leaf)

    # --- running -------------------------------------------------------------------------------

    def start_background(self) -> asyncio.Task[None]:
        """Connect (and keep reconnecting) in the background; the task ends only with a
        refused login (HallError) or stop()."""
        if self._task is None:
            self._closing = False
            self._task = asyncio.create_task(self._run(), name=f"table-{self.table}-mqtt")
            self._publisher = asyncio.create_task(self._publish_posted())
        return self._task

    async def start(self) -> None:
        """Connect in the background; returns once online (raises what stopped it first)."""
        task = self.start_background()
        waiter = asyncio.create_task(self.online.wait())
        done, _ = await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            waiter.cancel()
            task.result()

    async def stop(self) -> None:
        """Go offline cleanly: ``online`` = ``0``, then disconnect."""
        self._closing = True
        client = self._client
        if client is not None and self.online.is_set():
            with contextlib.suppress(aiomqtt.MqttError):
                await client.publish(
                    self.topic(topics.ONLINE), messages.OFFLINE, qos=1, retain=True, timeout=5
                )
        for task in (self._publisher, self._task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, HallError, AddressError):
                    await task
        self._task = self._publisher = None

    async def _run(self) -> None:
        will = aiomqtt.Will(self.topic(topics.ONLINE), messages.OFFLINE, qos=1, retain=True)
        attempt = 0
        while True:
            try:
                async with self.address.client(
                    self.client_id, clean_session=False, will=will
                ) as client:
                    self._client = client
                    await client.subscribe(self.topic(topics.CMD), qos=1)
                    await client.publish(
                        self.topic(topics.ONLINE), messages.ONLINE, qos=1, retain=True
                    )
                    async with self._publishing:
                        # What changed while away, in order, then the state as it is now.
                        state = self._state()
                        if state is not None and (not self._missed or self._missed[-1] != state):
                            self._missed.append(state)
                        await self._flush(client)
                        self.online.set()
                    attempt = 0
                    self._tell(
                        _(
                            "table %(table)d: online at %(url)s",
                            table=self.table,
                            url=self.address.url,
                        )
                    )
                    async for message in client.messages:
                        await self._command(client, bytes(message.payload))
            except aiomqtt.MqttError as err:
                refused = refusal(err, self.address)
                if refused is not None:
                    raise HallError(f"table {self.table}: {refused}") from None
                if self.online.is_set():
                    self._tell(
                        _(
                            "table %(table)d: lost the broker (%(error)s): reconnecting",
                            table=self.table,
                            error=err,
                        )
                    )
            finally:
                self._client = None
                self.online.clear()
            if self._closing:
                return
            await asyncio.sleep(RECONNECT_S[min(attempt, len(RECONNECT_S) - 1)])
            attempt += 1

    def _tell(self, text: str) -> None:
        if self._say is not None:
            self._say(text)

    # --- publishing ----------------------------------------------------------------------------

    async def publish(self, state: BoardState) -> None:
        """Publish a change to ``state`` and ``event``; while the broker is away (or a publish
        fails) it is kept, and goes out in order with the others when it is back."""
        async with self._publishing:
            self._missed.append(state)
            client = self._client
            if client is not None and self.online.is_set():
                with contextlib.suppress(aiomqtt.MqttError):
                    await self._flush(client)

    async def _flush(self, client: aiomqtt.Client) -> None:
        """Publish the changes kept, in order: each to ``event``, the last also to ``state``.
        One that fails stays (MqttError), with the rest after it."""
        while self._missed:
            state = self._missed[0]
            if len(self._missed) == 1:
                await self._publish(client, state)
            else:
                await client.publish(
                    self.topic(topics.EVENT),
                    messages.encode_state(state),
                    qos=1,
                    timeout=PUBLISH_TIMEOUT_S,
                )
            self._missed.popleft()

    def post(self, state: BoardState) -> None:
        """Publish a change in the background, in order (never blocks; needs start*())."""
        self._posted.put_nowait(state)

    async def _publish_posted(self) -> None:
        while True:
            await self.publish(await self._posted.get())

    async def _publish(self, client: aiomqtt.Client, state: BoardState) -> None:
        payload = messages.encode_state(state)
        await client.publish(
            self.topic(topics.STATE), payload, qos=0, retain=True, timeout=PUBLISH_TIMEOUT_S
        )
        await client.publish(self.topic(topics.EVENT), payload, qos=1, timeout=PUBLISH_TIMEOUT_S)

    # --- commands ------------------------------------------------------------------------------

    async def _command(self, client: aiomqtt.Client, payload: bytes) -> None:
        try:
            command = messages.decode_command(payload)
        except messages.MessageError as err:
            if err.command_id is not None:
                ack = messages.Ack(err.command_id, False, "bad_command", str(err))
                await client.publish(self.topic(topics.ACK), messages.encode_ack(ack), qos=1)
            return
        last = self.memory.last
        if last is not None and last.id == command.id:
            # Delivered again (QoS 1, the director's resend after a reconnect): answered, never
            # run twice, also after this client's restart.
            await client.publish(self.topic(topics.ACK), messages.encode_ack(last), qos=1)
            return
        ack = await self._run_command(command)
        self.memory.remember(ack)
        await client.publish(self.topic(topics.ACK), messages.encode_ack(ack), qos=1)
