# Renderer tests: run under CPython (pytest) and MicroPython (mprun.py).
from checks import FakePixels

from cribcore.layout import COLS, HOLES, LED_OF_HOLE, TRACK_2P, WIN_HOLE, hole_for_score
from cribcore.render import (
    BACK,
    BLINK_MS,
    BOTH,
    FRONT,
    GLOW,
    LINE,
    PALETTE,
    PREVIEW,
    Renderer,
)
from cribcore.state import GameState


def rgb_at(renderer, hole):
    f = renderer.frame
    return (f[3 * hole], f[3 * hole + 1], f[3 * hole + 2])


def colour(player, offset):
    c = PALETTE[player]
    return (c[offset], c[offset + 1], c[offset + 2])


def lit(renderer):
    return [h for h in range(HOLES) if rgb_at(renderer, h) != (0, 0, 0)]


def make():
    pixels = FakePixels(HOLES)
    return Renderer(pixels), pixels


def test_start_shows_only_the_dealer_lamp():
    r, pixels = make()
    b = GameState()
    r.render(b)
    assert lit(r) == [WIN_HOLE]
    assert rgb_at(r, WIN_HOLE) == colour(0, GLOW)
    b.next_dealer()
    r.render(b)
    assert rgb_at(r, WIN_HOLE) == colour(1, GLOW)
    assert pixels.writes == 2


def test_front_and_back_pegs_and_players_distinct():
    r, _ = make()
    b = GameState()
    b.peg(0, 5)
    b.peg(0, 7)
    b.peg(1, 9)
    r.render(b)
    assert rgb_at(r, hole_for_score(2, 0, 12, 121)) == colour(0, FRONT)
    assert rgb_at(r, hole_for_score(2, 0, 5, 121)) == colour(0, BACK)
    assert rgb_at(r, hole_for_score(2, 1, 9, 121)) == colour(1, FRONT)
    kinds = set()
    for p in range(3):
        for offset in (FRONT, BACK, GLOW, BOTH):
            kinds.add(colour(p, offset))
    kinds.add(tuple(LINE))
    kinds.add(tuple(PREVIEW))
    assert len(kinds) == 14


def test_second_lap_glows_the_whole_track():
    r, _ = make()
    b = GameState()
    b.set_pegs(0, 58, 50)
    r.render(b)
    assert rgb_at(r, TRACK_2P[0][10]) == (0, 0, 0)
    b.peg(0, 5)  # 63: lap two
    r.render(b)
    assert rgb_at(r, TRACK_2P[0][10]) == colour(0, GLOW)
    assert rgb_at(r, TRACK_2P[0][2]) == colour(0, FRONT)
    assert rgb_at(r, TRACK_2P[0][57]) == colour(0, BACK)
    assert rgb_at(r, TRACK_2P[1][10]) == (0, 0, 0)


def test_skunk_lines_where_they_matter():
    r, _ = make()
    b = GameState()
    b.set_pegs(0, 80, 70)
    b.set_pegs(1, 40, 30)
    r.render(b)
    # leader past 61 only: the double-skunk line on the trailing player's track
    assert rgb_at(r, hole_for_score(2, 1, 61, 121)) == tuple(LINE)
    assert rgb_at(r, hole_for_score(2, 1, 91, 121)) == (0, 0, 0)
    b.set_pegs(0, 95, 80)
    r.render(b)
    assert rgb_at(r, hole_for_score(2, 1, 91, 121)) == tuple(LINE)
    b.set_pegs(1, 70, 60)  # out of double-skunk danger
    r.render(b)
    assert rgb_at(r, hole_for_score(2, 1, 61, 121)) == colour(1, GLOW)
    # the leader's own track shows no lines
    assert rgb_at(r, hole_for_score(2, 0, 91, 121)) == colour(0, GLOW)


def test_pending_count_blinks():
    r, _ = make()
    b = GameState()
    b.peg(0, 10)
    b.set_pending(0, 6)
    r.render(b, 0)
    assert r.animating
    assert rgb_at(r, hole_for_score(2, 0, 16, 121)) == tuple(PREVIEW)
    r.render(b, BLINK_MS)
    assert rgb_at(r, hole_for_score(2, 0, 16, 121)) == (0, 0, 0)
    b.set_pegs(0, 118, 110)
    b.set_pending(0, 5)
    r.render(b, 0)
    assert rgb_at(r, WIN_HOLE) == tuple(PREVIEW)


def test_win_hole_pulses_in_the_winners_colour():
    r, _ = make()
    b = GameState()
    b.set_pegs(1, 119, 110)
    b.peg(1, 3)
    seen = set()
    for t in range(0, 1200, 100):
        r.render(b, t)
        assert r.animating
        w = rgb_at(r, WIN_HOLE)
        assert w[0] > w[1] > w[2] == 0  # orange
        seen.add(w)
    assert len(seen) > 3


def test_output_is_grb_in_chain_order_with_brightness():
    r, pixels = make()
    r.brightness = 255
    b = GameState()
    b.peg(1, 1)  # player 1, score 1: row 3 column 0 -> LED 119
    r.render(b)
    assert LED_OF_HOLE[3 * COLS] == 119
    g, red, blue = pixels.buf[3 * 119], pixels.buf[3 * 119 + 1], pixels.buf[3 * 119 + 2]
    assert (red, g, blue) == colour(1, FRONT)
    r.brightness = 64
    r.render(b)
    assert pixels.buf[3 * 119 + 1] == colour(1, FRONT)[0] * 64 >> 8


def test_rgbw_pixels():
    pixels = FakePixels(HOLES, bpp=4)
    r = Renderer(pixels, brightness=255)
    b = GameState()
    b.peg(0, 1)
    r.render(b)
    assert pixels.buf[0:4] == bytearray((90, 0, 255, 0))


def test_current_limiter_keeps_within_budget():
    pixels = FakePixels(HOLES)
    r = Renderer(pixels, budget_ma=200, brightness=255)
    r.load_frame(b"\xff" * (3 * HOLES))  # all white: far over budget
    r.show()
    assert r.estimated_ma <= 200
    assert r.scale < 256
    total = sum(pixels.buf)
    assert total * 55 // 765 + HOLES <= 200
    # the default budget never limits a game frame at default brightness
    r2 = Renderer(FakePixels(HOLES))
    b = GameState()
    b.set_pegs(0, 120, 91)
    b.set_pegs(1, 119, 90)
    r2.render(b)
    assert r2.scale == 129
    assert r2.estimated_ma < 400


def test_budget_below_idle_draw_turns_leds_off():
    pixels = FakePixels(HOLES)
    r = Renderer(pixels, budget_ma=50)
    b = GameState()
    b.peg(0, 3)
    r.render(b)
    assert r.scale == 0 and sum(pixels.buf) == 0


def test_generic_pixels_without_buf():
    class Plain:
        def __init__(self):
            self.data = {}
            self.written = False

        def __setitem__(self, i, rgb):
            self.data[i] = rgb

        def write(self):
            self.written = True

    plain = Plain()
    r = Renderer(plain, brightness=255)
    b = GameState()
    b.peg(0, 2)
    r.render(b)
    assert plain.written
    assert plain.data[1] == colour(0, FRONT)


def test_three_player_lap_gauge():
    r, _ = make()
    b = GameState(players=3)
    b.set_pegs(2, 65, 60)  # lap three of 30-hole laps
    r.render(b)
    from cribcore.layout import lap_gauge_hole

    for lap in range(3):
        assert rgb_at(r, lap_gauge_hole(2, lap)) == colour(2, BACK)
    assert rgb_at(r, lap_gauge_hole(2, 3)) == (0, 0, 0)
    assert rgb_at(r, 2 * COLS + 4) == colour(2, FRONT)
