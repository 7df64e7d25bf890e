# A socket for umqtt.simple that never waits long: what keeps a lost network or broker from
# stalling the LEDs and buttons, which share the asyncio loop with the table client.
#
# umqtt.simple (micropython-lib, vendored unmodified in firmware/umqtt/) reads and writes its
# socket blocking: check_msg() reads one byte non-blocking, then sets the socket blocking again,
# without a timeout, for the rest of the packet and for every later call; a QoS 1 publish waits
# for its PUBACK in a loop. A broker that stops answering would hold the board for ever. So the
# table client hands the client this wrapper once connected: "blocking" here means "wait at most
# `timeout_s`", and a read or write that cannot finish in that time raises OSError(ETIMEDOUT),
# which the table client takes as a lost connection. Non-blocking reads (check_msg) pass through.
# It also notes when anything last arrived, so a silent connection is noticed between pings.
# Over TLS `sock` is the SSL socket and `raw` the plain one under it, which alone has
# settimeout() and socket options (cribfw/halltls.py).

from cribfw.clock import ticks_ms

ETIMEDOUT = 110
EMSGSIZE = 90


class BoundedSocket:
    """`max_read`: the most one read may ask for (umqtt reads a packet's topic and payload in
    one read each, and allocates them whole): more is a packet no table takes, and the
    connection is given up before a byte of it is allocated."""

    def __init__(self, sock, timeout_s, raw=None, max_read=1 << 30):
        self.sock = sock
        self.raw = sock if raw is None else raw
        self.timeout_s = timeout_s
        self.max_read = max_read
        self.heard_ms = ticks_ms()  # when a byte last arrived
        self._blocking = True
        self.raw.settimeout(timeout_s)
        try:
            self.raw.setsockopt(6, 1, 1)  # IPPROTO_TCP, TCP_NODELAY: small packets leave at once
        except (OSError, AttributeError):
            pass  # (a stack without it: the broker's delayed ACK may slow a QoS 1 publish)

    def setblocking(self, flag):
        self._blocking = flag
        if flag:
            self.raw.settimeout(self.timeout_s)
        else:
            self.raw.setblocking(False)

    def read(self, n):
        if n > self.max_read:
            raise OSError(EMSGSIZE)
        data = self.sock.read(n)
        if data:
            self.heard_ms = ticks_ms()
        if self._blocking and (data is None or 0 < len(data) < n):
            raise OSError(ETIMEDOUT)
        return data

    def write(self, buf, n=-1):
        if n < 0:
            n = len(buf)
        written = self.sock.write(buf, n)
        if written is None or written < n:
            raise OSError(ETIMEDOUT)
        return written

    def close(self):
        self.sock.close()  # an SSL socket closes the plain one under it
