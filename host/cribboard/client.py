"""The protocol client: requests with ids and timeouts, replies, events, heartbeat, automatic
reconnect and resynchronisation. It speaks through `cribboard.wire`, the host's side of the codec
whose board side (`cribcore.protocol`) the firmware runs. With a board that has them (protocol
1.2) it asks for brief events and turns each back into the whole state (`cribboard.mirror`), so
subscribers always get whole `st` events, while a peg costs the link one short line.

A request without a reply is sent again, with the same id, when the link comes back and when the
board restarted (a `! hello`): the board never applies it twice (docs/protocol.md, section 2).
When a restarted board shows an older game than this host saw acknowledged (a power cut took
its last second or so), the client first puts back its own acknowledged changes the cut took
(`cribboard.journal`), then tells its subscribers in a `restored` event."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from cribboard import wire
from cribboard.clientcore import (
    HELLO_ATTEMPT,
    LineReader,
    PutBack,
    RequestIds,
    acknowledged_change,
    greeted,
)
from cribboard.clientcore import Hello as Hello
from cribboard.errors import (
    BoardRejected,
    CribboardError,
    LinkError,
    LinkHandedOver,
    ProtocolMismatch,
)
from cribboard.journal import Change, Journal
from cribboard.mirror import Mirror
from cribboard.repl import PromptWatch, hello_or_restart
from cribboard.transport import Transport
from cribboard.waiting import within

log = logging.getLogger(__name__)
IN_FLIGHT = 8
"""Requests a client has on their way at once: the replies a board remembers per sender
(docs/protocol.md, section 2), so every one of them can be resent safely."""
RESTORED = "restored"
"""The client's event after it put back what a board's power cut took: fields `lost` (this
host's acknowledged changes the cut took), `back` (put back), `refused` (the board refused them
now); or `unknown` 1: the board came back at a game this host never saw, nothing put back."""


@dataclass
class _Pending:
    """A request waiting for its reply."""

    future: asyncio.Future[wire.Line]
    verb: str
    args: tuple[int | str, ...]


Event = wire.Line
EventCallback = Callable[[Event], None]
TransportFactory = Callable[[], Transport]


class Client:
    """One connection to one board, kept alive.

    `connect()` opens the transport, checks the board's hello and starts the heartbeat. If the
    link drops, the client reconnects by itself (when `reconnect` is on), says hello again and
    reads the state, which subscribers receive as a normal `st` event: they resynchronise without
    doing anything. Requests in flight when the link drops, or when the board restarts, are resent
    with the same id; the board remembers ids (through a power cut too), so nothing is applied
    twice. A board that comes back from a power cut older than this host saw acknowledged gets
    this host's own acknowledged changes back first (`journal`)."""

    def __init__(
        self,
        transport_factory: TransportFactory,
        *,
        timeout: float = 2.0,
        heartbeat: float = 2.0,
        reconnect: bool = True,
        reconnect_for: float = 30.0,
        brief: bool = True,
        restart_at_prompt: bool = True,
    ) -> None:
        self._factory = transport_factory
        self.brief = brief  # ask a board that has them for brief events
        self.every = False  # ask it for an event after every request (ask_every)
        # A board found at MicroPython's prompt gets its app restarted (cribboard.repl).
        self.restart_at_prompt = restart_at_prompt
        self.timeout = timeout
        self.heartbeat = heartbeat
        self.reconnect = reconnect
        self.reconnect_for = reconnect_for
        self.hello: Hello | None = None
        # True once this link's own hello was answered: a board's `! hello` before that is its
        # boot announcement crossing our connect, not a restart to resynchronise from.
        self._greeted = False
        self.name = ""
        self._transport: Transport | None = None
        self._lines = LineReader(self.name)
        self._pending: dict[str, _Pending] = {}
        self._ids = RequestIds()
        self._subscribers: list[EventCallback] = []
        self._connected = asyncio.Event()
        self._closed = False
        self._heartbeat_task: asyncio.Task[None] | None = None
        self._reconnect_task: asyncio.Task[None] | None = None
        self._lost_error: LinkError | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        # Resolved when the current link drops: wakes requests waiting for their reply.
        self._link_lost: asyncio.Future[None] | None = None
        self._mirror = Mirror()  # the board's state as its events tell it (for brief events)
        self._briefed = False  # the board sends this link brief events
        # The program this link rode on left: open the link again even without `reconnect`,
        # so that a request in flight is resent (same id: never applied twice) and answered.
        self._handover = False
        self.journal = Journal()  # what the board acknowledged, for a power cut
        self._window = asyncio.Semaphore(IN_FLIGHT)
        # Set while the link is up and resynchronised: a request waits for it, so that after a
        # reconnect or a restart the state is read (and a power cut's loss put back) first.
        self._settled = asyncio.Event()
        self._settled.set()
        # Resolved when the board restarts behind the open link: a request in flight is resent.
        self._restarted: asyncio.Future[None] | None = None
        self._resyncing = asyncio.Lock()
        self._last_rev = -1  # the board's revision as last seen (a lower one: it restarted)
        self._unrestored: list[Change] = []  # lost in a cut, not yet put back (link lost)
        # Putting back: the states on the way are not told (the one after it is, whole).
        self._restoring = False

    # --- connection ----------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    async def connect(self) -> Hello:
        """Open the link and check the board's hello. Raises LinkError or ProtocolMismatch."""
        self._closed = False
        await self._open()
        try:
            fields = await self._ask_for_events()
            if fields is not None:
                self._saw_state(fields)
        except BaseException:
            # A connect that fails leaves no link open: the port (and its claim, portshare) is
            # free for the next program or the next try.
            await self.close()
            raise
        if self.heartbeat > 0 and self._heartbeat_task is None:
            self._heartbeat_task = asyncio.create_task(self._heartbeat_loop())
        assert self.hello is not None
        return self.hello

    async def _open(self) -> None:
        transport = self._factory()
        self.name = transport.name
        self._lines = LineReader(self.name)  # a new link starts clean
        self._link_lost = asyncio.get_running_loop().create_future()
        self._restarted = asyncio.get_running_loop().create_future()
        self._greeted = False
        watch = PromptWatch()
        log.info("%s: opening", self.name)
        await transport.open(watch.tap(self._on_data), self._on_lost)
        self._transport = transport
        self._connected.set()
        try:
            # End whatever partial line an earlier host left in the board's buffer: a blank
            # line is no request, and a fragment gets an id-less error this client ignores.
            await transport.write(b"\n")
            reply = await hello_or_restart(
                transport,
                watch,
                self._hello_with_retries,
                self.name,
                restart=self.restart_at_prompt,
            )
            watch.stop()
            hello = greeted(reply.fields)
        except BaseException:
            self._connected.clear()
            self._transport = None
            await transport.close()
            raise
        self.hello = hello
        self._greeted = True
        log.info(
            "%s: %s, firmware %s, protocol %d.%d",
            self.name,
            hello.board,
            hello.firmware,
            hello.protocol[0],
            hello.protocol[1],
        )

    async def ask_every(self) -> None:
        """Have the board push its state after every request, even for requests that reach it
        together (it pushes once after them otherwise): for a host that tells its own changes
        from others' by the revisions its requests return. Asked again whenever the link is
        opened again (a board forgets it when it restarts); a board without it (before
        protocol 1.2) pushes after every request anyway."""
        self.every = True
        if self.hello is not None and "every" in self.hello.capabilities:
            await self._ask("every", 1)

    async def _ask_for_events(self) -> dict[str, str] | None:
        """Ask for this link's events as wanted (after every request: ask_every; brief events,
        when the board has them) and read the whole state brief events apply to; return its
        fields (None when brief events were not asked for). The board forgets both when it
        restarts: they are asked again then."""
        if self.every and self.hello is not None and "every" in self.hello.capabilities:
            await self._ask("every", 1)
        self._briefed = False
        if not self.brief or self.hello is None or "brief" not in self.hello.capabilities:
            return None
        await self._ask("brief", 1)
        fields = (await self._ask("st")).fields
        self._mirror.whole(fields)
        self._briefed = True
        return fields

    async def _ask(self, verb: str, *args: int | str) -> wire.Line:
        """The client's own request, ahead of the program's (resynchronising): its `ok` reply."""
        reply = await self._roundtrip(verb, args, self.timeout, urgent=True)
        if reply.kind == "err":
            raise BoardRejected(reply.code, reply.text)
        return reply

    async def _hello_with_retries(self) -> wire.Line:
        # A board that is just resetting (after `mpremote reset`, a plug-in) may swallow the
        # first hello; hello changes nothing, so ask again until the timeout runs out.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while True:
            attempt = min(HELLO_ATTEMPT, max(0.05, deadline - loop.time()))
            try:
                return await self._roundtrip("hello", (), attempt, urgent=True)
            except LinkError:
                if loop.time() >= deadline or not self._connected.is_set():
                    raise LinkError(
                        f"{self.name}: no reply to 'hello' within "
                        f"{self.timeout:g} s: is a cribboard running there?"
                    ) from None

    async def close(self) -> None:
        """Close the link and stop reconnecting."""
        self._closed = True
        for task in (self._heartbeat_task, self._reconnect_task):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._heartbeat_task = self._reconnect_task = None
        self._connected.clear()
        transport, self._transport = self._transport, None
        if transport is not None:
            await transport.close()
        self._fail_pending(LinkError("client closed"))

    # --- requests ------------------------------------------------------------------------------

    def _new_id(self) -> str:
        return self._ids.new()

    async def request(
        self,
        verb: str,
        *args: int | str,
        timeout: float | None = None,
        request_id: str | None = None,
        if_rev: int | None = None,
    ) -> wire.Line:
        """Send one request and return its `ok` reply; raises BoardRejected for an `err` reply,
        LinkError when the link is gone or the board does not answer in time. While the client
        is reconnecting, the request waits for the link (within the timeout) and is sent then.
        `request_id`: the request's id (by default the client's next one): a program's own key
        for a change it may repeat (cribboard.api). `if_rev`: applied only while the board's
        revision is that (protocol 1.3), else `stale`."""
        timeout = self.timeout if timeout is None else timeout
        reply = await self._roundtrip(verb, args, timeout, request_id, if_rev)
        if reply.kind == "err":
            raise BoardRejected(reply.code, reply.text)
        return reply

    async def _roundtrip(
        self,
        verb: str,
        args: tuple[int | str, ...],
        timeout: float,
        request_id: str | None = None,
        if_rev: int | None = None,
        urgent: bool = False,
    ) -> wire.Line:
        """One request, sent again (same line, same id) when the link comes back or the board
        restarts before its reply came. `urgent`: the client's own, sent at once; a program's
        waits for the link to be resynchronised and for a place among IN_FLIGHT."""
        if request_id is None:
            request_id = self._new_id()
        try:
            line = wire.encode_request(verb, args, request_id, if_rev)
        except ValueError as err:
            raise CribboardError(str(err)) from err
        if request_id in self._pending:
            raise CribboardError(f"request id {request_id!r} is already on its way")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        future: asyncio.Future[wire.Line] = loop.create_future()
        self._pending[request_id] = _Pending(future, verb, args)
        try:
            if urgent:
                return await self._send_until_answered(line, future, deadline, verb, timeout, True)
            await within(self._window.acquire(), max(0.0, deadline - loop.time()))
            try:
                return await self._send_until_answered(line, future, deadline, verb, timeout)
            finally:
                self._window.release()
        except TimeoutError:
            raise LinkError(f"{self.name}: no reply to {verb!r} within {timeout:g} s") from None
        finally:
            self._pending.pop(request_id, None)

    async def _send_until_answered(
        self,
        line: bytes,
        future: asyncio.Future[wire.Line],
        deadline: float,
        verb: str,
        timeout: float,
        urgent: bool = False,
    ) -> wire.Line:
        loop = asyncio.get_running_loop()
        while True:
            await self._wait_connected(deadline)
            if not urgent:
                await within(self._settled.wait(), max(0.0, deadline - loop.time()))
            transport = self._transport
            try:
                if transport is None:
                    raise LinkError("not connected")
                lost = self._link_lost
                restarted = self._restarted
                assert lost is not None and restarted is not None
                log.debug("%s: sent %r", self.name, line)
                await transport.write(line)
                remaining = max(0.0, deadline - loop.time())
                done, _ = await asyncio.wait(
                    (future, lost, restarted),
                    timeout=remaining,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if future in done:
                    return future.result()
                if restarted in done:
                    # The board restarted before answering: once the state is read again (and
                    # what the cut took put back), the same line again; never applied twice.
                    continue
                if lost not in done:
                    raise TimeoutError
                raise LinkError("link lost while waiting for the reply")
            except LinkError:
                # The link dropped mid-request: wait for the reconnect and send the same
                # line (same id) again; the board will not apply it twice.
                if not self._will_reconnect():
                    raise
                if future.done():
                    return future.result()

    async def _wait_connected(self, deadline: float) -> None:
        if self._connected.is_set():
            return
        if not self._will_reconnect():
            raise self._lost_error or LinkError("not connected")
        remaining = deadline - asyncio.get_running_loop().time()
        try:
            await within(self._connected.wait(), max(0.0, remaining))
        except TimeoutError:
            raise LinkError(f"{self.name}: link lost and not back in time") from None

    def _will_reconnect(self) -> bool:
        return (self.reconnect or self._handover) and not self._closed

    # --- incoming ------------------------------------------------------------------------------

    def subscribe(self, callback: EventCallback) -> Callable[[], None]:
        """Call `callback(event)` for every event the board pushes (and for the state read after
        a reconnect). Returns a function that unsubscribes."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def _on_data(self, data: bytes) -> None:
        for line in self._lines.feed(data):
            self._on_line(line)

    def _on_line(self, line: wire.Line) -> None:
        if line.kind == "event":
            if line.name in (wire.BRIEF_PEG, wire.BRIEF_PENDING):
                fields = self._mirror.apply_brief(line) if self._briefed else None
                if fields is None:
                    self._spawn(self._resync())  # something was missed: read the state again
                    return
                line = wire.Line("event", None, "st", fields, "", "")
            elif line.name == "st":
                self._mirror.whole(line.fields)
            if line.name == "st":
                self._saw_state(line.fields)
                if self._restoring:
                    return
            elif line.name == "cfg":
                self.journal.settings(line.fields)
            self._emit(line)
            if line.name == "hello" and self._greeted:
                # The board restarted behind an open link (a reset, a power cut on a
                # self-powered board): read its state again so subscribers resynchronise, put
                # back what the cut took, then send again what got no reply.
                self._settled.clear()
                restarted = self._restarted
                if restarted is not None and not restarted.done():
                    restarted.set_result(None)
                self._restarted = asyncio.get_running_loop().create_future()
                self._spawn(self._resync(restarted=True))
            return
        if line.request_id is not None:
            pending = self._pending.get(line.request_id)
            if pending is not None and not pending.future.done():
                change = acknowledged_change(line.request_id, pending.verb, pending.args)
                if line.kind == "ok" and change is not None:
                    # In the board's order, before the state event of its change.
                    self.journal.acknowledged(change)
                pending.future.set_result(line)

    def _saw_state(self, fields: dict[str, str]) -> None:
        self.journal.state(fields)
        with contextlib.suppress(KeyError, ValueError):
            self._last_rev = int(fields["r"])

    def _emit(self, event: Event) -> None:
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:  # a subscriber's bug must not break the link
                log.exception("event subscriber failed")

    def _on_lost(self, error: Exception | None) -> None:
        if not self._connected.is_set():
            return
        self._connected.clear()
        self._settled.clear()
        self._handover = isinstance(error, LinkHandedOver)
        if self._link_lost is not None and not self._link_lost.done():
            self._link_lost.set_result(None)
        self._lost_error = LinkError(f"{self.name}: link lost" + (f" ({error})" if error else ""))
        transport, self._transport = self._transport, None
        if transport is not None:
            self._spawn(transport.close())
        if self._will_reconnect():
            if self._reconnect_task is None or self._reconnect_task.done():
                self._reconnect_task = asyncio.create_task(self._reconnect_loop())
        else:
            self._fail_pending(self._lost_error)

    def _fail_pending(self, error: Exception) -> None:
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(error)

    # --- keeping the link alive ----------------------------------------------------------------

    async def _reconnect_loop(self) -> None:
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self.reconnect_for
        delay = 0.05
        self._emit(wire.Line("event", None, "link", {"state": "lost"}, "", ""))
        while not self._closed:
            try:
                await self._open()
            except (LinkError, ProtocolMismatch) as err:
                if loop.time() > give_up:
                    self._lost_error = LinkError(f"{self.name}: could not reconnect ({err})")
                    self._closed = True
                    self._fail_pending(self._lost_error)
                    self._emit(wire.Line("event", None, "link", {"state": "gone"}, "", ""))
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                continue
            self._emit(wire.Line("event", None, "link", {"state": "back"}, "", ""))
            if await self._resync():
                self._handover = False
                return

    async def _resync(self, restarted: bool = False) -> bool:
        """Read the state and hand it to subscribers as a normal `st` event (asking for this
        link's events again first, as wanted: a board that restarted has forgotten). A board
        that `restarted` (or shows a lower revision than before: it restarted while the link
        was down) first gets back this host's acknowledged changes a power cut took."""
        async with self._resyncing:
            try:
                fields = await self._ask_for_events()
                if fields is None:
                    fields = (await self._ask("st")).fields
                with contextlib.suppress(KeyError, ValueError):
                    restarted = restarted or int(fields["r"]) < self._last_rev
                if restarted or self._unrestored:
                    fields = await self._restore(fields)
            except CribboardError as err:
                log.info("%s: resync failed: %s", self.name, err)
                if restarted and self._connected.is_set() and not self._closed:
                    self._spawn(self._resync_later())  # (a link lost reconnects by itself)
                return False
            self._mirror.whole(fields)
            self._saw_state(fields)
            self._emit(wire.Line("event", None, "st", fields, "", ""))
            if self._connected.is_set():
                self._settled.set()
            return True

    async def _resync_later(self) -> None:
        await asyncio.sleep(0.5)
        if self._connected.is_set() and not self._closed and not self._settled.is_set():
            await self._resync(restarted=True)

    async def _restore(self, fields: dict[str, str]) -> dict[str, str]:
        """The board restarted and shows `fields`: send again this host's acknowledged changes
        it lost (a power cut between a change and its save), in order, with their ids, and tell
        subscribers (a `restored` event); returns the state after them. Subscribers are not told
        the states on the way (the whole state after the event is): a remote game must not take
        them for new moves."""
        settings = (await self._ask("bright")).fields
        self._last_rev = -1
        put = PutBack(self.name, self.journal, fields, settings, self._unrestored)
        if put.unknown:
            self._emit(wire.Line("event", None, RESTORED, {"unknown": "1"}, "", ""))
        if not put.changes:
            return fields
        self._unrestored = list(put.changes)
        self._restoring = True
        try:
            for change in put.changes:
                reply = await self._roundtrip(
                    change.verb, change.args, self.timeout, change.request_id, urgent=True
                )
                self._unrestored.pop(0)
                put.answered(change, reply)
        finally:
            self._restoring = False
        self._emit(wire.Line("event", None, RESTORED, put.done(), "", ""))
        return (await self._ask("st")).fields

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)  # keep a reference until it is done
        task.add_done_callback(self._tasks.discard)

    async def _heartbeat_loop(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.heartbeat)
            if not self._connected.is_set():
                continue
            try:
                await self._roundtrip("ping", (), self.timeout, urgent=True)
            except LinkError:
                # No answer: the link is dead even if the port still looks open.
                if self._connected.is_set():
                    log.info("%s: heartbeat lost, reconnecting", self.name)
                    self._on_lost(LinkError("no heartbeat reply"))
