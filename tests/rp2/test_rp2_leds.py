"""The LED wire of the emulated RP2040 running the cribboard image: the GPIO 16 waveform decoded
bit by bit into the 121 LEDs' GRB values, every pulse within the WS2812B data sheet's timing, and
the colours equal to what the unix-port virtual board shows for the same game state, over a
played game with brightness and current budget changes (a differential test of the firmware on
the two interpreters: the same renderer, the real neopixel driver on one side).

WS2812B data sheet (Worldsemi), "Data transfer time": T0H 0.4 us, T1H 0.8 us, T0L 0.85 us,
T1L 0.45 us, each +-150 ns; reset (latch) low for more than 50 us.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from cribboard.virtual import VirtualBoard
from cribboard.virtual.rp2board import FIRMWARE_IMAGE, Clock, RP2Board
from cribboard.virtual.ws2812 import RESET_NS, decode_ws2812, grb_to_rgb
from cribcore.layout import HOLES
from rp2support import (
    BoardFactory,
    ProtocolLink,
    deliver,
    first_bit,
    frame_reply_on_the_wire,
    game_key,
    needs_emulator,
    random_move,
    rp2_boards,
)

__all__ = ["rp2_boards"]  # fixtures from rp2support

pytestmark = needs_emulator

TOLERANCE_NS = 150
T0H, T1H, T0L, T1L = 400, 800, 850, 450  # ns
BITS = HOLES * 24
FRAME_SETTLED_CYCLES = 40 * 125_000  # 40 ms: the render task draws a change within 20 ms
MOVES = 30


def wire_frames(pico: RP2Board, since: int) -> list[bytes]:
    """The frames sent on GPIO 16 from edge `since` on, each checked pulse by pulse against
    the data sheet's timing."""
    edges = pico.edges(16, since=since).edges
    frames = decode_ws2812(edges)
    rises = [i for i, (_, level) in enumerate(edges) if level == 1]
    in_frame = 0
    for n, i in enumerate(rises):
        if i + 1 >= len(edges):
            break
        high = edges[i + 1][0] - edges[i][0]
        nominal = T1H if high > (T0H + T1H) // 2 else T0H
        assert abs(high - nominal) <= TOLERANCE_NS, f"high pulse {high} ns"
        in_frame += 1
        if n + 1 < len(rises):
            low = edges[rises[n + 1]][0] - edges[i + 1][0]
            if low >= RESET_NS:  # the latch between frames
                assert in_frame == BITS, f"a frame of {in_frame} bits"
                in_frame = 0
                continue
            low_nominal = T1L if nominal == T1H else T0L
            assert abs(low - low_nominal) <= TOLERANCE_NS, f"low {low} ns after {high} ns"
    assert all(len(frame.data) == 3 * HOLES for frame in frames)
    return [frame.data for frame in frames]


def quiet_edge(pico: RP2Board) -> int:
    """The index of the LED pin's next edge, taken at a moment the wire rests between frames:
    an animation's frame going out as a step starts would otherwise read as a short frame."""
    clock = pico.halt()
    while True:
        next_edge = pico.edges(16).next
        last = pico.edges(16, since=max(0, next_edge - 1)).edges
        if not last or (last[-1][1] == 0 and clock.nanos - last[-1][0] >= RESET_NS):
            pico.resume()
            return next_edge
        clock = pico.run_until(clock.cycles + 125_000)  # a millisecond on, then look again


@pytest.fixture
def boards(rp2_boards: BoardFactory) -> Iterator[tuple[RP2Board, VirtualBoard]]:
    pico = rp2_boards(FIRMWARE_IMAGE, pace=0)
    with VirtualBoard(ble=False) as virtual:
        yield pico, virtual


def test_the_wire_shows_what_the_virtual_board_shows_over_a_played_game(
    boards: tuple[RP2Board, VirtualBoard],
) -> None:
    pico, virtual = boards
    rng = random.Random(121)
    on_pico, on_virtual = ProtocolLink(pico.port), ProtocolLink(virtual.port)
    try:
        on_pico.wait_up()
        on_virtual.wait_up()
        commands: list[bytes] = []
        compared = 0
        distinct: set[bytes] = set()
        latched = b""
        for step in range(MOVES):
            state = game_key(on_pico.request(b"st\n"))
            if step % 7 == 3:
                command = b"bright %d\n" % rng.choice((12, 64, 200, 255))
            elif step % 7 == 5:
                command = b"budget %d\n" % rng.choice((120, 250, 400, 1000))
            else:
                command = random_move(rng, state)
            commands.append(command)
            since = quiet_edge(pico)
            assert on_pico.request(command) == on_virtual.request(command).replace(
                b"board=sim", b"board=pico"
            )
            pico.run_until(pico.halt().cycles + FRAME_SETTLED_CYCLES)
            frames = wire_frames(pico, since)
            pico.resume()
            # The LEDs keep the last frame they latched: a change that leaves the frame as it
            # was (a budget above what the frame draws) sends none.
            if frames:
                latched = frames[-1]
            assert latched, f"no frame on the wire after {commands}"
            rgb = grb_to_rgb(latched)
            try:
                virtual.wait_frame(lambda frame: frame == rgb, timeout=5)  # noqa: B023
            except TimeoutError:
                shown = virtual.frame()
                diff = [
                    i for i in range(HOLES) if rgb[3 * i : 3 * i + 3] != shown[3 * i : 3 * i + 3]
                ]
                pytest.fail(f"after {commands}: LEDs {diff} differ: {rgb.hex()} vs {shown.hex()}")
            compared += 1
            distinct.add(rgb)
        assert compared == MOVES
        assert len(distinct) > MOVES // 2  # many different frames, not one
    finally:
        on_pico.close()
        on_virtual.close()


def test_the_frame_reply_is_what_the_wire_shows(rp2_boards: BoardFactory) -> None:
    # `frame` (hole order, before brightness, with its scale) against the wire's last frame
    # (chain order, scaled): at rest, with a track glowing on its second lap, both pegs in one
    # hole, and the brightness and the current limiter scaling.
    pico = rp2_boards(FIRMWARE_IMAGE, pace=0)
    link = ProtocolLink(pico.port)
    try:
        link.wait_up()
        for setting in (
            b"new 121 2\n",
            b"set 0 75 70\n",
            b"set 1 33 33\n",
            b"bright 200\n",
            b"budget 150\n",
        ):
            since = quiet_edge(pico)
            assert link.request(setting).startswith(b"ok")
            pico.run_until(pico.halt().cycles + FRAME_SETTLED_CYCLES)
            frames = wire_frames(pico, since)
            pico.resume()
            assert frames, f"no frame on the wire after {setting!r}"
            assert frame_reply_on_the_wire(link) == grb_to_rgb(frames[-1]), f"after {setting!r}"
    finally:
        link.close()


MS = 125_000  # cycles


def halt_at_rest(pico: RP2Board) -> tuple[Clock, int]:
    """Halt the chip once the LED wire has rested 5 ms (the last change's frame is out): the
    clock then, and the index of the pin's next edge."""
    clock = pico.halt()
    while True:
        next_edge = pico.edges(16, since=1 << 50).next
        last = pico.edges(16, since=max(0, next_edge - 1)).edges
        if not last or (last[-1][1] == 0 and clock.nanos - last[-1][0] >= 5_000_000):
            return clock, next_edge
        clock = pico.run_until(clock.cycles + MS)


def replies(entries: list[tuple[int, str, bytes]]) -> list[tuple[int, bytes]]:
    """The lines the chip sent (the trace's `usb_in`), each with the time its last packet
    reached the host."""
    lines = []
    pending = b""
    for nanos, what, chunk in entries:
        if what == "usb_in":
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                lines.append((nanos, line))
    return lines


def test_a_peg_while_a_frame_goes_out_is_answered_and_the_latest_state_follows(
    rp2_boards: BoardFactory,
) -> None:
    # A host that writes each peg as soon as the last reply came: a peg arrives while the last
    # change's frame is on the wire (3.6 ms) and its own change must wait for the wire. Placed
    # at chosen emulated moments (the chip halted, the line written, the chip resumed): one peg
    # 0.1 ms into a frame, the next 2 ms in. Each is answered while that frame still goes out,
    # and the next frame on the wire is the state after the last of them (the one between is
    # never sent), each frame whole.
    pico = rp2_boards(FIRMWARE_IMAGE, pace=0)
    link = ProtocolLink(pico.port)
    try:
        link.wait_up()
        assert link.request(b"new 121 2\n").startswith(b"ok")
        pico.trace(True)
        start, since = halt_at_rest(pico)
        deliver(pico, link.link, b"#a peg 0 5\n")
        bit = first_bit(pico, since, start.cycles)
        pico.run_until(bit + MS // 10)
        deliver(pico, link.link, b"#b peg 1 7\n")
        pico.run_until(bit + 2 * MS)
        deliver(pico, link.link, b"#c peg 0 3\n")
        pico.run_until(bit + FRAME_SETTLED_CYCLES)
        frames = wire_frames(pico, since)
        edges = pico.edges(16, since=since).edges
        entries, _ = pico.trace_log()
        pico.resume()
        for rid in (b"#a", b"#b", b"#c"):
            assert link.reply().startswith(rid + b" ok")
        # The first frame's last bit: the first fall the latch's low follows.
        first_frame_end = next(
            nanos
            for i, (nanos, level) in enumerate(edges)
            if level == 0 and (i + 1 == len(edges) or edges[i + 1][0] - nanos >= RESET_NS)
        )
        answered = {
            rid: next(nanos for nanos, line in replies(entries) if line.startswith(rid + b" "))
            for rid in (b"#b", b"#c")
        }
        assert answered[b"#b"] < answered[b"#c"] < first_frame_end
        assert len(frames) == 2, f"{len(frames)} frames"
        assert grb_to_rgb(frames[1]) == frame_reply_on_the_wire(link) != grb_to_rgb(frames[0])
    finally:
        link.close()
