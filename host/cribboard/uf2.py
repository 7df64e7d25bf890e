"""UF2, the USB Flashing Format: the file a Raspberry Pi Pico's boot ROM takes on its USB drive.

A UF2 file is a run of 512-byte blocks, each self-contained: two magic numbers, flags, the flash
address its payload goes to, the payload size, its block number, the block count, a family id
(which chip the file is for, so a drive rejects a file for another chip), up to 476 bytes of
payload and a closing magic number. All fields are 32-bit little-endian. The format is
Microsoft's (github.com/microsoft/uf2); the family ids are those the Raspberry Pi boot ROMs
accept. The boot ROMs want 256-byte payloads at 256-byte aligned addresses (one flash page).
"""

from __future__ import annotations

import struct

from cribboard.errors import CribboardError

MAGIC_START0 = 0x0A324655  # "UF2\n"
MAGIC_START1 = 0x9E5D5157
MAGIC_END = 0x0AB16F30

FLAG_NOT_MAIN_FLASH = 0x00000001  # a comment block: never written to flash
FLAG_FAMILY_ID_PRESENT = 0x00002000  # the header's last word is a family id, not a file size

BLOCK_SIZE = 512
DATA_AREA = 476  # bytes of a block's payload area; a payload uses the first `payload size` bytes
PAGE_SIZE = 256  # what the RP2040 and RP2350 boot ROMs take per block

RP2040_FAMILY_ID = 0xE48BFF56
RP2350_ARM_S_FAMILY_ID = 0xE48BFF59  # RP2350, Arm cores, secure mode (the default image)

FLASH_BASE = 0x10000000  # where the RP2040's and RP2350's flash appears (execute-in-place)

_HEADER = struct.Struct("<8I")  # magic0, magic1, flags, address, size, block, blocks, family
_END = struct.Struct("<I")


class UF2Error(CribboardError):
    """A UF2 file is damaged, or not what was asked for (another chip family, bad numbering)."""


def encode(
    data: bytes, base: int, family_id: int, payload_size: int = PAGE_SIZE, pad: int = 0xFF
) -> bytes:
    """`data` as a UF2 file that writes it to flash from address `base`.

    Each block carries `payload_size` bytes; the last one is padded with `pad` (0xFF: erased
    flash), so the file writes whole pages. `base` must be aligned to `payload_size`.
    """
    if not data:
        raise UF2Error("nothing to encode")
    if not 0 < payload_size <= DATA_AREA:
        raise UF2Error(f"payload size {payload_size} is not in 1..{DATA_AREA}")
    if base % payload_size:
        raise UF2Error(f"base address {base:#x} is not aligned to {payload_size} bytes")
    if not 0 <= family_id <= 0xFFFFFFFF:
        raise UF2Error(f"family id {family_id:#x} does not fit in 32 bits")
    count = -(-len(data) // payload_size)
    if base + count * payload_size > 1 << 32:
        raise UF2Error("the data runs past the end of the 32-bit address space")
    padded = data.ljust(count * payload_size, bytes([pad]))
    blocks = []
    for number in range(count):
        payload = padded[number * payload_size : (number + 1) * payload_size]
        header = _HEADER.pack(
            MAGIC_START0,
            MAGIC_START1,
            FLAG_FAMILY_ID_PRESENT,
            base + number * payload_size,
            payload_size,
            number,
            count,
            family_id,
        )
        blocks.append(header + payload.ljust(DATA_AREA, b"\0") + _END.pack(MAGIC_END))
    return b"".join(blocks)


def decode(uf2: bytes, family_id: int | None = None) -> list[tuple[int, bytes]]:
    """The flash contents a UF2 file writes, as (address, bytes) ranges in address order, each
    run of adjacent blocks merged into one range.

    Checks every block: both start magics and the end magic, a family id present (and equal to
    `family_id` when given, and the same in every block), a payload that fits, block numbers
    0, 1, 2... with the same block count in every block and as many blocks as that count, and
    no two blocks writing the same address. Comment blocks (not for main flash) are checked
    and left out. Raises UF2Error saying which block is wrong.
    """
    if not uf2 or len(uf2) % BLOCK_SIZE:
        raise UF2Error(f"{len(uf2)} bytes is not a whole number of {BLOCK_SIZE}-byte blocks")
    total = len(uf2) // BLOCK_SIZE
    family = family_id
    pieces: list[tuple[int, bytes]] = []
    for index in range(total):
        block = uf2[index * BLOCK_SIZE : (index + 1) * BLOCK_SIZE]
        magic0, magic1, flags, address, size, number, count, family_word = _HEADER.unpack_from(
            block
        )
        (magic_end,) = _END.unpack_from(block, BLOCK_SIZE - _END.size)
        where = f"block {index}"
        if magic0 != MAGIC_START0 or magic1 != MAGIC_START1:
            raise UF2Error(f"{where}: bad start magic ({magic0:#010x} {magic1:#010x})")
        if magic_end != MAGIC_END:
            raise UF2Error(f"{where}: bad end magic ({magic_end:#010x})")
        if not flags & FLAG_FAMILY_ID_PRESENT:
            raise UF2Error(f"{where}: no family id (flags {flags:#x})")
        if family is None:
            family = family_word
        elif family_word != family:
            raise UF2Error(f"{where}: family {family_word:#010x}, expected {family:#010x}")
        if not 0 < size <= DATA_AREA:
            raise UF2Error(f"{where}: payload size {size} is not in 1..{DATA_AREA}")
        if number != index:
            raise UF2Error(f"{where}: numbered {number}")
        if count != total:
            raise UF2Error(f"{where}: says the file has {count} blocks, it has {total}")
        if address + size > 1 << 32:
            raise UF2Error(f"{where}: payload runs past the 32-bit address space")
        if not flags & FLAG_NOT_MAIN_FLASH:
            pieces.append((address, block[_HEADER.size : _HEADER.size + size]))
    pieces.sort(key=lambda piece: piece[0])
    ranges: list[tuple[int, bytearray]] = []
    for address, payload in pieces:
        if ranges:
            start, merged = ranges[-1]
            end = start + len(merged)
            if address < end:
                raise UF2Error(f"two blocks write address {address:#x}")
            if address == end:
                merged += payload
                continue
        ranges.append((address, bytearray(payload)))
    return [(start, bytes(merged)) for start, merged in ranges]
