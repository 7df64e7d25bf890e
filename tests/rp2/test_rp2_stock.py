"""Stock MicroPython on the emulated RP2040 with the firmware deployed the way a user does it:
`cribboard deploy` over the emulated USB (mpremote's raw REPL copies the compiled firmware onto
the board's littlefs), the board restarting into the app; then its free heap, and power cuts
during its saves (the game kept in files on littlefs, cribfw/storefiles.py).

The deploy runs once for the module (about 20 s); each test starts a board from a copy of the
flash it left.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cribboard.virtual.rp2board import STOCK_IMAGE, RP2Board
from rp2support import (
    HEAP_FLOOR,
    BoardFactory,
    CutTally,
    ProtocolLink,
    cut_during_a_save,
    fields,
    heap_after_boot_and_game,
    needs_emulator,
    rp2_boards,
    rp2_image,
)

__all__ = ["rp2_boards"]  # fixtures from rp2support

# The module's deploy (about 50 s, longer on a busy machine) runs in its first test's set-up:
# past pytest's 120 s hang guard there, so the module has its own.
pytestmark = [needs_emulator, pytest.mark.timeout(400)]

CUTS = int(os.environ.get("CRIBBOARD_RP2_STOCK_POWER_CUTS", "8"))


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """The flash of a stock Pico that `cribboard deploy` put the firmware on, and what the
    deploy said."""
    flash = tmp_path_factory.mktemp("stock") / "deployed.flash"
    with RP2Board(rp2_image(STOCK_IMAGE), flash=flash, pace=0) as pico:
        result = subprocess.run(
            # --timeout: the emulated Pico on a busy machine may take long to answer after
            # its reset; deploy waits for its answer (a bound, not a pause).
            [sys.executable, "-m", "cribboard.cli", "--port", pico.port, "--timeout", "120"]
            + ["deploy"],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert result.returncode == 0, result.stderr
    yield flash, result.stdout.splitlines()


def start_deployed(rp2_boards: BoardFactory, deployed: Path, tmp_path: Path) -> RP2Board:
    flash = tmp_path / "pico.flash"
    shutil.copy(deployed, flash)
    return rp2_boards(STOCK_IMAGE, flash=flash, pace=0)


def test_deploy_over_usb_puts_the_firmware_on_stock_micropython(
    rp2_boards: BoardFactory, deployed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    flash, said = deployed
    assert said[0].startswith("[1/") and said[-2].startswith("copied ")
    assert said[-1] == "board reset: firmware 0.1.0 is running" or said[-1].startswith(
        "board reset: firmware "
    )
    pico = start_deployed(rp2_boards, flash, tmp_path)
    link = ProtocolLink(pico.port)
    try:
        hello = fields(link.wait_up())
        assert hello["board"] == "pico"  # from the board's own name: Raspberry Pi Pico
        assert "fs" not in hello and hello["store"] == "fresh"  # no boot guard, files
        assert link.request(b"peg 1 4\n") == b"ok r=1\n"
    finally:
        link.close()


def test_free_heap_with_the_deployed_firmware(
    rp2_boards: BoardFactory, deployed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    pico = start_deployed(rp2_boards, deployed[0], tmp_path)
    after_boot, after_game = heap_after_boot_and_game(pico)
    print(
        f"\nfree heap, deployed .mpy on stock RPI_PICO: {after_boot} after boot, "
        f"{after_game} after a game"
    )
    assert after_boot >= HEAP_FLOOR and after_game >= HEAP_FLOOR


def test_power_cuts_during_saves_to_littlefs_restore_an_acknowledged_state(
    rp2_boards: BoardFactory, deployed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    pico = start_deployed(rp2_boards, deployed[0], tmp_path)
    rng = random.Random(61)
    link = ProtocolLink(pico.port)
    try:
        link.wait_up()
        tally = CutTally()
        for _ in range(CUTS):
            cut_during_a_save(pico, link, rng, tally, go_on=0.7)  # a file save: many ops
    finally:
        link.close()
    print(f"\nrp2 power cuts (littlefs files): {tally.text()}")
    assert tally.cuts == CUTS
