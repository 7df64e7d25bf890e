# The USB serial link: protocol lines on the board's stdin/stdout (USB CDC on a board, the pty on
# the virtual board). Reading never blocks the app, and Ctrl-C (0x03) still reaches MicroPython's
# interrupt handling: mpremote keeps working on a board running the app. The lines are read and
# handled inside asyncio's own wait for I/O (SchedulerWait, below), without waking a task for
# each. A cribboard image reads each ready line in one call and writes through its USB driver
# without delay (its C module cribio, passed in: read_ready and write); elsewhere stdin is polled
# with select and read one ready byte at a time (MicroPython's stdin has no read that returns
# what is there without waiting for the rest), and replies are stdout's writes.

import select

try:
    import micropython
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

from cribcore.protocol import MAX_LINE
from cribfw.linebuffer import LineAssembler


class UsbLink:
    def __init__(self, stdin, stdout, dispatcher, cribio=None):
        self._stdin = stdin
        # A link's send(buf, n) writes buf[:n]: cribio.write(buf, n) and a MicroPython stream's
        # write(buf, max_len) do just that, with no call of ours around it (one for every reply
        # and event).
        self.send = stdout.write if cribio is None else cribio.write
        self._input_done = dispatcher.input_done  # (bound once: called after every burst)
        self.recent = dispatcher.ctx.books.usb  # the USB host's remembered replies
        self.trusted = True  # physical access: a USB host may always change the board
        self.address = None
        self.brief = False  # the host asked for brief events (`brief 1`)
        self.every = False  # the host asked for an event after every request (`every 1`)
        self._one = bytearray(1)
        self._poll = select.poll()
        self._poll.register(stdin, select.POLLIN)
        # MicroPython's ipoll allocates no result list per call; CPython (tests) has only poll.
        self._ready = getattr(self._poll, "ipoll", self._poll.poll)
        self._lines = LineAssembler(self, dispatcher.handle_line, dispatcher.line_too_long)
        self._readinto = stdin.readinto  # (bound once: drain runs for every burst of bytes)
        self._read_ready = None if cribio is None else cribio.read_ready  # (buf, start)
        self._spare = bytearray(MAX_LINE)

    @micropython.native
    def drain(self):
        """Read and handle every byte that is ready now; returns the count read."""
        if self._read_ready is not None:
            return self._lines.read_lines(self._read_ready, self._spare)
        return self._lines.read_ready(self._ready, self._readinto, self._one)

    async def run(self):
        import asyncio

        wait = SchedulerWait.attach(asyncio, self._stdin, self.handle_ready)
        if wait is None:
            await self._run_as_task(asyncio)
            return
        while True:
            # The lines are handled in the scheduler's own wait: this task only steps in when
            # the input ends.
            wait.watch()
            await wait.ended.wait()
            wait.ended.clear()
            await asyncio.sleep_ms(50)  # no host side at all: look again later, don't spin

    @micropython.native
    def handle_ready(self):
        """stdin read as ready: handle its lines, then push and show what they changed (one
        event for them all); returns the count of bytes read (0: the input ended)."""
        read = self._read_ready
        if read is not None:  # (drain's own, without its call: once for each burst)
            n = self._lines.read_lines(read, self._spare)
        else:
            n = self.drain()
        if n:
            self._input_done()
        return n

    async def _run_as_task(self, asyncio):
        # (asyncio as MicroPython documents it: the task sleeps until stdin is readable)
        reader = asyncio.StreamReader(self._stdin)
        while True:
            if await reader.readinto(self._one):
                self._lines.feed_byte(self._one[0])
                self.drain()
                self._input_done()
            else:
                await asyncio.sleep_ms(50)  # end of input (no host side at all): don't spin


class SchedulerWait:
    """Serves stdin from asyncio's own wait for I/O. Waking a task for each request line took
    MicroPython's asyncio about 40,000 cycles on an RP2040 (the poll registered and dropped, a
    second poll, the task queue, the task resumed): a third of a short request's time. Here
    stdin stays in the scheduler's poll, and `on_ready()` runs inside the wait as soon as it is
    readable; every other stream is woken as asyncio's IOQueue does. When stdin reads as ready
    with nothing to read (its input ended), it is no longer polled and `ended` (an
    asyncio.Event) is set: watch() polls it again.

    This takes over asyncio's IOQueue.wait_io_event on the running loop's queue (its `poller`
    and `map` of stream id -> [task reading, task writing, stream]), so it is only used where
    that queue is as expected (attach() returns None elsewhere)."""

    @staticmethod
    def attach(asyncio, stdin, on_ready):
        core = getattr(asyncio, "core", None)
        queue = getattr(core, "_io_queue", None)
        for name in ("poller", "map", "wait_io_event"):
            if not hasattr(queue, name):
                return None
        if not hasattr(core, "_task_queue"):
            return None
        return SchedulerWait(core, queue, stdin, on_ready, asyncio.Event())

    def __init__(self, core, queue, stdin, on_ready, ended):
        self._core = core
        self._poller = queue.poller
        self._map = queue.map
        self._stdin = stdin
        self._on_ready = on_ready
        self.ended = ended
        self._watching = False
        queue.wait_io_event = self.wait  # (an instance attribute: the loop's own call)

    def watch(self):
        """Poll stdin in the scheduler's wait."""
        if not self._watching:
            self._poller.register(self._stdin, select.POLLIN)
            self._watching = True

    def unwatch(self):
        """Stop polling stdin (its input ended: it would read as ready forever)."""
        if self._watching:
            self._poller.unregister(self._stdin)
            self._watching = False

    @micropython.native
    def wait(self, dt):
        """The scheduler's wait: up to `dt` ms (-1: until something happens) for I/O."""
        poller = self._poller
        for stream, events in poller.ipoll(dt):
            if stream is self._stdin:
                if not self._on_ready():
                    self.unwatch()
                    self.ended.set()
                continue
            waiting = self._map[id(stream)]
            reader = waiting[0]
            writer = waiting[1]
            if reader is not None and events & ~select.POLLOUT:
                self._core._task_queue.push(reader)  # readable, or an error for the reader
                waiting[0] = reader = None
            if writer is not None and events & ~select.POLLIN:
                self._core._task_queue.push(writer)
                waiting[1] = writer = None
            if reader is None and writer is None:
                del self._map[id(stream)]
                poller.unregister(stream)
            elif reader is None:
                poller.modify(stream, select.POLLOUT)
            else:
                poller.modify(stream, select.POLLIN)
