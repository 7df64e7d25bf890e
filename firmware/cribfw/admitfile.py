# The admitted Bluetooth devices and open mode on the flash (cribfw/admission.py), so they survive
# a power cut. Written whole on every change (rare: an admission, `admit open`, `admit clear`),
# in a Ring of records in the raw flash region (cribfw/ring.py) where the board has one, else as a
# temporary file renamed over the old one (atomic on littlefs: see cribfw/storefiles.py).
# Record (version 1):
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


def _valid(data):
    """`data` if it is an intact record, else None."""
    if (
        len(data) < _HEADER + 4
        or data[:4] != b"ADMT"
        or data[4] != _VERSION
        or data[5] > 1
        or data[6] > MAX_ADMITTED
    ):
        return None
    end = _HEADER + data[6] * ADDR_LEN
    if len(data) != end + 4 or _crc(data, end) != int.from_bytes(data[end:], "little"):
        return None
    return data


def _encode(admission):
    end = _HEADER + admission.count * ADDR_LEN
    rec = bytearray(end + 4)
    rec[0:4] = b"ADMT"
    rec[4] = _VERSION
    rec[5] = 1 if admission.open else 0
    rec[6] = admission.count
    rec[_HEADER:end] = admission.addrs[0 : end - _HEADER]
    rec[end:] = _crc(rec, end).to_bytes(4, "little")
    return rec


class AdmitRecords:
    """Keeps an Admission's list: `place` is a file path or a cribfw.ring.Ring."""

    def __init__(self, place):
        self.place = place

    def load(self, admission):
        """Put the newest intact record into `admission`; True if there was one."""
        if isinstance(self.place, str):
            try:
                with open(self.place, "rb") as f:
                    data = _valid(f.read(_HEADER + MAX_ADMITTED * ADDR_LEN + 5))
            except OSError:
                data = None
        else:
            data = self.place.newest(_valid)
        if data is None:
            return False
        admission.open = data[5] == 1
        admission.count = data[6]
        end = _HEADER + data[6] * ADDR_LEN
        admission.addrs[0 : end - _HEADER] = data[_HEADER:end]
        return True

    def save(self, admission):
        """Write `admission`; a failure is counted in admission.errors (the admission holds
        until the board restarts; never raises)."""
        rec = _encode(admission)
        try:
            if isinstance(self.place, str):
                tmp = self.place + ".tmp"
                with open(tmp, "wb") as f:
                    f.write(rec)
                os.rename(tmp, self.place)
            else:
                self.place.append(rec)
        except (OSError, MemoryError):  # flash failing, or no memory for the buffers
            admission.errors += 1
