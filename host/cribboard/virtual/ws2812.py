"""WS2812 ("NeoPixel") data decoded from the edges of an emulated board's LED pin.

A WS2812 takes one bit per high pulse, MSB first: a long pulse is a 1, a short one a 0; a low
gap of 50 us or more latches the bytes received (the end of a frame). The strip's bytes are
in its own order (GRB for most): :func:`grb_to_rgb` reorders them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

ONE_ABOVE_NS = 600
"""A high pulse longer than this is a 1 (WS2812B: T0H 0.4 us, T1H 0.8 us, each +-150 ns)."""

RESET_NS = 50_000
"""A low gap this long ends a frame."""


@dataclass(frozen=True)
class WS2812Frame:
    """The bytes of one frame and the pulse times they were sent with (nanoseconds)."""

    data: bytes
    zero_high_ns: list[int]
    one_high_ns: list[int]
    bit_period_ns: list[int]
    """From each rise to the next within the frame."""


def decode_ws2812(
    edges: Sequence[tuple[int, int]], one_above_ns: int = ONE_ABOVE_NS, reset_ns: int = RESET_NS
) -> list[WS2812Frame]:
    """Decode a data line's edges, (nanoseconds, new level) in order, into frames.

    A frame's trailing bits short of a whole byte are dropped; a last pulse without its
    falling edge is not counted.
    """
    frames: list[WS2812Frame] = []
    bits: list[int] = []
    zero_high: list[int] = []
    one_high: list[int] = []
    periods: list[int] = []

    def close_frame() -> None:
        if len(bits) >= 8:
            data = bytes(
                int("".join(map(str, bits[i : i + 8])), 2) for i in range(0, len(bits) - 7, 8)
            )
            frames.append(WS2812Frame(data, zero_high[:], one_high[:], periods[:]))
        bits.clear()
        zero_high.clear()
        one_high.clear()
        periods.clear()

    last_rise: int | None = None
    last_fall: int | None = None
    for index, (nanos, level) in enumerate(edges):
        if level != 1 or index + 1 >= len(edges):
            continue
        fall = edges[index + 1][0]
        if last_fall is not None and nanos - last_fall >= reset_ns:
            close_frame()
        elif last_rise is not None and bits:
            periods.append(nanos - last_rise)
        high = fall - nanos
        bit = 1 if high > one_above_ns else 0
        bits.append(bit)
        (one_high if bit else zero_high).append(high)
        last_rise, last_fall = nanos, fall
    close_frame()
    return frames


def split_complete(
    edges: Sequence[tuple[int, int]], now_ns: int, reset_ns: int = RESET_NS
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Split edges read so far into those of finished frames and those of a frame still being
    sent at `now_ns` (to be read again with the edges that follow)."""
    edges = list(edges)
    if not edges or now_ns - edges[-1][0] >= reset_ns:
        return edges, []
    for index in range(len(edges) - 1, 0, -1):
        if edges[index][1] == 1 and edges[index][0] - edges[index - 1][0] >= reset_ns:
            return edges[:index], edges[index:]
    return [], edges


def grb_to_rgb(grb: bytes) -> bytes:
    """A GRB strip's bytes as RGB, 3 bytes per LED (a trailing partial LED is dropped)."""
    rgb = bytearray()
    for at in range(0, len(grb) - 2, 3):
        g, r, b = grb[at : at + 3]
        rgb += bytes((r, g, b))
    return bytes(rgb)
