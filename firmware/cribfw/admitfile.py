# The admitted Bluetooth devices and open mode on the flash (cribfw/admission.py), so they survive
# a power cut. Written whole on every change (rare: an admission, `admit open`, `admit clear`),
# in a Ring of records in the raw flash region (cribfw/ring.py) where the board has one, else as a
# temporary file renamed over the old one (cribfw/flashrecord.py: the magic, version, crc32 and
# atomic write every flash record shares). Record (version 1):
#   0 b"ADMT"   4 u8 version   5 u8 open   6 u8 count   7 count * 7 address bytes   .. u32 crc32
# A record that does not read back intact is ignored: nobody is admitted, the board is closed.

from cribfw import flashrecord
from cribfw.admission import ADDR_LEN, MAX_ADMITTED

_HEADER = 7
_VERSION = 1


def _valid(data):
    """`data` if it is an intact record, else None."""
    if (
        flashrecord.version(data, b"ADMT", _HEADER + 4) != _VERSION
        or data[5] > 1
        or data[6] > MAX_ADMITTED
        or not flashrecord.sealed(data, _HEADER + data[6] * ADDR_LEN)
    ):
        return None
    return data


def _encode(admission):
    end = _HEADER + admission.count * ADDR_LEN
    rec = flashrecord.blank(b"ADMT", _VERSION, end)
    rec[5] = 1 if admission.open else 0
    rec[6] = admission.count
    rec[_HEADER:end] = admission.addrs[0 : end - _HEADER]
    flashrecord.seal(rec)
    return rec


class AdmitRecords:
    """Keeps an Admission's list: `place` is a file path or a cribfw.ring.Ring."""

    def __init__(self, place):
        self.place = place

    def load(self, admission):
        """Put the newest intact record into `admission`; True if there was one."""
        if isinstance(self.place, str):
            data = flashrecord.read(self.place, _HEADER + MAX_ADMITTED * ADDR_LEN + 5)
            if data is not None:
                data = _valid(data)
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
                flashrecord.replace(self.place, rec)
            else:
                self.place.append(rec)
        except (OSError, MemoryError):  # flash failing, or no memory for the buffers
            admission.errors += 1
