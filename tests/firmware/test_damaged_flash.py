"""A damaged flash on the virtual board: the board still starts, says what happened in its hello,
and keeps or reports its game (issue: the board keeps its word; docs/virtual-board.md).

The virtual board is a cribboard image: the firmware is in the image (not on the file system),
the game in a ring of records in a raw region of the flash, and a boot guard (firmware/cribboot.py
with the launcher as the watchdog) turns a boot that crashes or hangs MicroPython into a reset;
after two of them in a row the file system is formatted.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import serial

from cribboard.api import SyncBoard
from cribboard.virtual import VirtualBoard
from cribboot import STATE_BLOCKS, WATCH_MS
from support import saved_games, wait_saved_sync

BLOCK = 4096


def blocks_end(image: bytearray) -> int:
    """Where a virtual board's flash image's blocks end: its uid follows them."""
    return len(image) - len(image) % BLOCK


FILES = (
    "import os\n"
    "for d in range(4):\n"
    "    os.mkdir('d%d' % d)\n"
    "    for f in range(6):\n"
    "        with open('d%d/f%d.txt' % (d, f), 'w') as out:\n"
    "            out.write('x' * (300 * f + d))\n"
)


def mpremote(port: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "mpremote", "connect", port, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def played_image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A flash image with files on its file system and a game (blue 12, orange 7) saved."""
    image = tmp_path_factory.mktemp("flash") / "played.img"
    with VirtualBoard(flash=image) as board:
        mpremote(board.port, "exec", FILES)
        board.reset()
        with SyncBoard.open(board.port, timeout=10) as link:
            link.peg(0, 12)
            wait_saved_sync(image, lambda game: game.front[:2] == [12, 0])
            link.peg(1, 7)
            wait_saved_sync(image, lambda game: game.front[:2] == [12, 7])
    return image


def used_fs_blocks(image: bytes) -> list[int]:
    fs_blocks = len(image) // BLOCK - 36  # cribboot.RESERVED_BLOCKS
    return [b for b in range(fs_blocks) if image[b * BLOCK : (b + 1) * BLOCK] != b"\xff" * BLOCK]


def open_board(image: Path) -> tuple[VirtualBoard, SyncBoard]:
    board = VirtualBoard(flash=image).start()
    try:
        # A boot that crashes or hangs costs the watchdog's time, twice at most, before the guard
        # formats the file system: allow for that.
        return board, SyncBoard.open(board.port, timeout=3 * WATCH_MS / 1000 + 5)
    except BaseException:
        board.stop()
        raise


@pytest.mark.parametrize("seed", range(6))
def test_random_damage_to_the_file_system_never_costs_the_game(
    played_image: Path, tmp_path: Path, seed: int
) -> None:
    data = bytearray(played_image.read_bytes())
    rng = random.Random(seed)
    used = used_fs_blocks(bytes(data))
    for _ in range(16):
        block = rng.choice(used)
        data[block * BLOCK + rng.randrange(BLOCK)] = rng.randrange(256)
    image = tmp_path / "damaged.img"
    image.write_bytes(data)
    board, link = open_board(image)
    try:
        assert link.hello.fields["store"] == "saved"
        assert link.hello.fields["fs"] in ("ok", "formatted")
        assert link.state().front == [12, 7]
        link.peg(0, 3)  # and the game goes on
    finally:
        link.close()
        board.stop()


def test_a_file_system_that_crashes_micropython_is_formatted_after_two_tries(
    played_image: Path, tmp_path: Path
) -> None:
    """MicroPython dying (signal 11) while it reads the file system at boot: here a boot.py on
    the flash that reads memory it must not, as corrupted littlefs metadata makes it do."""
    image = tmp_path / "crashing.img"
    shutil.copyfile(played_image, image)
    with VirtualBoard(flash=image) as board:
        crash = "import uctypes\nuctypes.bytearray_at(16, 4)[0]\n"
        mpremote(board.port, "exec", f"with open('boot.py', 'w') as f: f.write({crash!r})")
    board, link = open_board(image)
    try:
        assert board.watchdog_resets == 2
        fields = link.hello.fields
        assert (fields["fs"], fields["boots"], fields["store"]) == ("formatted", "2", "saved")
        assert link.state().front == [12, 7]
        link.close()  # (one program on the port at a time)
        assert "d0" not in mpremote(board.port, "fs", "ls")  # the file system is a new one
        board.reset()  # a power cycle: an ordinary start again
        link = SyncBoard.open(board.port, timeout=10)
        assert link.hello.fields["fs"] == "ok" and "boots" not in link.hello.fields
    finally:
        link.close()
        board.stop()


def test_a_file_system_that_hangs_the_boot_is_formatted_after_two_tries(
    played_image: Path, tmp_path: Path
) -> None:
    """MicroPython stuck in the file system's code at boot (a loop in corrupted metadata): here
    a boot.py that blocks without returning to Python."""
    image = tmp_path / "hanging.img"
    shutil.copyfile(played_image, image)
    with VirtualBoard(flash=image) as board:
        hang = "import time\ntime.sleep(3600)\n"
        mpremote(board.port, "exec", f"with open('boot.py', 'w') as f: f.write({hang!r})")
    board, link = open_board(image)
    try:
        assert board.watchdog_resets == 2
        assert (link.hello.fields["fs"], link.hello.fields["boots"]) == ("formatted", "2")
        assert link.state().front == [12, 7]
    finally:
        link.close()
        board.stop()


def test_a_cut_or_damaged_newest_save_falls_back_to_the_one_before(
    played_image: Path, tmp_path: Path
) -> None:
    data = bytearray(played_image.read_bytes())
    games = saved_games(played_image)
    assert [g.front[:2] for g in games[-2:]] == [[12, 0], [12, 7]]
    # the newest record: the ring appends in order in one block (the blocks end before the
    # virtual board's uid, cribboard.virtual.flashuid)
    newest = data.rfind(b"CRIB", 0, blocks_end(data))
    data[newest + 30] ^= 0x40
    image = tmp_path / "torn.img"
    image.write_bytes(data)
    board, link = open_board(image)
    try:
        assert link.hello.fields["store"] == "backup"
        assert link.state().front == [12, 0]
    finally:
        link.close()
        board.stop()


def test_a_damaged_header_in_the_last_sessions_block_brings_back_the_save_before_and_says_so(
    played_image: Path, tmp_path: Path
) -> None:
    """One damaged byte in the header of the block the last session wrote (its only save): the
    save before comes back as the backup, never as "saved" (issue 35, B2)."""
    image = tmp_path / "session.img"
    shutil.copyfile(played_image, image)
    with VirtualBoard(flash=image) as board, SyncBoard.open(board.port, timeout=10) as link:
        link.peg(1, 2)  # a session of its own: its save takes a fresh block
        wait_saved_sync(image, lambda game: game.front[:2] == [12, 9])
    data = bytearray(image.read_bytes())
    start = blocks_end(data) - STATE_BLOCKS * BLOCK
    firsts = {}  # ring block: the seq of its first entry
    for block in range(STATE_BLOCKS):
        seq = int.from_bytes(data[start + block * BLOCK : start + block * BLOCK + 4], "little")
        if seq != 0xFFFFFFFF:
            firsts[block] = seq
    last = max(firsts, key=lambda block: firsts[block])
    at = start + last * BLOCK + 7  # the high byte of ~length in the entry's header
    assert data[at] == 0xFF
    data[at] = 0x33
    image.write_bytes(data)
    board, link = open_board(image)
    try:
        assert link.hello.fields["store"] == "backup"
        assert link.state().front == [12, 7]
    finally:
        link.close()
        board.stop()


def test_a_ring_overwritten_with_zeros_is_a_fresh_game_that_says_so(
    played_image: Path, tmp_path: Path
) -> None:
    """Zeros are programmed flash, not erased: saves that are gone, not "nothing saved" (B3)."""
    data = bytearray(played_image.read_bytes())
    start = blocks_end(data) - STATE_BLOCKS * BLOCK
    data[start:] = bytes(len(data) - start)
    image = tmp_path / "zeros.img"
    image.write_bytes(data)
    board, link = open_board(image)
    try:
        assert link.hello.fields["store"] == "fresh-corrupt"
        assert link.state().front == [0, 0]
    finally:
        link.close()
        board.stop()


def test_a_region_of_garbage_is_a_fresh_game_that_says_so(
    played_image: Path, tmp_path: Path
) -> None:
    data = bytearray(played_image.read_bytes())
    rng = random.Random(7)
    start = blocks_end(data) - STATE_BLOCKS * BLOCK
    for at in range(start, len(data)):
        data[at] = rng.randrange(256)
    image = tmp_path / "garbage.img"
    image.write_bytes(data)
    board, link = open_board(image)
    try:
        assert link.hello.fields["store"] == "fresh-corrupt"  # saves were there: not "fresh"
        assert link.state().front == [0, 0]
        link.peg(1, 4)  # a fresh game that plays
        assert link.state().front == [0, 4]
    finally:
        link.close()
        board.stop()


def test_a_firmware_on_the_flash_that_cannot_load_gives_way_to_the_images(
    played_image: Path, tmp_path: Path
) -> None:
    """A firmware deployed to the flash (it comes first) that fails to load, damaged or half
    copied: main.py runs the one frozen in the image instead, and says so on the console."""
    image = tmp_path / "half.img"
    shutil.copyfile(played_image, image)
    with VirtualBoard(flash=image) as board:
        make = (
            "import os\n"
            "os.mkdir('cribfw')\n"
            "open('cribfw/__init__.py', 'w').close()\n"
            "with open('cribfw/app.py', 'w') as f: f.write('raise ValueError(\"half copied\")')\n"
        )
        mpremote(board.port, "exec", make)
    board, link = open_board(image)
    try:
        assert link.hello.fields["store"] == "saved" and link.state().front == [12, 7]
        link.close()
        with serial.Serial(board.port, timeout=5) as console:
            board.reset()  # the console is open: what the start prints reaches it
            seen = console.read_until(b"running the one in the image")
        assert b"half copied" in seen and seen.endswith(b"running the one in the image"), seen
    finally:
        link.close()
        board.stop()
