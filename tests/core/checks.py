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
