# The last command a Wi-Fi board's table client ran, and its ack, kept on the flash: a command
# delivered again after the board restarted (the director resends an unacknowledged id whenever
# it reconnects; QoS 1 may redeliver) is only answered again, so a game in progress is never
# restarted. Written once per command, as a temporary file renamed over the old one
# (cribfw/flashrecord.py: the magic, version, crc32 and atomic write every flash record shares).
# Record (version 1):
#   0 b"HALL"   4 u8 version   5 u8 id length   6 id   .. u16 ack length, the ack   .. u32 crc32
# A record that does not read back intact is ignored: the board then runs the next command it
# gets, as a board that never ran one.

import struct

from cribfw import flashrecord

_VERSION = 1
_MAX_RECORD = 512


class CommandMemory:
    """The last command run (`last_id`, bytes) and its ack payload (`last_ack`, bytes), kept in
    the file `path` (None: in memory only)."""

    def __init__(self, path=None):
        self.path = path
        self.last_id = b""
        self.last_ack = b""
        self.errors = 0  # writes that failed (the command is remembered until a restart)
        if path is not None:
            self._load(path)

    def ran(self, command_id):
        """Whether `command_id` (bytes) is the command run last."""
        return len(command_id) > 0 and command_id == self.last_id

    def remember(self, command_id, ack):
        """`command_id` (bytes) ran and was answered with `ack` (bytes): keep both."""
        self.last_id = bytes(command_id)
        self.last_ack = bytes(ack)
        if self.path is None:
            return
        n = len(self.last_id)
        end = 6 + n + 2 + len(self.last_ack)
        rec = flashrecord.blank(b"HALL", _VERSION, end)
        rec[5] = n
        rec[6 : 6 + n] = self.last_id
        struct.pack_into("<H", rec, 6 + n, len(self.last_ack))
        rec[8 + n : end] = self.last_ack
        flashrecord.seal(rec)
        try:
            flashrecord.replace(self.path, rec)
        except OSError:
            self.errors += 1

    def _load(self, path):
        data = flashrecord.read(path, _MAX_RECORD)
        if data is None or flashrecord.version(data, b"HALL", 12) != _VERSION:
            return
        n = data[5]
        if 8 + n > len(data):
            return
        size = struct.unpack_from("<H", data, 6 + n)[0]
        end = 8 + n + size
        if not flashrecord.sealed(data, end):
            return
        self.last_id = bytes(data[6 : 6 + n])
        self.last_ack = bytes(data[8 + n : end])
