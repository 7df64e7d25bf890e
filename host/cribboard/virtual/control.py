"""Client for the virtual board's side channel (tests and demos; not the board protocol).

The side channel is a Unix stream socket (:attr:`VirtualBoard.control`) speaking ASCII lines:

==========================  =========================================================
request                     reply
==========================  =========================================================
``press PIN [MS]``          ``ok`` (button on PIN down for MS ms, default 80, counted
                            from when the firmware first reads the pin)
``hold PIN``                ``ok`` (down until released; survives reboots)
``release PIN``             ``ok``
``frame``                   ``frame SEQ HEX`` (latest LED frame, RGB, 3 bytes per LED)
                            or ``error no-frame ...``
``subscribe``               ``ok``, then ``frame SEQ HEX`` for the current frame and each
                            new one
``info``                    ``info boots=N booted=yes|no mode=friendly|raw pid=PID port=PATH``
``reset``                   ``ok`` (hard reset)
``flash-break GEN N``       ``ok``; the board stops at its N-th flash point from now (N -1:
                            runs on) and this client gets ``flash-stop GEN KIND BLOCK INDEX
                            TOTAL`` (see :meth:`VirtualControl.break_at_flash_point`)
``flash-break GEN N KIND``  the same, counting only the starts of operations of KIND
                            (``erase``, ``program``, ``any``): the N-th from now (0: the next)
``heap``                    ``heap free=N alloc=N``: the board's heap in bytes after a
                            collection it runs then (a leak shows as free going down)
``ble-*``                   the board's Bluetooth radio: see :mod:`cribboard.virtual.radio`
==========================  =========================================================

Errors are ``error CODE text``. PIN is the firmware's pin id as ``str(id)``: ``15``, ``GP15``.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from .errors import NoFrameError, VirtualControlError

FramePredicate = Callable[[bytes], bool]


@dataclass(frozen=True)
class FlashStop:
    """Where a virtual board stopped: before step `index` of the `total` 256-byte steps of an
    ``erase`` or ``program`` of flash block `block` (4096 bytes, counted from the start of the
    flash image), or at its end (index == total). A stop at an operation's start has index 0."""

    kind: str
    block: int
    index: int
    total: int


class VirtualControl:
    """Press buttons, read LEDs and stop at flash operations of a running virtual board on
    MicroPython's unix port (:class:`VirtualBoard` holds one; open another from a process that
    has only the socket's path).

    Args:
        address: the side-channel socket path (``VirtualBoard.control``).
        timeout: seconds to wait for any one reply.
    """

    def __init__(self, address: str | os.PathLike[str], timeout: float = 5.0) -> None:
        self._address = os.fspath(address)
        self._timeout = timeout
        self._sock = self._connect()
        self._buffer = bytearray()
        self._break_gen = 0
        self._stops: list[FlashStop] = []  # flash-stop lines of the current break, unread

    def _connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self._timeout)
        try:
            sock.connect(self._address)
        except OSError as err:
            sock.close()
            raise VirtualControlError(f"cannot reach the virtual board at {self._address}: {err}")
        return sock

    def close(self) -> None:
        """Close the connection."""
        self._sock.close()

    def __enter__(self) -> VirtualControl:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- requests --------------------------------------------------------------------------

    def press(self, pin: int | str, ms: int = 80) -> None:
        """Press the button on `pin` for `ms` milliseconds (returns at once)."""
        self._expect_ok(f"press {pin} {int(ms)}")

    def hold(self, pin: int | str) -> None:
        """Hold the button on `pin` down until :meth:`release`."""
        self._expect_ok(f"hold {pin}")

    def release(self, pin: int | str) -> None:
        """Release the button on `pin`."""
        self._expect_ok(f"release {pin}")

    def reset(self) -> None:
        """Hard-reset the board (main.py runs again)."""
        self._expect_ok("reset")

    def info(self) -> dict[str, str]:
        """The board's state: boots, booted, mode, pid, port."""
        reply = self._request("info")
        words = reply.split()
        if not words or words[0] != "info":
            raise VirtualControlError(f"unexpected reply: {reply}")
        return dict(word.partition("=")[::2] for word in words[1:])

    def heap(self) -> dict[str, int]:
        """The board's heap after a garbage collection it runs now: ``free`` and ``alloc``
        bytes (what stays allocated after one collection and the next is what the firmware
        and its stack keep)."""
        reply = self._request("heap")
        words = reply.split()
        if not words or words[0] != "heap":
            raise _error_from(reply)
        return {key: int(value) for key, value in (word.split("=") for word in words[1:])}

    def ble_info(self) -> dict[str, str]:
        """The board's Bluetooth radio (cribboard.virtual.radio): addr, adv, resp, mtu, gatt,
        conns, notifications, longest."""
        reply = self._request("ble-info")
        words = reply.split()
        if not words or words[0] != "ble-info":
            raise _error_from(reply)
        return dict(word.partition("=")[::2] for word in words[1:])

    def break_on_flash(self, kind: str = "any", count: int = 1) -> None:
        """Stop the board at the start of its `count`-th flash operation of `kind` (``erase``,
        ``program`` or ``any``) from now, before its first step (the spelling every virtual
        board shares: :class:`cribboard.virtual.AnyVirtualBoard`). Armed while the board is
        stopped, the operation it stopped at does not count. Wait for the stop with
        :meth:`wait_flash_stop`; :meth:`break_at_flash_point` (-1) lets it run on."""
        if kind not in ("erase", "program", "any"):
            raise ValueError(f"kind must be erase, program or any, not {kind!r}")
        if count < 1:
            raise ValueError("count must be 1 or more")
        self._arm_break(f"{count - 1} {kind}")

    def break_at_flash_point(self, points: int = 0) -> None:
        """Stop the board at its `points`-th flash point from now: the points are before each
        256-byte step of an erase or a program of its flash, and the end of each (so a save's
        erase and program have 17 and steps + 1). Stopped, the board does nothing until the
        next call (which counts from the point it is at) or a reset: a power cut at that exact
        step. -1 lets it run on. Wait for the stop with :meth:`wait_flash_stop`."""
        self._arm_break(str(int(points)))

    def _arm_break(self, what: str) -> None:
        self._break_gen += 1
        self._stops.clear()
        self._expect_ok(f"flash-break {self._break_gen} {what}")

    def wait_flash_stop(self, timeout: float | None = None) -> FlashStop:
        """Where the board stopped after :meth:`break_on_flash` or :meth:`break_at_flash_point`
        (TimeoutError after `timeout` seconds, default this client's)."""
        deadline = time.monotonic() + (self._timeout if timeout is None else timeout)
        while not self._stops:
            self._note_stop(self._read_line(deadline - time.monotonic()))
        return self._stops.pop(0)

    def frame(self) -> bytes:
        """The latest LED frame, RGB, 3 bytes per LED.

        Raises NoFrameError if the firmware has not written the LEDs yet.
        """
        return _parse_frame(self._request("frame"))[1]

    def wait_frame(self, predicate: FramePredicate | None = None, timeout: float = 5.0) -> bytes:
        """Wait for a frame (the current one included) for which `predicate` is true.

        With no predicate, return the current frame or the first one written. Raises
        TimeoutError if none matches within `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        with VirtualControl(self._address, self._timeout) as watcher:
            reply = watcher._request("subscribe")
            if reply != "ok":
                raise VirtualControlError(f"subscribe refused: {reply}")
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    line = watcher._read_line(remaining)
                except TimeoutError:
                    break
                rgb = _parse_frame(line)[1]
                if predicate is None or predicate(rgb):
                    return rgb
        raise TimeoutError(f"no matching LED frame within {timeout:g} s")

    # -- plumbing ----------------------------------------------------------------------------

    def _expect_ok(self, line: str) -> None:
        reply = self._request(line)
        if reply != "ok":
            raise _error_from(reply)

    def _request(self, line: str) -> str:
        try:
            self._sock.sendall(line.encode("ascii") + b"\n")
        except OSError as err:
            raise VirtualControlError(f"virtual board side channel closed: {err}")
        deadline = time.monotonic() + self._timeout
        while True:
            reply = self._read_line(deadline - time.monotonic())
            if not self._note_stop(reply):
                return reply

    def _note_stop(self, line: str) -> bool:
        """Keep a flash-stop line of the current break (drop an older one); False for others."""
        words = line.split()
        if len(words) != 6 or words[0] != "flash-stop":
            return False
        if words[1] == str(self._break_gen):
            self._stops.append(FlashStop(words[2], int(words[3]), int(words[4]), int(words[5])))
        return True

    def _read_line(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no reply from the virtual board side channel")
            self._sock.settimeout(remaining)
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                raise TimeoutError("no reply from the virtual board side channel")
            except OSError as err:
                raise VirtualControlError(f"virtual board side channel failed: {err}")
            if not data:
                raise VirtualControlError("virtual board side channel closed")
            self._buffer += data
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer[:] = rest
        return line.decode("ascii").strip()


def _error_from(reply: str) -> VirtualControlError:
    words = reply.split(maxsplit=2)
    if len(words) >= 2 and words[0] == "error":
        text = words[2] if len(words) > 2 else words[1]
        if words[1] == "no-frame":
            return NoFrameError(text)
        return VirtualControlError(f"{words[1]}: {text}")
    return VirtualControlError(f"unexpected reply: {reply}")


def _parse_frame(reply: str) -> tuple[int, bytes]:
    words = reply.split()
    if len(words) == 3 and words[0] == "frame":
        try:
            return int(words[1]), bytes.fromhex(words[2])
        except ValueError:
            pass
    if len(words) == 2 and words[0] == "frame":  # zero LEDs
        return int(words[1]), b""
    raise _error_from(reply)
