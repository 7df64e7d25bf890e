# The board's layout: the one definition of where every hole is, which LED lights it, and which
# hole shows a given score. Firmware, host, hardware template and tests all read this module.
#
# The board (seen from above, start/finish end on the left):
#
#   row 0  A outer   o o o o o  o o o o o  ...  (30 holes, groups of five)
#   row 1  A inner   o o o o o  o o o o o  ...
#   (win)  W                                      the game hole, centred at the start end
#   row 2  B inner   o o o o o  o o o o o  ...
#   row 3  B outer   o o o o o  o o o o o  ...
#
# Two players (or two partnerships): a peg goes up its outer row (column 0 -> 29) and back down
# its inner row (29 -> 0): 60 holes a lap. Score s (1..120) is lap (s-1)//60 at track position
# (s-1)%60 + 1; score 0 is off the board (the start); reaching the target lights the win hole.
# The 121 game is two laps plus the win hole, the 61 game one lap plus the win hole.
#
# Three players: player p (0..2) owns row p as a 30-hole track (a lap is 30 holes: four laps
# plus the win hole in the 121 game, two in the 61 game); row 3 is split into three lap gauges of
# ten holes (columns 10p..10p+9), one lit hole per lap started.
#
# Hole ids: row * 30 + column for the 120 track holes, WIN_HOLE (120) for the game hole.
# The LED chain is wired serpentine: row 0 left to right, row 1 right to left, row 2 left to
# right, row 3 right to left, then the win hole. LED_OF_HOLE / HOLE_OF_LED translate.

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

    def const(value):  # type: ignore[no-redef]
        return value


ROWS = const(4)
COLS = const(30)
GROUP = const(5)
WIN_HOLE = const(120)
HOLES = const(121)
LAP_2P = const(60)
LAP_3P = const(30)
OFF_BOARD = const(-1)

# Physical geometry in millimetres (origin: the board's top-left corner). Sized for 5 mm
# through-hole addressable LEDs seated in drilled holes; the hardware folder explains why.
PITCH_MM = const(10)  # hole to hole within a group of five
GROUP_GAP_MM = const(6)  # extra space between groups
ROW_PITCH_MM = const(12)  # between a player's two rows
PAIR_GAP_MM = const(24)  # between the two players' inner rows (the win hole sits here)
MARGIN_X_MM = const(30)  # left margin: room for the win hole and start end
MARGIN_Y_MM = const(20)
LED_HOLE_DIAMETER_MM = const(5)
BOARD_WIDTH_MM = const(2 * 30 + 29 * 10 + 5 * 6)  # margins + 29 pitches + 5 group gaps = 380
BOARD_HEIGHT_MM = const(2 * 20 + 2 * 12 + 24)  # = 88


def hole_row(hole):
    return -1 if hole == WIN_HOLE else hole // COLS


def hole_col(hole):
    return -1 if hole == WIN_HOLE else hole % COLS


def _row_y(row):
    y = MARGIN_Y_MM + row * ROW_PITCH_MM
    if row >= 2:
        y += PAIR_GAP_MM - ROW_PITCH_MM
    return y


def hole_xy_mm(hole):
    """Centre of a hole in millimetres from the board's top-left corner."""
    if hole == WIN_HOLE:
        return (MARGIN_X_MM // 2, (_row_y(1) + _row_y(2)) // 2)
    col = hole % COLS
    return (MARGIN_X_MM + col * PITCH_MM + (col // GROUP) * GROUP_GAP_MM, _row_y(hole // COLS))


def _led_of(hole):
    if hole == WIN_HOLE:
        return HOLES - 1
    row = hole // COLS
    col = hole % COLS
    return row * COLS + (col if row % 2 == 0 else COLS - 1 - col)


LED_OF_HOLE = bytes(_led_of(h) for h in range(HOLES))
HOLE_OF_LED = bytes(sorted(range(HOLES), key=lambda h: LED_OF_HOLE[h]))

# Two-player tracks: (outer row, inner row) per player.
TRACK_ROWS_2P = ((0, 1), (3, 2))


def _track_hole_2p(player, position):
    outer, inner = TRACK_ROWS_2P[player]
    if position <= COLS:
        return outer * COLS + position - 1
    return inner * COLS + (LAP_2P - position)


# TRACK_2P[player][position - 1] is the hole of track position 1..60.
TRACK_2P = tuple(bytes(_track_hole_2p(p, pos) for pos in range(1, LAP_2P + 1)) for p in range(2))
TRACK_3P = tuple(bytes(p * COLS + pos - 1 for pos in range(1, LAP_3P + 1)) for p in range(3))
LAP_GAUGE_ROW = const(3)
LAP_GAUGE_LEN = const(10)


@micropython.native
def lap_length(players):
    return LAP_2P if players == 2 else LAP_3P


@micropython.native
def track(players, player):
    """The holes of a player's track in order, as bytes (position 1 first)."""
    return TRACK_2P[player] if players == 2 else TRACK_3P[player]


@micropython.native
def hole_for_score(players, player, score, target):
    """The hole showing `score` for `player`: OFF_BOARD for 0, WIN_HOLE at or past the target."""
    if score <= 0:
        return OFF_BOARD
    if score >= target:
        return WIN_HOLE
    lap = lap_length(players)
    return track(players, player)[(score - 1) % lap]


@micropython.native
def lap_gauge_hole(player, lap_index):
    """Three-player board: the row-3 hole that lights for `player` having started lap `lap_index`."""
    return LAP_GAUGE_ROW * COLS + player * LAP_GAUGE_LEN + lap_index


@micropython.native
def skunk_lines(target):
    """Scores a trailing player must reach to escape (double skunk, skunk); 0 where none."""
    if target == 121:
        return (61, 91)
    return (0, 31)
