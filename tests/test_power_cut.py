"""Power cuts on the virtual board: a game is played over the protocol while the interpreter is
killed at random moments and at chosen steps of the store's saves (the board stopped at a flash
point through the side channel); after each restart the board must show the last save that
completed on its flash, never a corrupted state, never one older than a save the host saw
completed, and never a fresh game it does not admit to. The machinery and the exact rule are in
tests/powercut.py (shared with `make soak`, which runs more cuts).
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from cribboard.virtual import SimControl, VirtualBoard
from powercut import SEED, SHORT, Link, Tally, run_cuts

CUTS = 210


@pytest.fixture
def slow_store(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SHORT.env().items():
        monkeypatch.setenv(name, value)


def test_power_cuts_never_lose_a_committed_state(
    tmp_path: Path,
    slow_store: None,
    capsys: pytest.CaptureFixture[str],
    record_property: pytest.RecordProperty,
) -> None:
    rng = random.Random(SEED)
    image = tmp_path / "flash.img"
    tally = Tally()
    started = time.monotonic()
    with VirtualBoard(flash=image) as vboard, SimControl(vboard.control) as sim:
        link = Link(vboard.port)
        try:
            run_cuts(rng, vboard, sim, link, image, tally, CUTS, SHORT)
        finally:
            link.close()
    tally.seconds = time.monotonic() - started
    report = tally.text()
    record_property("power_cut_tally", report)
    with capsys.disabled():
        print("\n" + report)
    assert tally.cuts >= 200, report
    # Aimed, not timed: how many cuts tear a save depends on the seed, not the machine's speed.
    assert tally.torn_aimed >= 20, "too few cuts tore a save: " + report
