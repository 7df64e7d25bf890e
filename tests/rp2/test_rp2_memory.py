"""Free heap on the emulated RP2040 running the cribboard image (the firmware frozen in): with
the app running, once it is up and after a whole game. The deployed firmware on stock
MicroPython: tests/rp2/test_rp2_stock.py."""

from __future__ import annotations

from cribboard.virtual.rp2board import FIRMWARE_IMAGE
from rp2support import (
    HEAP_FLOOR,
    BoardFactory,
    heap_after_boot_and_game,
    needs_emulator,
    rp2_boards,
)

__all__ = ["rp2_boards"]  # fixtures from rp2support

pytestmark = needs_emulator


def test_free_heap_with_the_frozen_firmware(rp2_boards: BoardFactory) -> None:
    pico = rp2_boards(FIRMWARE_IMAGE, pace=0)
    after_boot, after_game = heap_after_boot_and_game(pico)
    print(f"\nfree heap, frozen RPI_PICO image: {after_boot} after boot, {after_game} after a game")
    assert after_boot >= HEAP_FLOOR and after_game >= HEAP_FLOOR
