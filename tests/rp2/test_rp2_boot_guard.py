"""The boot guard (firmware/cribboot.py, started by the rp2 image's _boot.py) on real MicroPython,
on the emulated RP2040: a boot.py on the file system that crashes the chip (a BKPT from inline
assembler: with no debugger that is a HardFault, whose SDK handler locks the core up) or hangs
in machine code is ended by the watchdog; after two failed boots the file system is formatted,
the hello says fs=formatted boots=2 and the game, in its ring outside the file system, is intact.
The REPL, Ctrl-C and mpremote never get the board reset by the watchdog.

The emulator keeps its own clock: at pace 0 the watchdog's seconds pass as fast as the chip
idles (a locked-up core idles). The hang runs 5 s of busy machine code per boot, so it runs in
the soak only (CRIBBOARD_RP2_SOAK=1).
"""

from __future__ import annotations

import os

import pytest

from cribboard.virtual.rp2board import FIRMWARE_IMAGE, RP2Board
from cribboot import WATCH_MS
from rp2support import (
    BoardFactory,
    ProtocolLink,
    RawRepl,
    fields,
    mpremote,
    needs_emulator,
    read_until,
    rp2_boards,
)
from support import wait_saved_sync

__all__ = ["rp2_boards"]  # fixtures from rp2support

pytestmark = needs_emulator

CRASH = "import micropython\n@micropython.asm_thumb\ndef crash():\n    data(2, 0xBE00)\ncrash()\n"
HANG = "import micropython\n@micropython.asm_thumb\ndef hang():\n    label(x)\n    b(x)\nhang()\n"
WATCH_CYCLES = WATCH_MS * 125_000
SOAK = bool(os.environ.get("CRIBBOARD_RP2_SOAK"))


def quiet_for(pico: RP2Board, cycles: int) -> None:
    """Run the chip on for `cycles` of emulated time."""
    pico.run_until(pico.halt().cycles + cycles)
    pico.resume()


@pytest.mark.parametrize(
    "boot_py",
    [CRASH, pytest.param(HANG, marks=pytest.mark.skipif(not SOAK, reason="soak only"))],
    ids=["crash", "hang"],
)
def test_a_boot_py_that_kills_the_board_twice_gets_the_file_system_formatted(
    rp2_boards: BoardFactory, boot_py: str
) -> None:
    pico = rp2_boards(FIRMWARE_IMAGE, pace=0)
    link = ProtocolLink(pico.port)
    try:
        assert fields(link.wait_up())["fs"] == "formatted"  # a fresh flash
        assert link.request(b"peg 0 20\n").startswith(b"ok")
        assert link.request(b"peg 1 15\n").startswith(b"ok")
        wait_saved_sync(pico.flash_path, lambda game: game.front[:2] == [20, 15], timeout=30)
    finally:
        link.close()

    repl = RawRepl(pico.port)
    try:
        repl.enter()
        repl.exec(f"with open('boot.py', 'w') as f: f.write({boot_py!r})")
        boots = pico.boots
        repl.start("import machine\nmachine.reset()\n")
        event = pico.wait_boot(after=boots, timeout=30)  # reset() forces the watchdog
        assert (event["cause"], event["reason"]) == ("watchdog", 2)
        for failed in (1, 2):  # boot.py kills the board; the watchdog's timer resets it
            event = pico.wait_boot(after=boots + failed, timeout=120)
            assert (event["cause"], event["reason"]) == ("watchdog", 1)
    finally:
        repl.close()

    link = ProtocolLink(pico.port)
    try:
        hello = fields(link.wait_up())
        assert (hello["fs"], hello["boots"], hello["store"]) == ("formatted", "2", "saved")
        assert b" f=20,15 " in link.request(b"st\n")  # the game was not in the file system
        assert pico.boots == boots + 3  # the reset asked for, then the watchdog's two
    finally:
        link.close()
    assert mpremote(pico.port, "fs", "ls", ":").split() == ["ls", ":"]  # boot.py is gone


def test_the_repl_ctrl_c_and_mpremote_are_never_reset_by_the_watchdog(
    rp2_boards: BoardFactory,
) -> None:
    pico = rp2_boards(FIRMWARE_IMAGE, pace=0)
    link = ProtocolLink(pico.port)
    link.wait_up()
    link.close()
    boots = pico.boots
    repl = RawRepl(pico.port)
    try:
        repl.enter()  # Ctrl-C: the app stops
        quiet_for(pico, 2 * WATCH_CYCLES)  # at the raw REPL for twice the watchdog's time
        assert repl.exec("print(6 * 7)").strip() == "42"
        # A soft reset in the raw REPL (mpremote's) runs _boot.py again: the guard arms the
        # watchdog for the boot and stands down at the REPL.
        repl.link.write(b"\x04")
        read_until(repl.link, b"soft reboot\r\n")
        read_until(repl.link, b"raw REPL; CTRL-B to exit\r\n>")
        quiet_for(pico, 2 * WATCH_CYCLES)
        assert repl.exec("import cribboot\nprint(cribboot.current.is_up)").strip() == "True"
        repl.link.write(b"\x02")  # the friendly REPL
        read_until(repl.link, b">>> ")
        quiet_for(pico, 2 * WATCH_CYCLES)
    finally:
        repl.close()
    assert mpremote(pico.port, "exec", "print(1 + 1)").strip() == "2"
    quiet_for(pico, 2 * WATCH_CYCLES)
    assert mpremote(pico.port, "exec", "import machine; print(machine.reset_cause())").strip()
    assert pico.boots == boots  # no reset at all
