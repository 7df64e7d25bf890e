"""What keeps `cribboard hall start` whole: one director a hall (:class:`HallLock`), its private
broker watched and started again when it dies (:func:`supervise_broker`).

    with HallLock(hall_dir):                 # HallError naming the running one's pid
        ...
        reason = await supervise_broker(broker, say)   # returns only when it gives up

The lock is an advisory ``flock`` on ``director.lock`` in the hall's directory: the kernel drops it
when its process ends, however it ends (``kill -9`` included), so a stale lock never blocks a
start. The file holds the pid of the director that holds it, for the message."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from cribboard.errors import HallError
from cribboard.i18n import _

LOCK_NAME = "director.lock"
# Restarts of a broker that keeps dying: this many within RESTART_WINDOW_S, and the hall stops.
MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
_POLL_S = 0.5  # where a process cannot be waited on through a pidfd


class HallLock:
    """The lock of a hall's directory: one ``hall start`` at a time."""

    def __init__(self, hall_dir: Path) -> None:
        self.path = hall_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock; HallError naming the director that holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise HallError(
                _(
                    "a director is already running on %(hall)s (pid %(pid)s): one director a "
                    "hall; stop it first (Ctrl-C in its terminal)",
                    hall=self.path.parent,
                    pid=holder,
                )
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> HallLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def listening_process(port: int) -> int | None:
    """The pid of this user's process that listens on TCP `port` (any address), where the
    system tells (Linux: /proc); None when none is found."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                # local address "HEX:PORT", state 0A = LISTEN, inode in column 10
                if (
                    len(fields) > 9
                    and fields[3] == "0A"
                    and int(fields[1].split(":")[1], 16) == port
                ):
                    inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(entry.name)
    return None


def config_of(pid: int) -> Path | None:
    """The configuration file a mosquitto process was started with (``-c FILE``), if `pid` is
    one."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    if not words or not Path(words[0].decode(errors="replace")).name.startswith("mosquitto"):
        return None
    for flag, value in zip(words, words[1:], strict=False):
        if flag == b"-c":
            return Path(value.decode(errors="replace"))
    return None


class SupervisedBroker(Protocol):
    """What :func:`supervise_broker` needs of a broker (:class:`cribboard.hall.broker.Broker`)."""

    @property
    def pid(self) -> int | None: ...

    def start(self) -> None: ...


async def wait_for_exit(pid: int) -> None:
    """Return when the process `pid` has exited (a pidfd where Linux has one, else polling)."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        while _alive(pid):
            await asyncio.sleep(_POLL_S)
        return
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not exited.done():
            exited.set_result(None)

    loop.add_reader(pidfd, readable)
    try:
        await exited
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A child that exited but was not reaped yet is a zombie: gone for our purpose.
    with contextlib.suppress(OSError):
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return status != "Z"
    return True


async def supervise_broker(
    broker: SupervisedBroker,
    say: Callable[[str], None],
    pid: int | None = None,
    on_start: Callable[[int], None] | None = None,
) -> str:
    """Watch the broker (its process `pid`, default the broker's own) and start it again each
    time it dies; returns the reason to stop the hall when it cannot (it would not start, or
    it died MAX_RESTARTS times within RESTART_WINDOW_S). `on_start` gets each new pid."""
    restarts: list[float] = []
    while True:
        watched = pid if pid is not None else broker.pid
        if watched is None:
            return "the broker is not running"
        await wait_for_exit(watched)
        pid = None
        now = time.monotonic()
        restarts = [at for at in restarts if now - at < RESTART_WINDOW_S] + [now]
        if len(restarts) > MAX_RESTARTS:
            return (
                f"the broker died {len(restarts)} times within {RESTART_WINDOW_S:.0f} s "
                "(see its mosquitto.log)"
            )
        say("broker: mosquitto exited: starting it again")
        try:
            await asyncio.to_thread(broker.start)
            if broker.pid is not None and on_start is not None:
                on_start(broker.pid)
        except (HallError, OSError) as err:  # OSError: out of descriptors, the disk full
            return f"the broker would not start again: {err}"
        say(f"broker: restarted (pid {broker.pid})")
