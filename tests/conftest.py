from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from cribboard.api import Board
from cribboard.bridge.server import Bridge
from cribboard.virtual import VirtualBoard

# The helper modules' asserts say what they got, as the tests' own do.
pytest.register_assert_rewrite(
    "blereal",
    "blesupport",
    "browsersupport",
    "fuzzlines",
    "hallsupport",
    "modelcheck",
    "powercut",
    "protocol_model",
    "rp2support",
    "support",
)
from support import Spawn, running_bridge  # noqa: E402  (after the line above)

ROOT = Path(__file__).resolve().parents[1]
# The core tests import cribcore straight from firmware/ (the one source) and their helpers.
for extra in (ROOT / "firmware", ROOT / "tests" / "core"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))
# The tests compare the English text: a developer's locale (LANG=sv_SE...) must not change the
# language of the command line they run, in this process or in a subprocess; cribboard reads
# LANGUAGE first, and tests/docs/test_l10n.py chooses other languages itself (--lang, or its own
# environment).
os.environ["LANGUAGE"] = "en"
# Ports shared between processes and running `cribboard virtual`s are told in the per-user runtime
# directory (cribboard.rundir): the tests, and the programs they start, get one of their own,
# so a developer's running sim or watch is not in them (a short path: a Unix socket's is short).
os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="crt")
atexit.register(shutil.rmtree, os.environ["XDG_RUNTIME_DIR"], ignore_errors=True)
# The same for the state directory (cribboard.paths.state_dir): the virtual board `keep` and
# `play` start keeps its game there; a test of that gives each program a directory of its own.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="cst")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], ignore_errors=True)
# And for the data directory (cribboard.paths.data_dir): the record of the games `keep`, `play`,
# the bridge and a remote game write (cribboard.record) is the tests' own, never the developer's.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="cdt")
atexit.register(shutil.rmtree, os.environ["XDG_DATA_HOME"], ignore_errors=True)


# The files that take longest, started first: `make test` runs two workers, a file each at a
# time (pytest-xdist --dist loadfile), and a long file started last keeps one worker busy while
# the other has nothing left to do.
LONG_FILES = (
    "test_rp2_power_cut.py",
    "test_rp2_stock.py",
    "test_hall_firmware.py",
    "test_rp2_leds.py",
    "test_power_cut.py",
    "test_rp2_buttons.py",
    "test_wheel.py",
    "test_rp2_protocol.py",
)


# The fixtures that start a virtual board: a test using one (itself or through another fixture)
# is marked virtual_board, which `make check`, the fast tier, leaves out.
BOARD_FIXTURES = frozenset({"vboard", "module_vboard"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if BOARD_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.virtual_board)
    rank = {name: place for place, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FILES)))  # stable: files whole


def pytest_addoption(parser: pytest.Parser) -> None:
    # Here, not in tests/hil/: pytest reads options only from the conftests it loads at start.
    parser.getgroup("cribboard").addoption(
        "--hil-port",
        default=None,
        metavar="PORT",
        help="serial port of a real board for the hardware-in-the-loop tests "
        "(or CRIBBOARD_HIL_PORT)",
    )


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """Start a process as subprocess.Popen does; one still running after the test is killed.
    A test that failed before stopping its `cribboard watch` must not leave it behind: the
    client reconnects, and the next board given the same pty path would have two readers."""
    started: list[subprocess.Popen[Any]] = []

    def start(*args: Any, **options: Any) -> subprocess.Popen[Any]:
        # Each starts with SIGINT as a shell would give it: a process inherits an ignored
        # SIGINT, and Python then keeps ignoring it (no KeyboardInterrupt), so a test's Ctrl-C
        # would not reach it if anything in this worker had left SIGINT ignored.
        options.setdefault("preexec_fn", _default_sigint)
        process = subprocess.Popen(*args, **options)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def vboard() -> Iterator[VirtualBoard]:
    """A fresh virtual board (the firmware on MicroPython behind a pty), stopped after the test.
    A test module whose tests each start their own game may share one instead:

        @pytest.fixture
        def vboard(module_vboard: VirtualBoard) -> VirtualBoard:
            return module_vboard
    """
    with VirtualBoard() as board:
        yield board


@pytest.fixture(scope="module")
def module_vboard() -> Iterator[VirtualBoard]:
    """One virtual board for a whole test module (started once: the slow part of a test)."""
    with VirtualBoard() as board:
        yield board


@pytest.fixture
async def board(vboard: VirtualBoard) -> AsyncIterator[Board]:
    """The library's Board, open on `vboard` over its pty as on a USB board."""
    async with await Board.open(vboard.port, timeout=3.0) as opened:
        yield opened


@pytest.fixture
async def bridge(vboard: VirtualBoard) -> AsyncIterator[Bridge]:
    """The bridge on a free port of 127.0.0.1, serving `vboard` (connected)."""
    async with running_bridge(vboard.port) as running:
        yield running
