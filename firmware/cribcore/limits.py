# The values the board accepts: one home for every limit the firmware enforces and the host,
# the bridge and the apps check before sending (runs on MicroPython and CPython).

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


MAX_POINTS = const(29)  # the most one hand, crib or pegging card can score
TARGETS = (61, 121)  # game lengths: the short game and the long game
PLAYER_COUNTS = (2, 3)  # two players (or two partnerships), or three
MAX_PLAYERS = const(3)
MAX_BRIGHTNESS = const(255)
MIN_BUDGET_MA = const(150)  # below this the limiter would leave the pegs unreadable
MAX_BUDGET_MA = const(10000)
