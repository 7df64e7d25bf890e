"""The rp2 firmware images in firmware/ports/rp2/images/: the UF2 encoder and decoder they are
made with, and every committed image against its provenance file: its bytes, a well-formed UF2
for its chip, the firmware it was built from (stale images fail: `make rp2-images`), the frozen
modules inside it, and the PROVENANCE.md summary. Nothing here builds; the images come from
`make rp2-images` (firmware/ports/rp2/build.py)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cribboard import uf2
from cribboard.firmware_build import source_files
from cribboard.frozen import (
    BOOT_SCRIPT,
    board_digest,
    board_files,
    frozen_digest,
    frozen_name,
    frozen_sources,
)
from cribboard.paths import page_files
from cribboard.uf2 import UF2Error

ROOT = Path(__file__).resolve().parents[2]
PORT = ROOT / "firmware" / "ports" / "rp2"
IMAGES = PORT / "images"
STALE = "the firmware changed after the rp2 images were built: make rp2-images"

# The images the project ships: (chip family, firmware frozen in).
SHIPPED = {
    "micropython-RPI_PICO-v1.28.0.uf2": (uf2.RP2040_FAMILY_ID, False),
    "cribboard-RPI_PICO.uf2": (uf2.RP2040_FAMILY_ID, True),
    "cribboard-RPI_PICO_W.uf2": (uf2.RP2040_FAMILY_ID, True),
    "cribboard-RPI_PICO2_W.uf2": (uf2.RP2350_ARM_S_FAMILY_ID, True),
}
FROZEN = [name for name, (_, frozen) in SHIPPED.items() if frozen]


def _provenance(name: str) -> dict[str, object]:
    record: dict[str, object] = json.loads((IMAGES / f"{name}.json").read_text(encoding="utf-8"))
    return record


def _section(record: dict[str, object], key: str) -> dict[str, object]:
    value = record[key]
    assert isinstance(value, dict), key
    return value


def _firmware(name: str) -> bytes:
    """The image's flash contents from 0x10000000 (one range), as far as firmware.bin went."""
    ranges = uf2.decode((IMAGES / name).read_bytes(), SHIPPED[name][0])
    assert len(ranges) == 1
    size = _section(_provenance(name), "firmware_bin")["bytes"]
    assert isinstance(size, int)
    return ranges[0][1][:size]


def _build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rp2_build", PORT / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _fields(block: bytes) -> tuple[int, ...]:
    return struct.unpack_from("<8I", block) + struct.unpack_from("<I", block, 508)


# --- the UF2 encoder and decoder ----------------------------------------------------------------


def test_encode_writes_the_blocks_the_spec_describes() -> None:
    data = bytes(range(256)) * 2 + b"tail"
    encoded = uf2.encode(data, 0x10000000, uf2.RP2040_FAMILY_ID)
    assert len(encoded) == 3 * 512
    for number in range(3):
        block = encoded[number * 512 : (number + 1) * 512]
        magic0, magic1, flags, address, size, block_no, count, family, magic_end = _fields(block)
        assert (magic0, magic1, magic_end) == (0x0A324655, 0x9E5D5157, 0x0AB16F30)
        assert block[:4] == b"UF2\n"
        assert flags == 0x00002000  # family id present
        assert (address, size, block_no, count) == (0x10000000 + 256 * number, 256, number, 3)
        assert family == 0xE48BFF56
        assert block[32 + 256 : 508] == bytes(476 - 256)  # the unused rest of the data area
    assert encoded[1024 + 32 : 1024 + 36] == b"tail"
    assert encoded[1024 + 36 : 1024 + 32 + 256] == b"\xff" * 252  # the last page, padded


@settings(max_examples=40, deadline=None)
@given(
    data=st.binary(min_size=1, max_size=3000),
    page=st.integers(min_value=0, max_value=64),
    payload=st.sampled_from([256, 128, 64]),
)
def test_decode_gives_back_what_encode_wrote(data: bytes, page: int, payload: int) -> None:
    base = 0x10000000 + page * payload
    ranges = uf2.decode(uf2.encode(data, base, uf2.RP2350_ARM_S_FAMILY_ID, payload))
    assert len(ranges) == 1
    address, written = ranges[0]
    assert address == base
    assert written[: len(data)] == data
    assert written[len(data) :] == b"\xff" * (-len(data) % payload)


def test_decode_merges_adjacent_blocks_and_keeps_gaps_apart() -> None:
    low = uf2.encode(b"a" * 512, 0x10000000, uf2.RP2040_FAMILY_ID)
    high = uf2.encode(b"b" * 256, 0x10001000, uf2.RP2040_FAMILY_ID)
    # One file of three blocks, the high address first: renumbered 0, 1, 2 of 3.
    blocks = [bytearray(high), bytearray(low[:512]), bytearray(low[512:])]
    for number, block in enumerate(blocks):
        struct.pack_into("<II", block, 20, number, 3)
    ranges = uf2.decode(b"".join(blocks))
    assert ranges == [(0x10000000, b"a" * 512), (0x10001000, b"b" * 256)]


def test_decode_leaves_out_comment_blocks() -> None:
    encoded = bytearray(uf2.encode(b"x" * 512, 0x10000000, uf2.RP2040_FAMILY_ID))
    struct.pack_into("<I", encoded, 512 + 8, 0x00002001)  # block 1: not for main flash
    assert uf2.decode(bytes(encoded)) == [(0x10000000, b"x" * 256)]


def _damaged(change: str) -> tuple[bytes, int | None]:
    """A three-block file with one kind of damage, and the family to decode it with."""
    good = uf2.encode(bytes(range(256)) * 3, 0x10000000, uf2.RP2040_FAMILY_ID)
    blocks = [bytearray(good[i : i + 512]) for i in range(0, len(good), 512)]
    family: int | None = None
    if change == "truncated":
        return good[:-1], None
    if change == "empty":
        return b"", None
    if change == "start magic":
        struct.pack_into("<I", blocks[1], 0, 0x0A324656)
    elif change == "second magic":
        struct.pack_into("<I", blocks[2], 4, 0)
    elif change == "end magic":
        struct.pack_into("<I", blocks[1], 508, 0)
    elif change == "no family":
        struct.pack_into("<I", blocks[0], 8, 0)
    elif change == "other chip":
        family = uf2.RP2350_ARM_S_FAMILY_ID
    elif change == "mixed families":
        struct.pack_into("<I", blocks[2], 28, uf2.RP2350_ARM_S_FAMILY_ID)
    elif change == "payload too big":
        struct.pack_into("<I", blocks[1], 16, 477)
    elif change == "empty payload":
        struct.pack_into("<I", blocks[1], 16, 0)
    elif change == "out of order":
        blocks[1], blocks[2] = blocks[2], blocks[1]
    elif change == "block missing":
        del blocks[1]
    elif change == "count differs":
        struct.pack_into("<I", blocks[2], 24, 4)
    elif change == "same address twice":
        struct.pack_into("<I", blocks[2], 12, 0x10000100)
    else:
        raise AssertionError(change)
    return b"".join(blocks), family


DAMAGE = {
    "truncated": "whole number of 512-byte blocks",
    "empty": "whole number of 512-byte blocks",
    "start magic": "block 1: bad start magic",
    "second magic": "block 2: bad start magic",
    "end magic": "block 1: bad end magic",
    "no family": "block 0: no family id",
    "other chip": "block 0: family 0xe48bff56, expected 0xe48bff59",
    "mixed families": "block 2: family 0xe48bff59, expected 0xe48bff56",
    "payload too big": "block 1: payload size 477",
    "empty payload": "block 1: payload size 0",
    "out of order": "block 1: numbered 2",
    "block missing": "block 0: says the file has 3 blocks, it has 2",
    "count differs": "block 2: says the file has 4 blocks, it has 3",
    "same address twice": "two blocks write address 0x10000100",
}


@pytest.mark.parametrize("change", DAMAGE)
def test_decode_rejects_damaged_files(change: str) -> None:
    data, family = _damaged(change)
    with pytest.raises(UF2Error, match=DAMAGE[change]):
        uf2.decode(data, family)


@pytest.mark.parametrize(
    ("data", "base", "payload", "message"),
    [
        (b"", 0x10000000, 256, "nothing to encode"),
        (b"x", 0x10000080, 256, "not aligned"),
        (b"x", 0x10000000, 477, "payload size 477"),
        (b"x" * 512, 0xFFFFFF00, 256, "past the end"),
    ],
)
def test_encode_rejects_what_no_boot_rom_takes(
    data: bytes, base: int, payload: int, message: str
) -> None:
    with pytest.raises(UF2Error, match=message):
        uf2.encode(data, base, uf2.RP2040_FAMILY_ID, payload)


# --- the frozen firmware's digest ---------------------------------------------------------------


def _small_tree(root: Path) -> Path:
    for relative, path in (*frozen_sources().items(), *page_files().items()):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, root / relative)
    return root


def test_the_digest_covers_what_the_manifest_freezes() -> None:
    files = frozen_sources()
    assert "main.py" in files and BOOT_SCRIPT in files
    assert "cribcore/state.py" in files and "cribfw/app.py" in files
    assert not [name for name in files if name.startswith(("sim/", "ports/rp2/build"))]
    assert frozen_name(BOOT_SCRIPT) == "_boot.py" and frozen_name("main.py") == "main.py"
    assert list(files) == sorted(files)


def test_the_digest_follows_every_frozen_file(tmp_path: Path) -> None:
    tree = _small_tree(tmp_path / "firmware")
    before = frozen_digest(tree)
    assert before == frozen_digest()  # the copy digests like the original
    (tree / "sim").mkdir()
    (tree / "sim" / "machine.py").write_text("x = 1\n")  # not frozen: no change
    assert frozen_digest(tree) == before
    app = tree / "cribfw" / "app.py"
    app.write_bytes(app.read_bytes() + b"\n")
    assert frozen_digest(tree) != before
    app.write_bytes(app.read_bytes()[:-1])
    assert frozen_digest(tree) == before
    (tree / "cribcore" / "extra.py").write_text("")
    assert frozen_digest(tree) != before
    (tree / "cribcore" / "extra.py").unlink()
    (tree / "cribcore" / "state.py").rename(tree / "cribcore" / "state2.py")
    assert frozen_digest(tree) != before
    (tree / "cribcore" / "state2.py").rename(tree / "cribcore" / "state.py")
    page = tree / "web" / "static" / "app.js.gz"  # the table page the Wi-Fi images freeze
    page.write_bytes(page.read_bytes() + b"\0")
    assert frozen_digest(tree) != before


def test_deploy_leaves_the_ports_folder_out() -> None:
    files = source_files()
    assert "main.py" in files
    assert not [name for name in files if name.startswith("ports/")]


# --- the committed images -----------------------------------------------------------------------


def test_every_shipped_image_has_its_provenance() -> None:
    present = {path.name for path in IMAGES.glob("*.uf2")}
    assert present == set(SHIPPED)
    assert {path.name.removesuffix(".json") for path in IMAGES.glob("*.uf2.json")} == set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_the_image_is_the_one_its_provenance_describes(name: str) -> None:
    data = (IMAGES / name).read_bytes()
    record = _provenance(name)
    image = _section(record, "uf2")
    assert record["image"] == name
    assert image["sha256"] == hashlib.sha256(data).hexdigest()
    assert image["bytes"] == len(data)
    firmware = _firmware(name)
    assert _section(record, "firmware_bin")["sha256"] == hashlib.sha256(firmware).hexdigest()


@pytest.mark.parametrize("name", SHIPPED)
def test_the_image_is_a_well_formed_uf2_for_its_chip(name: str) -> None:
    data = (IMAGES / name).read_bytes()
    family = SHIPPED[name][0]
    count = len(data) // 512
    assert len(data) == count * 512 and count > 100
    for number in range(count):
        magic0, magic1, flags, address, size, block_no, blocks, block_family, magic_end = _fields(
            data[number * 512 : (number + 1) * 512]
        )
        assert (magic0, magic1, magic_end) == (uf2.MAGIC_START0, uf2.MAGIC_START1, uf2.MAGIC_END)
        assert flags == uf2.FLAG_FAMILY_ID_PRESENT and block_family == family
        assert (address, size) == (0x10000000 + 256 * number, 256), number
        assert (block_no, blocks) == (number, count)
    record = _provenance(name)
    image = _section(record, "uf2")
    assert image["family_id"] == f"{family:#010x}" and image["blocks"] == count


@pytest.mark.parametrize("name", SHIPPED)
def test_the_firmware_leaves_the_file_system_region_alone(name: str) -> None:
    flash = _section(_provenance(name), "flash")
    end, offset, length, size = (
        flash["firmware_end_offset"],
        flash["storage_offset"],
        flash["storage_length"],
        flash["flash_size"],
    )
    assert isinstance(end, int) and isinstance(offset, int) and isinstance(length, int)
    assert isinstance(size, int)
    assert len(_firmware(name)) == end <= offset and offset + length <= size
    assert offset % 4096 == 0 and length % 4096 == 0
    assert flash["storage_address"] == f"{0x10000000 + offset:#010x}"


@pytest.mark.parametrize("name", SHIPPED)
def test_the_image_is_micropython_1_28_for_its_board(name: str) -> None:
    record = _provenance(name)
    firmware = _firmware(name)
    assert b"MicroPython v1.28.0 on " in firmware  # the banner: the clean tag, not "-dirty"
    assert f"{record['board_name']} with ".encode() in firmware
    sources = record["sources"]
    assert isinstance(sources, list)
    by_path = {source["path"]: source for source in sources}
    assert by_path["."]["commit"] == "e0e9fbb17ed6fd06bb76e266ae554784c9c80804"
    assert by_path["lib/pico-sdk"]["describe"] == "2.2.0"
    assert ("lib/cyw43-driver" in by_path) == name.endswith("_W.uf2")
    assert all(len(source["commit"]) == 40 for source in sources)
    assert all(_section(record, "toolchain").values())


@pytest.mark.parametrize("name", SHIPPED)
def test_the_flash_functions_an_emulator_intercepts_are_in_ram(name: str) -> None:
    found = _section(_provenance(name), "symbols")
    for symbol in ("flash_range_erase", "flash_range_program"):
        address = found[symbol]
        assert isinstance(address, str)
        assert 0x20000000 <= int(address, 16) < 0x20082000, (symbol, address)


@pytest.mark.parametrize("name", FROZEN)
def test_the_frozen_firmware_is_the_current_one(name: str) -> None:
    frozen = _section(_provenance(name), "frozen")
    assert frozen["files"] == list(frozen_sources()), STALE
    assert frozen["digest"] == frozen_digest(), STALE
    board = _provenance(name)["board"]
    assert isinstance(board, str)
    assert frozen["board_files"] == list(board_files(board)), STALE
    assert frozen["board_digest"] == board_digest(board), STALE


@pytest.mark.parametrize("name", FROZEN)
def test_the_frozen_modules_are_in_the_image(name: str) -> None:
    firmware = _firmware(name)
    files = _section(_provenance(name), "frozen")["files"]
    assert isinstance(files, list)
    for relative in files:
        # MicroPython's table of frozen names: each NUL-terminated.
        assert frozen_name(relative).encode() + b"\0" in firmware, relative


def test_the_stock_image_freezes_no_firmware() -> None:
    firmware = _firmware("micropython-RPI_PICO-v1.28.0.uf2")
    assert b"_boot.py\0" in firmware  # the port's own, so the name search would see ours
    assert b"cribfw/app.py\0" not in firmware and b"cribcore/state.py\0" not in firmware
    assert _provenance("micropython-RPI_PICO-v1.28.0.uf2")["frozen"] is None


def test_the_provenance_summary_is_up_to_date() -> None:
    build = _build_script()
    records = [_provenance(name) for name in SHIPPED]
    expected = build.render_provenance(records)
    assert (IMAGES / "PROVENANCE.md").read_text(encoding="utf-8") == expected, (
        "firmware/ports/rp2/images/PROVENANCE.md is stale: make rp2-images"
    )


def test_the_build_script_says_where_its_sources_come_from() -> None:
    result = subprocess.run(
        [sys.executable, str(PORT / "build.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0 and "--sources DIR" in result.stdout
    missing = subprocess.run(
        [sys.executable, str(PORT / "build.py"), "--sources", str(ROOT / "no-such-dir")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "no such directory" in missing.stderr
