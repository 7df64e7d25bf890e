"""An emulated Raspberry Pi Pico (RP2040) running a real rp2 firmware image, behind a pty.

The emulator is rp2040js under Node.js (``host/cribboard/virtual/rp2/``, installed there by
``make emulator``, or into the user's cache by ``cribboard virtual --rp2 --install-emulator``: see
:mod:`cribboard.virtual.rp2install`): the chip runs the UF2 or BIN image from a flash file on the host that every
erase and program updates, so a restart from the same file is a restart of the same chip. Its
USB CDC stream is relayed to a pseudo-terminal (:attr:`RP2Board.port`) that pyserial, mpremote
and the cribboard host open like a USB board; the methods press and release buttons on its
pins, read the edges of its LED data pin (GPIO 16), read its clock, stop it at a given cycle,
cut its power and restart it. See docs/rp2-emulator.md.

::

    with RP2Board("micropython-RPI_PICO-v1.28.0.uf2", flash="pico.flash") as pico:
        print(pico.port)             # /dev/pts/N
        pico.press(15); pico.release(15)
        print(pico.clock().cycles)
"""

from __future__ import annotations

import atexit
import collections
import json
import logging
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from ..paths import firmware_dir
from .control import FlashStop, FramePredicate
from .errors import NoFrameError, VirtualBoardError
from .flashlock import lock_flash, release
from .process import die_with_parent
from .ptyport import BUFFER_LIMIT, HostPort
from .rp2install import INSTALL_HINT, emulator_dir
from .ws2812 import decode_ws2812, grb_to_rgb, split_complete

_log = logging.getLogger("cribboard.virtual.rp2")

ENV_RP2_IMAGES = "CRIBBOARD_RP2_IMAGES"
"""Environment variable naming a directory of rp2 images to use instead of the repository's."""

STOCK_IMAGE = "micropython-RPI_PICO-v1.28.0.uf2"
"""MicroPython's own RPI_PICO build, as firmware/ports/rp2/build.py makes it."""

FIRMWARE_IMAGE = "cribboard-RPI_PICO.uf2"
"""RPI_PICO with the cribboard firmware frozen in."""

FLASH_SIZE = 2 * 1024 * 1024
"""The Pico's flash (and the size of a flash file)."""

NANOS_PER_CYCLE = 8
"""The emulator counts time in 125 MHz CPU cycles."""

_IDLE_TICK = 0.02  # how often the relay looks for a host opening the port
_FRAME_POLL = 0.05  # how often wait_frame reads the LED pin's edges (the emulator has no event)
_LED_PIN = 16  # the LED chain's data line (cribcore.profiles: every rp2 profile)
_STEP = 256  # FlashStop counts 256-byte steps, as the virtual board's flash does
_BLOCK = 4096
_REPLY_TIMEOUT = 10.0
_STDERR_LINES = 40


class EmulatorNotInstalledError(VirtualBoardError):
    """Node.js or the emulator's npm packages are missing."""


class RP2ControlError(VirtualBoardError):
    """The emulator refused a control request or did not answer it."""


@dataclass(frozen=True)
class FlashSymbols:
    """Where the image's SDK flash functions are: the emulator catches calls to them."""

    erase: int
    """Address of ``flash_range_erase``."""
    program: int
    """Address of ``flash_range_program``."""

    @classmethod
    def for_image(cls, image: str | os.PathLike[str]) -> FlashSymbols:
        """Read them from the image's provenance file, ``<image>.json`` beside it."""
        record_path = Path(f"{os.fspath(image)}.json")
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
            symbols = record["symbols"]
            return cls(
                erase=_address(symbols["flash_range_erase"]),
                program=_address(symbols["flash_range_program"]),
            )
        except OSError as err:
            raise VirtualBoardError(f"no provenance file for {image}: {err}")
        except (ValueError, KeyError, TypeError) as err:
            raise VirtualBoardError(f"{record_path} has no usable flash symbols: {err!r}")


def _address(value: object) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return int(value, 0)
    raise ValueError(f"not an address: {value!r}")


@dataclass(frozen=True)
class Clock:
    """The emulated clock: one count across every reset and restart of the chip."""

    nanos: int
    cycles: int
    state: str
    """running, halted (stopped at a cycle or flash operation) or off (power cut)."""


@dataclass(frozen=True)
class EdgeLog:
    """Edges of an output pin, in order: (emulated nanoseconds, new level) pairs."""

    pin: int
    edges: list[tuple[int, int]]
    next: int
    """The index to pass as ``since`` to read only later edges."""


def images_dir() -> Path:
    """Where the rp2 images are: $CRIBBOARD_RP2_IMAGES, else firmware/ports/rp2/images/."""
    named = os.environ.get(ENV_RP2_IMAGES)
    if named:
        return Path(named)
    return firmware_dir() / "ports" / "rp2" / "images"


def find_emulator() -> tuple[str, Path]:
    """The Node.js executable and the folder to run harness.js from (its npm packages
    installed there)."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise EmulatorNotInstalledError(f"Node.js is not installed: {INSTALL_HINT}")
    folder = emulator_dir()
    if folder is None:
        raise EmulatorNotInstalledError(f"the RP2040 emulator is not installed: {INSTALL_HINT}")
    return node, folder


def emulator_missing() -> str | None:
    """Why the emulator cannot run here (one line), or None when it can."""
    try:
        find_emulator()
    except EmulatorNotInstalledError as err:
        return str(err)
    return None


class RP2Board:
    """An emulated Pico running `image`, reachable on a pty like a USB board.

    Use as a context manager, or call :meth:`start` and :meth:`stop`.

    Args:
        image: UF2 or BIN firmware image, written into the flash at start (only the bytes it
            holds: a file system in the flash file stays). None: boot the flash file as it is.
        flash: flash file (2 MiB, created erased if missing; kept). Default: a fresh temporary
            one, deleted by stop().
        symbols: addresses of the image's ``flash_range_erase``/``flash_range_program``.
            Default: from the image's provenance file (``<image>.json``).
        edge_pins: output pins whose edges are logged (GPIO 16: the LED data).
        pace: emulated seconds per wall second at most (1: never faster than a real board,
            so button presses and timeouts mean what they say; 0: as fast as it goes).
        start_timeout: seconds to wait for the emulator to come up.
    """

    def __init__(
        self,
        image: str | os.PathLike[str] | None,
        *,
        flash: str | os.PathLike[str] | None = None,
        symbols: FlashSymbols | None = None,
        edge_pins: Sequence[int] = (16,),
        pace: float = 1.0,
        start_timeout: float = 20.0,
    ) -> None:
        if image is None and flash is None:
            raise ValueError("an RP2Board needs an image, a flash file or both")
        if image is not None and not Path(image).is_file():
            raise VirtualBoardError(f"firmware image not found: {image}")
        if symbols is None:
            if image is None:
                raise ValueError("a board without an image needs its flash symbols")
            symbols = FlashSymbols.for_image(image)
        # Absolute: the emulator runs in its own directory.
        self._image = Path(image).resolve() if image is not None else None
        self._flash_arg = Path(flash).resolve() if flash is not None else None
        self._symbols = symbols
        self._edge_pins = tuple(edge_pins)
        self._pace = pace
        self._start_timeout = start_timeout
        self._directory: Path | None = None
        self._flash_lock: int | None = None
        self._flash_path: Path | None = None
        self._harness: _Harness | None = None
        self._relay: _Relay | None = None
        self._halt_mark = 0
        self._breaks_left = 0
        self._break_kind = "any"  # flash operations still to pass before wait_flash_stop returns
        self._edges_next = 0  # the LED pin's edges read so far (frame(), wait_frame())
        self._unfinished: list[tuple[int, int]] = []  # edges of a frame still being sent
        self._last_frame: bytes | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> RP2Board:
        """Start the emulator and the relay; return once the chip is powered on."""
        if self._harness is not None:
            raise VirtualBoardError("emulated board already started")
        node, emulator = find_emulator()
        try:
            self._directory = Path(tempfile.mkdtemp(prefix="cribboard-rp2-"))
            self._flash_path = self._open_flash()
            board_end, relay_end = socket.socketpair()
            args = [
                node,
                str(emulator / "harness.js"),
                "--flash",
                str(self._flash_path),
                "--erase",
                hex(self._symbols.erase),
                "--program",
                hex(self._symbols.program),
                "--pace",
                repr(float(self._pace)),
                "--cdc-fd",
                str(board_end.fileno()),
            ]
            if self._image is not None:
                args += ["--image", str(self._image)]
            for pin in self._edge_pins:
                args += ["--edge-pin", str(pin)]
            atexit.register(self.stop)
            try:
                self._harness = _Harness(args, pass_fds=(board_end.fileno(),), cwd=emulator)
            except BaseException:
                relay_end.close()
                raise
            finally:
                board_end.close()
            self._relay = _Relay(relay_end, self._harness)
            self._harness.wait_event(
                lambda e: e["event"] == "boot", self._start_timeout, what="the chip's power-on"
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Power the chip off, end the emulator and the relay, free the pty and temp files."""
        atexit.unregister(self.stop)
        relay, harness = self._relay, self._harness
        self._relay = self._harness = None
        if relay is not None:
            relay.stop()
        if harness is not None:
            harness.stop()
        release(self._flash_lock, self._directory)
        self._flash_lock = self._directory = None

    def __enter__(self) -> RP2Board:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _open_flash(self) -> Path:
        assert self._directory is not None
        path = self._flash_arg if self._flash_arg is not None else self._directory / "flash.bin"
        fd = lock_flash(path, "flash file", "emulated board")
        size = os.fstat(fd).st_size
        if size not in (0, FLASH_SIZE):
            os.close(fd)
            raise VirtualBoardError(f"flash file {path} holds {size} bytes, not {FLASH_SIZE}")
        self._flash_lock = fd
        return path

    # -- what hosts need ---------------------------------------------------------------------

    @property
    def port(self) -> str:
        """The serial device hosts open (a pty slave path such as /dev/pts/7)."""
        return self._running_relay().port

    @property
    def flash_path(self) -> Path:
        """The flash file in use."""
        self._running()
        assert self._flash_path is not None
        return self._flash_path

    @property
    def boots(self) -> int:
        """How many chips have started: the first power-on, watchdog resets, restarts."""
        return int(self._running().request("info")["boots"])

    # -- control -----------------------------------------------------------------------------

    def clock(self) -> Clock:
        """The emulated clock now."""
        reply = self._running().request("clock")
        return Clock(int(reply["nanos"]), int(reply["cycles"]), str(reply["state"]))

    def info(self) -> dict[str, Any]:
        """State, boots, flash operations so far, flash file, pace and clock."""
        reply = self._running().request("info")
        return {k: v for k, v in reply.items() if k not in ("id", "ok")}

    def press(self, pin: int, ms: float = 80) -> None:
        """A button from GPIO `pin` to ground goes down for `ms` emulated milliseconds (returns
        at once)."""
        self._running().request("press", pin=pin, ms=ms)

    def hold(self, pin: int) -> None:
        """A button from GPIO `pin` to ground goes down until :meth:`release`: the pin reads 0;
        released, it reads what its pull resistor makes it (1 with the pull-up). A held button
        stays down across resets."""
        self._running().request("press", pin=pin)

    def release(self, pin: int) -> None:
        """The button on GPIO `pin` comes up."""
        self._running().request("release", pin=pin)

    def pin(self, pin: int) -> dict[str, Any]:
        """GPIO `pin` as the chip has it: level, output, pull_up, pull_down, pressed."""
        reply = self._running().request("pin", pin=pin)
        return {k: v for k, v in reply.items() if k not in ("id", "ok")}

    def edges(self, pin: int = 16, since: int = 0, clear: bool = False) -> EdgeLog:
        """Edges of a logged output pin from index `since` (clear: forget them after)."""
        reply = self._running().request("edges", pin=pin, since=since, clear=clear)
        edges = [(round(nanos), int(level)) for nanos, level in reply["edges"]]
        return EdgeLog(pin, edges, int(reply["next"]))

    def trace(self, on: bool = True, probes: dict[str, int] | None = None) -> None:
        """Start a fresh trace (on) or stop it: the USB traffic both ways (`usb_out` the host's
        bytes reaching the chip's port, `usb_in` a packet of the chip's reaching the host) and,
        for each of `probes` (name: firmware address, from the image's ELF), every time the core
        starts executing there; all stamped with the emulated time. A probe whose name ends in
        "+" also records the call there: its bytes are r0-r3 and lr at that moment (the first
        four arguments and the return address, 20 bytes little-endian)."""
        self._running().request("trace", on=on, probes=probes or {})

    def trace_log(self, since: int = 0) -> tuple[list[tuple[int, str, bytes]], int]:
        """The trace's entries from index `since`, as (emulated ns, what, bytes), and the
        index to pass next time."""
        reply = self._running().request("trace_log", since=since)
        entries = [
            (int(entry[0]), str(entry[1]), entry[2].encode("latin-1") if len(entry) > 2 else b"")
            for entry in reply["entries"]
        ]
        return entries, int(reply["next"])

    def profile(self, on: bool = True) -> None:
        """Start a fresh profile (on) or stop it: the cycles the core spends executing at each
        instruction address (asleep: not counted), read by :meth:`profile_log`."""
        self._running().request("profile", on=on)

    def profile_log(self) -> dict[int, int]:
        """The profile so far: cycles by instruction address (Thumb bit clear)."""
        reply = self._running().request("profile_log")
        return {int(address): int(cycles) for address, cycles in reply["cycles"]}

    def run_until(self, cycle: int, timeout: float = 30.0) -> Clock:
        """Run on to emulated `cycle` and halt there (:meth:`resume` goes on)."""
        reply = self._running().request("run_until", timeout=timeout, cycle=cycle)
        return Clock(int(reply["nanos"]), int(reply["cycles"]), str(reply["state"]))

    def halt(self) -> Clock:
        """Stop the chip where it is."""
        reply = self._running().request("halt")
        return Clock(int(reply["nanos"]), int(reply["cycles"]), str(reply["state"]))

    def resume(self) -> None:
        """Let a halted chip run on."""
        self._running().request("resume")

    def break_on_flash(self, kind: str = "any", count: int = 1) -> None:
        """Halt at the start of the `count`-th flash operation of `kind` (``erase``,
        ``program`` or ``any``) from now, before it changes a byte. An operation the chip is
        halted at does not count.

        :meth:`wait_flash_stop` says which (the spelling every virtual board shares);
        :meth:`wait_halted` gives the emulator's own account (offset, count, data, start and
        end cycles). A `count` above 1 is passed in :meth:`wait_flash_stop`, which lets the
        chip run on through the operations before it.
        """
        if count < 1:
            raise ValueError("count must be 1 or more")
        self._breaks_left = count
        self._arm_flash_break(kind)

    def _arm_flash_break(self, kind: str) -> None:
        running = self._running()
        self._halt_mark = running.mark()
        self._break_kind = kind
        running.request("break_flash", kind=kind)

    def wait_flash_stop(self, timeout: float = 30.0) -> FlashStop:
        """The flash operation the chip halted at after :meth:`break_on_flash`: its kind, its
        first 4096-byte block of the flash, and its length in 256-byte steps (index 0: none
        done). RP2ControlError when it does not halt within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            op = self.wait_halted(max(0.0, deadline - time.monotonic()))["flash_op"]
            if op is None:
                raise RP2ControlError("the chip halted, but not at a flash operation")
            self._breaks_left -= 1
            if self._breaks_left <= 0:
                break
            self._arm_flash_break(self._break_kind)
            self.resume()
        return FlashStop(
            str(op["kind"]),
            int(op["offset"]) // _BLOCK,
            int(op["done"]) // _STEP,
            -(-int(op["count"]) // _STEP),
        )

    def wait_halted(self, timeout: float = 30.0) -> dict[str, Any]:
        """Wait for the chip to halt after the last :meth:`break_on_flash`; return the halt
        event (reason, cycles, flash_op)."""
        return self._running().wait_event(
            lambda e: e["event"] == "halted", timeout, since=self._halt_mark, what="a halt"
        )

    def flash_op(self) -> dict[str, Any] | None:
        """The flash operation in progress (as :meth:`wait_halted` gives it), or None."""
        op = self._running().request("flash_op")["flash_op"]
        return dict(op) if op is not None else None

    def power_cut(self, at_cycle: int | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """Cut the power now, or when the clock reaches `at_cycle`.

        RAM, registers and the watchdog's scratch registers are lost; the flash file keeps
        exactly what was erased and programmed up to the cut (an operation in progress is
        cut part-way). Returns the state, clock and the flash operation that was cut (or None).
        """
        running = self._running()
        if at_cycle is None:
            reply = running.request("power_cut")
        else:
            reply = running.request("power_cut", timeout=timeout, cycle=at_cycle)
        return {k: v for k, v in reply.items() if k not in ("id", "ok")}

    def power_on(self) -> None:
        """Power a cut board on again: a new chip boots from the flash file."""
        self._running().request("power_on")

    def restart(self) -> None:
        """Power-cycle the chip: a cut, then a new chip from the same flash file."""
        self._running().request("restart")

    def reset(self) -> None:
        """Hard-reset the board (the RUN pin, as the reset button pulls it): a new chip from
        the same flash file, as :meth:`restart` (a RUN reset clears the watchdog's scratch
        registers, as a power cycle does)."""
        self.restart()

    # -- the LEDs ----------------------------------------------------------------------------

    def frame(self) -> bytes:
        """The last whole LED frame the chip sent on GPIO 16, RGB, 3 bytes per LED, decoded
        from the pin's edges (NoFrameError before the first)."""
        self._read_frames()
        if self._last_frame is None:
            raise NoFrameError("the firmware has not written the LEDs yet")
        return self._last_frame

    def wait_frame(self, predicate: FramePredicate | None = None, timeout: float = 5.0) -> bytes:
        """The current LED frame, or the first whole one to come, for which `predicate` is
        true (TimeoutError after `timeout` wall seconds). The emulator has no event for a
        frame: the pin's edges are read again every few tens of milliseconds."""
        deadline = time.monotonic() + timeout
        current = self._last_frame
        candidates = [current] if current is not None else []
        while True:
            candidates += self._read_frames()
            for rgb in candidates:
                if predicate is None or predicate(rgb):
                    return rgb
            candidates = []
            if time.monotonic() > deadline:
                raise TimeoutError(f"no matching LED frame within {timeout:g} s")
            time.sleep(_FRAME_POLL)

    def _read_frames(self) -> list[bytes]:
        """The whole frames sent since the last read, RGB, oldest first."""
        if _LED_PIN not in self._edge_pins:
            raise VirtualBoardError(f"GPIO {_LED_PIN} is not among the board's edge_pins")
        now = self.clock().nanos  # (first: an edge after it belongs to a frame not yet whole)
        log = self.edges(_LED_PIN, since=self._edges_next)
        self._edges_next = log.next
        whole, self._unfinished = split_complete(self._unfinished + log.edges, now)
        frames = [grb_to_rgb(frame.data) for frame in decode_ws2812(whole)]
        if frames:
            self._last_frame = frames[-1]
        return frames

    def wait_boot(self, after: int, timeout: float = 30.0) -> dict[str, Any]:
        """Wait until boot number `after` + 1 (or later) has started; return its event.

        The event says why the chip started: ``cause`` power or watchdog, ``reason`` the
        watchdog REASON bits it kept (1 timer, 2 forced, as by ``machine.reset()``).
        """
        return self._running().wait_event(
            lambda e: e["event"] == "boot" and int(e["boot"]) > after, timeout, what="a boot"
        )

    def _running(self) -> _Harness:
        if self._harness is None:
            raise VirtualBoardError("emulated board is not running")
        return self._harness

    def _running_relay(self) -> _Relay:
        if self._relay is None:
            raise VirtualBoardError("emulated board is not running")
        return self._relay


class _Harness:
    """The Node process: JSON-line requests on its stdin, replies and events on its stdout."""

    def __init__(self, args: list[str], pass_fds: Iterable[int], cwd: Path) -> None:
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=tuple(pass_fds),
            cwd=cwd,
            start_new_session=True,  # a Ctrl-C at the terminal is for the launcher
            preexec_fn=die_with_parent,
        )
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._next_id = 1
        self._replies: dict[int, dict[str, Any]] = {}
        self._events: list[dict[str, Any]] = []
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._closed = False
        self._readers = [
            threading.Thread(target=self._read_stdout, name="rp2-harness", daemon=True),
            threading.Thread(target=self._read_stderr, name="rp2-harness-log", daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                _log.warning("emulator said: %r", line)
                continue
            with self._changed:
                if "event" in message:
                    self._events.append(message)
                elif message.get("id") is not None:
                    self._replies[int(message["id"])] = message
                else:
                    _log.warning("emulator: %s", message)
                self._changed.notify_all()
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        for raw in self._proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            self._stderr.append(line)  # shown in the errors raised
            _log.info("%s", line)

    def _failure(self, what: str) -> RP2ControlError:
        if self._proc.poll() is not None:
            self._readers[1].join(timeout=1)  # what it said before it ended
        said = " | ".join(self._stderr) or "nothing"
        return RP2ControlError(f"{what}; the emulator said: {said}")

    def send(self, op: str, reply: bool = True, **fields: Any) -> int:
        """Send a request without waiting; return its id (the emulator answers only requests
        with an id: `reply` False sends none)."""
        with self._lock:
            if self._closed:
                raise self._failure(f"emulator gone before {op}")
            request_id = self._next_id
            self._next_id += 1
            request = {"id": request_id, "op": op, **fields} if reply else {"op": op, **fields}
            line = json.dumps(request) + "\n"
            assert self._proc.stdin is not None
            try:
                self._proc.stdin.write(line.encode())
                self._proc.stdin.flush()
            except OSError:
                raise self._failure(f"emulator gone before {op}")
        return request_id

    def request(self, op: str, timeout: float = _REPLY_TIMEOUT, **fields: Any) -> dict[str, Any]:
        """Send a request and wait for its reply; raise RP2ControlError on a refusal."""
        request_id = self.send(op, **fields)
        with self._changed:
            self._changed.wait_for(lambda: request_id in self._replies or self._closed, timeout)
            reply = self._replies.pop(request_id, None)
        if reply is None:
            raise self._failure(f"no reply to {op} within {timeout:g} s")
        if not reply.get("ok"):
            raise RP2ControlError(f"{op}: {reply.get('text', reply.get('error'))}")
        return reply

    def mark(self) -> int:
        """The number of events so far: pass it as `since` to wait only for later ones."""
        with self._lock:
            return len(self._events)

    def wait_event(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        timeout: float,
        since: int = 0,
        what: str = "the event awaited",
    ) -> dict[str, Any]:
        """The first event from number `since` on (arrived or to come within `timeout`) that
        `predicate` accepts; RP2ControlError saying `what` did not come otherwise."""
        with self._changed:
            seen = since
            found: list[dict[str, Any]] = []

            def arrived() -> bool:
                nonlocal seen
                for event in self._events[seen:]:
                    if predicate(event):
                        found.append(event)
                        return True
                seen = len(self._events)
                return self._closed

            self._changed.wait_for(arrived, timeout)
        if not found:
            if self._closed:
                raise self._failure(f"the emulator ended before {what}")
            raise self._failure(f"{what} did not come within {timeout:g} s")
        return found[0]

    def stop(self) -> None:
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()  # the harness cuts the power and exits
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
        for reader in self._readers:
            reader.join(timeout=5)
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


class _Relay:
    """Copies bytes between the pty hosts open and the chip's USB CDC stream (a socket), and
    tells the emulator when a host opens or closes the port (DTR)."""

    def __init__(self, cdc: socket.socket, harness: _Harness) -> None:
        self._cdc = cdc
        self._cdc.setblocking(False)
        self._harness = harness
        self._host = HostPort()
        self.port = self._host.path
        self._to_board = bytearray()
        self._host_open = False
        self._stopping = False
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="rp2-relay", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=5)
        self._host.close()
        self._cdc.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _run(self) -> None:
        try:
            while not self._stopping:
                self._step()
        except Exception:
            _log.exception("emulated board relay failed")

    def _step(self) -> None:
        connected = self._host.poll_connection()
        if connected != self._host_open:
            self._host_open = connected
            self._harness.send("host", reply=False, open=connected)
        readers: list[int] = [self._wake_r]
        writers: list[int] = []
        if not self._host.output_full:
            readers.append(self._cdc.fileno())
        if connected and len(self._to_board) < BUFFER_LIMIT:
            readers.append(self._host.fd)
        if self._to_board:
            writers.append(self._cdc.fileno())
        if self._host.output_pending:
            writers.append(self._host.fd)
        readable, writable, _ = select.select(
            readers, writers, [], 1.0 if connected else _IDLE_TICK
        )
        if self._wake_r in readable:
            os.read(self._wake_r, 64)
        if self._cdc.fileno() in readable:
            try:
                data = self._cdc.recv(4096)
            except (BlockingIOError, InterruptedError):
                data = None
            if data == b"":
                self._stopping = True  # the emulator has gone
            elif data:
                self._host.send(data)
        if self._host.fd in readable:
            from_host = self._host.read()
            if from_host:
                self._to_board += from_host
        if self._cdc.fileno() in writable:
            try:
                sent = self._cdc.send(self._to_board)
            except (BlockingIOError, InterruptedError):
                sent = 0
            del self._to_board[:sent]
        if self._host.fd in writable:
            self._host.write()
        self._host.drop_if_stalled()
