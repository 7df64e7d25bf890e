# Layout tests: run under CPython (pytest) and MicroPython (mprun.py).
from cribcore import layout
from cribcore.layout import (
    COLS,
    HOLE_OF_LED,
    HOLES,
    LED_OF_HOLE,
    OFF_BOARD,
    TRACK_2P,
    TRACK_3P,
    WIN_HOLE,
    hole_for_score,
    hole_xy_mm,
)


def test_121_holes_in_four_rows_of_30_plus_win_hole():
    rows = [0, 0, 0, 0]
    for hole in range(HOLES):
        if hole == WIN_HOLE:
            assert layout.hole_row(hole) == -1
        else:
            rows[layout.hole_row(hole)] += 1
    assert rows == [30, 30, 30, 30]
    assert HOLES == 121


def test_groups_of_five():
    # a visible gap between groups: the step across a group boundary is wider
    x4 = hole_xy_mm(4)[0]
    x5 = hole_xy_mm(5)[0]
    x3 = hole_xy_mm(3)[0]
    assert x5 - x4 > x4 - x3


def test_led_chain_is_serpentine_and_a_permutation():
    assert sorted(LED_OF_HOLE) == list(range(HOLES))
    for led in range(HOLES):
        assert LED_OF_HOLE[HOLE_OF_LED[led]] == led
    # row 0 left to right, row 1 right to left
    assert LED_OF_HOLE[0] == 0 and LED_OF_HOLE[29] == 29
    assert LED_OF_HOLE[1 * COLS + 29] == 30 and LED_OF_HOLE[1 * COLS + 0] == 59
    assert LED_OF_HOLE[2 * COLS + 0] == 60
    assert LED_OF_HOLE[3 * COLS + 0] == 119
    assert LED_OF_HOLE[WIN_HOLE] == 120
    # neighbours in the chain are physically close: no long jumps in the wiring
    for led in range(HOLES - 2):
        a = hole_xy_mm(HOLE_OF_LED[led])
        b = hole_xy_mm(HOLE_OF_LED[led + 1])
        assert abs(a[0] - b[0]) + abs(a[1] - b[1]) <= 30, led


def test_holes_do_not_overlap():
    seen = {}
    for hole in range(HOLES):
        xy = hole_xy_mm(hole)
        assert xy not in seen
        seen[xy] = hole
        assert 0 < xy[0] < layout.BOARD_WIDTH_MM and 0 < xy[1] < layout.BOARD_HEIGHT_MM


def test_two_player_track_up_outer_down_inner():
    # player 0: outer row 0 up, inner row 1 down
    assert hole_for_score(2, 0, 1, 121) == 0
    assert hole_for_score(2, 0, 30, 121) == 29
    assert hole_for_score(2, 0, 31, 121) == 1 * COLS + 29
    assert hole_for_score(2, 0, 60, 121) == 1 * COLS + 0
    # second lap uses the same holes
    assert hole_for_score(2, 0, 61, 121) == 0
    assert hole_for_score(2, 0, 120, 121) == 1 * COLS
    # player 1: outer row 3, inner row 2
    assert hole_for_score(2, 1, 1, 121) == 3 * COLS
    assert hole_for_score(2, 1, 31, 121) == 2 * COLS + 29
    assert hole_for_score(2, 1, 0, 121) == OFF_BOARD
    assert hole_for_score(2, 1, 121, 121) == WIN_HOLE
    assert hole_for_score(2, 1, 61, 61) == WIN_HOLE
    assert hole_for_score(2, 1, 60, 61) == 2 * COLS


def test_tracks_cover_every_hole_once():
    holes = sorted(list(TRACK_2P[0]) + list(TRACK_2P[1]))
    assert holes == list(range(120))


def test_three_player_mapping():
    for p in range(3):
        assert list(TRACK_3P[p]) == list(range(p * COLS, p * COLS + 30))
        assert hole_for_score(3, p, 31, 121) == p * COLS
        assert hole_for_score(3, p, 121, 121) == WIN_HOLE
    gauges = [layout.lap_gauge_hole(p, lap) for p in range(3) for lap in range(4)]
    assert len(set(gauges)) == 12
    for hole in gauges:
        assert layout.hole_row(hole) == 3


def test_skunk_lines():
    assert layout.skunk_lines(121) == (61, 91)
    assert layout.skunk_lines(61) == (0, 31)
