# Reassembles protocol lines from bytes arriving in pieces of any size (a USB read, a BLE write).
# A line longer than the protocol allows is discarded up to its newline and reported once, with
# its first bytes (so the error reply can carry the request's id).

from cribcore.protocol import MAX_LINE


class LineAssembler:
    def __init__(self, on_line, on_too_long):
        self.line = bytearray(MAX_LINE)
        self.n = 0
        self.discarding = False
        self._on_line = on_line  # on_line(line, n)
        self._on_too_long = on_too_long  # on_too_long(line, n): the line's first n bytes

    def feed_byte(self, c):
        if c == 10:  # newline
            if self.discarding:
                self.discarding = False
                n = self.n
                self.n = 0
                self._on_too_long(self.line, n)
            elif self.n:
                n = self.n
                self.n = 0
                self._on_line(self.line, n)
            return
        if self.discarding:
            return
        if self.n >= MAX_LINE - 1:  # no room left for a line that still has to end
            self.discarding = True
            return
        self.line[self.n] = c
        self.n += 1

    def feed(self, data, n):
        for i in range(n):
            self.feed_byte(data[i])
