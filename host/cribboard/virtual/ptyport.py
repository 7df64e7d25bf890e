"""The pseudo-terminal a virtual board offers hosts as its serial port.

Shared by the boards behind a pty (:mod:`cribboard.virtual.launcher`, the unix-port board, and
:mod:`cribboard.virtual.rp2board`, the emulated RP2040): the relay thread of each owns a
:class:`HostPort`, polls its master end, and moves bytes between it and the board.
"""

from __future__ import annotations

import os
import select
import termios
import time

BUFFER_LIMIT = 1 << 16
"""Bytes buffered for either side before the relay stops reading the other (back-pressure)."""

HOST_STALL_TIMEOUT = 0.5
"""Seconds a connected host may leave a full buffer unread before its output is dropped, as a
board's USB CDC drops output nobody reads."""


def make_raw(fd: int, lflag: int = 0) -> None:
    """Set a tty fully raw: no echo, no signals, no CR/NL translation either way.

    `lflag` is the local-mode word to leave set (0: none).
    """
    attrs = termios.tcgetattr(fd)
    attrs[0] &= ~(
        termios.IGNBRK
        | termios.BRKINT
        | termios.PARMRK
        | termios.ISTRIP
        | termios.INLCR
        | termios.IGNCR
        | termios.ICRNL
        | termios.IXON
        | termios.IXOFF
    )
    attrs[1] &= ~termios.OPOST
    attrs[2] = (attrs[2] & ~(termios.CSIZE | termios.PARENB)) | termios.CS8
    attrs[3] = lflag
    attrs[6][termios.VMIN] = 1
    attrs[6][termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def peer_open(master: int) -> bool:
    """Whether some process has the slave of this pty master open."""
    poller = select.poll()
    poller.register(master, select.POLLIN)
    for _, events in poller.poll(0):
        if events & select.POLLNVAL:
            return True  # poll cannot tell on this system; assume a host is there
        if events & select.POLLHUP:
            return False
    return True


class HostPort:
    """The master end of the pty whose slave path hosts open, and the output waiting for them.

    While no host has the port open, output is dropped, as a USB board's is when nobody
    listens, so a late host never reads stale output. Output a connected host leaves unread
    for :data:`HOST_STALL_TIMEOUT` beyond :data:`BUFFER_LIMIT` is dropped too
    (:meth:`drop_if_stalled`), so the board never stalls for good.
    """

    def __init__(self) -> None:
        self.fd, slave = os.openpty()
        try:
            make_raw(slave)
            self.path = os.ttyname(slave)
        finally:
            os.close(slave)  # hosts open it by path; the master sees a hangup until then
        os.set_blocking(self.fd, False)
        self.connected = False
        self._output = bytearray()
        self._last_read = 0.0  # when the host last took output

    def poll_connection(self) -> bool:
        """Notice a host that has opened the port; return whether one is connected."""
        if not self.connected and peer_open(self.fd):
            self.connected = True
        return self.connected

    def send(self, data: bytes) -> None:
        """Queue board output for the host (dropped if none is connected)."""
        if self.connected:
            if not self._output:
                self._last_read = time.monotonic()
            self._output += data

    @property
    def output_pending(self) -> bool:
        """Whether output waits for a connected host (select the fd for writing)."""
        return bool(self._output) and self.connected

    @property
    def output_full(self) -> bool:
        """Whether the board's side should stop being read until the host catches up."""
        return len(self._output) >= BUFFER_LIMIT

    def write(self) -> None:
        """Pass queued output on; call when the fd is writable."""
        try:
            sent = os.write(self.fd, self._output)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.hang_up()
            return
        del self._output[:sent]
        self._last_read = time.monotonic()

    def read(self) -> bytes | None:
        """Bytes from the host; call when the fd is readable. None: nothing (or it left)."""
        try:
            data = os.read(self.fd, 4096)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            data = b""
        if not data:
            self.hang_up()
            return None
        return data

    def hang_up(self) -> None:
        """The host closed the port: forget it and its unread output."""
        self.connected = False
        self._output.clear()

    def drop_if_stalled(self) -> None:
        """Drop output a connected host has left unread too long (see the class docstring)."""
        if self.output_full and time.monotonic() - self._last_read > HOST_STALL_TIMEOUT:
            self._output.clear()

    def close(self) -> None:
        """Free the pty."""
        try:
            os.close(self.fd)
        except OSError:
            pass
