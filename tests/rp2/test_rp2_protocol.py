"""The protocol over the wire, one test body for two boards: the unix-port virtual board and the
emulated RP2040 running the cribboard image (the firmware frozen into MicroPython's rp2 port).

What runs here is what a host sees on a USB serial port: the literal vectors of
tests/core/vectors.py replayed from a fresh board, requests pipelined in one write, an
over-long line, a Ctrl-C and an mpremote session in the middle of a game.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from vectors import VECTORS

from cribboard.virtual import VirtualBoard
from cribboard.virtual.rp2board import FIRMWARE_IMAGE
from cribcore.protocol import MAX_LINE
from rp2support import (
    BoardFactory,
    ProtocolLink,
    mpremote,
    needs_emulator,
    rp2_boards,
)
from support import wait_saved_sync

__all__ = ["rp2_boards"]  # fixtures from rp2support


@dataclass
class WireBoard:
    """A board on a serial port, whichever kind: its port, the profile name its hello gives
    and its flash file."""

    kind: str
    port: str
    name: str
    flash: Path


@pytest.fixture(params=["virtual", pytest.param("rp2", marks=needs_emulator)])
def wire_board(
    request: pytest.FixtureRequest, rp2_boards: BoardFactory, tmp_path: Path
) -> Iterator[WireBoard]:
    """A fresh board with the app running: the unix-port virtual board, or the emulated
    RP2040 on the cribboard image."""
    if request.param == "virtual":
        with VirtualBoard(flash=tmp_path / "virtual.flash") as board:
            yield WireBoard("virtual", board.port, "sim", board.flash_path)
    else:
        pico = rp2_boards(FIRMWARE_IMAGE)
        yield WireBoard("rp2", pico.port, "pico", pico.flash_path)


@pytest.fixture
def link(wire_board: WireBoard) -> Iterator[ProtocolLink]:
    opened = ProtocolLink(wire_board.port)
    opened.wait_up()
    opened.events.clear()
    yield opened
    opened.close()


_EXTRA_HELLO_FIELDS = re.compile(rb" (store|fs|boots|ble|bmax|uid)=\S*")


def as_vector(line: bytes, board: str) -> bytes:
    """A line off the wire as the vectors write it: the vectors' dispatcher ran with the "sim"
    profile and no store, boot guard or radio and no chip id, so their hello lacks those fields (hosts ignore
    fields they do not know)."""
    line = _EXTRA_HELLO_FIELDS.sub(b"", line)
    return line.replace(b" board=" + board.encode() + b" ", b" board=sim ")


def test_the_vectors_replayed_over_the_wire_from_a_fresh_board(
    wire_board: WireBoard, link: ProtocolLink
) -> None:
    replayed = 0
    for send, want in VECTORS:
        if b"\x03" in send:
            continue  # a Ctrl-C on the wire interrupts MicroPython: see the Ctrl-C test
        link.link.write(send)
        got = [as_vector(link.readline(), wire_board.name) for _ in want]
        assert got == want, f"after {send!r}"
        replayed += 1
    assert replayed >= len(VECTORS) - 2
    assert link.request(b"#last ping\n") == b"#last ok\n"  # nothing left unread


def test_requests_pipelined_in_one_write_get_their_replies_in_order(
    link: ProtocolLink,
) -> None:
    requests = [b"#p%d peg %d %d\n" % (i, i % 2, 1 + i % 6) for i in range(24)]
    requests += [b"#pu undo\n", b"#ps st\n"]
    link.link.write(b"".join(requests))
    replies = [link.reply() for _ in requests]
    assert [r.split()[0] for r in replies] == [r.split()[0] for r in requests]
    assert all(r.split()[1] == b"ok" for r in replies)
    fronts = [sum(1 + i % 6 for i in range(24) if i % 2 == p) for p in (0, 1)]
    fronts[1] -= 1 + 23 % 6  # the undo took back the last peg (player 1's)
    assert b" f=%d,%d " % tuple(fronts) in replies[-1]


def test_more_requests_at_once_than_stdin_holds_are_all_served_in_order(
    link: ProtocolLink,
) -> None:
    # About 1,450 bytes in one write: more than stdin's ring (512 bytes on the rp2 port) and the
    # USB driver's buffer (256) together. A cribboard image's USB callback fills the ring and
    # leaves the rest to MicroPython's, which marks the interface for its poll (cribio.c).
    requests = [b"#m%d pend %d %d\n" % (i, i % 2, i % 30) for i in range(100)]
    requests.append(b"#mq st\n")
    link.link.write(b"".join(requests))
    replies = [link.reply() for _ in requests]
    assert [r.split()[0] for r in replies] == [r.split()[0] for r in requests]
    assert all(r.split()[1] == b"ok" for r in replies)
    assert b" q=%d,%d " % (98 % 30, 99 % 30) in replies[-1]


def test_an_over_long_line_is_refused_and_the_next_one_served(link: ProtocolLink) -> None:
    long_line = b"#big peg 0 1" + b" " * (4 * MAX_LINE) + b"\n"
    assert link.request(long_line).startswith(b"#big err too_long ")
    assert link.request(b"#after peg 0 2\n") == b"#after ok r=1\n"


def test_ctrl_c_stops_the_app_and_a_soft_reset_brings_the_game_back(
    wire_board: WireBoard, link: ProtocolLink
) -> None:
    assert link.request(b"peg 0 7\n").startswith(b"ok ")
    assert link.request(b"peg 1 9\n").startswith(b"ok ")
    wait_saved_sync(wire_board.flash, lambda game: game.front[:2] == [7, 9], timeout=20)
    link.link.write(b"\x03")
    shown = link.link.read_until(b">>> ")
    assert b"KeyboardInterrupt" in shown and shown.endswith(b">>> ")
    link.link.write(b"\x04")  # soft reset: the app again, the game restored
    hello = link.wait_event(lambda event: event.startswith(b"! hello "))
    assert b" store=saved" in hello
    assert b" f=7,9 " in link.request(b"st\n")


def test_a_ctrl_a_right_behind_the_ctrl_c_reaches_the_repl(link: ProtocolLink) -> None:
    # mpremote's way in: Ctrl-C, then at once Ctrl-A for the raw REPL. The USB driver may hand
    # over both at once; the app stops before it reads what came after the Ctrl-C (with
    # nothing but native code and C between the USB and the app's read, it read the Ctrl-A
    # half the time, and mpremote waited for the raw REPL for ever).
    assert link.request(b"peg 0 3\n").startswith(b"ok ")
    link.link.write(b"\r\x03")
    link.link.write(b"\r\x01")
    assert link.link.read_until(b"raw REPL; CTRL-B to exit\r\n>").endswith(b"exit\r\n>")
    link.link.write(b"\x02\x04")  # the friendly REPL, then a soft reset: the app again
    hello = link.wait_event(lambda event: event.startswith(b"! hello "))
    assert b" f=3,0 " in link.request(b"st\n") and b" store=" in hello


def test_an_mpremote_session_in_the_middle_of_a_game_leaves_it_answering(
    wire_board: WireBoard, link: ProtocolLink
) -> None:
    assert link.request(b"peg 1 12\n").startswith(b"ok ")
    wait_saved_sync(wire_board.flash, lambda game: game.front[:2] == [0, 12], timeout=20)
    link.close()
    code = "import sys; print(sys.platform)"
    assert mpremote(wire_board.port, "exec", code).strip() in ("rp2", "linux")
    if wire_board.kind == "rp2":
        # The image's own reader and writer of lines (its C module) are the ones the app takes.
        code = (
            "import cribio, cribfw.app\n"
            "print(cribfw.app._cribio() is cribio)\n"
            "print(cribio.write(b'ab!', 2))\n"  # writes b'ab', returns 2
            "try:\n"
            "    cribio.write(b'ab', 3)\n"
            "except ValueError:\n"
            "    print('refused')\n"
        )
        assert mpremote(wire_board.port, "exec", code).split() == ["True", "ab2", "refused"]
        # Its flag for tasks woken by an interrupt (cribfw/irqflag.py): polled in C, readable
        # while set; a task waiting on it wakes when a timer's interrupt sets it.
        code = (
            "import asyncio, cribio, machine, select\n"
            "from cribfw.irqflag import irq_flag\n"
            "f = cribio.Flag(); p = select.poll(); p.register(f, select.POLLIN)\n"
            "print(len(p.poll(0)), f.is_set())\n"
            "f.set(); print(len(p.poll(0)), f.is_set())\n"
            "f.clear(); print(len(p.poll(0)))\n"
            "flag = irq_flag(asyncio, cribio, False)\n"
            "print(type(flag).__name__)\n"
            "async def woken():\n"
            "    machine.Timer(period=5, mode=machine.Timer.ONE_SHOT, callback=lambda t: flag.set())\n"
            "    await asyncio.wait_for_ms(flag.wait(), 5000)\n"
            "    print('woken')\n"
            "asyncio.run(woken())\n"
        )
        assert mpremote(wire_board.port, "exec", code).split() == [
            "0", "False", "1", "True", "0", "IrqFlag", "woken"
        ]  # fmt: skip
    again = ProtocolLink(wire_board.port)
    try:
        # mpremote leaves the board at the REPL; a soft reset there runs the app again.
        again.link.write(b"\r\x03\x04")
        hello = again.wait_event(lambda event: event.startswith(b"! hello "))
        assert b" board=%s " % wire_board.name.encode() in hello
        assert b" f=0,12 " in again.request(b"st\n")
        assert again.request(b"peg 0 3\n").startswith(b"ok ")
    finally:
        again.close()
