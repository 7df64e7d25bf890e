"""A board's serial port opened, and said in one sentence when it will not open: what the
asyncio transport (cribboard.transport) and the command line's one-shot path
(cribboard.oneshot) share. Importing it loads no asyncio."""

from __future__ import annotations

import errno
import os

import serial

BAUDRATE = 115200
"""What a board's USB serial port is opened at (native USB ignores it; a UART bridge does not)."""


def open_port(url: str, *, timeout: float, baudrate: int = BAUDRATE) -> serial.Serial:
    """The port `url` names (anything pyserial's `serial_for_url` opens), opened; pyserial's
    exceptions (SerialException, OSError, ValueError) when it cannot be."""
    port = serial.serial_for_url(url, baudrate=baudrate, timeout=timeout, do_not_open=True)
    # Native-USB boards (ESP32-S3) reboot into the bootloader on some DTR/RTS changes: set
    # both explicitly before opening.
    port.dtr = True
    port.rts = False
    port.open()
    return port


_OPEN_PROBLEMS = {
    errno.ENOTTY: "{port} is not a serial port",
    errno.ENOENT: "cannot open {port}: there is no such port",
    errno.EACCES: "cannot open {port}: permission denied (on Linux: join the dialout group)",
    errno.EBUSY: "cannot open {port}: another program is using it",
}


def open_problem(url: str, err: BaseException) -> str:
    """One sentence for a port that did not open, with the system's reason said once."""
    number = _errno_of(err)
    if number in _OPEN_PROBLEMS:
        return _OPEN_PROBLEMS[number].format(port=url)
    if number is not None:
        return f"cannot open {url}: {os.strerror(number)}"
    return f"cannot open {url}: {err}"


def _errno_of(err: BaseException) -> int | None:
    """The operating system's error number behind a failed open, wherever pyserial put it (on
    the exception, in its first argument, or on the error it was raised from)."""
    seen: BaseException | None = err
    while seen is not None:
        number = getattr(seen, "errno", None)
        if isinstance(number, int):
            return number
        if seen.args and isinstance(seen.args[0], int):
            return seen.args[0]  # termios.error: (errno, text)
        seen = seen.__cause__ or seen.__context__
    return None
