# The admitted Bluetooth devices and open mode on the flash (cribfw/admission.py), so they survive
# a power cut. Written whole on every change (rare: an admission, `admit open`, `admit clear`) as
# a temporary file renamed over the old one: atomic on littlefs (see cribfw/store.py). Imported
# only by a board with Bluetooth. Record (version 1):
#   0 b"ADMT"   4 u8 version   5 u8 open   6 u8 count   7 count * 7 address bytes   .. u32 crc32
# A record that does not read back intact is ignored: nobody is admitted, the board is closed.

import os

try:
    from binascii import crc32
except ImportError:  # a MicroPython build without binascii.crc32
    from zlib import crc32  # type: ignore[no-redef]

from cribfw.admission import ADDR_LEN, MAX_ADMITTED

_HEADER = 7
_VERSION = 1


def _crc(data, end):
    return crc32(memoryview(data)[:end]) & 0xFFFFFFFF


def load(admission, path):
    """Put the record in `path` into `admission`; True if it read back intact."""
    try:
        with open(path, "rb") as f:
            data = f.read(_HEADER + MAX_ADMITTED * ADDR_LEN + 5)
    except OSError:
        return False
    if (
        len(data) < _HEADER + 4
        or data[:4] != b"ADMT"
        or data[4] != _VERSION
        or data[5] > 1
        or data[6] > MAX_ADMITTED
    ):
        return False
    end = _HEADER + data[6] * ADDR_LEN
    if (
        len(data) != end + 4
        or _crc(data, end)
        != data[end] | data[end + 1] << 8 | data[end + 2] << 16 | data[end + 3] << 24
    ):
        return False
    admission.open = data[5] == 1
    admission.count = data[6]
    admission.addrs[0 : end - _HEADER] = data[_HEADER:end]
    return True


def save(admission, path):
    """Write `admission` to `path`; a failure is counted in admission.errors (the admission
    holds until the board restarts; never raises)."""
    end = _HEADER + admission.count * ADDR_LEN
    rec = bytearray(end + 4)
    rec[0:4] = b"ADMT"
    rec[4] = _VERSION
    rec[5] = 1 if admission.open else 0
    rec[6] = admission.count
    rec[_HEADER:end] = admission.addrs[0 : end - _HEADER]
    crc = _crc(rec, end)
    for i in range(4):
        rec[end + i] = (crc >> (8 * i)) & 0xFF
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(rec)
        os.rename(tmp, path)
    except (OSError, MemoryError):  # flash failing, or no memory for the file's buffers
        admission.errors += 1
