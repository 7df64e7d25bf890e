# While the board is its own access point, every name a phone looks up is the board: the phone's
# captive-portal check (connectivitycheck.gstatic.com, captive.apple.com) reaches the board's
# server, which sends it to the set-up page (cribfw/setuppage.py), and the phone opens it in its
# sign-in window. A question is answered only when it is one A query of at most MAX_QUERY bytes;
# anything else is dropped unanswered.

MAX_QUERY = 512


def answer(query, n, ip4):
    """The reply to the DNS query query[:n] with the address ip4 (4 bytes), or None."""
    if n < 17 or query[2] & 0x80 or query[4:6] != b"\x00\x01":
        return None  # too short, a response, or not one question
    end = 12
    while end < n and query[end]:
        end += query[end] + 1
    end += 5  # the name's last 0, type, class
    if end > n or query[end - 4 : end] != b"\x00\x01\x00\x01":
        return None  # not an A query for the internet class
    reply = bytearray(query[:end])
    reply[2] = 0x81  # a response, recursion desired as asked
    reply[3] = 0x80  # recursion available, no error
    reply[6:12] = b"\x00\x01\x00\x00\x00\x00"  # one answer
    reply += b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + ip4
    return reply


class CaptiveDns:
    def __init__(self, ip, port=53):
        self.ip4 = bytes(int(part) for part in ip.split(b"."))
        self.port = port
        self.task = None
        self.answered = 0

    def start(self):
        import asyncio

        self.task = asyncio.create_task(self._run(asyncio))

    def stop(self):
        if self.task is not None:
            self.task.cancel()
            self.task = None

    async def _run(self, asyncio):
        import socket

        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(socket.getaddrinfo("0.0.0.0", self.port)[0][-1])
            sock.setblocking(False)
            readable = _Readable(asyncio.core._io_queue, sock)
            while True:
                await readable.wait()
                try:
                    query, peer = sock.recvfrom(MAX_QUERY)
                except OSError:
                    continue
                reply = answer(query, len(query), self.ip4)
                if reply is not None:
                    try:
                        sock.sendto(reply, peer)
                        self.answered += 1
                    except OSError:
                        pass
        finally:
            sock.close()


class _Readable:
    """Waits for a socket to have something to read, as asyncio's own streams wait."""

    def __init__(self, io_queue, sock):
        self._io_queue = io_queue
        self._sock = sock

    # (MicroPython's coroutines are generators: see cribfw/irqflag.py)
    async def wait(self) -> None:  # pyright: ignore[reportInvalidTypeForm]
        yield self._io_queue.queue_read(self._sock)  # pyright: ignore[reportReturnType]
