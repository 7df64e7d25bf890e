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

import contextlib
import fcntl
import os
import socket
import struct
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

from cribboard.errors import LinkError, LinkHandedOver
from cribboard.i18n import _
from cribboard.logsetup import QuietLog
from cribboard.rundir import runtime_dir
from cribcore.protocol import MAX_ID, MAX_LINE, VERBS

if TYPE_CHECKING:
    import asyncio

log = QuietLog(__name__)

P = TypeVar("P")

MAX_RIDERS = 16
"""Processes riding on one owner at once: more are refused (their link fails to open)."""
RIDER_BACKLOG = 64 * 1024
"""Bytes of board output a rider may leave unread before the owner drops it."""
_LABEL_BYTES = 200

owner_label = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
"""What this process is called in another's `port in use by ...` (the CLI sets
``cribboard watch`` and the like)."""


class Holder(NamedTuple):
    """The process that owns a port."""

    pid: int
    label: str

    def __str__(self) -> str:
        return _("%(label)s (pid %(pid)d)", label=self.label, pid=self.pid)


def shareable(url: str) -> bool:
    """Whether `url` names a local device or file that can be shared (not `socket://`,
    `loop://` or any other pyserial URL), on a system with flock and Unix sockets."""
    return sys.platform != "win32" and "://" not in url and os.path.exists(url)


def port_key(url: str) -> str:
    """What names a serial port among the shared links: its real path."""
    return os.path.realpath(url)


def ble_key(address: str, adapter: str | None = None) -> str:
    """What names a Bluetooth board among the shared links: its address, and the adapter
    named for it (another adapter is another central, a link of its own)."""
    return f"ble:{address.upper()}" + (f"@{adapter}" if adapter else "")


def ble_address(key: str) -> str:
    """The board's address in a `ble_key`."""
    return key.removeprefix("ble:").partition("@")[0]


_NAME_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_SUN_PATH = 108
"""Bytes of a Unix socket's path, its final NUL included (Linux's `sun_path`)."""


def _name_of(key: str) -> str:
    """A file name for the link `key` names, which a person can read: the key with every byte
    but letters, digits, `-` and `_` escaped as `%XX` (`/dev/ttyACM0`: `%2Fdev%2FttyACM0`).
    Two keys never get one name."""
    return "".join(chr(b) if b in _NAME_SAFE else f"%{b:02X}" for b in os.fsencode(key))


def _paths_of(key: str) -> tuple[Path, Path, Path]:
    """The lock, setup lock and socket of the link `key` names: `port-NAME.lock` and so on in
    the runtime directory. A name too long for a socket's path is a digest of the key,
    `port-#HEX`: `#` is always escaped in a name, so no key's name is another's digest."""
    root = runtime_dir()
    name = _name_of(key)
    if len(os.fsencode(root / f"port-{name}.setup")) >= _SUN_PATH:
        import hashlib  # (only here: it loads OpenSSL)

        name = "#" + hashlib.sha256(os.fsencode(key)).hexdigest()[:32]
    base = f"port-{name}"
    return root / f"{base}.lock", root / f"{base}.setup", root / f"{base}.sock"


def _paths(url: str) -> tuple[Path, Path, Path]:
    """The lock, setup lock and socket of the port `url` names (by its real path)."""
    return _paths_of(port_key(url))


def _open_lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    return fd


def _lock_lines(fd: int) -> list[str]:
    """The owner's lock file's lines: pid, name, key, alias (read as hostile: cut short,
    printable only)."""
    try:
        text = os.pread(fd, _LABEL_BYTES, 0).decode("utf-8", "replace")
    except OSError:
        return []
    return ["".join(c for c in line if c.isprintable())[:80] for line in text.split("\n")]


def _read_holder(fd: int) -> Holder | None:
    """The owner's pid and name from its lock file."""
    lines = _lock_lines(fd)
    if len(lines) < 2 or not lines[0].isdigit():
        return None
    return Holder(int(lines[0]), lines[1].strip() or "?")


class SharedLink(NamedTuple):
    """A link some process owns now: its key (``ble:ADDRESS``, a port's path), an alias (a
    Bluetooth board's name) and the owner."""

    key: str
    alias: str
    holder: Holder


def shared_links() -> list[SharedLink]:
    """Every link a live process of this user owns now."""
    if sys.platform == "win32":
        return []
    found = []
    for lock in sorted(runtime_dir().glob("port-*.lock")):
        try:
            fd = _open_lock(lock)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                lines = _lock_lines(fd)
                holder = _read_holder(fd)
                if holder is not None and len(lines) >= 4:
                    found.append(SharedLink(lines[2], lines[3], holder))
                continue
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    return found


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


class Owned(Generic[P]):
    """This process owns the port: `port` is what `open_port` returned; the socket listens."""

    __slots__ = ("port", "lock_fd", "listener", "socket_path")

    def __init__(self, port: P, lock_fd: int, listener: socket.socket, socket_path: Path) -> None:
        self.port = port
        self.lock_fd = lock_fd
        self.listener = listener
        self.socket_path = socket_path


class Riding:
    """Another process owns the port: `connection` is a socket to it."""

    __slots__ = ("connection", "holder")

    def __init__(self, connection: socket.socket, holder: Holder) -> None:
        self.connection = connection
        self.holder = holder


def claim(url: str, open_port: Callable[[], P]) -> Owned[P] | Riding:
    """Own the port (`open_port()` opens it) or ride on its owner. Blocking: run it in an
    executor. Raises LinkError when the owner does not answer, or what `open_port` raises."""
    key = port_key(url)
    lock, setup, sock_path = _paths_of(key)
    setup_fd = _open_lock(setup)
    try:
        fcntl.flock(setup_fd, fcntl.LOCK_EX)  # held only while someone decides: brief
        lock_fd, riding = _owner_or_rider(lock, sock_path, url)
        if riding is not None:
            return riding
        try:
            port = open_port()
        except BaseException:
            os.close(lock_fd)
            raise
        return _own(port, lock_fd, sock_path, key, "")
    finally:
        fcntl.flock(setup_fd, fcntl.LOCK_UN)
        os.close(setup_fd)


async def claim_async(
    key: str, what: str, open_link: Callable[[], Awaitable[P]], alias: str = ""
) -> Owned[P] | Riding:
    """As `claim`, for a link opened by a coroutine (a Bluetooth connection): own the link
    `key` names (`await open_link()`) or ride on its owner. `what` names it in messages,
    `alias` is a second name to find it by (a Bluetooth board's name)."""
    import asyncio  # (here: claiming a port from a process without asyncio loads none)

    loop = asyncio.get_running_loop()
    lock, setup, sock_path = _paths_of(key)
    setup_fd = _open_lock(setup)
    try:
        # Held while someone decides, a connection's few seconds at most.
        await loop.run_in_executor(None, fcntl.flock, setup_fd, fcntl.LOCK_EX)
        lock_fd, riding = _owner_or_rider(lock, sock_path, what)
        if riding is not None:
            return riding
        try:
            link = await open_link()
        except BaseException:
            os.close(lock_fd)
            raise
        return _own(link, lock_fd, sock_path, key, alias)
    finally:
        fcntl.flock(setup_fd, fcntl.LOCK_UN)
        os.close(setup_fd)


def _owner_or_rider(lock: Path, sock_path: Path, what: str) -> tuple[int, Riding | None]:
    """The owner's lock taken (its fd), or a connection to the process that holds it."""
    lock_fd = _open_lock(lock)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_holder(lock_fd) or Holder(0, "?")
        os.close(lock_fd)
        return -1, Riding(_connect(sock_path, what, holder), holder)
    return lock_fd, None


def _own(link: P, lock_fd: int, sock_path: Path, key: str, alias: str) -> Owned[P]:
    try:
        listener = _listen(sock_path)
    except BaseException:
        os.close(lock_fd)
        raise
    os.ftruncate(lock_fd, 0)
    info = f"{os.getpid()}\n{owner_label}\n{key}\n{alias}\n"
    os.pwrite(lock_fd, info.encode(), 0)
    return Owned(link, lock_fd, listener, sock_path)


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


class RiderLink:
    """A rider's end: what the owner passes on arrives through `on_data`; the owner's end
    closing is this link dropping (`on_lost`)."""

    def __init__(self, connection: socket.socket, name: str) -> None:
        connection.setblocking(False)
        self._connection = connection
        self._name = name
        self._watching = False
        self._closing = False

    def start(
        self, on_data: Callable[[bytes], None], on_lost: Callable[[Exception | None], None]
    ) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        connection = self._connection

        def readable() -> None:
            error: Exception | None = None
            try:
                chunk = connection.recv(4096)
            except BlockingIOError:
                return
            except OSError as err:
                chunk, error = b"", err
            if chunk:
                on_data(chunk)
                return
            self._stop()
            if not self._closing:
                # Closed or reset (an owner leaving as we connect resets us): either way the
                # owner is gone, and the next open may own the link.
                reason = f" ({error})" if error is not None else ""
                on_lost(LinkHandedOver(f"{self._name}: the program sharing it closed it{reason}"))

        loop.add_reader(connection.fileno(), readable)
        self._watching = True

    async def write(self, data: bytes) -> None:
        if self._closing:
            raise LinkError(f"{self._name} is not open")
        import asyncio

        try:
            await asyncio.get_running_loop().sock_sendall(self._connection, data)
        except OSError as err:
            raise LinkError(f"write to {self._name} failed: {err}") from err

    def _stop(self) -> None:
        if self._watching:
            import asyncio

            asyncio.get_running_loop().remove_reader(self._connection.fileno())
            self._watching = False

    def close(self) -> None:
        self._closing = True
        self._stop()
        self._connection.close()


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


class RiderLines:
    """A rider's bytes cut into the lines that may go to the board (each with its newline):
    a line that is no request is dropped, and one too long for the board up to its newline."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._overlong = False  # inside a line too long to pass

    def feed(self, chunk: bytes) -> list[bytes]:
        self._pending += chunk
        passed = []
        while (end := self._pending.find(b"\n")) >= 0:
            line = bytes(self._pending[:end]).rstrip(b"\r")
            del self._pending[: end + 1]
            if self._overlong:
                self._overlong = False
            elif rider_line_ok(line):
                passed.append(line + b"\n")
            elif line:
                log.info("dropped a rider's line that is no request: %r", line[:MAX_LINE])
        if len(self._pending) >= MAX_LINE:
            self._pending.clear()
            self._overlong = True
        return passed


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
        self._stopped = False

    async def start(self) -> None:
        import asyncio

        self._server = await asyncio.start_unix_server(self._serve, sock=self._listener)

    def broadcast(self, data: bytes) -> None:
        for writer in list(self._riders):
            if writer.transport.get_write_buffer_size() > RIDER_BACKLOG:
                log.info("dropping a rider that does not read")
                self._drop(writer)
            else:
                writer.write(data)

    def stop_accepting(self) -> None:
        self._stopped = True  # a rider accepted but not yet served is turned away too
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
        import asyncio

        connection = writer.get_extra_info("socket")
        uid = _peer_uid(connection) if connection is not None else None
        refused = self._stopped or len(self._riders) >= MAX_RIDERS
        if refused or (uid is not None and uid != os.getuid()):
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
        lines = RiderLines()
        while True:
            chunk = await reader.read(256)
            if not chunk:
                return
            for line in lines.feed(chunk):
                self._write_line(line)
