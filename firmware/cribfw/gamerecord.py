# The game's record: the whole board state the store keeps on the flash (pegs, undo history,
# dealer, games won, target, settings), as bytes and back. Used by the store (cribfw/store.py: when
# to save, and the records in a raw flash ring) and by its files (cribfw/storefiles.py); the
# magic, version and crc32 are every flash record's (cribfw/flashrecord.py).
#
# The record (version 2, little-endian; 53 bytes plus 28 per undo step plus the ids, 3045 bytes
# at most):
#   0  b"CRIB"         magic
#   4  u8 version      2 (version 1, the same without the ids, is read too); another version is
#                      not read (never guessed at): OTHER_VERSION
#   5  u8 0            reserved
#   6  u16 body bytes
#   8  u32 seq         +1 on every save: the newest valid record wins at boot
#   12 body            18 int16s: players target dealer winner award x2 front[3] back[3] games[3]
#                      brightness budget_ma undo_count; then the undo rows, 14 int16s each, oldest
#                      first (GameState.undo_rows(): state.py's snapshot layout); then the ids of
#                      the requests that made it (cribfw/replies.py, Books.durable()): u8 senders,
#                      and for each its 7 bytes, u8 ids, and each id as u8 length and its bytes
#   .. u32 crc32       binascii.crc32 of everything before it
# The ids are in the record of the game they changed, so a change and its id are saved or lost
# together: a request resent after a power cut is recognised exactly when its change came back.
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
from cribfw.replies import MAX_BOOKS, RECENT, SENDER

_MAX_ID = const(8)  # cribcore.protocol.MAX_ID

BAD = const(0)  # decode(): damaged, truncated or impossible
OTHER_VERSION = const(1)  # decode(): an intact record of another version
_VERSION = const(2)
_HEADER = const(12)
_FIXED = const(18)  # int16s before the undo rows; MAX_PLAYERS (3) values per list
_FRONT = const(6)  # front[3] at 6, back[3] at 9, games[3] at 12
_BRIGHT = const(15)
_BUDGET = const(16)
_UNDO = const(17)
_ROW = const(14)  # cribcore.state.SNAPSHOT_LEN
# _HEADER + 2 * (_FIXED + 64 * _ROW) + 4: a full undo ring (UNDO_DEPTH); and the ids, at most
# 1 + MAX_BOOKS * (SENDER + 1 + RECENT * (1 + _MAX_ID)).
MAX_RECORD = const(3045)


def encode(board, renderer, seq, books=None):
    """The record of `board`, the renderer's settings and the durable ids of `books` (a
    cribfw.replies.Books; None: no ids), as a bytearray. About 1 ms on a Pico with a game's undo
    history (the rows go in as one struct call: GameState.pack_undo)."""
    count = board.undo_count
    rows_end = _HEADER + 2 * (_FIXED + count * _ROW)
    end = rows_end + (books.durable(None, 0) if books is not None else 1)
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
    if books is not None:
        books.durable(rec, rows_end)  # (none: their count, 0, is there already)
    seal(rec)
    return rec


def decode(data):
    """(seq, fixed values, undo rows, ids) from a record's bytes, or BAD or OTHER_VERSION; the
    ids as Books.restore() takes them ([] from a version 1 record). Checks magic, length,
    checksum, version and that every value is one the board can reach. Whatever a cut or a worn
    block left, it raises nothing but MemoryError."""
    try:
        found = version(data, b"CRIB", _HEADER + 4)
        if found < 0:
            return BAD
        body, seq = struct.unpack_from("<HI", data, 6)
        end = _HEADER + body
        if not sealed(data, end):
            return BAD
        if found != _VERSION and found != 1:
            return OTHER_VERSION
        if body < 2 * _FIXED:
            return BAD
        fixed = struct.unpack_from("<18h", data, _HEADER)
        count = fixed[_UNDO]
        if not 0 <= count <= 64:
            return BAD
        rows_end = _HEADER + 2 * (_FIXED + count * _ROW)
        kept = []
        if found == 1:
            ids_ok = rows_end == end
        else:
            ids_ok = rows_end < end and _read_ids(data, rows_end, end, kept)
        if (
            not ids_ok
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
        return seq, fixed, rows, kept
    except MemoryError:
        raise  # not the record's fault: never judge a good save corrupt for want of memory
    except Exception:
        return BAD


def _read_ids(data, at, end, kept):
    # The ids section from `at` to `end` into `kept`: True when it is whole and sound.
    senders = data[at]
    at += 1
    if senders > MAX_BOOKS:
        return False
    for _ in range(senders):
        if at + SENDER + 1 > end:
            return False
        sender = bytes(data[at : at + SENDER])
        count = data[at + SENDER]
        at += SENDER + 1
        if not 0 < count <= RECENT:
            return False
        ids = []
        for _ in range(count):
            n = data[at] if at < end else 0
            if not 0 < n <= _MAX_ID or at + 1 + n > end:
                return False
            ids.append(bytes(data[at + 1 : at + 1 + n]))
            at += 1 + n
        kept.append((sender, ids))
    return at == end


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


def apply(rec, board, renderer, books=None):
    """Put a decoded record into `board`, the renderer's settings and the remembered ids of
    `books` (a cribfw.replies.Books, or None) (rev is left alone)."""
    if books is not None:
        books.restore(rec[3])
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
