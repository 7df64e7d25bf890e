# The LED chain driven by the RP2040's (and RP2350's) PIO with DMA: a state machine shapes each
# bit on the data line while a DMA channel feeds it the frame's bytes, so the CPU is free for the
# 3.6 ms a frame of 121 LEDs takes on the wire (MicroPython's `neopixel` times each bit with the
# CPU, interrupts off, in machine.bitstream). Boards without PIO keep `neopixel` (the ESP32-S3's
# is driven by its RMT peripheral, which frees the CPU as well).
#
# The object has what the renderer uses of neopixel.NeoPixel: `buf` (the pixels in wire order,
# GRB), `bpp`, `ORDER`, `write()`. write() never waits: it copies `buf` into a wire buffer and
# starts the transfer, or, while the last frame is still going out (or latching), keeps the copy
# and has a one-shot timer start it once the wire is free (within 1 ms: the timer counts whole
# milliseconds). A later write() before then replaces the waiting copy: the LEDs get the latest
# state, each frame whole. (It waited for the wire before: a host that pegs as soon as the last
# reply comes had each request wait up to a frame, 3.9 ms.) Two wire buffers: the DMA reads one
# while the next frame waits in the other. Nothing is allocated per frame, and the timer's
# handler allocates nothing (it runs as a hard interrupt).

# pyright: reportUndefinedVariable=false
# (the state machine's program is written in rp2.asm_pio's assembler, whose names the decorator
# provides)

try:
    from micropython import const
except ImportError:  # CPython (the module imports rp2, so it only runs on a board)

    def const(value):  # type: ignore[no-redef]
        return value


from time import ticks_add, ticks_diff, ticks_us

import rp2
import uctypes
from machine import Timer

BIT_NS = const(1250)  # one bit on the wire: 800 kbit/s
PIO_HZ = const(8_000_000)  # 10 state-machine cycles a bit
LATCH_US = const(300)  # the line low this long between frames latches one (WS2812B: > 280 us)
FIFO_US = const(80)  # the FIFO's last bytes still going out when the DMA is done
_TRANS_COUNT = const(2)  # a DMA channel's registers, as words (DMA.registers)
_AL3_READ_ADDR_TRIG = const(15)


# One bit in 10 cycles: high 3, then high 3 more for a 1 or low 3 for a 0, then low 4 (T0H
# 375 ns, T0L 875 ns, T1H 750 ns, T1L 500 ns: within 50 ns of the WS2812B data sheet's). Bytes go
# MSB first from the top of the shift register: a DMA byte write to the TX FIFO fills all four
# lanes of the word, and 8 bits are taken from it.
@rp2.asm_pio(
    sideset_init=rp2.PIO.OUT_LOW,
    out_shiftdir=rp2.PIO.SHIFT_LEFT,
    autopull=True,
    pull_thresh=8,
    fifo_join=rp2.PIO.JOIN_TX,
)
def _ws2812():
    wrap_target()  # noqa: F821
    label("bit")  # noqa: F821
    out(x, 1).side(0)[3]  # noqa: F821
    jmp(not_x, "zero").side(1)[2]  # noqa: F821
    jmp("bit").side(1)[2]  # noqa: F821
    label("zero")  # noqa: F821
    nop().side(0)[2]  # noqa: F821
    wrap()  # noqa: F821


class PioStrip:
    """`n` WS2812 LEDs of `bpp` bytes on `pin` (a machine.Pin), sent by PIO state machine `sm`
    (0..3: PIO0; the Pico W's radio uses PIO1) and a DMA channel."""

    ORDER = (1, 0, 2, 3)  # GRB(W), as neopixel's default

    def __init__(self, pin, n, bpp=3, sm=0):
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)
        self._bytes = n * bpp
        # The wire buffers: the DMA reads one while the next frame waits in the other.
        self._wires = (bytearray(n * bpp), bytearray(n * bpp))
        self._wire_at = (uctypes.addressof(self._wires[0]), uctypes.addressof(self._wires[1]))
        self._next = 0  # the wire buffer the next frame is copied into
        self._waiting = False  # a frame waits in it for the wire (the timer starts it)
        self._armed = False  # the timer is set
        self._timer = Timer(-1)  # (a virtual timer: the only kind the rp2 port has)
        self._on_timer = self._send  # (bound once: the interrupt allocates nothing)
        self._sm = rp2.StateMachine(sm, _ws2812, freq=PIO_HZ, sideset_base=pin)
        self._sm.active(1)
        self._dma = rp2.DMA()
        # Paced by the state machine's TX FIFO (DREQ: PIO block * 8 + state machine). Where it
        # writes and how never change: set once; a frame only sets where it reads and how much.
        ctrl = self._dma.pack_ctrl(size=0, inc_write=False, treq_sel=(sm >> 2) * 8 + (sm & 3))
        self._dma.config(write=self._sm, ctrl=ctrl)
        # The channel's 16 registers, a view made once (in MicroPython's rp2.DMA, not its stubs).
        self._regs = self._dma.registers  # pyright: ignore[reportAttributeAccessIssue]
        self._frame_us = n * bpp * 8 * BIT_NS // 1000 + FIFO_US + LATCH_US
        self._started = ticks_add(ticks_us(), -self._frame_us)

    def __len__(self):
        return self.n

    def busy(self):
        """Whether a frame is still going out (or latching), or waits to."""
        return self._waiting or 0 <= ticks_diff(ticks_us(), self._started) < self._frame_us

    def write(self):
        """Send `buf` to the LEDs: now if the wire is free, else as soon as it is. Never waits.

        The timer's interrupt may come between any two lines here; the order keeps it from
        sending a half-copied frame or none: no frame waits while the copy is made, and a frame
        set waiting with the timer already run arms it again. A timer set means no frame has
        started since: the frame it was set for is the one on the wire."""
        self._waiting = False
        wire = self._next
        self._wires[wire][:] = self.buf
        # Since the last frame began: negative once ticks_us() has gone half its period (8.9
        # minutes) past it, a wire long free. (Read as a wait, the LEDs would stop for minutes
        # after a board left alone that long.)
        since = ticks_diff(ticks_us(), self._started)
        left = self._frame_us - since
        if since < 0 or left <= 0:
            if self._armed:
                self._timer.deinit()  # (set for the end of the wire; not run yet)
                self._armed = False
            # _send()'s start, here rather than a call: a call costs thousands of cycles on the
            # way from a peg to its frame. (No frame waits: the interrupt changes nothing.)
            self._next = wire ^ 1
            self._started = ticks_us()
            regs = self._regs
            regs[_TRANS_COUNT] = self._bytes
            regs[_AL3_READ_ADDR_TRIG] = self._wire_at[wire]
            return
        self._waiting = True
        if not self._armed:
            self._armed = True
            # The timer counts whole milliseconds and rounds a period down (MicroPython's
            # machine.Timer): rounded up here, it runs up to 1 ms after the wire is free, never
            # before it.
            self._timer.init(  # pyright: ignore[reportCallIssue]
                mode=Timer.ONE_SHOT,
                period=left // 1000 + 1,
                callback=self._on_timer,
                hard=True,
            )

    def _send(self, _timer=None):
        # The frame waiting in the next wire buffer goes out: the wire is free. Also the timer's
        # interrupt (a hard one: nothing allocated).
        self._armed = False
        if not self._waiting:
            return
        self._waiting = False
        while 0 <= ticks_diff(ticks_us(), self._started) < self._frame_us:
            pass  # (never long: only if the timer ran early; the wire is the last frame's)
        at = self._wire_at[self._next]
        self._next ^= 1
        self._started = ticks_us()
        # Two register writes rather than DMA.config's keyword arguments: the count, then the
        # read address through its triggering alias, which starts the transfer (the RP2040 data
        # sheet's DMA chapter: each channel's registers and their trigger aliases).
        regs = self._regs
        regs[_TRANS_COUNT] = self._bytes
        regs[_AL3_READ_ADDR_TRIG] = at

    def deinit(self):
        """Stop the timer and the state machine (after the frame going out) and free the DMA
        channel."""
        self._timer.deinit()
        self._waiting = False
        while self._dma.active():
            pass
        self._sm.active(0)
        self._dma.close()
