"""Transports: bytes to and from a board. The protocol client sits on top of one.

`SerialTransport` opens anything pyserial's `serial_for_url` opens: a device path (a USB board,
the virtual board's pty), `socket://host:port`, or `loop://`. It is plain pyserial: sharing a
port with this user's other cribboard processes is a wrapper around it (cribboard.sharing), and
a test that needs no board talks to `cribboard.testing.FakeTransport` instead."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable

import serial

from cribboard.errors import LinkError
from cribboard.serialport import BAUDRATE, open_port, open_problem

DataCallback = Callable[[bytes], None]
LostCallback = Callable[[Exception | None], None]

log = logging.getLogger(__name__)


class Transport(ABC):
    """A byte link to one board. `on_data` gets whatever arrives, in chunks that need not be
    lines, called from the event loop and never from inside `write`; `on_lost` fires once when
    the link goes away (not after `close()`). A client makes a new transport for each connect
    and reconnect (`cribboard.client.TransportFactory`)."""

    name: str

    @abstractmethod
    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        """Open the link; raise LinkError when it cannot be opened."""

    @abstractmethod
    async def write(self, data: bytes) -> None:
        """Send bytes, whole: one write's bytes never mix with another's (a sharing owner
        passes its riders' lines as writes of their own). Raise LinkError when the link is
        gone."""

    @abstractmethod
    async def close(self) -> None:
        """Close the link (idempotent)."""


class SerialTransport(Transport):
    """A serial port (or any pyserial URL). Ports with a file descriptor are watched by the
    event loop itself; others (`loop://`, `socket://` on some systems) by a reader thread."""

    def __init__(self, url: str, baudrate: int = BAUDRATE) -> None:
        self.name = url
        self._url = url
        self._baudrate = baudrate
        self._serial: serial.Serial | None = None
        self._thread: threading.Thread | None = None
        self._watched_fd: int | None = None
        self._closing = False

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        loop = asyncio.get_running_loop()
        self._closing = False
        try:
            port = await loop.run_in_executor(
                None, lambda: open_port(self._url, timeout=0.2, baudrate=self._baudrate)
            )
        except (serial.SerialException, OSError, ValueError) as err:
            raise LinkError(open_problem(self._url, err)) from err
        self._serial = port
        fd = _file_descriptor(port)
        if fd is not None:
            port.timeout = 0  # reads return what is there: the loop only calls when ready

            def readable() -> None:
                try:
                    chunk = port.read(max(1, port.in_waiting))
                except (serial.SerialException, OSError) as err:
                    self._stop_watching()
                    if not self._closing:
                        on_lost(err)
                    return
                if chunk:
                    on_data(chunk)

            loop.add_reader(fd, readable)
            self._watched_fd = fd
            return

        def reader() -> None:
            error: Exception | None = None
            try:
                while not self._closing:
                    chunk = port.read(1)
                    waiting = port.in_waiting
                    if waiting:
                        chunk += port.read(waiting)
                    if chunk:
                        loop.call_soon_threadsafe(on_data, chunk)
            except (serial.SerialException, OSError, TypeError, AttributeError) as err:
                error = err
            if not self._closing:
                loop.call_soon_threadsafe(on_lost, error)

        self._thread = threading.Thread(target=reader, name=f"serial {self._url}", daemon=True)
        self._thread.start()

    def _stop_watching(self) -> None:
        if self._watched_fd is not None:
            asyncio.get_running_loop().remove_reader(self._watched_fd)
            self._watched_fd = None

    async def write(self, data: bytes) -> None:
        port = self._serial
        if port is None or self._closing:
            raise LinkError(f"{self._url} is not open")
        try:
            port.write(data)
        except (serial.SerialException, OSError) as err:
            raise LinkError(f"write to {self._url} failed: {err}") from err

    async def close(self) -> None:
        self._closing = True
        self._stop_watching()
        port, self._serial = self._serial, None
        if port is not None:
            try:
                port.close()
            except (serial.SerialException, OSError):
                pass
        if self._thread is not None and self._thread is not threading.current_thread():
            await asyncio.get_running_loop().run_in_executor(None, self._thread.join, 1.0)
        self._thread = None


def _file_descriptor(port: serial.Serial) -> int | None:
    """The port's file descriptor when the event loop can watch it (POSIX serial ports)."""
    if sys.platform == "win32":
        return None
    try:
        fd = port.fileno()
    except (AttributeError, OSError, ValueError, NotImplementedError):
        return None
    return fd if isinstance(fd, int) else None
