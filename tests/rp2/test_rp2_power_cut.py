"""Power cuts on the emulated RP2040 running the cribboard image: the chip is stopped at the
first flash operation of a save (the store's debounced write of the game to its ring of records
in the raw flash region, cribfw/ring.py), the power is cut at a random cycle of that erase or
program or of the save's next one (or just after the save), and a new chip boots from the same
flash file. The store must bring back a state the host saw acknowledged, the move's or the one
before it, and say where it came from; never a corrupt or a fresh one. The host then sends the
move again (the same line, the same id: a reply it never saw) and the board applies it once in
all: its id came back with its change in the same record, or the cut took both.

CRIBBOARD_RP2_POWER_CUTS sets how many cuts (`make soak` runs more).
"""

from __future__ import annotations

import os
import random

import pytest

from cribboard.virtual.rp2board import FIRMWARE_IMAGE
from rp2support import (
    BoardFactory,
    CutTally,
    ProtocolLink,
    cut_during_a_save,
    fields,
    needs_emulator,
    rp2_boards,
)

__all__ = ["rp2_boards"]  # fixtures from rp2support

pytestmark = needs_emulator

CUTS = int(os.environ.get("CRIBBOARD_RP2_POWER_CUTS", "20"))
SEED = int(os.environ.get("CRIBBOARD_POWER_CUT_SEED", "20240521"))


# 20 cuts (every kind of cut and both outcomes, at this seed) take about 70 s on the emulated
# RP2040, more beside the other tests: past pytest's 120 s hang guard, so this test has its own.
# `make soak` runs 1,000.
@pytest.mark.timeout(400)
def test_power_cuts_during_saves_restore_an_acknowledged_state(rp2_boards: BoardFactory) -> None:
    rng = random.Random(SEED)
    pico = rp2_boards(FIRMWARE_IMAGE, pace=0)  # idle time runs at full speed
    link = ProtocolLink(pico.port)
    try:
        assert fields(link.wait_up())["store"] == "fresh"
        tally = CutTally()
        for _ in range(CUTS):
            cut_during_a_save(pico, link, rng, tally, go_on=0.5)
    finally:
        link.close()
    print(f"\nrp2 power cuts (ring store, seed {SEED}): {tally.text()}")
    assert tally.cuts == CUTS >= 20 or "CRIBBOARD_RP2_POWER_CUTS" in os.environ
    # The cuts hit the save's erase, its program and the time after it, and both outcomes came.
    assert {"erase", "program", "after"} <= set(tally.where)
    assert {"the move", "before it"} <= set(tally.restored)
    # ...and the move resent after each cut was applied once: answered or applied anew.
    assert set(tally.resent) == {"answered", "applied"}
