# The game state: what the board shows. Pure logic, no hardware; runs on MicroPython and CPython.
#
# Each player has a front peg (the score) and a back peg (the previous score). Scoring n points
# leapfrogs: the back peg jumps to front + n and becomes the new front. The game ends the moment a
# player reaches the target (the peg stops in the win hole). Every change is undoable: before it,
# the whole game (pegs, dealer, result, games won, target) is copied into a fixed ring of
# snapshots, so undo needs no allocation and also reverses a new game started by mistake.
#
# Scoring and snapshotting allocate nothing on the MicroPython heap (tests prove it with
# micropython.heap_lock()); errors raise GameError, and a rejected operation changes nothing.

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

    def const(value):  # type: ignore[no-redef]
        return value


import struct
import sys
from array import array

from cribcore.layout import lap_length, skunk_lines
from cribcore.limits import MAX_PLAYERS, MAX_POINTS, PLAYER_COUNTS, TARGETS
from cribcore.twins import ptr16

_LITTLE = sys.byteorder == "little"  # array("h") holds its values as the record does
UNDO_DEPTH = const(64)  # moves kept for undo: several whole deals
NO_WINNER = const(-1)

# Result kinds
PLAYING = const(0)
WON = const(1)
SKUNK = const(2)
DOUBLE_SKUNK = const(3)
RESULT_NAMES = ("playing", "won", "skunk", "double_skunk")  # by result kind, as hosts name them

# What the last change was, for the board's brief events (docs/protocol.md, "brief"): a peg or
# a preview of one player's count, made at revision `last_rev`; any other change leaves last_rev
# behind rev.
LAST_PEG = const(1)
LAST_PENDING = const(2)

# Snapshot layout: one row of the undo ring.
_S_PLAYERS = const(0)
_S_TARGET = const(1)
_S_DEALER = const(2)
_S_WINNER = const(3)
_S_AWARD = const(4)
_S_FRONT = const(5)
_S_BACK = const(8)
_S_GAMES = const(11)
SNAPSHOT_LEN = const(14)
# A step that started a game or changed the match keeps what undoing it must put back above the
# bits of its row's players and award (2 bits each), which every other step writes plain:
# nothing more on a peg's path (cribcore/games.py says what, and puts it back).
_LOW = const(3)
# limits' MAX_POINTS and MAX_PLAYERS as this module's constants, for the viper code: a name of
# another module is looked up at run time (tests/core/test_state.py holds them equal).
_MAX_POINTS = const(29)
_MAX_PLAYERS = const(3)
_PEG = const(-2)  # _move's `back` for a peg: its `front` is the points (score)


class GameError(Exception):
    """A rejected operation. `code` is stable (the protocol sends it); the text explains."""

    def __init__(self, code, text):
        super().__init__(text)
        self.code = code
        self.text = text


class GameState:
    def __init__(self, players=2, target=121, skunk_double=False):
        _check_players(players)
        _check_target(target)
        self.players = players
        self.target = target
        self.skunk_double = skunk_double
        self.game_no = 1  # the board's number for the game: +1 a new game, -1 its undo
        # Match play (0: none): best of `match_len` or first to it (match_kind, limits'
        # MATCH_*), the board's number for the match (+1 each match started) and which of its
        # games is on the board.
        self.match_len = 0
        self.match_kind = 0
        self.match_no = 0
        self.match_game = 0
        # The finished games the board remembers (cribcore.history.History: keep_history;
        # None: none kept, a host's copy of the rules).
        self.history = None
        self.front = [0] * MAX_PLAYERS
        self.back = [0] * MAX_PLAYERS
        self.games = [0] * MAX_PLAYERS
        self.pending = [0] * MAX_PLAYERS  # preview of a count not yet committed
        self.dealer = 0
        self.winner = NO_WINNER
        self.award = 0  # games credited to the winner of this game
        self.rev = 0  # bumped on every change; hosts use it to order and resync
        self.last_kind = 0  # LAST_PEG or LAST_PENDING when last_rev == rev
        self.last_player = 0
        self.last_rev = -1
        self._undo = array("h", bytes(2 * UNDO_DEPTH * SNAPSHOT_LEN))
        self._undo_top = 0  # index of the next free row (wraps)
        self.undo_count = 0  # rows that can be undone

    # --- queries -----------------------------------------------------------------------------

    @micropython.native
    def lap(self, player):
        """0-based lap of a player's front peg (0 before the first score)."""
        front = self.front[player]
        return 0 if front == 0 else (front - 1) // lap_length(self.players)

    @micropython.native
    def result(self):
        """PLAYING, WON, SKUNK or DOUBLE_SKUNK, judged on the lowest losing score."""
        if self.winner == NO_WINNER:
            return PLAYING
        lowest = self.target
        for p in range(self.players):
            if p != self.winner and self.front[p] < lowest:
                lowest = self.front[p]
        double_line, skunk_line = skunk_lines(self.target)
        if lowest < double_line:
            return DOUBLE_SKUNK
        if lowest < skunk_line:
            return SKUNK
        return WON

    # --- changes -----------------------------------------------------------------------------

    @micropython.native
    def peg(self, player, points):
        """Score `points` (1..29) for `player`: the back peg leapfrogs the front peg."""
        self._check_player(player)
        if not isinstance(points, int) or points < 1 or points > MAX_POINTS:
            raise GameError("bad_points", "points must be 1..29")
        self.score(player, points)

    @micropython.viper
    def score(self, player: int, points: int) -> int:
        """peg() for a player and points already known to be small whole numbers (the
        protocol's parser read them): the same checks of their range, without the type checks;
        returns the new revision. Viper code on a board: a peg is the board's most frequent
        request (its checks are _move's, which reads the state once for both)."""
        rev = int(_move(self, player, points, _PEG))
        self.last_kind = LAST_PEG  # (as _last, without the call)
        self.last_player = player
        self.last_rev = rev
        return rev

    @micropython.native
    def set_pegs(self, player, front, back):
        """Place a player's pegs directly (a host correcting a mistake). Pegs that move clear
        the player's pending count, as a peg does; pegs already there change nothing."""
        self._check_player(player)
        if not (isinstance(front, int) and isinstance(back, int)):
            raise GameError("bad_pegs", "pegs must be whole numbers")
        if back < 0 or back > front or front > self.target or back >= self.target:
            raise GameError("bad_pegs", "need 0 <= back <= front <= target, back < target")
        if back > 0 and front - back >= lap_length(self.players):
            raise GameError("bad_pegs", "pegs must be less than a lap apart")
        if front == self.target and self.winner != NO_WINNER and self.winner != player:
            raise GameError("game_over", "another player has already won")
        if front == self.front[player] and back == self.back[player]:
            return  # already so: nothing changes (no undo step, no revision, the count stays)
        _move(self, player, front, back)  # (which clears the player's count, as a peg does)

    @micropython.native
    def set_dealer(self, player):
        self._check_player(player)
        if player == self.dealer:
            return
        self._save_snapshot()
        self.dealer = player
        self.rev += 1

    @micropython.native
    def next_dealer(self):
        """Pass the deal to the next player."""
        self.set_dealer((self.dealer + 1) % self.players)

    @micropython.native
    def set_pending(self, player, points):
        """Preview a count on the board before it is committed (0 clears it). Not undoable."""
        self._check_player(player)
        if not isinstance(points, int) or points < 0 or points > MAX_POINTS:
            raise GameError("bad_points", "pending points must be 0..29")
        if points and self.winner != NO_WINNER:
            raise GameError("game_over", "the game is over")
        if self.pending[player] != points:
            self.pending[player] = points
            self.rev += 1
            self._last(LAST_PENDING, player)

    # A new game, a match started or ended, and undoing them: what happens between games
    # (the game's number, the match, the history) is cribcore/games.py's, loaded the first time
    # a game ends there (a small board's heap keeps its room until then).

    def keep_history(self, history):
        """Remember the finished games in `history` (a cribcore.history.History) from now on."""
        self.history = history

    def new_game(self, target=0, players=0):
        """Start a new game (undoable). 0 keeps the current target / player count.

        Games won carry over. The loser of a finished two-player game deals first (as in
        the rules); otherwise the deal passes on as usual. In a match the next game of it,
        or, once the match is won (or the player count changes), the next match of the same
        form: its tally starts again at 0. A won game the board leaves goes into its
        history."""
        from cribcore import games

        target = target or self.target
        players = players or self.players
        _check_target(target)
        _check_players(players)
        games.new_game(self, target, players)

    def start_match(self, kind, length):
        """Start a match (undoable): best of `length` or first to it (`kind`, limits'
        MATCH_*), with a new game (as new_game) and the games-won tally at 0; the skunk rule
        (x2) counts a skunk's games towards it."""
        from cribcore import games

        if not games.match_form_ok(kind, length):
            raise GameError("bad_value", "best of 3..15 (odd) or first to 2..15")
        games.start_match(self, kind, length)

    def end_match(self):
        """No more match play (undoable); the game and the tally go on. Nothing changes
        without a match."""
        from cribcore import games

        games.end_match(self)

    def save_step(self, players, award):
        """The state saved as an undo step that starts a game or changes the match (before
        the caller changes it), its row's players and award words as cribcore/games.py made
        them: what undoing it puts back above their own bits."""
        self._save_snapshot()
        base = ((self._undo_top - 1) % UNDO_DEPTH) * SNAPSHOT_LEN
        self._undo[base + _S_PLAYERS] = players
        self._undo[base + _S_AWARD] = award

    def reset_games(self):
        """Clear the games-won tally (undoable; nothing changes when it is clear already).

        A game already won keeps its winner, but its games are no longer in the tally: a later
        correction that takes the win back takes nothing off (the tally never goes below 0)."""
        clear = True
        for p in range(MAX_PLAYERS):
            if self.games[p]:
                clear = False
        if clear:
            return
        self._save_snapshot()
        for p in range(MAX_PLAYERS):
            self.games[p] = 0
        self.award = 0
        self.rev += 1

    def set_skunk_double(self, on):
        """Count a skunk as two games won: for every game settled from now on, including a won
        game that a correction settles again. Setting the value it has changes nothing."""
        on = bool(on)
        if on != self.skunk_double:
            self.skunk_double = on
            self.rev += 1

    @micropython.native
    def undo(self):
        """Reverse the last change; GameError('nothing_to_undo') when history is empty."""
        if self.undo_count == 0:
            raise GameError("nothing_to_undo", "nothing to undo")
        self._undo_top = (self._undo_top - 1) % UNDO_DEPTH
        self.undo_count -= 1
        snap = self._undo
        base = self._undo_top * SNAPSHOT_LEN
        players = snap[base + _S_PLAYERS]
        award = snap[base + _S_AWARD]
        self.players = players & _LOW
        self.target = snap[base + _S_TARGET]
        self.dealer = snap[base + _S_DEALER]
        self.winner = snap[base + _S_WINNER]
        self.award = award & _LOW
        for p in range(MAX_PLAYERS):
            self.front[p] = snap[base + _S_FRONT + p]
            self.back[p] = snap[base + _S_BACK + p]
            self.games[p] = snap[base + _S_GAMES + p]
            self.pending[p] = 0
        if players > _LOW:
            from cribcore import games

            games.undo_step(self, players, award)
        self.rev += 1

    # --- persistence helpers (the store serialises these) ------------------------------------

    def undo_rows(self):
        """The undo history, oldest first, as a list of snapshot rows (lists of ints)."""
        rows = []
        for i in range(self.undo_count):
            row = (self._undo_top - self.undo_count + i) % UNDO_DEPTH
            rows.append(list(self._undo[row * SNAPSHOT_LEN : (row + 1) * SNAPSHOT_LEN]))
        return rows

    def pack_undo(self, buf, at):
        """Write the undo history, oldest first, into bytearray `buf` from byte `at`:
        SNAPSHOT_LEN little-endian int16s per row, as undo_rows() gives them (the store's
        record). On a little-endian machine (every board, CPython on x86 and ARM) the ring's
        own bytes are copied, one stretch of it at a time: no Python per value (a save's encode
        on a board). Returns the byte after them."""
        first = (self._undo_top - self.undo_count) % UNDO_DEPTH
        left = self.undo_count
        while left:
            rows = min(left, UNDO_DEPTH - first)
            start = first * SNAPSHOT_LEN
            words = rows * SNAPSHOT_LEN
            if _LITTLE:
                buf[at : at + 2 * words] = bytes(memoryview(self._undo)[start : start + words])
            else:
                struct.pack_into("<%dh" % words, buf, at, *self._undo[start : start + words])
            at += 2 * words
            left -= rows
            first = 0
        return at

    def load_undo_rows(self, rows):
        """Replace the undo history with rows from undo_rows() (oldest first)."""
        rows = rows[-UNDO_DEPTH:]
        for i in range(len(rows)):
            if len(rows[i]) != SNAPSHOT_LEN:
                raise GameError("bad_value", "undo row has the wrong length")
            for j in range(SNAPSHOT_LEN):
                self._undo[i * SNAPSHOT_LEN + j] = rows[i][j]
        self.undo_count = len(rows)
        self._undo_top = len(rows) % UNDO_DEPTH

    # --- internals ---------------------------------------------------------------------------

    @micropython.native
    def _last(self, kind, player):
        self.last_kind = kind
        self.last_player = player
        self.last_rev = self.rev

    @micropython.native
    def _check_player(self, player):
        if not isinstance(player, int) or player < 0 or player >= self.players:
            raise GameError("bad_player", "no such player")

    def _save_snapshot(self):
        """The state saved as an undo step, before the caller changes it."""
        _move(self, -1, 0, 0)


@micropython.viper
def _move(game, player: int, front: int, back: int) -> int:
    """One undoable change of `game` (a GameState): the state saved as an undo step, then
    (unless player is -1: the undo step alone, for _save_snapshot) the player's pegs put at
    front and back (checked by the caller), the player's preview cleared and the game settled;
    returns the new revision. With back _PEG, a peg of `front` points (score): checked here
    first, then the front moved on by them (at most to the target) and the back to where it
    was. (One function for all: a peg is then one call, each attribute read once. A function
    of the module, not a method: a method's name is first looked for among the instance's
    attributes, where it is never found, and a miss costs more than a hit.)"""
    players = int(game.players)
    target = int(game.target)
    old = int(game.winner)
    fronts = game.front
    if back == _PEG:  # (nothing changed before these checks)
        if player < 0 or player >= players:
            raise GameError("bad_player", "no such player")
        if front < 1 or front > _MAX_POINTS:
            raise GameError("bad_points", "points must be 1..29")
        if old != NO_WINNER:
            raise GameError("game_over", "the game is over: start a new game or undo")
        back = int(fronts[player])
        front += back
        if front > target:
            front = target
    snap = ptr16(game._undo)
    top = int(game._undo_top)
    base = top * SNAPSHOT_LEN
    old_award = int(game.award)
    snap[base + _S_PLAYERS] = players
    snap[base + _S_TARGET] = target
    snap[base + _S_DEALER] = int(game.dealer)
    snap[base + _S_WINNER] = old
    snap[base + _S_AWARD] = old_award
    backs = game.back
    games = game.games
    for p in range(_MAX_PLAYERS):
        snap[base + _S_FRONT + p] = int(fronts[p])
        snap[base + _S_BACK + p] = int(backs[p])
        snap[base + _S_GAMES + p] = int(games[p])
    game._undo_top = top + 1 if top + 1 < UNDO_DEPTH else 0
    undo_count = int(game.undo_count)
    if undo_count < UNDO_DEPTH:
        game.undo_count = undo_count + 1
    if player < 0:
        return 0
    old_result = PLAYING
    if old != NO_WINNER:
        old_result = int(game.result())
    fronts[player] = front
    backs[player] = back
    pending = game.pending
    pending[player] = 0
    # The winner follows from the pegs; games won stay in step with it, so a correction
    # that takes a peg back out of the win hole also takes the win back: exactly the games
    # the win added and still in the tally (`award`; 0 once the tally was cleared). A
    # correction that keeps the winner settles the game again only when the result
    # changed, and only while the win's games are in the tally.
    winner = NO_WINNER
    for p in range(players):
        if int(fronts[p]) >= target:
            winner = p
    game.winner = winner
    if winner != NO_WINNER and winner == old:
        result = int(game.result())
        if old_award != 0 and result != old_result:
            award = 1
            if game.skunk_double:
                if result >= SKUNK:
                    award = 2
            games[winner] = int(games[winner]) - old_award + award
            game.award = award
    else:
        if old != NO_WINNER:
            games[old] = int(games[old]) - old_award
        award = 0
        if winner != NO_WINNER:
            award = 1
            if game.skunk_double:
                if int(game.result()) >= SKUNK:
                    award = 2
            games[winner] = int(games[winner]) + award
        game.award = award
    rev = int(game.rev) + 1
    game.rev = rev
    return rev


def _check_players(players):
    if players not in PLAYER_COUNTS:
        raise GameError("bad_players", "players must be 2 (or two partnerships) or 3")


def _check_target(target):
    if target not in TARGETS:
        raise GameError("bad_target", "target must be 61 or 121")
