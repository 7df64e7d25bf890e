# Tiny helpers shared by the core tests, which run under both CPython (pytest) and MicroPython
# (tests/core/mprun.py): plain asserts, no pytest imports.


def raises(code, func, *args):
    """Assert that func(*args) raises GameError with `code`; return the error."""
    from cribcore.state import GameError

    try:
        func(*args)
    except GameError as err:
        assert err.code == code, "expected %s, got %s" % (code, err.code)
        return err
    raise AssertionError("expected GameError %s" % code)


class FakePixels:
    """Behaves like neopixel.NeoPixel: a GRB buffer, ORDER, write() counts writes."""

    ORDER = (1, 0, 2, 3)

    def __init__(self, n, bpp=3):
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)
        self.writes = 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        d = i * self.bpp
        return (self.buf[d + 1], self.buf[d], self.buf[d + 2])

    def write(self):
        self.writes += 1


class NorFlash:
    """A NOR flash region as a MicroPython block device (the extended protocol, as rp2.Flash):
    an erase sets a block to 0xFF, a program can only clear bits (new = old & data). `cut_after`
    bytes programmed or erased from now on, the flash stops: the operation in progress is left
    half done (a power cut) and OSError is raised. Counts erases per block for wear figures."""

    def __init__(self, block_size=4096, count=8):
        self.block_size = block_size
        self.count = count
        self.data = bytearray(b"\xff" * (block_size * count))
        self.erases = [0] * count
        self.cut_after = -1  # bytes until the power goes (-1: never)

    def readblocks(self, block, buf, offset=0):
        at = block * self.block_size + offset
        buf[:] = memoryview(self.data)[at : at + len(buf)]

    def _budget(self, n):
        """How many of n bytes happen before the cut."""
        if self.cut_after < 0:
            return n
        done = min(n, self.cut_after)
        self.cut_after -= done
        return done

    def writeblocks(self, block, buf, offset=0):
        at = block * self.block_size + offset
        done = self._budget(len(buf))
        for i in range(done):
            self.data[at + i] &= buf[i]
        if done < len(buf):
            raise OSError(5)

    def ioctl(self, op, arg):
        if op == 4:
            return self.count
        if op == 5:
            return self.block_size
        if op == 6:
            self.erases[arg] += 1
            at = arg * self.block_size
            done = self._budget(self.block_size)
            for i in range(done):
                self.data[at + i] = 0xFF
            if done < self.block_size:
                raise OSError(5)
        return 0
