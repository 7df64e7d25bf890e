"""When the store on the emulated RP2040 (the cribboard image) erases flash: a 4 KB block's erase
holds the whole chip for 45 ms, so the blocks a save will need are erased ahead a second after
the last change, and never while requests come one after another, reads included: only once a
whole poll of the store's (50 ms) has passed without one (cribfw/store.py). The flash's erases
and programs are seen in the harness's trace, on the emulated clock; requests come at chosen
emulated moments (the chip halted, the line written).
"""

from __future__ import annotations

from cribboard.virtual.rp2board import FIRMWARE_IMAGE, FlashSymbols
from rp2support import BoardFactory, ProtocolLink, deliver, needs_emulator, rp2_boards, rp2_image

__all__ = ["rp2_boards"]  # fixtures from rp2support

pytestmark = needs_emulator

MS = 125_000  # cycles
NS = 8  # a cycle
ERASE_MS = 45  # a block's erase, as the harness times it
PINGS = 64


def test_no_block_is_erased_ahead_while_requests_come(rp2_boards: BoardFactory) -> None:
    # A fresh board: the first save after a boot takes a fresh block, erased inline (before its
    # pages, a second after the change); the ring then has AHEAD blocks to erase ahead. A host
    # pings every 25 ms for 1.6 s after the change: the save is made while the pings come, and
    # nothing more is erased until they stop; then the blocks ahead are.
    symbols = FlashSymbols.for_image(rp2_image(FIRMWARE_IMAGE))
    pico = rp2_boards(FIRMWARE_IMAGE, pace=0)
    link = ProtocolLink(pico.port)
    try:
        link.wait_up()
        pico.trace(True, {"erase": symbols.erase, "program": symbols.program})
        clock = pico.halt()
        deliver(pico, link.link, b"#m peg 0 3\n")
        for n in range(PINGS):
            clock = pico.run_until(clock.cycles + 25 * MS)
            deliver(pico, link.link, b"#p%d ping\n" % n)
        last_ping = clock.nanos
        pico.run_until(clock.cycles + 500 * MS)
        entries, _ = pico.trace_log()
        pico.resume()
        assert link.reply().startswith(b"#m ok")
        for n in range(PINGS):
            assert link.reply() == b"#p%d ok\n" % n
    finally:
        link.close()
    erases = [nanos for nanos, what, _ in entries if what == "erase"]
    programs = [nanos for nanos, what, _ in entries if what == "program"]
    assert programs and programs[0] < last_ping  # the save, while the pings came
    # While they came: only the save's own erase, its pages right after it.
    while_pinged = [nanos for nanos in erases if nanos <= last_ping]
    assert len(while_pinged) == 1, while_pinged
    assert 0 < programs[0] - while_pinged[0] < (ERASE_MS + 5) * 1_000_000
    # Then, left alone: the blocks ahead, after a poll without a request (50-100 ms).
    ahead = [nanos for nanos in erases if nanos > last_ping]
    assert ahead and min(ahead) >= last_ping + 50 * MS * NS, (ahead, last_ping)
