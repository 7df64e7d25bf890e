# The game's record: the whole board state the store keeps on the flash (pegs, undo history,
# dealer, games won, target, settings), as bytes and back. Used by the store (cribfw/store.py: when
# to save, and the records in a raw flash ring) and by its files (cribfw/storefiles.py); the
# magic, version and crc32 are every flash record's (cribfw/flashrecord.py).
#
# The record (version 1, little-endian; 52 bytes plus 28 per undo step, 1844 bytes at most):
#   0  b"CRIB"         magic
#   4  u8 version      1; another version is not read (never guessed at): OTHER_VERSION
#   5  u8 0            reserved
#   6  u16 body bytes  2 * (18 + undo steps * 14)
#   8  u32 seq         +1 on every save: the newest valid record wins at boot
#   12 body            18 int16s: players target dealer winner award x2 front[3] back[3] games[3]
#                      brightness budget_ma undo_count; then the undo rows, 14 int16s each, oldest
#                      first (GameState.undo_rows(): state.py's snapshot layout)
#   .. u32 crc32       binascii.crc32 of everything before it
# Not kept: the pending previews (a preview is not a move) and `rev` (it starts again at 0 after
# a restart; hosts resync on the `! hello` the board sends when it starts).
#
# Kept small on purpose (few globals): its bytecode lives in the board's RAM next to everything
# else (see test_board_is_usable_in_a_68k_heap).

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


import struct

from cribcore.limits import MAX_BRIGHTNESS, MAX_BUDGET_MA, MIN_BUDGET_MA, TARGETS
from cribfw.flashrecord import blank, crc, seal, sealed, version

BAD = const(0)  # decode(): damaged, truncated or impossible
OTHER_VERSION = const(1)  # decode(): an intact record of another version
_VERSION = const(1)
_HEADER = const(12)
_FIXED = const(18)  # int16s before the undo rows; MAX_PLAYERS (3) values per list
_FRONT = const(6)  # front[3] at 6, back[3] at 9, games[3] at 12
_BRIGHT = const(15)
_BUDGET = const(16)
_UNDO = const(17)
_ROW = const(14)  # cribcore.state.SNAPSHOT_LEN
MAX_RECORD = const(1844)  # _HEADER + 2 * (_FIXED + 64 * _ROW) + 4: a full undo ring (UNDO_DEPTH)


def encode(board, renderer, seq):
    """The record of `board` and the renderer's settings, as a bytearray. About 1 ms on a Pico
    with a game's undo history (the rows go in as one struct call: GameState.pack_undo)."""
    count = board.undo_count
    end = _HEADER + 2 * (_FIXED + count * _ROW)
    rec = blank(b"CRIB", _VERSION, end)
    struct.pack_into("<HI", rec, 6, end - _HEADER, seq)  # byte 5, reserved, stays 0
    struct.pack_into(
        "<18h",
        rec,
        _HEADER,
        board.players,
        board.target,
        board.dealer,
        board.winner,
        board.award,
        1 if board.skunk_double else 0,
        board.front[0],
        board.front[1],
        board.front[2],
        board.back[0],
        board.back[1],
        board.back[2],
        board.games[0],
        board.games[1],
        board.games[2],
        renderer.brightness,
        renderer.budget_ma,
        count,
    )
    board.pack_undo(rec, _HEADER + 2 * _FIXED)
    seal(rec)
    return rec


def decode(data):
    """(seq, fixed values, undo rows) from a record's bytes, or BAD or OTHER_VERSION. Checks
    magic, length, checksum, version and that every value is one the board can reach. Whatever
    a cut or a worn block left, it raises nothing but MemoryError."""
    try:
        found = version(data, b"CRIB", _HEADER + 4)
        if found < 0:
            return BAD
        body, seq = struct.unpack_from("<HI", data, 6)
        end = _HEADER + body
        if not sealed(data, end):
            return BAD
        if found != _VERSION:
            return OTHER_VERSION
        count = (body - 2 * _FIXED) // (2 * _ROW)
        if body != 2 * (_FIXED + count * _ROW) or not 0 <= count <= 64:
            return BAD
        fixed = struct.unpack_from("<18h", data, _HEADER)
        if (
            fixed[_UNDO] != count
            or not _sane(fixed, _FRONT)
            or fixed[5] not in (0, 1)
            or not 0 <= fixed[_BRIGHT] <= MAX_BRIGHTNESS
            or not MIN_BUDGET_MA <= fixed[_BUDGET] <= MAX_BUDGET_MA
        ):
            return BAD
        rows = []
        for i in range(count):
            row = struct.unpack_from("<14h", data, _HEADER + 2 * (_FIXED + i * _ROW))
            if not _sane(row, 5):  # state.py's snapshot: players target dealer winner award
                return BAD
            rows.append(row)
        return seq, fixed, rows
    except MemoryError:
        raise  # not the record's fault: never judge a good save corrupt for want of memory
    except Exception:
        return BAD


def _sane(v, pegs):
    # players, target, dealer, winner, award at v[0..4], front[3], back[3] and games[3] from
    # v[pegs]: a state the board can reach. A won game may have credited nothing (its games were
    # cleared from the tally), but a credit needs a winner; the tally never goes below zero.
    players = v[0]
    target = v[1]
    winner = v[3]
    if (
        players not in (2, 3)
        or target not in TARGETS
        or not 0 <= v[2] < players
        or not -1 <= winner < players
        or not 0 <= v[4] <= 2
        or (winner < 0 and v[4] != 0)
    ):
        return False
    for p in range(3):
        front = v[pegs + p]
        if not 0 <= v[pegs + 3 + p] <= front <= target or v[pegs + 6 + p] < 0:
            return False
        if p < players and (front == target) != (p == winner):
            return False
    return True


def apply(rec, board, renderer):
    """Put a decoded record into `board` and the renderer's settings (rev is left alone)."""
    f = rec[1]
    board.players = f[0]
    board.target = f[1]
    board.dealer = f[2]
    board.winner = f[3]
    board.award = f[4]
    board.skunk_double = bool(f[5])
    for p in range(3):
        board.front[p] = f[_FRONT + p]
        board.back[p] = f[_FRONT + 3 + p]
        board.games[p] = f[_FRONT + 6 + p]
        board.pending[p] = 0
    board.load_undo_rows(rec[2])
    renderer.brightness = f[_BRIGHT]
    renderer.budget_ma = f[_BUDGET]


def body_crc(rec):
    """The crc32 of a record's saved fields alone (no header, no seq): equal bodies, equal
    state."""
    return crc(rec, len(rec) - 4, _HEADER)
