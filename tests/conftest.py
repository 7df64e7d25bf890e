import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cribboard.virtual import VirtualBoard

ROOT = Path(__file__).resolve().parents[1]
# The core tests import cribcore straight from firmware/ (the one source) and their helpers.
for extra in (ROOT / "firmware", ROOT / "tests" / "core"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))


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
def vboard() -> Iterator[VirtualBoard]:
    """A fresh virtual board (the firmware on MicroPython behind a pty), stopped after the test."""
    with VirtualBoard() as board:
        yield board
