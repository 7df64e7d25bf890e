# What every record the board keeps on its flash shares: the game (cribfw/gamerecord.py), the
# admitted Bluetooth devices (cribfw/admitfile.py) and the last hall command (cribfw/hallmemory.py).
# A record's bytes:
#   0 4-byte magic   4 u8 version   5 .. the record's own fields   .. u32 crc32, little-endian
# The crc32 (binascii.crc32) covers every byte before it. A record is read only when its magic,
# length and crc32 hold, and understood only in a version this firmware writes.
# As a file, a record is written whole to a temporary file that is then renamed over the old one.
# Rename is atomic and replaces its target on littlefs (VfsLfs2, MicroPython's default on rp2 and
# esp32) and on POSIX (CPython tests), so a cut leaves the old record or the new one, never a mix
# (cribfw/storefiles.py keeps a backup as well, and says why the file system must not be FAT).

import os
import struct

try:
    from binascii import crc32
except ImportError:  # a MicroPython build without binascii.crc32
    from zlib import crc32  # type: ignore[no-redef]


def crc(data, end, start=0):
    """The crc32 of data[start:end], unsigned."""
    return crc32(memoryview(data)[start:end]) & 0xFFFFFFFF


def blank(magic, version, end):
    """A new record with `end` bytes before its crc32: `magic` and `version` set, the rest 0."""
    rec = bytearray(end + 4)
    rec[0:4] = magic
    rec[4] = version
    return rec


def seal(rec):
    """Write the crc32 of the bytes before the last 4 of `rec` into them."""
    end = len(rec) - 4
    struct.pack_into("<I", rec, end, crc(rec, end))


def version(data, magic, least):
    """The version of a record that starts with `magic` and has at least `least` bytes; -1 for
    anything else."""
    if len(data) < least or data[:4] != magic:
        return -1
    return data[4]


def sealed(data, end):
    """Whether `data` ends with a crc32 at `end` that matches the bytes before it."""
    return len(data) == end + 4 and struct.unpack_from("<I", data, end)[0] == crc(data, end)


def read(path, most):
    """At most `most` bytes of the file `path`; None when there is none or it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read(most)
    except OSError:
        return None


def write(path, rec):
    """`rec` as the whole file `path` (littlefs commits a file when it is closed). Raises
    OSError when the flash fails."""
    with open(path, "wb") as f:
        f.write(rec)


def replace(path, rec):
    """`rec` as the file `path`, atomically (see the top): written to `path`.tmp, then renamed
    over `path`. Raises OSError when the flash fails."""
    tmp = path + ".tmp"
    write(tmp, rec)
    os.rename(tmp, path)
