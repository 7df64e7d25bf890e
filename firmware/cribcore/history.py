# The board's own history: the last finished games it played, whoever pegged them (a host, its
# buttons, a phone's control pad), kept in its flash with the game (cribfw/gamerecord.py: the
# same record, so a game and its place in the history are saved or lost together) and read by
# hosts with `hist` (docs/protocol.md, section 4). Pure logic; runs on MicroPython and CPython.
#
# A game goes into the history when the board leaves it won: a new game (`new`, `match`, the
# deal button held) after a win. Corrections made to the won game before that (`set`, `undo`) are
# in its entry; a win taken back never is. Undoing that new game takes the entry out again (the
# game is on the board again, its win may be taken back), so every entry a host reads is final.
# The ring keeps HISTORY_KEPT entries: the next game then takes the place of the oldest.
#
# An entry, ENTRY bytes, little-endian:
#   0  u32 game      the board's number for the game (GameState.game_no)
#   4  u32 ended     when it ended in the board's life: its time switched on, in seconds
#   8  u32 match     the board's number for its match (0: not a game of a match)
#   12 u8  place     which game of the match it was (0: none; at most 255)
#   13 u8  form      the match: kind << 4 | length (0: none)
#   14 u8  target    61 or 121
#   15 u8  bits      players - 2 | x2 << 1 | winner << 2 | result << 4
#   16 u8  front[3]  each player's final pegs
#   19 u8  back[3]
#   22 u16 games[3]  the games-won tally as the game was left (after its win)
# Adding one allocates nothing but the one time a history is made.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


import struct

from cribcore.limits import HISTORY_KEPT

ENTRY = const(28)
_ENTRY_FORMAT = "<IIIBBBB3B3B3H"


class History:
    """The last `kept` finished games, oldest first (see the module). `uptime()`: the seconds
    the board has been up in this start; `life_base`: its time switched on before this start
    (kept in the game's record), so that life() counts on across power cuts."""

    def __init__(self, kept=HISTORY_KEPT, uptime=None):
        self.kept = kept
        self.buf = bytearray(kept * ENTRY)
        self.first = 0  # the slot of the oldest entry
        self.count = 0
        self.life_base = 0
        self.uptime = uptime if uptime is not None else _zero
        # When the game on the board was won, in the board's life (-1: it is not won, or not
        # known yet): the board's clock notes it (cribfw/app.py), the entry keeps it.
        self.won_at = -1

    def life(self):
        """The board's time switched on, in seconds: before this start and since."""
        return self.life_base + self.uptime()

    def add(self, game, ended):
        """Remember `game` (a cribcore.state.GameState showing a won game) as the newest entry,
        ended at `ended` (seconds of the board's life); the oldest goes when the ring is full."""
        slot = (self.first + self.count) % self.kept
        if self.count < self.kept:
            self.count += 1
        else:
            self.first = (self.first + 1) % self.kept
        result = game.result()
        struct.pack_into(
            _ENTRY_FORMAT,
            self.buf,
            slot * ENTRY,
            game.game_no,
            ended,
            game.match_no if game.match_len else 0,
            min(game.match_game, 255) if game.match_len else 0,
            game.match_kind << 4 | game.match_len if game.match_len else 0,
            game.target,
            (game.players - 2) | (2 if game.skunk_double else 0) | game.winner << 2 | result << 4,
            game.front[0],
            game.front[1],
            game.front[2],
            game.back[0],
            game.back[1],
            game.back[2],
            game.games[0],
            game.games[1],
            game.games[2],
        )

    def take_back(self, game_no):
        """Take the newest entry out when it is game `game_no` (the new game that left it was
        undone: it is on the board again); its `ended` time, or -1 when there was none."""
        if not self.count:
            return -1
        at = self.offset(self.count - 1)
        number, ended = struct.unpack_from("<II", self.buf, at)
        if number != game_no:
            return -1
        self.count -= 1
        return ended

    def offset(self, i):
        """Where the i-th oldest entry starts in `buf`."""
        return (self.first + i) % self.kept * ENTRY

    def game_of(self, i):
        """The board's number for the i-th oldest entry's game."""
        return struct.unpack_from("<I", self.buf, self.offset(i))[0]

    def pack(self, rec, at):
        """Write the entries, oldest first, into `rec` from byte `at` (the game's record);
        returns the byte after them."""
        for i in range(self.count):
            start = self.offset(i)
            rec[at : at + ENTRY] = memoryview(self.buf)[start : start + ENTRY]
            at += ENTRY
        return at

    def load(self, data, at, count):
        """Put back `count` entries, oldest first, from data[at:] (as pack() wrote them)."""
        count = min(count, self.kept)
        self.buf[0 : count * ENTRY] = memoryview(data)[at : at + count * ENTRY]
        self.first = 0
        self.count = count

    def write(self, out, i):
        """The i-th oldest entry as `hist` sends it (docs/protocol.md), after a space, into
        `out` (a cribcore.protocol.LineWriter): game/ended/target/players/winner/result/x2/
        fronts/backs/games/match/place/length/kind, the lists comma-separated, one value a
        player."""
        game, ended, match, place, form, target, bits = self.entry(i)[:7]
        at = self.offset(i)
        buf = self.buf
        players = (bits & 1) + 2
        out.byte(32)
        for value in (game, ended, target, players, bits >> 2 & 3, bits >> 4 & 3, bits >> 1 & 1):
            out.number(value)
            out.byte(47)  # '/'
        for first in (16, 19):
            for p in range(players):
                if p:
                    out.byte(44)  # ','
                out.number(buf[at + first + p])
            out.byte(47)
        for p in range(players):
            if p:
                out.byte(44)
            out.number(buf[at + 22 + 2 * p] | buf[at + 23 + 2 * p] << 8)
        for value in (match, place, form & 15, form >> 4):
            out.byte(47)
            out.number(value)

    def entry(self, i):
        """The i-th oldest entry as a tuple, in _ENTRY_FORMAT's order (the protocol writes it
        from this; tests read it)."""
        return struct.unpack_from(_ENTRY_FORMAT, self.buf, self.offset(i))


def _zero():
    return 0


def entry_ok(values):
    """Whether a history entry's values (History.entry's tuple) are a game the board can have
    finished: checked when a record is read back."""
    number, _, _, place, form, target, bits = values[:7]
    players = (bits & 1) + 2
    winner = bits >> 2 & 3
    result = bits >> 4 & 3
    if number < 1 or target not in (61, 121) or winner >= players or not 1 <= result <= 3:
        return False
    if bits >> 6 or (form == 0) != (place == 0):
        return False
    for p in range(3):
        front = values[7 + p]
        if not values[10 + p] <= front <= target or (
            p < players and (front == target) != (p == winner)
        ):
            return False
    return True


# The most bytes History.write writes for one entry: 13 slashes, a space, 14 numbers (the
# lists' commas among them) of at most 10 digits, 3 digits for the 8-bit ones.
HIST_ENTRY_ROOM = const(112)
