# The USB serial link: protocol lines on the board's stdin/stdout (USB CDC on a board, the pty on
# the virtual board). Reading never blocks the app, and Ctrl-C (0x03) still reaches MicroPython's
# interrupt handling: mpremote keeps working on a board running the app. A cribboard image reads
# each ready line in one call (its C module cribio, passed in as `read_ready`); elsewhere stdin is
# polled with select and read one ready byte at a time (MicroPython's stdin has no read that
# returns what is there without waiting for the rest).

import select

try:
    import micropython
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

from cribcore.protocol import MAX_LINE
from cribfw.dispatch import RecentReplies
from cribfw.linebuffer import LineAssembler


class UsbLink:
    def __init__(self, stdin, stdout, dispatcher, read_ready=None):
        self._stdin = stdin
        self._stdout = stdout
        self._dispatcher = dispatcher
        self.recent = RecentReplies()
        self.trusted = True  # physical access: a USB host may always change the board
        self.address = None
        self.brief = False  # the host asked for brief events (`brief 1`)
        self._one = bytearray(1)
        self._poll = select.poll()
        self._poll.register(stdin, select.POLLIN)
        # MicroPython's ipoll allocates no result list per call; CPython (tests) has only poll.
        self._ready = getattr(self._poll, "ipoll", self._poll.poll)
        self._lines = LineAssembler(self._line, self._too_long)
        self._readinto = stdin.readinto  # (bound once: drain runs for every burst of bytes)
        self._read_ready = read_ready  # cribio.read_ready(buf, start), or None
        self._spare = bytearray(MAX_LINE)

    @micropython.native
    def _line(self, line, n):
        self._dispatcher.handle_line(self, line, n)

    def _too_long(self, line, n):
        self._dispatcher.line_too_long(self, line, n)

    @micropython.native
    def send(self, buf, n):
        self._stdout.write(buf, 0, n)

    @micropython.native
    def drain(self):
        """Read and handle every byte that is ready now; returns the count read."""
        if self._read_ready is not None:
            return self._lines.read_lines(self._read_ready, self._spare)
        return self._lines.read_ready(self._ready, self._readinto, self._one)

    async def run(self):
        import asyncio

        stdin = self._stdin
        while True:
            # Sleep in the scheduler until stdin is readable, then take all that is ready.
            # (Each wait allocates a little in asyncio itself; handling the lines does not.)
            await _readable(asyncio, stdin)
            if self.drain():
                self._dispatcher.input_done()
            else:
                await asyncio.sleep_ms(50)  # end of input (no host side at all): don't spin


def _readable(asyncio, stream):
    """Wait in asyncio's scheduler until `stream` is readable, as asyncio's StreamReader does
    before each read, without its read: the link reads what is ready itself (a byte read through
    the stream reader cost as much as a whole line from cribio)."""
    yield asyncio.core._io_queue.queue_read(stream)
