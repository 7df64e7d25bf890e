"""The command line's one-shot path: a board reached without asyncio, for a command that sends
one or a few requests and exits (`cribboard peg`, `status`, `undo`...). A process that starts
asyncio pays for it before its first byte (three to four times a bare pyserial ping); this path
pays for pyserial alone.

It keeps what the asyncio client (cribboard.client) does for such a command:

- The port is shared (cribboard.portshare): when another cribboard process owns it, the lines go
  through that owner's socket; when no one does, this process opens the port with pyserial and
  owns it, passing the board's lines to any process that rides on it meanwhile, and handing the
  port over when it exits (the riders' links drop and the first to reconnect owns the port).
- Requests carry ids from a random start (cribboard.clientcore). A request without its reply is
  sent again, the same line with the same id, after the board restarted (a `! hello`) and after
  the owner it rode on left (the board never applies it twice: docs/protocol.md, section 7).
- What the board acknowledged goes into a journal (cribboard.journal); a board that restarted
  behind the link older than this host saw gets this host's acknowledged changes back first.

A link it does not take (a pyserial URL with no file descriptor, `socket://`, `loop://`; a board
that does not answer the first `hello` in time, as one left at MicroPython's prompt does) raises
NotAtOnce before anything is sent: the caller takes the asyncio path, which restarts a board's
app at the prompt and says why a silent one is silent. Bluetooth stays on asyncio (bleak is)."""

from __future__ import annotations

import os
import select
import socket
import time
from collections.abc import Callable
from typing import TypeVar

import serial

from cribboard import portshare, wire
from cribboard.boarddata import BoardState, Frame, Health
from cribboard.clientcore import (
    HELLO_ATTEMPT,
    Hello,
    LineReader,
    PutBack,
    RequestIds,
    acknowledged_change,
    greeted,
    new_game_args,
    player_refused,
)
from cribboard.errors import BoardRejected, CribboardError, LinkError
from cribboard.journal import Journal
from cribboard.logsetup import QuietLog
from cribboard.serialport import open_port, open_problem

# Its lines read as the client's (`-v`): one link, whichever path opened it.
log = QuietLog("cribboard.client")

T = TypeVar("T")
_READ = 4096


class NotAtOnce(CribboardError):
    """This link is not for the one-shot path; nothing was sent that changes the board."""


class _Restarted(Exception):
    """The board restarted (a `! hello`) while a request waited for its reply."""


class _HandedOver(Exception):
    """The process this link rode on closed it: the port is free to claim again."""


class _Leaving(Exception):
    """The port's owner did not let this process ride (it may be leaving): claim again."""

    def __init__(self, error: LinkError) -> None:
        super().__init__(str(error))
        self.error = error


class OneShot:
    """One board on a serial port, for a few requests, without asyncio: `with OneShot(port) as
    board:`. Its methods are the library Board's that the command line's one-shot commands
    use, blocking."""

    def __init__(self, url: str, *, timeout: float = 2.0) -> None:
        self.name = url
        self.timeout = timeout
        self.hello: Hello | None = None
        self._ids = RequestIds()
        self.journal = Journal()
        self._lines = LineReader(url)
        self._port: serial.Serial | None = None
        self._owned: portshare.Owned[serial.Serial] | None = None
        self._rider: socket.socket | None = None
        self._riders: dict[socket.socket, portshare.RiderLines] = {}  # riding on us
        self._pending: dict[str, tuple[str, tuple[int | str, ...]]] = {}
        self._replies: dict[str, wire.Line] = {}
        self._greeted = False
        self._restarts = 0  # `! hello`s seen after this link's own hello
        self._settled = True  # False after a restart, until the state is read again
        self._last_rev = -1

    # --- the link ------------------------------------------------------------------------------

    def open(self) -> Hello:
        """Claim or ride the port and check the board's hello; read its state for the journal.
        NotAtOnce for a link this path does not take, LinkError or ProtocolMismatch as the
        client raises them."""
        if not portshare.shareable(self.name):
            raise NotAtOnce(self.name)
        try:
            self._connect(first=True)
            self._remember_state(self._ask("st").fields)
        except BaseException:
            self.close()
            raise
        assert self.hello is not None
        return self.hello

    def _connect(self, first: bool = False) -> None:
        """Claim the port (owning it, or riding on its owner) and say hello. A process that
        owns it and leaves meanwhile hands it over: claimed again, until the timeout."""
        log.info("%s: opening", self.name)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                self._claim()
                # End whatever partial line an earlier host left in the board's buffer.
                self._write(b"\n")
                reply = self._hello(deadline, first)
                break
            except (_HandedOver, _Leaving) as err:
                self._disconnect()
                if time.monotonic() >= deadline:
                    if isinstance(err, _Leaving):
                        raise err.error from None
                    raise LinkError(f"{self.name}: link lost and not back in time") from None
                time.sleep(0.01)
        self.hello = greeted(reply.fields)
        self._greeted = True
        log.info(
            "%s: %s, firmware %s, protocol %d.%d",
            self.name,
            self.hello.board,
            self.hello.firmware,
            *self.hello.protocol,
        )

    def _claim(self) -> None:
        try:
            claim = portshare.claim(self.name, lambda: open_port(self.name, timeout=0))
        except (serial.SerialException, OSError, ValueError) as err:
            raise LinkError(open_problem(self.name, err)) from err
        except LinkError as err:  # its owner does not answer: it may be leaving this moment
            raise _Leaving(err) from err
        if isinstance(claim, portshare.Riding):
            self._rider = claim.connection
        else:
            self._owned = claim
            self._port = claim.port
        self._lines = LineReader(self.name)  # a new link starts clean
        self._greeted = False

    def _hello(self, deadline: float, first: bool) -> wire.Line:
        """The board's reply to `hello`, asked again until `deadline` (a board just reset may
        swallow one); a board silent at once, on the first connection: NotAtOnce."""
        while True:
            attempt = min(HELLO_ATTEMPT, max(0.05, deadline - time.monotonic()))
            try:
                return self._exchange(
                    "hello", (), time.monotonic() + attempt, urgent=True, handover=False
                )
            except LinkError:
                if first:  # silent at once: the asyncio path knows a board at the prompt
                    self._disconnect()
                    raise NotAtOnce(f"{self.name}: no hello") from None
                if time.monotonic() >= deadline:
                    raise LinkError(
                        f"{self.name}: no reply to 'hello' within {self.timeout:g} s: is a "
                        "cribboard running there?"
                    ) from None

    def _disconnect(self) -> None:
        """Close the port (free for the riders before they hear of it) or leave the owner."""
        if self._rider is not None:
            self._rider.close()
            self._rider = None
        port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except (serial.SerialException, OSError):
                pass
        owned, self._owned = self._owned, None
        if owned is not None:
            portshare.release(owned)
        for rider in list(self._riders):
            self._drop_rider(rider)

    def close(self) -> None:
        """Close the link (idempotent)."""
        self._disconnect()

    def __enter__(self) -> OneShot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, data: bytes) -> None:
        try:
            if self._rider is not None:
                self._rider.sendall(data)
            elif self._port is not None:
                self._port.write(data)
            else:
                raise LinkError(f"{self.name} is not open")
        except (serial.SerialException, OSError) as err:
            if self._rider is not None:
                raise _HandedOver from err
            raise LinkError(f"write to {self.name} failed: {err}") from err

    def _link_fd(self) -> int:
        if self._rider is not None:
            return self._rider.fileno()
        assert self._port is not None
        return int(self._port.fileno())

    def _pump(self, until: float) -> None:
        """Read what arrives until `until` (at least one look): the board's lines, and the lines
        of the processes riding on this one."""
        link = self._link_fd()
        watched: list[int | socket.socket] = [link]
        if self._owned is not None:
            watched += [self._owned.listener, *self._riders]
        ready, _, _ = select.select(watched, [], [], max(0.0, until - time.monotonic()))
        for source in ready:
            if source == link:
                self._on_data(self._read_link())
            elif self._owned is not None and source is self._owned.listener:
                self._accept_rider()
            elif isinstance(source, socket.socket):
                self._from_rider(source)

    def _read_link(self) -> bytes:
        if self._rider is not None:
            try:
                chunk = self._rider.recv(_READ)
            except OSError:
                chunk = b""
            if not chunk:
                raise _HandedOver
            return chunk
        assert self._port is not None
        try:
            chunk = bytes(self._port.read(max(1, self._port.in_waiting)))
        except (serial.SerialException, OSError) as err:
            raise LinkError(f"{self.name}: link lost ({err})") from err
        for rider in list(self._riders):  # what the board says, to every rider
            try:
                rider.sendall(chunk)
            except OSError:
                self._drop_rider(rider)
        return chunk

    # --- the processes riding on this one (while it owns the port) ---------------------------

    def _accept_rider(self) -> None:
        assert self._owned is not None
        try:
            rider, _ = self._owned.listener.accept()
        except OSError:
            return
        uid = portshare._peer_uid(rider)
        if (uid is not None and uid != os.getuid()) or len(self._riders) >= portshare.MAX_RIDERS:
            rider.close()
            return
        rider.setblocking(False)
        self._riders[rider] = portshare.RiderLines()

    def _from_rider(self, rider: socket.socket) -> None:
        try:
            chunk = rider.recv(256)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._drop_rider(rider)
            return
        for line in self._riders[rider].feed(chunk):
            if self._port is not None:
                self._port.write(line)  # whole, so it never splits ours

    def _drop_rider(self, rider: socket.socket) -> None:
        self._riders.pop(rider, None)
        rider.close()

    # --- lines ---------------------------------------------------------------------------------

    def _on_data(self, data: bytes) -> None:
        for line in self._lines.feed(data):
            self._on_line(line)

    def _on_line(self, line: wire.Line) -> None:
        if line.kind == "event":
            if line.name == "st":
                self._remember_state(line.fields)
            elif line.name == "cfg":
                self.journal.settings(line.fields)
            elif line.name == "hello" and self._greeted:
                self._restarts += 1  # the board restarted behind the link
                self._settled = False
            return
        asked = self._pending.get(line.request_id or "")
        if asked is None or line.request_id in self._replies:
            return  # another process's reply (through a shared port), or a repeat
        assert line.request_id is not None
        change = acknowledged_change(line.request_id, *asked)
        if line.kind == "ok" and change is not None:
            self.journal.acknowledged(change)  # in the board's order, before its state event
        self._replies[line.request_id] = line

    def _remember_state(self, fields: dict[str, str]) -> None:
        self.journal.state(fields)
        try:
            self._last_rev = int(fields["r"])
        except (KeyError, ValueError):
            pass

    # --- requests ------------------------------------------------------------------------------

    def request(self, verb: str, *args: int | str) -> wire.Line:
        """Send one request and return its `ok` reply; BoardRejected for an `err` reply,
        LinkError when the board does not answer in time."""
        reply = self._exchange(verb, args, time.monotonic() + self.timeout)
        if reply.kind == "err":
            raise BoardRejected(reply.code, reply.text)
        return reply

    def _ask(self, verb: str, *args: int | str) -> wire.Line:
        """This path's own request, sent at once (resynchronising): its `ok` reply."""
        reply = self._exchange(verb, args, time.monotonic() + self.timeout, urgent=True)
        if reply.kind == "err":
            raise BoardRejected(reply.code, reply.text)
        return reply

    def _exchange(
        self,
        verb: str,
        args: tuple[int | str, ...],
        deadline: float,
        request_id: str | None = None,
        urgent: bool = False,
        handover: bool = True,
    ) -> wire.Line:
        """One request, sent again (the same line, the same id) after the board restarted or
        the owner this link rode on left (unless not `handover`), until its reply comes or
        `deadline` passes. A
        program's request (not `urgent`) waits for the state to be read again after a restart
        (and what a power cut took to be put back) first."""
        request_id = request_id or self._ids.new()
        try:
            line = wire.encode_request(verb, args, request_id)
        except ValueError as err:
            raise CribboardError(str(err)) from err
        timeout = self.timeout
        self._pending[request_id] = (verb, args)
        try:
            while True:
                try:
                    if not urgent and not self._settled:
                        self._resync(restarted=True)
                    log.debug("%s: sent %r", self.name, line)
                    self._write(line)
                    return self._reply(request_id, deadline)
                except _Restarted:
                    continue  # read the state again (a program's request), then the same line
                except _HandedOver:
                    if not handover:  # (saying hello: the caller claims the port again)
                        raise
                    self._reconnect(deadline)
                except TimeoutError:
                    raise LinkError(
                        f"{self.name}: no reply to {verb!r} within {timeout:g} s"
                    ) from None
        finally:
            self._pending.pop(request_id, None)
            self._replies.pop(request_id, None)

    def _reply(self, request_id: str, deadline: float) -> wire.Line:
        restarts = self._restarts
        while True:
            reply = self._replies.get(request_id)
            if reply is not None:
                return reply
            if self._restarts != restarts:
                raise _Restarted
            if time.monotonic() >= deadline:
                raise TimeoutError
            self._pump(deadline)

    def _reconnect(self, deadline: float) -> None:
        """The owner this link rode on left: claim the port again (owning it now, or riding on
        the next owner), say hello, and read the state (a restart meanwhile: put back)."""
        log.info("%s: the program sharing it closed it: opening again", self.name)
        self._disconnect()
        while True:
            try:
                self._connect()
                self._resync()
                return
            except LinkError:
                self._disconnect()
                if time.monotonic() >= deadline:
                    raise LinkError(f"{self.name}: link lost and not back in time") from None
                time.sleep(0.05)

    def _resync(self, restarted: bool = False) -> None:
        """Read the state again; a board that `restarted` (or shows a lower revision than
        before) first gets back this host's acknowledged changes a power cut took."""
        self._settled = True
        fields = self._ask("st").fields
        try:
            restarted = restarted or int(fields["r"]) < self._last_rev
        except (KeyError, ValueError):
            pass
        if restarted:
            fields = self._restore(fields)
        self._remember_state(fields)

    def _restore(self, fields: dict[str, str]) -> dict[str, str]:
        """As the client's `_restore`: this host's acknowledged changes the board lost, sent
        again in order with their ids; the state after them."""
        settings = self._ask("bright").fields
        self._last_rev = -1
        put = PutBack(self.name, self.journal, fields, settings, [])
        if not put.changes:
            return fields
        for change in put.changes:
            deadline = time.monotonic() + self.timeout
            reply = self._exchange(change.verb, change.args, deadline, change.request_id, True)
            put.answered(change, reply)
        put.done()
        return self._ask("st").fields

    # --- what the one-shot commands ask (as the library's Board) -------------------------------

    def fields(self, verb: str, *args: int | str) -> dict[str, str]:
        return self.request(verb, *args).fields

    def state(self) -> BoardState:
        return BoardState.from_fields(self.fields("st"))

    def frame(self) -> Frame:
        return Frame.from_fields(self.fields("frame"))

    def health(self) -> Health | None:
        assert self.hello is not None
        if "health" not in self.hello.capabilities:
            return None
        return Health.from_fields(self.fields("health"))

    def brightness(self, value: int | None = None) -> int:
        return int(self.fields("bright", *(() if value is None else (value,)))["bright"])

    def budget(self, milliamps: int | None = None) -> int:
        return int(self.fields("budget", *(() if milliamps is None else (milliamps,)))["budget"])

    def peg(self, player: int, points: int) -> int:
        return self._for_player("r", "peg", player, (points,))

    def set_pegs(self, player: int, front: int, back: int | None = None) -> int:
        return self._for_player("r", "set", player, (front,) if back is None else (front, back))

    def undo(self) -> int:
        return int(self.fields("undo")["r"])

    def new_game(self, target: int | None = None, players: int | None = None) -> int:
        return int(self.fields("new", *new_game_args(target, players))["r"])

    def set_dealer(self, player: int | None = None) -> int:
        if player is None:
            return int(self.fields("deal")["d"])
        return self._for_player("d", "deal", player, ())

    def _for_player(self, field: str, verb: str, player: int, args: tuple[int, ...]) -> int:
        try:
            return int(self.fields(verb, player, *args)[field])
        except BoardRejected as err:
            if err.code != "bad_player":
                raise
            raise player_refused(err, self.state().players) from None


def at_once_on(url: str, timeout: float, act: Callable[[OneShot], T]) -> T:
    """Open the board on `url`, run `act` on it, close it. NotAtOnce, before anything was sent,
    when this path does not take the link."""
    with OneShot(url, timeout=timeout) as board:
        board.open()
        return act(board)
