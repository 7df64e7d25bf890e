"""Run the real firmware on MicroPython's unix port, reachable on a pty like a USB board.

How it works (details in docs/virtual-board.md):

* The interpreter's stdin/stdout/stderr is the slave of pty A, set fully raw. The launcher
  keeps its own handle on that slave, so pty A outlives each interpreter.
* A relay thread copies bytes between pty A's master and pty B's master; pty B's slave is
  the port hosts open (:attr:`VirtualBoard.port`).
* When the interpreter exits (Ctrl-D at a REPL, ``sys.exit()``) or asks to be reset, the
  relay starts a new one and prints what a board prints on a soft reboot; a soft reboot from
  the raw REPL comes back in the raw REPL without running main.py, as on a board.
* The relay is also the board's watchdog: the firmware's boot guard (firmware/cribboot.py)
  arms it while the board boots; an interpreter that crashes or is still busy when it runs out
  is restarted as a watchdog reset, keeping the scratch register the guard counts failed boots
  in. A power cycle (:meth:`VirtualBoard.reset`) clears it, as on a chip.
* A Ctrl-C (0x03) from the host becomes SIGINT while code runs, and stays a byte for the
  REPL otherwise, as a board's USB stack does.
"""

from __future__ import annotations

import atexit
import collections
import logging
import os
import select
import signal
import socket
import subprocess
import tempfile
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from ..firmware_build import NO_NATIVE, build
from ..paths import firmware_dir
from .control import FlashStop, FramePredicate, VirtualControl
from .errors import VirtualBoardError
from .flashlock import lock_flash, release
from .flashuid import flash_uid
from .interpreter import check_heap_size, find_micropython, interpreter_arch
from .process import die_with_parent
from .ptyport import BUFFER_LIMIT, HostPort, make_raw
from .sidechannel import ENV_BLE_ADDR, ENV_BOARD, ENV_LINK, FrameCallback, SideChannel

_log = logging.getLogger("cribboard.virtual")

DEFAULT_HEAP = "128wK"
"""Default `-X heapsize`: about the 128 KB heap of a 32-bit board on this 64-bit port."""

DEFAULT_FLASH_SIZE = 1 << 20
"""Size of a new flash image: 256 blocks of 4096 bytes, erased (0xFF) like a new flash chip."""

_BLOCK_SIZE = 4096
_SOFT_REBOOT = b"MPY: soft reboot\r\n"
_RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n"
_FRIENDLY_BANNER = b'Type "help()" for more information.'
_BANNER_START = b"MicroPython "
_CTRL_A = b"\x01"
_CTRL_C = 0x03
_IDLE_TICK = 0.02  # poll period for things that have no fd to wait on
_RAW_FILTER_TIMEOUT = 5.0
_BOOT_TIMEOUT = 10.0
_RECENT_OUTPUT = 4096
_QUICK_FAILURES = 3
_WATCHDOG_BOOTS = 6  # start() waits through this many watchdog resets of a failing first boot
_RELAY_TIMEOUT = 10.0  # a power cut or power on waits this long at most for the relay thread
_SAVE_TIMEOUT = 5.0  # stop() waits this long at most for the app to end and save (save_on_stop)

# Marker left in pty A's local modes while the interpreter runs code: MicroPython switches its
# terminal to lflag 0 to read REPL input and restores our settings to run code. NOFLSH does
# nothing without ISIG, so it only serves as the flag.
_RUNNING_MARK = termios.NOFLSH


def _sigint_caught(pid: int) -> bool | None:
    """Whether process `pid` has a SIGINT handler installed; None if /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"SigCgt:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    except (OSError, ValueError):
        pass
    return None


def _prepare_child() -> None:
    # Runs in the child before exec: MicroPython installs its own handler only while code
    # runs, and a CPython-hosted interpreter leaves an ignored SIGINT alone.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()


def _free_port() -> int:
    """A TCP port free on the loopback now (the board binds it when it starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VirtualBoard:
    """A simulated cribboard: the firmware on MicroPython's unix port behind a pty.

    Use as a context manager, or call :meth:`start` and :meth:`stop`::

        with VirtualBoard() as board:
            print(board.port)      # e.g. /dev/pts/7, for pyserial or mpremote
            print(board.control)   # side-channel socket, for VirtualControl

    Args:
        flash: flash image file. Default: a fresh temporary image, deleted by stop(). A given
            path persists across launcher restarts; it is created if missing.
        flash_size: size in bytes of a newly created image (multiple of 4096).
        heap: MicroPython heap size as for ``-X heapsize=`` (e.g. "64wK"); None for the
            interpreter's default.
        micropython: interpreter executable (else $CRIBBOARD_MICROPYTHON, PATH, or beside
            the running Python).
        firmware: the firmware tree the board's image holds, as a cribboard image holds it frozen
            (default: the package's firmware/ directory); the board runs it from read-only
            /rom unless a main.py on the flash takes over (firmware deployed there).
        stock: a board with stock MicroPython instead: nothing in the image, the whole flash a
            file system, and no boot guard; `cribboard deploy` puts the firmware on it.
        on_frame: called on the relay thread with each new LED frame (RGB, 3 bytes per LED);
            it must return quickly.
        ble: whether the board has Bluetooth LE (the simulated radio, cribboard.virtual.radio);
            False: a board without it, as a Pico 2 without wireless.
        start_timeout: seconds to wait for the first boot.
        environment: more environment variables for the interpreter (e.g. ``MICROPYBTUART``,
            the HCI UART of an interpreter built with a real Bluetooth stack; with ``ble=False``
            the firmware then finds MicroPython's own `bluetooth` module).
        native: whether the image's firmware has its native functions compiled to machine code
            for the interpreter (when it has a native emitter); False: all bytecode, as for a
            board without one.
        save_on_stop: stop() ends the board's app as a Ctrl-C does, which saves a change made
            within its last second (the board's store waits for a quiet second), before the
            interpreter stops; False: stop() cuts the power, as unplugging a board does.
        web_port: serve the board's own page (as a board with Wi-Fi does) on this port of the
            host's loopback (127.0.0.1); 0: a free port, read from :attr:`web_url`; None: no page.
    """

    def __init__(
        self,
        *,
        flash: str | os.PathLike[str] | None = None,
        flash_size: int = DEFAULT_FLASH_SIZE,
        heap: str | None = DEFAULT_HEAP,
        micropython: str | os.PathLike[str] | None = None,
        firmware: str | os.PathLike[str] | None = None,
        stock: bool = False,
        on_frame: FrameCallback | None = None,
        start_timeout: float = 10.0,
        ble: bool = True,
        environment: dict[str, str] | None = None,
        native: bool = True,
        save_on_stop: bool = False,
        web_port: int | None = None,
    ) -> None:
        if flash_size <= 0 or flash_size % _BLOCK_SIZE:
            raise ValueError(f"flash_size must be a positive multiple of {_BLOCK_SIZE}")
        self._flash_arg = Path(flash) if flash is not None else None
        self._flash_size = flash_size
        self._heap = check_heap_size(heap) if heap is not None else None
        self._micropython_arg = micropython
        self._firmware = Path(firmware) if firmware is not None else firmware_dir()
        self._stock = stock
        self._on_frame = on_frame
        self._start_timeout = start_timeout
        self._ble = ble
        self._environment = dict(environment or {})
        self._native = native
        self._save_on_stop = save_on_stop
        self._web_port = _free_port() if web_port == 0 else web_port
        self._directory: Path | None = None
        self._flash_lock: int | None = None
        self._flash_path: Path | None = None
        self._relay: _Relay | None = None
        self._thread: threading.Thread | None = None
        self._control_client: VirtualControl | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> VirtualBoard:
        """Start the interpreter and the relay; return once the board has booted."""
        if self._relay is not None:
            raise VirtualBoardError("virtual board already started")
        executable = find_micropython(self._micropython_arg)
        sim_dir = firmware_dir() / "sim"
        if not (sim_dir / "simboot.py").is_file():
            raise VirtualBoardError(f"simulated hardware modules not found in {sim_dir}")
        try:
            self._directory = Path(tempfile.mkdtemp(prefix="cribboard-sim-"))
            self._flash_path = self._open_flash()
            arch = interpreter_arch(executable) if self._native else NO_NATIVE
            assert self._flash_lock is not None
            side_env = {
                "CRIBBOARD_SIM_FLASH": str(self._flash_path.resolve()),
                # machine.unique_id(): the board's own, kept in its image
                "CRIBBOARD_SIM_UID": flash_uid(self._flash_lock).hex().upper(),
                # The firmware the image holds, as deploy would lay it out; none when stock.
                "CRIBBOARD_SIM_FIRMWARE": ""
                if self._stock
                else str(build(self._firmware.resolve(), arch=arch)),
                "CRIBBOARD_SIM_BLE": "1" if self._ble else "0",
                **(
                    {"CRIBBOARD_SIM_WEB": f"127.0.0.1:{self._web_port}"}
                    if self._web_port is not None
                    else {}
                ),
                **self._environment,
            }
            relay = _Relay(
                executable,
                self._heap,
                sim_dir,
                side_env,
                self._directory,
                self._on_frame,
                self._save_on_stop,
            )
            self._relay = relay
            self._thread = threading.Thread(
                target=relay.run, name="cribboard-virtual-board", daemon=True
            )
            atexit.register(self.stop)
            self._thread.start()
            if not self._wait_ready(relay):
                raise VirtualBoardError(
                    f"virtual board did not boot within {self._start_timeout:g} s; "
                    f"its output: {relay.recent_output()!r}"
                )
            if relay.failure is not None:
                raise VirtualBoardError(relay.failure)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, relay: _Relay) -> bool:
        # Each watchdog reset of a failing boot (a damaged flash) gives the board another
        # start_timeout, up to _WATCHDOG_BOOTS of them: its boot guard recovers by then.
        resets = 0
        while not relay.ready.wait(self._start_timeout):
            if relay.watchdog_resets == resets or resets >= _WATCHDOG_BOOTS:
                return False
            resets = relay.watchdog_resets
        return True

    def stop(self) -> None:
        """Stop the interpreter and the relay and free the pty, sockets and temporary files."""
        atexit.unregister(self.stop)
        if self._control_client is not None:
            self._control_client.close()
            self._control_client = None
        relay, thread = self._relay, self._thread
        self._relay = self._thread = None
        if relay is not None:
            relay.request_stop()
        if thread is not None:
            thread.join(timeout=10)
        release(self._flash_lock, self._directory)
        self._flash_lock = self._directory = None

    def __enter__(self) -> VirtualBoard:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- what hosts need ---------------------------------------------------------------------

    @property
    def port(self) -> str:
        """The serial device hosts open (a pty slave path such as /dev/pts/7)."""
        return self._running().port

    @property
    def control(self) -> str:
        """The side-channel address: a Unix socket path for VirtualControl."""
        return str(self._running().side.control_path)

    @property
    def web_url(self) -> str | None:
        """The board's own page (``http://127.0.0.1:PORT/``), or None when it serves none."""
        if self._web_port is None:
            return None
        return f"http://127.0.0.1:{self._web_port}/"

    @property
    def flash_path(self) -> Path:
        """The flash image in use."""
        self._running()
        assert self._flash_path is not None
        return self._flash_path

    @property
    def ble_address(self) -> str:
        """The board's Bluetooth address (random static), the same across restarts."""
        return self._running().side.radio.address

    @property
    def boots(self) -> int:
        """How many times the firmware side has come up (first boot and every restart)."""
        return self._running().side.boots

    def recent_output(self) -> bytes:
        """The last of what the board wrote on its console (its latest boot, a traceback)."""
        return self._running().recent_output()

    @property
    def watchdog_resets(self) -> int:
        """How many times the board's watchdog restarted it (a boot that crashed or hung)."""
        return self._running().watchdog_resets

    def reset(self) -> None:
        """Hard-reset the board (like the reset button): main.py runs again (returns at once)."""
        relay = self._running()
        relay.call_soon(lambda: relay.reset_request(True))

    # -- AnyVirtualBoard: what tests do to either kind of virtual board --------------------------

    def press(self, pin: int | str, ms: int = 80) -> None:
        """Press the button on `pin` for `ms` milliseconds (returns at once;
        :meth:`VirtualControl.press`)."""
        self._control().press(pin, ms)

    def hold(self, pin: int | str) -> None:
        """Hold the button on `pin` down until :meth:`release` (across resets too)."""
        self._control().hold(pin)

    def release(self, pin: int | str) -> None:
        """Release the button on `pin`."""
        self._control().release(pin)

    def frame(self) -> bytes:
        """The latest LED frame, RGB, 3 bytes per LED (NoFrameError before the first)."""
        return self._control().frame()

    def wait_frame(self, predicate: FramePredicate | None = None, timeout: float = 5.0) -> bytes:
        """The current LED frame, or the first to come, for which `predicate` is true
        (TimeoutError after `timeout` seconds)."""
        return self._control().wait_frame(predicate, timeout)

    def power_cut(self) -> None:
        """Cut the power where the board is (stopped at a flash break, say): RAM is lost, the
        flash keeps what was written up to the cut. Nothing runs until :meth:`power_on`."""
        self._on_relay(lambda relay: relay.power_cut())

    def power_on(self) -> None:
        """Power the board on after :meth:`power_cut`: it boots from its flash (returns once
        the interpreter is started, before the firmware is up)."""
        self._on_relay(lambda relay: relay.power_on())

    def break_on_flash(self, kind: str = "any", count: int = 1) -> None:
        """Stop the board at the start of its `count`-th flash operation of `kind` (``erase``,
        ``program`` or ``any``) from now, before it changes a byte: :meth:`wait_flash_stop`
        says which. Stopped, it does nothing else until :meth:`resume`, a power cut or a reset.
        (:meth:`VirtualControl.break_at_flash_point` stops within an operation.)"""
        self._control().break_on_flash(kind, count)

    def wait_flash_stop(self, timeout: float = 30.0) -> FlashStop:
        """Where the board stopped after :meth:`break_on_flash` (TimeoutError after `timeout`
        seconds)."""
        return self._control().wait_flash_stop(timeout)

    def resume(self) -> None:
        """Let a board stopped by a flash break run on (the break is spent)."""
        self._control().break_at_flash_point(-1)

    def _control(self) -> VirtualControl:
        """This board's own side-channel client (made on first use, closed by stop())."""
        if self._control_client is None:
            self._control_client = VirtualControl(self.control)
        return self._control_client

    def _on_relay(self, call: Callable[[_Relay], None]) -> None:
        """Run `call` on the relay thread and wait for it."""
        relay = self._running()
        done = threading.Event()

        def run() -> None:
            try:
                call(relay)
            finally:
                done.set()

        relay.call_soon(run)
        if not done.wait(_RELAY_TIMEOUT):
            raise VirtualBoardError("the virtual board's relay did not answer")

    def _running(self) -> _Relay:
        if self._relay is None:
            raise VirtualBoardError("virtual board is not running")
        return self._relay

    def _open_flash(self) -> Path:
        assert self._directory is not None
        path = self._flash_arg if self._flash_arg is not None else self._directory / "flash.img"
        fd = lock_flash(path, "flash image", "virtual board")
        if os.fstat(fd).st_size < _BLOCK_SIZE:
            os.ftruncate(fd, 0)
            os.write(fd, b"\xff" * self._flash_size)  # a new flash chip comes erased
        self._flash_lock = fd
        return path


def flush_tty(path: str) -> None:
    """Drop what the terminal at `path` received and nobody read (nothing if it is gone)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        termios.tcflush(fd, termios.TCIFLUSH)
    finally:
        os.close(fd)


class _Relay:
    """The relay thread: runs the interpreter, restarts it, and moves bytes and messages."""

    def __init__(
        self,
        executable: str,
        heap: str | None,
        sim_dir: Path,
        extra_env: dict[str, str],
        directory: Path,
        on_frame: FrameCallback | None,
        save_on_stop: bool = False,
    ) -> None:
        self._executable = executable
        self._save_on_stop = save_on_stop
        self._heap = heap
        self._sim_dir = sim_dir
        self.side = SideChannel(directory, self.reset_request, self._describe, on_frame)
        self._env = dict(os.environ)
        for name in ("MICROPYPATH", "MICROPYINSPECT"):
            self._env.pop(name, None)
        self._env.update(extra_env)
        self._env[ENV_LINK] = str(self.side.link_path)
        self._env[ENV_BOARD] = str(self.side.board_path)
        self._env[ENV_BLE_ADDR] = self.side.radio.address  # the same across restarts

        # pty A: the interpreter's console. pty B: what hosts open.
        self._board_master, self._board_slave = os.openpty()
        make_raw(self._board_slave, _RUNNING_MARK)
        self._host = HostPort()
        self.port = self._host.path
        os.set_blocking(self._board_master, False)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

        self._to_board = bytearray()
        self._booting = False
        self._boot_deadline = 0.0
        self._held_input = bytearray()  # host input that arrived while the board booted
        self._power_cycling = False  # booting after a hard reset: host input is dropped
        self._proc: subprocess.Popen[bytes] | None = None
        self._pidfd: int | None = None
        self._mode = "friendly"  # which REPL the interpreter is in: friendly | raw
        self._exit_request: str | None = None  # hard | soft | off, when we killed it on purpose
        self.powered = True  # False after power_cut(), until power_on()
        self._raw_filter: bytearray | None = None
        self._raw_filter_deadline = 0.0
        self._scan_tail = b""
        self._last_sigint = 0.0
        self._quick_failures = 0
        self.watchdog_resets = 0
        self._recent = bytearray()
        self._calls: collections.deque[Callable[[], None]] = collections.deque()
        self._stopping = False
        self.failure: str | None = None
        self.ready = threading.Event()

    # -- thread entry and cross-thread calls ---------------------------------------------------

    def run(self) -> None:
        try:
            self._boot("main", "power")
            while not self._stopping:
                self._step()
        except Exception as err:
            _log.exception("virtual board relay failed")
            self.failure = f"virtual board relay failed: {err}"
        finally:
            self.ready.set()
            self._shutdown()

    def call_soon(self, call: Callable[[], None]) -> None:
        self._calls.append(call)
        self._wake()

    def request_stop(self) -> None:
        self._stopping = True
        self._wake()

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def recent_output(self) -> bytes:
        return bytes(self._recent)

    # -- the loop ----------------------------------------------------------------------------

    def _step(self) -> None:
        while self._calls:
            self._calls.popleft()()
        host_connected = self._host.poll_connection()
        alive = self._proc is not None and self._proc.returncode is None
        readers = [self._wake_r, *self.side.read_fds()]
        writers = self.side.write_fds()
        if not self._host.output_full:
            readers.append(self._board_master)
        pending_input = len(self._held_input) + len(self._to_board)
        if host_connected and pending_input < BUFFER_LIMIT:
            readers.append(self._host.fd)
        if self._to_board and alive:
            writers.append(self._board_master)
        if self._host.output_pending:
            writers.append(self._host.fd)
        if self._pidfd is not None:
            readers.append(self._pidfd)
        quiet = (
            host_connected
            and self._pidfd is not None
            and self._raw_filter is None
            and not self._booting
        )
        readable, writable, _ = select.select(readers, writers, [], 1.0 if quiet else _IDLE_TICK)

        for fd in readable:
            if fd == self._wake_r:
                self._drain_wake()
            elif fd == self._board_master:
                self._read_board()
            elif fd == self._host.fd:
                self._read_host()
            elif fd != self._pidfd:
                self.side.handle_readable(fd)
        for fd in writable:
            if fd == self._board_master:
                self._write_board()
            elif fd == self._host.fd:
                self._host.write()
            else:
                self.side.handle_writable(fd)
        if self._proc is not None and self._proc.poll() is not None:
            self._on_exit(self._proc.returncode)
        self._host.drop_if_stalled()
        if self._raw_filter is not None and time.monotonic() > self._raw_filter_deadline:
            self._release_raw_filter(bytes(self._raw_filter))
        self._watch()
        if self._booting and self._boot_over():
            self._booting = False
            held, self._held_input = bytes(self._held_input), bytearray()
            if held:
                self._host_input(held)
        if not self.ready.is_set() and self.side.booted:
            self.ready.set()

    def _watch(self) -> None:
        """The board's watchdog: stands down once Python is at the REPL (the boot script's soft
        timer would run there); bites when armed time runs out while code still runs."""
        side = self.side
        if not side.watchdog_ms or self._proc is None or self._proc.poll() is not None:
            return
        if not termios.tcgetattr(self._board_slave)[3] & _RUNNING_MARK:
            side.watchdog_ms = 0
            side.scratch = 0
        elif time.monotonic() - side.watchdog_armed_at > side.watchdog_ms / 1000:
            _log.warning("the board's watchdog ran out during its boot; resetting it")
            self._exit_request = "watchdog"
            self._kill()

    def _boot_over(self) -> bool:
        if self.side.booted or time.monotonic() > self._boot_deadline:
            return True
        alive = self._proc is not None and self._proc.returncode is None
        # Reading REPL input already: simboot.py failed before it could say so.
        return alive and not termios.tcgetattr(self._board_slave)[3] & _RUNNING_MARK

    def _drain_wake(self) -> None:
        try:
            while os.read(self._wake_r, 512):
                pass
        except BlockingIOError:
            pass

    # -- bytes from the interpreter -----------------------------------------------------------

    def _read_board(self) -> None:
        try:
            data = os.read(self._board_master, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return  # cannot hang up while we hold the slave; nothing to do if it does
        if data:
            self._board_output(data)

    def _board_output(self, data: bytes) -> None:
        self._recent += data
        del self._recent[:-_RECENT_OUTPUT]
        self._track_mode(data)
        if self._raw_filter is not None:
            self._raw_filter += data
            at = self._raw_filter.find(_RAW_BANNER)
            if at < 0:
                return
            # Drop the friendly banner the new interpreter printed before our Ctrl-A took
            # it to the raw REPL; keep anything printed before it (boot.py).
            banner = self._raw_filter.rfind(_BANNER_START, 0, at)
            kept = self._raw_filter[:banner] if banner >= 0 else b""
            self._release_raw_filter(bytes(kept + self._raw_filter[at:]))
            return
        self._send_host(data)

    def _release_raw_filter(self, data: bytes) -> None:
        self._raw_filter = None
        self._send_host(data)

    def _track_mode(self, data: bytes) -> None:
        window = self._scan_tail + data
        raw_at = window.rfind(_RAW_BANNER)
        friendly_at = window.rfind(_FRIENDLY_BANNER)
        if raw_at > friendly_at:
            self._mode = "raw"
        elif friendly_at > raw_at:
            self._mode = "friendly"
        self._scan_tail = window[-64:]

    def _send_host(self, data: bytes) -> None:
        self._host.send(data)

    # -- bytes from the host ------------------------------------------------------------------

    def _read_host(self) -> None:
        data = self._host.read()
        if data is None or not self.powered:
            return  # (a board without power takes nothing in)
        if self._booting:
            if not self._power_cycling:
                self._held_input += data
            # else: a board that power-cycles drops off USB, and what a host sent meanwhile
            # (mpremote's parting Ctrl-B after `reset`, say) never reaches the new firmware.
        else:
            self._host_input(data)

    def _host_input(self, data: bytes) -> None:
        if _CTRL_C in data and self._code_running():
            # A board's USB stack turns Ctrl-C into KeyboardInterrupt while code runs and
            # does not pass the byte on.
            assert self._proc is not None
            os.kill(self._proc.pid, signal.SIGINT)
            self._last_sigint = time.monotonic()
            data = data.replace(b"\x03", b"")
        self._to_board += data

    def _end_app(self) -> None:
        """End the board's app as a Ctrl-C does: it saves what it has not saved yet
        (cribfw/app.py), then MicroPython waits at its prompt; waits for that, within
        _SAVE_TIMEOUT."""
        if not self._code_running():
            return
        assert self._proc is not None
        os.kill(self._proc.pid, signal.SIGINT)
        deadline = time.monotonic() + _SAVE_TIMEOUT
        while self._code_running() and time.monotonic() < deadline:
            select.select([self._board_master], [], [], _IDLE_TICK)
            try:
                os.read(self._board_master, 4096)  # its last words: nobody reads them now
            except OSError:
                pass

    def _code_running(self) -> bool:
        if self._proc is None or self._proc.poll() is not None:
            return False
        if not termios.tcgetattr(self._board_slave)[3] & _RUNNING_MARK:
            return False  # MicroPython is reading REPL input: Ctrl-C must stay a byte
        caught = _sigint_caught(self._proc.pid)
        return True if caught is None else caught

    def _write_board(self) -> None:
        try:
            sent = os.write(self._board_master, self._to_board)
        except (BlockingIOError, InterruptedError):
            return
        del self._to_board[:sent]

    # -- the interpreter's life ---------------------------------------------------------------

    def _boot(self, kind: str, cause: str) -> None:
        """Start an interpreter. kind: main (run main.py), raw (raw REPL), repl (friendly
        REPL, no main.py). cause: power or soft, for machine.reset_cause()."""
        make_raw(self._board_slave, _RUNNING_MARK)  # the last one may have left its REPL mode
        self.side.board_starting()
        if cause == "power":
            self.side.scratch = 0  # a power cycle clears the watchdog's scratch registers
        env = dict(
            self._env,
            CRIBBOARD_SIM_BOOT=kind,
            CRIBBOARD_SIM_RESET=cause,
            CRIBBOARD_SIM_SCRATCH=str(self.side.scratch),
        )
        args = [self._executable]
        if self._heap is not None:
            args += ["-X", f"heapsize={self._heap}"]
        args += ["-i", "simboot.py"]
        self._proc = subprocess.Popen(
            args,
            cwd=self._sim_dir,
            stdin=self._board_slave,
            stdout=self._board_slave,
            stderr=self._board_slave,
            env=env,
            start_new_session=True,
            preexec_fn=_prepare_child,
        )
        self._pidfd = None
        if hasattr(os, "pidfd_open"):
            try:
                self._pidfd = os.pidfd_open(self._proc.pid)
            except OSError:
                pass
        self._mode = "raw" if kind == "raw" else "friendly"
        self._booting = True
        self._power_cycling = cause == "power"
        if self._power_cycling:
            self._held_input.clear()
        self._boot_deadline = time.monotonic() + _BOOT_TIMEOUT
        if kind == "raw":
            # The unix port starts in the friendly REPL; Ctrl-A takes it to the raw REPL and
            # the relay hides the friendly banner, so hosts see what a board prints.
            self._to_board[:0] = _CTRL_A
            self._raw_filter = bytearray()
            self._raw_filter_deadline = time.monotonic() + _RAW_FILTER_TIMEOUT

    def power_cut(self) -> None:
        """Cut the power: the interpreter killed where it is (what it had not written to the
        flash is lost) and no new one started until :meth:`power_on`."""
        if not self.powered:
            return
        self.powered = False
        if self._proc is not None and self._proc.poll() is None:
            self._exit_request = "off"
            self._kill()
            self._on_exit(self._proc.returncode)
        self._proc = None
        self._booting = False  # (a boot cut short: nothing held for it)
        self._held_input.clear()
        self._to_board.clear()
        self.side.board_starting()  # (its socket gone: presses wait for the next boot)

    def power_on(self) -> None:
        """Power the board on after :meth:`power_cut`: a new interpreter boots as from cold."""
        if not self.powered:
            self.powered = True
            self._boot("main", "power")

    def reset_request(self, hard: bool) -> None:
        """Restart the interpreter as after a hard (True) or soft (False) reset."""
        if self._proc is None or self._proc.poll() is not None:
            return
        self._exit_request = "hard" if hard else "soft"
        self._kill()

    def _kill(self) -> None:
        assert self._proc is not None
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self._proc.wait()

    def _on_exit(self, status: int) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        # Pass on the interpreter's last output before announcing the reboot.
        while True:
            try:
                data = os.read(self._board_master, 4096)
            except OSError:
                break
            if not data:
                break
            self._board_output(data)
        if self._raw_filter is not None:
            self._release_raw_filter(bytes(self._raw_filter))
        # Input the old interpreter did not read goes with it: on its console, and on the HCI
        # UART of a board with a real Bluetooth stack (MicroPython's unix port reads the one
        # MICROPYBTUART names), where the next stack must start at a packet's first byte, not
        # in the middle of one the old interpreter had begun to read.
        termios.tcflush(self._board_slave, termios.TCIFLUSH)
        hci_uart = self._env.get("MICROPYBTUART")
        if hci_uart:
            flush_tty(hci_uart)
        self._to_board.clear()
        self.side.drain()  # the board's last words on the side channel (its scratch register)
        request, self._exit_request = self._exit_request, None
        if request == "off":
            return  # the power is off: power_on() boots the next one
        if request is None and status < 0 and status != -signal.SIGINT and self.side.watchdog_ms:
            request = "watchdog"  # a crash while the watchdog runs: it resets the board
        if request == "watchdog":
            self.watchdog_resets += 1
            self._boot("main", "wdt")
            return

        if not self.side.booted:
            self._quick_failures += 1
            if not self.ready.is_set() or self._quick_failures >= _QUICK_FAILURES:
                self.failure = (
                    f"MicroPython ({self._executable}) exited with status {status} before "
                    f"the board came up; its output: {self.recent_output()!r}"
                )
                _log.error("%s", self.failure)
                self._proc = None
                self.ready.set()
                return
        else:
            self._quick_failures = 0

        again = "raw" if self._mode == "raw" else "main"
        if request == "hard":
            self._boot("main", "power")
        elif request == "soft" or status >= 0:
            self._send_host(_SOFT_REBOOT)
            self._boot(again, "soft")
        elif status == -signal.SIGINT and time.monotonic() - self._last_sigint < 1.0:
            # Our Ctrl-C landed just as code finished, when SIGINT is fatal to the unix
            # port: come back quietly at the same REPL.
            self._boot("raw" if self._mode == "raw" else "repl", "soft")
        else:
            _log.warning("MicroPython died (signal %d); restarting it", -status)
            self._boot("main", "power")

    def _describe(self) -> dict[str, str]:
        alive = self._proc is not None and self._proc.returncode is None
        return {
            "mode": self._mode,
            "pid": str(self._proc.pid) if alive and self._proc is not None else "-",
            "port": self.port,
        }

    def _shutdown(self) -> None:
        if self._save_on_stop:
            self._end_app()
        if self._proc is not None and self._proc.poll() is None:
            self._kill()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        self.side.close()
        self._host.close()
        for fd in (self._board_master, self._board_slave):
            try:
                os.close(fd)
            except OSError:
                pass
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
