"""One board's port, shared by every cribboard process of this user.

Two processes reading one serial port each get some of its lines: `cribboard peg` while
`cribboard watch` runs would lose replies, and a request the board applied would look failed.
So the first process to open a port owns it and offers it to the others on a Unix socket in
the private runtime directory (cribboard.rundir), named after the port's real path; a second
opener rides on that connection instead of opening the port. The board sees one host; its
replies carry the asker's request id, and each rider's client ignores the replies it did not
ask for, as it ignores id-less noise. When the owner closes, the riders' links drop and the
first of them to reconnect becomes the owner.

Who owns a port is settled by two locks (`flock`, released by the kernel if a process dies):
`.lock`, held by the owner for as long as it owns the port (it holds the owner's pid and name),
and `.setup`, held only while a process decides whether to own or ride, so that the owner's
socket is listening before anyone else looks.

A rider's lines are hostile until checked, like any line a stranger sends: the socket is only
reachable through the 0700 directory and the owner checks the peer's user id, and each line
must be a short printable request naming a protocol verb, so nothing can reach MicroPython's
REPL (a Ctrl-C would stop the firmware's app). A rider that does not read its lines is dropped
rather than let the owner's memory grow."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import logging
import os
import socket
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from cribboard.errors import LinkError
from cribboard.i18n import _
from cribboard.rundir import runtime_dir
from cribcore.protocol import MAX_ID, MAX_LINE, VERBS

log = logging.getLogger(__name__)

P = TypeVar("P")

MAX_RIDERS = 16
"""Processes riding on one owner at once: more are refused (their link fails to open)."""
RIDER_BACKLOG = 64 * 1024
"""Bytes of board output a rider may leave unread before the owner drops it."""
_LABEL_BYTES = 200

owner_label = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
"""What this process is called in another's `port in use by ...` (the CLI sets
``cribboard watch`` and the like)."""


@dataclass(frozen=True)
class Holder:
    """The process that owns a port."""

    pid: int
    label: str

    def __str__(self) -> str:
        return _("%(label)s (pid %(pid)d)", label=self.label, pid=self.pid)


def shareable(url: str) -> bool:
    """Whether `url` names a local device or file that can be shared (not `socket://`,
    `loop://` or any other pyserial URL), on a system with flock and Unix sockets."""
    return sys.platform != "win32" and "://" not in url and os.path.exists(url)


def _paths(url: str) -> tuple[Path, Path, Path]:
    """The lock, setup lock and socket of the port `url` names (by its real path)."""
    real = os.path.realpath(url)
    key = hashlib.sha256(real.encode()).hexdigest()[:20]
    base = runtime_dir() / f"port-{key}"
    return base.with_suffix(".lock"), base.with_suffix(".setup"), base.with_suffix(".sock")


def _open_lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    return fd


def _read_holder(fd: int) -> Holder | None:
    """The owner's pid and name from its lock file (checked: a number and one printable
    line, cut short)."""
    try:
        text = os.pread(fd, _LABEL_BYTES, 0).decode("ascii", "replace")
    except OSError:
        return None
    pid_text, _sep, label = text.partition("\n")
    label = "".join(c for c in label.strip() if c.isprintable())[:80] or "?"
    return Holder(int(pid_text), label) if pid_text.isdigit() else None


def holder_of(url: str) -> Holder | None:
    """The live process owning the port `url` names, or None when no one owns it."""
    if not shareable(url):
        return None
    lock, _setup, _sock = _paths(url)
    if not lock.exists():
        return None
    fd = _open_lock(lock)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd) or Holder(0, "?")
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@dataclass
class Owned(Generic[P]):
    """This process owns the port: `port` is what `open_port` returned; the socket listens."""

    port: P
    lock_fd: int
    listener: socket.socket
    socket_path: Path


@dataclass
class Riding:
    """Another process owns the port: `connection` is a socket to it."""

    connection: socket.socket
    holder: Holder


def claim(url: str, open_port: Callable[[], P]) -> Owned[P] | Riding:
    """Own the port (`open_port()` opens it) or ride on its owner. Blocking: run it in an
    executor. Raises LinkError when the owner does not answer, or what `open_port` raises."""
    lock, setup, sock_path = _paths(url)
    setup_fd = _open_lock(setup)
    try:
        fcntl.flock(setup_fd, fcntl.LOCK_EX)  # held only while someone decides: brief
        lock_fd = _open_lock(lock)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(lock_fd) or Holder(0, "?")
            os.close(lock_fd)
            return Riding(_connect(sock_path, url, holder), holder)
        try:
            port = open_port()
            listener = _listen(sock_path)
        except BaseException:
            os.close(lock_fd)
            raise
        os.ftruncate(lock_fd, 0)
        os.pwrite(lock_fd, f"{os.getpid()}\n{owner_label}\n".encode(), 0)
        return Owned(port, lock_fd, listener, sock_path)
    finally:
        fcntl.flock(setup_fd, fcntl.LOCK_UN)
        os.close(setup_fd)


def _connect(path: Path, url: str, holder: Holder) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except OSError as err:
        connection.close()
        raise LinkError(
            _(
                "port %(port)s in use by %(holder)s, which does not share it (%(error)s)",
                port=url,
                holder=holder,
                error=os.strerror(err.errno) if err.errno else err,
            )
        ) from err
    return connection


def _listen(path: Path) -> socket.socket:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a dead owner's: we hold the lock
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        os.chmod(path, 0o600)
        listener.listen(MAX_RIDERS)
    except BaseException:
        listener.close()
        raise
    listener.setblocking(False)
    return listener


def release(owned: Owned[P]) -> None:
    """Stop offering the port and give up owning it (the port itself is the caller's to
    close, before this)."""
    owned.listener.close()
    with contextlib.suppress(FileNotFoundError):
        owned.socket_path.unlink()
    os.close(owned.lock_fd)  # the lock goes with it


def rider_line_ok(line: bytes) -> bool:
    """Whether a line from a rider (newline stripped) may go to the board: printable ASCII,
    short enough for the board, an optional `#id` and a protocol verb."""
    if not line or len(line) >= MAX_LINE or any(b < 0x20 or b > 0x7E for b in line):
        return False
    words = line.split(b" ")
    if words[0].startswith(b"#"):
        if not 1 < len(words[0]) <= MAX_ID + 1:
            return False
        words = words[1:]
    return bool(words) and words[0] in VERBS


def _peer_uid(connection: socket.socket) -> int | None:
    """The connecting process's user id where the system says it (Linux)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    data = connection.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", data)[1])


class PortServer:
    """The owner's side: riders connect, their checked lines go to `write_line`, and whatever
    the board says goes to every rider (`broadcast`)."""

    def __init__(self, listener: socket.socket, write_line: Callable[[bytes], None]) -> None:
        self._listener = listener
        self._write_line = write_line
        self._riders: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[object]] = set()
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._serve, sock=self._listener)

    def broadcast(self, data: bytes) -> None:
        for writer in list(self._riders):
            if writer.transport.get_write_buffer_size() > RIDER_BACKLOG:
                log.info("dropping a rider that does not read")
                self._drop(writer)
            else:
                writer.write(data)

    def stop_accepting(self) -> None:
        if self._server is not None:
            self._server.close()

    def drop_all(self) -> None:
        for writer in list(self._riders):
            self._drop(writer)
        for task in list(self._tasks):
            task.cancel()

    def _drop(self, writer: asyncio.StreamWriter) -> None:
        self._riders.discard(writer)
        writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = writer.get_extra_info("socket")
        uid = _peer_uid(connection) if connection is not None else None
        if (uid is not None and uid != os.getuid()) or len(self._riders) >= MAX_RIDERS:
            writer.close()
            return
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._riders.add(writer)
        try:
            await self._relay(reader)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            self._drop(writer)

    async def _relay(self, reader: asyncio.StreamReader) -> None:
        pending = bytearray()
        overlong = False  # inside a line too long to pass: dropped up to its newline
        while True:
            chunk = await reader.read(256)
            if not chunk:
                return
            pending += chunk
            while (end := pending.find(b"\n")) >= 0:
                line = bytes(pending[:end]).rstrip(b"\r")
                del pending[: end + 1]
                if overlong:
                    overlong = False
                elif rider_line_ok(line):
                    self._write_line(line + b"\n")
                elif line:
                    log.info("dropped a rider's line that is no request: %r", line[:MAX_LINE])
            if len(pending) >= MAX_LINE:
                pending.clear()
                overlong = True
