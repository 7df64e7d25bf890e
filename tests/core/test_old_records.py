# Records as the firmware wrote them when these tests were added (format version 1 of each, and
# versions 2 and 3 of the game's), as literal bytes: a board updated in the field reads what the
# old firmware left on its flash, and writes the same bytes for the same state (the formats never
# change silently). Under CPython (pytest) and MicroPython (mprun.py).
from binascii import unhexlify

from checks import NorFlash
from test_store import Settings, kept_board, state, with_root
from test_store import played as played3

from cribcore.protocol import VERBS, LineWriter
from cribcore.state import GameState
from cribfw.admission import Admission
from cribfw.admitfile import AdmitRecords
from cribfw.gamerecord import decode, encode
from cribfw.hallmemory import CommandMemory
from cribfw.replies import Books
from cribfw.ring import Ring
from cribfw.store import Store


def played():
    """A board with something in every saved field of versions 1 and 2 (as test_store.played()
    made it when those bytes were written), and its settings."""
    b = GameState()
    b.set_skunk_double(True)
    b.set_pegs(0, 115, 100)
    b.set_pegs(1, 50, 40)
    b.peg(0, 8)  # a double skunk: two games
    b.new_game(61)
    b.peg(1, 12)
    b.peg(0, 5)
    b.peg(1, 3)
    b.undo()
    b.next_dealer()
    b.set_pending(0, 4)  # not saved
    return b, Settings(77, 900)


# played() saved with seq 7: header, 18 int16s, 7 undo rows, crc32.
GAME = unhexlify(
    "435249420100e8000700000002003d000000ffff0000010005000c0000000000000000000200000000004d00"
    "84030700020079000000ffff0000000000000000000000000000000000000000020079000000ffff00007300"
    "00000000640000000000000000000000020079000000ffff00007300320000006400280000000000000000"
    "000200790000000000020079003200000073002800000002000000000002003d000100ffff000000000000"
    "000000000000000002000000000002003d000100ffff000000000c0000000000000000000200000000000200"
    "3d000100ffff000005000c0000000000000000000200000000002a5c1bed"
)
# Version 2: played() saved with seq 7 and the ids of the requests that made it (their changes
# are in it): the USB host's a1b2 and 12345678 (its e1 was an error: not kept), and p1 from the
# central PHONE.
GAME2 = unhexlify(
    "4352494202000a010700000002003d000000ffff0000010005000c0000000000000000000200000000004d00"
    "84030700020079000000ffff0000000000000000000000000000000000000000020079000000ffff00007300"
    "00000000640000000000000000000000020079000000ffff0000730032000000640028000000000000000000"
    "0200790000000000020079003200000073002800000002000000000002003d000100ffff0000000000000000"
    "00000000000002000000000002003d000100ffff000000000c00000000000000000002000000000002003d00"
    "0100ffff000005000c00000000000000000002000000000002ffffffffffffff020461316232083132333435"
    "363738014a1122334455010270314d5205b7"
)
# Version 3: test_store.played() (a match won, the next won, a third going on; two games in the
# history) saved with seq 7 and the same ids.
GAME3 = unhexlify(
    "435249420300c6010700000002003d000100ffff0000010005000c0000000000000000000000000000004d00"
    "84030b002c0100000400000003000000ffffffff010003021e0079000000ffff000000000000000000000000"
    "0000000000000000020079000100ffff0000000000000000000000000000000000000000020079000100ffff"
    "0000730000000000640000000000000000000000020079000100ffff00007300320000006400280000000000"
    "000000007e00790001000000060079003200000073002800000002000000000002003d000100ffff00000000"
    "0000000000000000000000000000000002003d000100ffff000000003c000000000032000000000000000000"
    "7e003d0001000100060000003d00000000003c00000000000200000002003d000000ffff0000000000000000"
    "00000000000000000000000002003d000000ffff000000000c00000000000000000000000000000002003d00"
    "0000ffff000005000c0000000000000000000000000000000200000022010000010000000103793279320073"
    "2800020000000000030000002c0100000200000001033d26003d00003c0000000200000002ffffffffffffff"
    "020461316232083132333435363738014a1122334455010270315fc026b8"
)
# Open mode, two devices admitted (a random address, then a public one).
PHONE = b"\x01\x4a\x11\x22\x33\x44\x55"
LAPTOP = b"\x00\x00\x1a\x7d\xda\x71\x13"
ADMITTED = unhexlify("41444d54010102014a112233445500001a7dda71138075aafa")
# The last hall command run, c-42, and its ack.
COMMAND_ID = b"c-42"
ACK = b'{"id":"c-42","ok":true}'
HALL = unhexlify("48414c4c0104632d343217007b226964223a22632d3432222c226f6b223a747275657d4c3c5488")


def old_state(board, settings):
    """What a record of version 1 or 2 keeps of `board`: not the game's numbers, the match or
    the history, nor what an undo step keeps of them (version 3)."""
    kept = state(board, settings)
    rows = [[row[0] & 3] + row[1:4] + [row[4] & 3] + row[5:] for row in kept[9]]
    return kept[:9] + (rows,) + kept[10:12]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_a_game_saved_in_files_by_the_old_firmware_is_read():
    def run(root):
        write(root + "/cribboard.dat", GAME)
        board = GameState()
        settings = Settings()
        store = Store(root)
        assert store.load(board, settings) == "saved" and store.seq == 7
        assert old_state(board, settings) == old_state(*played())

    with_root(run)


def test_a_game_cut_in_its_tmp_file_by_the_old_firmware_is_finished():
    def run(root):
        write(root + "/cribboard.tmp", GAME)  # cut after the write, before the renames
        board = GameState()
        settings = Settings()
        assert Store(root).load(board, settings) == "saved"
        assert old_state(board, settings) == old_state(*played())
        assert read(root + "/cribboard.dat") == GAME

    with_root(run)


def test_a_game_saved_in_a_ring_by_the_old_firmware_is_read():
    ring = Ring(NorFlash(count=2), 0, 2)
    ring.append(GAME)
    board = GameState()
    settings = Settings()
    assert Store(Ring(ring.device, 0, 2)).load(board, settings) == "saved"
    assert old_state(board, settings) == old_state(*played())


PEG = VERBS.index(b"peg")


def played_books():
    """The resend memory GAME2 was saved with."""
    books = Books()
    reply = LineWriter(16)
    reply.text(b"#x ok r=1\n")
    books.usb.remember(b"a1b2", 0, 4, reply, PEG)
    books.usb.remember(b"e1", 0, 2, reply, -1)  # (refused)
    books.usb.remember(b"12345678", 0, 8, reply, PEG)
    books.most = 4
    books.join(PHONE, lambda address: True).remember(b"p1", 0, 2, reply, PEG)
    return books


def kept(books):
    """What `books` would keep in a record, as decode reads it back."""
    return decode(encode(GameState(), Settings(), 0, books))[3]


def test_a_game_is_saved_in_the_same_bytes():
    def run(root):
        store = Store(root, books=played_books())
        store.seq = 6
        assert store.save(*played3())
        assert read(root + "/cribboard.dat") == GAME3

    with_root(run)


def test_a_game_of_version_3_is_read_with_its_match_and_history():
    def run(root):
        write(root + "/cribboard.dat", GAME3)
        board = kept_board()
        settings = Settings()
        books = Books()
        assert Store(root, books=books).load(board, settings) == "saved"
        assert state(board, settings) == state(*played3())
        assert kept(books) == [(b"\xff" * 7, [b"a1b2", b"12345678"]), (PHONE, [b"p1"])]

    with_root(run)


def test_a_game_of_version_2_is_read_with_its_ids():
    def run(root):
        write(root + "/cribboard.dat", GAME2)
        board = kept_board()
        settings = Settings()
        books = Books()
        assert Store(root, books=books).load(board, settings) == "saved"
        assert old_state(board, settings) == old_state(*played())
        # Before version 3: the game the board shows is its first, no match, no history.
        assert board.game_no == 1 and board.match_len == 0 and board.history.count == 0
        assert kept(books) == [(b"\xff" * 7, [b"a1b2", b"12345678"]), (PHONE, [b"p1"])]

    with_root(run)


def test_a_game_of_version_1_brings_back_no_ids_and_is_saved_as_version_3():
    def run(root):
        write(root + "/cribboard.dat", GAME)
        board = kept_board()
        settings = Settings()
        books = Books()
        store = Store(root, books=books)
        assert store.load(board, settings) == "saved" and kept(books) == []
        assert board.game_no == 1 and board.match_len == 0 and board.history.count == 0
        board.peg(0, 1)
        assert store.save(board, settings)
        assert read(root + "/cribboard.dat")[4] == 3

    with_root(run)


def test_admissions_saved_by_the_old_firmware_are_read_and_saved_in_the_same_bytes():
    def run(root):
        path = root + "/admitted.dat"
        write(path, ADMITTED)
        admission = Admission()
        assert admission.keep(AdmitRecords(path))
        assert admission.open and admission.count == 2
        assert admission.knows(PHONE) and admission.knows(LAPTOP)
        again = root + "/again.dat"
        AdmitRecords(again).save(admission)
        assert read(again) == ADMITTED

    with_root(run)


def test_the_hall_command_saved_by_the_old_firmware_is_read_and_saved_in_the_same_bytes():
    def run(root):
        path = root + "/hall-last.dat"
        write(path, HALL)
        memory = CommandMemory(path)
        assert memory.ran(COMMAND_ID) and memory.last_ack == ACK
        again = root + "/again.dat"
        CommandMemory(again).remember(COMMAND_ID, ACK)
        assert read(again) == HALL

    with_root(run)
