# The game's record: the whole board state the store keeps on the flash (pegs, undo history,
# dealer, games won, target, settings), as bytes and back. Used by the store (cribfw/store.py: when
# to save, and the records in a raw flash ring) and by its files (cribfw/storefiles.py); the
# magic, version and crc32 are every flash record's (cribfw/flashrecord.py).
#
# The record (version 3, little-endian; 73 bytes plus 28 per undo step, 28 per game in the
# history and the ids, 3961 bytes at most: a ring entry of 16 pages, one 4 KB block):
#   0  b"CRIB"         magic
#   4  u8 version      3 (versions 1 and 2, below, are read too); another version is not read
#                      (never guessed at): OTHER_VERSION
#   5  u8 0            reserved
#   6  u16 body bytes
#   8  u32 seq         +1 on every save: the newest valid record wins at boot
#   12 body            18 int16s: players target dealer winner award x2 front[3] back[3] games[3]
#                      brightness budget_ma undo_count;
#   48                 u32 life: the board's time switched on, in seconds, at this save (left out
#                      of body_crc: a save is made for a change of the board, not of the clock);
#                      u32 game number, u32 match number, i32 when the game on the board was won
#                      (life seconds; -1: not won or not known), u16 which game of the match,
#                      u8 the match's form (kind << 4 | length; 0: no match), u8 games in the
#                      history;
#   68                 the undo rows, 14 int16s each, oldest first (GameState.undo_rows():
#                      state.py's snapshot layout); the history's games, oldest first
#                      (cribcore/history.py's entries); then the ids of the requests that made
#                      it (cribfw/replies.py, Books.durable()): u8 senders, and for each its 7
#                      bytes, u8 ids, and each id as u8 length and its bytes
#   .. u32 crc32       binascii.crc32 of everything before it
# Version 2 is the same without the block at 48 and the history (a board that read one numbers
# its game 1, no match, no history); version 1 is version 2 without the ids.
# The ids are in the record of the game they changed, so a change and its id are saved or lost
# together: a request resent after a power cut is recognised exactly when its change came back;
# so is the history: a game and its place there.
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

from cribcore.games import FORM_SHIFT, match_form_ok
from cribcore.history import ENTRY, entry_ok
from cribcore.limits import HISTORY_KEPT, MAX_BRIGHTNESS, MAX_BUDGET_MA, MIN_BUDGET_MA, TARGETS
from cribfw.flashrecord import blank, crc32, seal, sealed, version
from cribfw.replies import MAX_BOOKS, RECENT, SENDER

_MAX_ID = const(8)  # cribcore.protocol.MAX_ID

BAD = const(0)  # decode(): damaged, truncated or impossible
OTHER_VERSION = const(1)  # decode(): an intact record of another version
_VERSION = const(3)
_HEADER = const(12)
_FIXED = const(18)  # int16s before the game's numbers; MAX_PLAYERS (3) values per list
_NUMBERS = const(48)  # the game's numbers (version 3): _HEADER + 2 * _FIXED
_ROWS = const(68)  # the undo rows (version 3): _NUMBERS + 20
_FRONT = const(6)  # front[3] at 6, back[3] at 9, games[3] at 12
_BRIGHT = const(15)
_BUDGET = const(16)
_UNDO = const(17)
_ROW = const(14)  # cribcore.state.SNAPSHOT_LEN
# _ROWS + 2 * 64 * _ROW + 4: a full undo ring (UNDO_DEPTH); HISTORY_KEPT games of ENTRY bytes;
# and the ids, at most 1 + MAX_BOOKS * (SENDER + 1 + RECENT * (1 + _MAX_ID)).
MAX_RECORD = const(3961)


def encode(board, renderer, seq, books=None):
    """The record of `board` (its history too, when it keeps one), the renderer's settings and
    the durable ids of `books` (a cribfw.replies.Books; None: no ids), as a bytearray. About 1 ms
    on a Pico with a game's undo history (the rows go in as one struct call:
    GameState.pack_undo)."""
    count = board.undo_count
    history = board.history
    games = history.count if history is not None else 0
    rows_end = _ROWS + 2 * count * _ROW
    history_end = rows_end + games * ENTRY
    end = history_end + (books.durable(None, 0) if books is not None else 1)
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
    struct.pack_into(
        "<IIIiHBB",
        rec,
        _NUMBERS,
        history.life() if history is not None else 0,
        board.game_no,
        board.match_no,
        history.won_at if history is not None and board.winner >= 0 else -1,
        board.match_game,
        board.match_kind << 4 | board.match_len if board.match_len else 0,
        games,
    )
    board.pack_undo(rec, _ROWS)
    if history is not None:
        history.pack(rec, rows_end)
    if books is not None:
        books.durable(rec, history_end)  # (none: their count, 0, is there already)
    seal(rec)
    return rec


def decode(data):
    """(seq, fixed values, undo rows, ids, numbers, history) from a record's bytes, or BAD or
    OTHER_VERSION; the ids as Books.restore() takes them ([] from a version 1 record); numbers:
    (life, game, match, ended, match game, form, games in the history); history: (data, where
    its games start) for History.load. Checks magic, length, checksum, version and that every
    value is one the board can reach. Whatever a cut or a worn block left, it raises nothing
    but MemoryError."""
    try:
        found = version(data, b"CRIB", _HEADER + 4)
        if found < 0:
            return BAD
        body, seq = struct.unpack_from("<HI", data, 6)
        end = _HEADER + body
        if not sealed(data, end):
            return BAD
        if found < 1 or found > _VERSION:
            return OTHER_VERSION
        rows = _ROWS if found == _VERSION else _NUMBERS
        if end < rows:
            return BAD
        fixed = struct.unpack_from("<18h", data, _HEADER)
        numbers = (0, 1, 0, -1, 0, 0, 0)
        if found == _VERSION:
            numbers = struct.unpack_from("<IIIiHBB", data, _NUMBERS)
        count = fixed[_UNDO]
        if not 0 <= count <= 64 or not _numbers_ok(numbers, fixed):
            return BAD
        rows_end = rows + 2 * count * _ROW
        history_end = rows_end + numbers[6] * ENTRY
        kept = []
        if found == 1:
            ids_ok = rows_end == end
        else:
            ids_ok = history_end < end and _read_ids(data, history_end, end, kept)
        if (
            not ids_ok
            or not _sane(fixed, _FRONT, 0xFFFF)
            or fixed[5] not in (0, 1)
            or not 0 <= fixed[_BRIGHT] <= MAX_BRIGHTNESS
            or not MIN_BUDGET_MA <= fixed[_BUDGET] <= MAX_BUDGET_MA
        ):
            return BAD
        undo = []
        for i in range(count):
            row = struct.unpack_from("<14h", data, rows + 2 * i * _ROW)
            # state.py's snapshot: players target dealer winner award, a step's own bits above
            # the players' and the award's (a match's form among them)
            form = row[0] >> FORM_SHIFT
            if not _sane(row, 5, 3) or (form and not match_form_ok(form >> 4, form & 15)):
                return BAD
            undo.append(row)
        for i in range(numbers[6]):
            if not entry_ok(struct.unpack_from("<IIIBBBB3B3B3H", data, rows_end + i * ENTRY)):
                return BAD
        return seq, fixed, undo, kept, numbers, (data, rows_end)
    except MemoryError:
        raise  # not the record's fault: never judge a good save corrupt for want of memory
    except Exception:
        return BAD


def _numbers_ok(numbers, fixed):
    # The game's numbers (version 3): a game number from 1, a match's form the board plays
    # (with its game from 1) or none, a win's time only with a winner, a history the board keeps.
    life, game, match, ended, match_game, form, games = numbers
    if form:
        if not match_form_ok(form >> 4, form & 15) or match_game < 1 or match < 1:
            return False
    elif match_game:
        return False
    return game >= 1 and ended <= life and (ended < 0 or fixed[3] >= 0) and games <= HISTORY_KEPT


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


def _sane(v, pegs, low):
    # players, target, dealer, winner, award at v[0..4], front[3], back[3] and games[3] from
    # v[pegs]: a state the board can reach. A won game may have credited nothing (its games were
    # cleared from the tally), but a credit needs a winner; the tally never goes below zero.
    # `low`: the bits of players and award that are theirs (an undo step keeps more above).
    players = v[0] & low
    award = v[4] & low
    target = v[1]
    winner = v[3]
    if (
        players not in (2, 3)
        or target not in TARGETS
        or not 0 <= v[2] < players
        or not -1 <= winner < players
        or not 0 <= award <= 2
        or (winner < 0 and award != 0)
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
    numbers = rec[4]
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
    board.game_no = numbers[1]
    board.match_no = numbers[2]
    board.match_game = numbers[4]
    board.match_kind = numbers[5] >> 4
    board.match_len = numbers[5] & 15
    history = board.history
    if history is not None:
        history.life_base = numbers[0]
        history.won_at = numbers[3]
        history.load(rec[5][0], rec[5][1], numbers[6])
    renderer.brightness = f[_BRIGHT]
    renderer.budget_ma = f[_BUDGET]


def body_crc(rec):
    """The crc32 of a record's saved fields alone (no header, no seq, not the board's clock):
    equal bodies, equal state."""
    view = memoryview(rec)
    return crc32(view[_NUMBERS + 4 : len(rec) - 4], crc32(view[_HEADER:_NUMBERS])) & 0xFFFFFFFF
