"""The virtual board's own identity, kept in its flash image as a board's is in its flash chip.

A Pico's `machine.unique_id()` is its flash chip's unique id, outside the storage the firmware
uses; the virtual board keeps its own after the image's last whole block (the firmware reads
whole blocks, cribboard.virtual's flash: it never sees it): a magic and 8 random bytes, made the
first time an image is started. The same image is the same board wherever it runs; a copied image
is a cloned chip.
"""

from __future__ import annotations

import os
import secrets

BLOCK_SIZE = 4096
MAGIC = b"CRIBUID\0"
UID_BYTES = 8


def flash_uid(fd: int) -> bytes:
    """The uid kept in the image open (read and write) on `fd`; a new random one written there
    the first time (an image of whole blocks, or one whose end is not a uid)."""
    size = os.fstat(fd).st_size
    blocks_end = size - size % BLOCK_SIZE
    if size - blocks_end == len(MAGIC) + UID_BYTES:
        os.lseek(fd, blocks_end, os.SEEK_SET)
        kept = os.read(fd, len(MAGIC) + UID_BYTES)
        if kept.startswith(MAGIC):
            return kept[len(MAGIC) :]
    uid = secrets.token_bytes(UID_BYTES)
    os.ftruncate(fd, blocks_end)
    os.lseek(fd, blocks_end, os.SEEK_SET)
    os.write(fd, MAGIC + uid)
    return uid
