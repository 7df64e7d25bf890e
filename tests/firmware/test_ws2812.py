"""Decoding a WS2812 data line's edges (cribboard.virtual.ws2812), on edges made here."""

from __future__ import annotations

from cribboard.virtual.ws2812 import decode_ws2812, grb_to_rgb, split_complete


def line(frames: list[bytes], start: int = 1_000, gap: int = 80_000) -> list[tuple[int, int]]:
    """The edges a driver sends for these frames: 400/800 ns highs in 1250 ns bits."""
    edges = []
    now = start
    for frame in frames:
        for byte in frame:
            for bit in range(7, -1, -1):
                high = 800 if byte >> bit & 1 else 400
                edges += [(now, 1), (now + high, 0)]
                now += 1250
        now += gap
    return edges


def test_frames_decode_to_their_bytes_and_pulse_times() -> None:
    frames = decode_ws2812(line([b"\x00\xff\x5a", b"\x81"]))
    assert [frame.data for frame in frames] == [b"\x00\xff\x5a", b"\x81"]
    assert set(frames[0].zero_high_ns) == {400} and set(frames[0].one_high_ns) == {800}
    assert set(frames[0].bit_period_ns) == {1250} and len(frames[0].bit_period_ns) == 23


def test_a_frame_still_being_sent_is_kept_for_the_next_read() -> None:
    edges = line([b"\x12\x34\x56", b"\x78\x9a\xbc"])
    sending_until = edges[-1][0] + 1_000  # the line went low 1 us ago: maybe more to come
    done, sending = split_complete(edges, sending_until)
    assert [frame.data for frame in decode_ws2812(done)] == [b"\x12\x34\x56"]
    assert [frame.data for frame in decode_ws2812(sending)] == [b"\x78\x9a\xbc"]
    done, sending = split_complete(edges, edges[-1][0] + 60_000)
    assert len(decode_ws2812(done)) == 2 and sending == []


def test_grb_bytes_reorder_to_rgb() -> None:
    assert grb_to_rgb(bytes([1, 2, 3, 4, 5, 6, 7])) == bytes([2, 1, 3, 5, 4, 6])
