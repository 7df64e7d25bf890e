# The board's own web server (a board with Wi-Fi; the virtual board on the host's loopback): the
# table page (cribfw/pagefiles.py), a WebSocket carrying the protocol lines (cribfw/weblink.py),
# and the set-up page that gives the board a network (cribfw/setuppage.py). Plain HTTP/1.1 on
# asyncio's start_server, one request per connection (Connection: close).
#
# Everything a browser sends is hostile until checked (docs/protocol.md, "WebSocket"):
#   a request's head       at most HEAD_SIZE bytes and MAX_HEADERS lines (else 431), whole, with
#                          a form's body, within HEAD_MS (else the connection is closed)
#   a form's body          at most MAX_BODY bytes (413)
#   connections            at most MAX_CONNS at once (one more is closed at once) and
#                          MAX_SOCKETS WebSockets (503 before the upgrade)
#   a WebSocket            frames checked by cribfw/weblink.py; silent for IDLE_MS: closed
#   a slow reader          a write that has not finished after STALL_MS ends the connection
# A connection that fails in any way ends alone: the USB and Bluetooth links, the LEDs and
# the buttons share the asyncio loop and never wait for a browser.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


from cribfw.clock import ticks_diff, ticks_ms
from cribfw.replies import PAGE_BOOKS, RecentReplies
from cribfw.weblink import WebLink, accept_key, serve, token_address

HEAD_SIZE = const(1024)
MAX_HEADERS = const(24)
MAX_BODY = const(256)
HEAD_MS = const(5000)
IDLE_MS = const(30000)  # a page pings every 10 s (static/boardsocket.js)
STALL_MS = const(5000)
WATCH_MS = const(500)
# Measured (make bench, bench/web_bench.py): on a Pico W image the server's modules and object
# take about 3.2 KB of heap and each WebSocket's link 2.4 KB, plus its stream and tasks (on the
# 64-bit unix port about 7 KB a socket in all). Four pages then cost about 14 KB of the 190 KB a
# Pico W has, beside Bluetooth's and the hall client's; a fifth is refused.
MAX_SOCKETS = const(4)
MAX_CONNS = const(8)
# A page is a sender of the board's resend memory (cribfw/replies.py) by its token: its book is
# kept while it is away, through a power cut too, for a page that comes back (PAGE_BOOKS books
# in all for pages, open or gone). A page without a token has a book of its own until it goes.
_NO_TOKEN = b"\x00" * 7

_TYPES = {
    b"html": b"text/html; charset=utf-8",
    b"js": b"text/javascript",
    b"css": b"text/css",
    b"json": b"application/json",
    b"svg": b"image/svg+xml",
}
_REASONS = {
    200: b"OK",
    204: b"No Content",
    302: b"Found",
    304: b"Not Modified",
    400: b"Bad Request",
    404: b"Not Found",
    405: b"Method Not Allowed",
    408: b"Request Timeout",
    413: b"Content Too Large",
    426: b"Upgrade Required",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}
# What the page asks to know it is on a board (static/boardsocket.js): the socket's path.
LINK_JSON = b'{"socket":"ws"}'


class Conn:
    """One connection, as the watch sees it."""

    def __init__(self, task, now):
        self.task = task
        self.opened_ms = now
        self.seen_ms = now
        self.stuck_ms = 0  # when a write began that has not finished (0: none)
        self.head = True  # reading the request's head (HEAD_MS applies)
        self.socket = False  # a WebSocket (IDLE_MS applies)
        self.ended = False


class Request:
    def __init__(self, method, target, headers, body):
        self.method = method
        self.target = target  # bytes, the path and any query
        self.headers = headers  # {lower-case name: value} of the headers the server reads
        self.body = body

    def path(self):
        return self.target.split(b"?", 1)[0]

    def query(self, key):
        """A query parameter's value (bytes), or None."""
        parts = self.target.split(b"?", 1)
        if len(parts) < 2:
            return None
        for pair in parts[1].split(b"&"):
            k, _, v = pair.partition(b"=")
            if k == key:
                return v
        return None


_WANTED = (
    b"host",
    b"upgrade",
    b"connection",
    b"sec-websocket-key",
    b"sec-websocket-version",
    b"if-none-match",
    b"content-length",
)


class HttpError(Exception):
    def __init__(self, status, text):
        super().__init__(status)
        self.status = status
        self.text = text


def parse_head(head):
    """A Request from a request's head (bytes, without the blank line); HttpError when it is
    not one the server takes."""
    lines = head.split(b"\r\n")
    if len(lines) - 1 > MAX_HEADERS:
        raise HttpError(431, b"too many headers")
    words = lines[0].split(b" ")
    if len(words) != 3 or not words[2].startswith(b"HTTP/1.") or not words[1].startswith(b"/"):
        raise HttpError(400, b"not an HTTP request")
    headers = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon:
            raise HttpError(400, b"bad header")
        name = name.strip().lower()
        if name in _WANTED:
            headers[name] = value.strip()
    return Request(words[0], words[1], headers, b"")


def response_head(status, length=0, kind=None, extra=b""):
    """A response's status line and headers, the blank line included."""
    head = b"HTTP/1.1 %d %s\r\n" % (status, _REASONS.get(status, b"Error"))
    if kind is not None:
        head += b"Content-Type: " + kind + b"\r\n"
    return head + extra + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % length


def content_type(path):
    return _TYPES.get(path.rsplit(b".", 1)[-1], b"application/octet-stream")


class WebServer:
    """The board's web server: `dispatcher` and `admission` the board's (cribfw.dispatch,
    cribfw.admission), `files` the page's files (cribfw.pagefiles.PageFiles, or None), `net`
    the board's network (cribfw.wifinet.WifiNet; None: no set-up page)."""

    def __init__(self, dispatcher, admission, files, net=None, max_sockets=MAX_SOCKETS):
        self.dispatcher = dispatcher
        self.admission = admission
        self.files = files
        self.net = net
        self.setup = None  # the set-up page (cribfw.setuppage.Setup), loaded when first asked
        self.links = []  # the WebSockets open now (cribfw.weblink.WebLink)
        self.max_sockets = max_sockets
        dispatcher.ctx.books.most += PAGE_BOOKS
        self.conns = []
        self.refused = 0  # connections closed at once: too many
        self.closed_bad = 0  # connections ended for a bad request, a bad frame or a timeout
        self.server = None

    def sockets(self):
        """WebSockets connected now."""
        return len(self.links)

    async def start(self, host, port):
        import asyncio

        self.server = await asyncio.start_server(self._client, host, port, backlog=MAX_CONNS)
        asyncio.create_task(self._watch())

    async def _watch(self):
        """Ends the connections that outstay their time (a slow head, a silent socket, a reader
        that stopped reading), and has the set-up page's pending change saved once admitted."""
        import asyncio

        while True:
            await asyncio.sleep_ms(WATCH_MS)
            now = ticks_ms()
            for conn in self.conns:
                if conn.ended:
                    continue
                late = (
                    (conn.stuck_ms and ticks_diff(now, conn.stuck_ms) > STALL_MS)
                    or (conn.head and ticks_diff(now, conn.opened_ms) > HEAD_MS)
                    or (conn.socket and ticks_diff(now, conn.seen_ms) > IDLE_MS)
                )
                if late:
                    conn.ended = True
                    self.closed_bad += 1
                    conn.task.cancel()
            if self.setup is not None:
                self.setup.tick()

    async def _client(self, reader, writer):
        import asyncio

        if len(self.conns) >= MAX_CONNS:
            self.refused += 1
            await _close(writer)
            return
        conn = Conn(asyncio.current_task(), ticks_ms())
        self.conns.append(conn)
        try:
            await self._handle(conn, reader, writer)
        except HttpError as err:
            self.closed_bad += 1
            await _answer(writer, err.status, err.text)
        except asyncio.CancelledError:  # the watch ended it: too slow
            pass
        except (OSError, MemoryError, ValueError, IndexError):  # a reset; no room: this one only
            self.closed_bad += 1
        finally:
            self.conns.remove(conn)
            await _close(writer)

    async def _handle(self, conn, reader, writer):
        buf = bytearray(HEAD_SIZE)
        view = memoryview(buf)
        n = 0
        end = -1
        while end < 0:
            if n == HEAD_SIZE:
                raise HttpError(431, b"request head too large")
            k = await reader.readinto(view[n:])
            if not k:
                return  # the client left
            start = n - 3 if n > 3 else 0
            n += k
            end = bytes(view[start:n]).find(b"\r\n\r\n")
            if end >= 0:
                end += start
        req = parse_head(bytes(view[:end]))
        rest = bytes(view[end + 4 : n])
        del buf, view
        method = req.method
        if method == b"POST":
            req.body = await _body(reader, req, rest)
        elif method != b"GET" and method != b"HEAD":
            raise HttpError(405, b"GET, HEAD or POST")
        conn.head = False
        path = req.path()
        if path == b"/ws":
            await self._socket(conn, req, reader, writer)
            return
        net = self.net
        if net is not None and (path == b"/setup" or net.mode == b"ap"):
            setup = self.setup
            if setup is None:
                from cribfw.setuppage import Setup

                setup = self.setup = Setup(net, self.admission)
            answer = setup.route(req)
            if answer is not None:
                status, kind, body, extra = answer
                await _answer(writer, status, body, kind, extra, method == b"HEAD")
                return
        if path == b"/link.json":
            await _answer(writer, 200, LINK_JSON, b"application/json", b"", method == b"HEAD")
            return
        await self._file(conn, req, writer)

    async def _file(self, conn, req, writer):
        path = req.path()
        if path == b"/":
            path = b"/index.html"
        files = self.files
        found = files.find(path) if files is not None else None
        if files is None or found is None or req.method == b"POST":
            raise HttpError(404 if found is None else 405, b"not here")
        etag, size, data = found
        tag = b'"' + etag + b'"'
        extra = b"ETag: " + tag + b"\r\nCache-Control: no-cache\r\n"
        if req.headers.get(b"if-none-match") == tag:
            writer.write(response_head(304, 0, None, extra))
            await writer.drain()
            return
        extra += b"Content-Encoding: gzip\r\n"
        writer.write(response_head(200, size, content_type(path), extra))
        await writer.drain()
        if req.method == b"GET":
            await files.send(path, data, writer, conn)

    async def _socket(self, conn, req, reader, writer):
        headers = req.headers
        key = headers.get(b"sec-websocket-key")
        if (
            headers.get(b"upgrade", b"").lower() != b"websocket"
            or key is None
            or not 16 <= len(key) <= 32
        ):
            raise HttpError(426, b"a WebSocket only")
        if headers.get(b"sec-websocket-version") != b"13":
            raise HttpError(426, b"WebSocket version 13 only")
        if len(self.links) >= self.max_sockets:
            raise HttpError(503, b"too many pages open: close one")
        address = token_address(req.query(b"t"))
        import asyncio

        link = WebLink(self.dispatcher, address, self._recent(address), asyncio)
        self.links.append(link)
        admission = self.admission
        if address is not None and admission.knows(address):
            link.trusted = True
        conn.socket = True
        conn.seen_ms = ticks_ms()
        try:
            writer.write(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept_key(key) + b"\r\n\r\n"
            )
            await writer.drain()
            self.dispatcher.add_link(link)
            await serve(link, reader, writer, conn, asyncio)
        finally:
            self.dispatcher.remove_link(link)
            admission.forget(link)
            link.live = False
            self.links.remove(link)
            link.recent.live -= 1

    def _recent(self, address):
        """The resend memory of a page with token `address`: the board's book of that sender
        (the one it had, when the page comes back); without a token, a book of its own."""
        if address is None:
            book = RecentReplies(_NO_TOKEN)
            book.live = 1
            return book
        return self.dispatcher.ctx.books.join(address, self.admission.knows)


async def _body(reader, req, rest):
    length = req.headers.get(b"content-length")
    try:
        size = int(length) if length is not None else -1
    except ValueError:
        size = -1
    if size < 0:
        raise HttpError(400, b"a form needs its length")
    if size > MAX_BODY:
        raise HttpError(413, b"form too large")
    body = bytearray(size)
    got = len(rest)
    if got > size:
        raise HttpError(400, b"more than the length said")
    body[:got] = rest
    view = memoryview(body)
    while got < size:
        k = await reader.readinto(view[got:])
        if not k:
            raise HttpError(400, b"form cut short")
        got += k
    return bytes(body)


async def _answer(writer, status, body, kind=b"text/plain", extra=b"", head_only=False):
    try:
        writer.write(response_head(status, len(body), kind, extra))
        if not head_only:
            writer.write(body)
        await writer.drain()
    except OSError:
        pass


async def _close(writer):
    # (MicroPython's Stream.close() does nothing: wait_closed() closes the socket, at once)
    try:
        await writer.wait_closed()
    except OSError:
        pass
