# Simulated `neopixel` module for the virtual board (MicroPython unix port; never deployed).
#
# Same API as MicroPython's neopixel: `buf` holds the pixels in the strip's wire order (GRB,
# or GRBW with bpp=4). write() hands the whole buffer to the launcher in one datagram and
# never blocks; nothing is allocated per frame.
from simlink import link


class NeoPixel:
    """A chain of WS2812-class LEDs whose frames go to the launcher's side channel."""

    ORDER = (1, 0, 2, 3)

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.timing = timing
        self.buf = bytearray(n * bpp)
        # Message = b"F" + bpp + pixels; preallocated so write() does not allocate.
        self._message = bytearray(2 + n * bpp)
        self._message[0] = 0x46
        self._message[1] = bpp
        if hasattr(pin, "init"):
            pin.init(pin.OUT)

    def __len__(self):
        return self.n

    def __setitem__(self, index, value):
        offset = index * self.bpp
        for i in range(self.bpp):
            self.buf[offset + self.ORDER[i]] = value[i]

    def __getitem__(self, index):
        offset = index * self.bpp
        return tuple(self.buf[offset + self.ORDER[i]] for i in range(self.bpp))

    def fill(self, value):
        bpp = self.bpp
        for i in range(bpp):
            channel = value[i]
            position = self.ORDER[i]
            while position < len(self.buf):
                self.buf[position] = channel
                position += bpp

    def write(self):
        self._message[2:] = self.buf
        link.send_frame(self._message)
        link.poll()
