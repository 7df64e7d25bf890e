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
# Match play (since protocol 1.4): best of an odd number of games, or first to a number of wins.
MATCH_BEST_OF = const(0)
MATCH_FIRST_TO = const(1)
MATCH_MOST = const(15)  # the longest match: best of 15, first to 15
HISTORY_KEPT = const(32)  # finished games a board remembers (cribcore/history.py)
