# A browser's WebSocket as a link of the board (docs/protocol.md, "WebSocket"): the same protocol
# lines as on USB and Bluetooth, carried in WebSocket text frames (RFC 6455). The page the board
# serves (cribfw/webserver.py) opens one; nothing else about the protocol changes.
#
# Input: the frames' payloads are a byte stream, cut into lines by the link's LineAssembler, so a
# line may come in several frames (continuation frames too) and several lines in one. A frame is
# at most MAX_PAYLOAD bytes; a larger one, a binary frame, an unmasked one, reserved bits or an
# unknown opcode close the connection with the matching status (1009, 1003, 1002). Ping is
# answered with pong, close with close.
#
# Output: each line the dispatcher sends is one text frame, queued in the slot's bounded queue
# (OUT_SIZE) and written by the connection's own writer task. A line that does not fit (a page
# that stopped reading while others change the board) closes the connection (1013): the page
# reconnects and reads the state again, so nothing is lost silently. A page's own input is read
# only while its queue has room for the longest reply (HANDLE_ROOM: the frame), so its own
# replies always fit.
#
# Identity: a page sends its token (12 hex digits it drew once and keeps, `?t=` on the socket's
# URL). The token is the link's `address` for the admission (cribfw/admission.py: type byte
# TOKEN_TYPE, then the token's 6 bytes), so the deal button admits it and the board remembers it
# across power cuts, and a page that comes back with it gets back the replies remembered for it
# (the board's resend memory keeps them by sender, cribfw/replies.py, through a power cut too): a
# request resent on a new socket after one dropped is answered from memory, not applied again.

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

    def const(value):  # type: ignore[no-redef]
        return value


from cribfw.admission import ADDR_LEN
from cribfw.clock import ticks_ms
from cribfw.linebuffer import LineAssembler

MAX_PAYLOAD = const(256)  # the longest frame a page may send (a request line is 64 bytes)
OUT_SIZE = const(1024)  # per socket: frames waiting to be written
HANDLE_ROOM = const(800)  # a page's input is read while this much is free (the frame: 757 + 4)
LINGER = const(2048)  # after the board's close frame: bytes read and dropped at most
TOKEN_HEX = const(12)  # a token: 12 hex digits (6 bytes)
TOKEN_TYPE = const(0x57)  # "W": the first byte of a page's admission address (BLE's are 0..3)

# Close status codes (RFC 6455 7.4.1)
CLOSE_NORMAL = const(1000)
CLOSE_GOING_AWAY = const(1001)
CLOSE_PROTOCOL = const(1002)
CLOSE_UNSUPPORTED = const(1003)
CLOSE_TOO_BIG = const(1009)
CLOSE_TRY_LATER = const(1013)

_OP_CONTINUATION = const(0)
_OP_TEXT = const(1)
_OP_BINARY = const(2)
_OP_CLOSE = const(8)
_OP_PING = const(9)
_OP_PONG = const(10)

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_key(key):
    """Sec-WebSocket-Accept for the client's Sec-WebSocket-Key (bytes)."""
    import binascii
    import hashlib

    return binascii.b2a_base64(hashlib.sha1(key + WS_GUID).digest())[:-1]


def token_address(text):
    """The admission address (7 bytes) of a page's token (12 lower-case hex digits, bytes), or
    None when it is not one."""
    if text is None or len(text) != TOKEN_HEX:
        return None
    address = bytearray(ADDR_LEN)
    address[0] = TOKEN_TYPE
    for i in range(TOKEN_HEX):
        c = text[i]
        if 48 <= c <= 57:
            v = c - 48
        elif 97 <= c <= 102:
            v = c - 87
        else:
            return None
        address[1 + i // 2] = address[1 + i // 2] * 16 + v
    return address


class Closed(Exception):
    """The connection is over: `code` the close status to send (0: none, the peer left)."""

    def __init__(self, code, reason=b""):
        super().__init__(code)
        self.code = code
        self.reason = reason


class WebLink:
    """One page's WebSocket: a link for the dispatcher while it is open (`live`). `address` is
    its token's admission address (None: a page without a token); `recent` its remembered
    replies (those it left with, when the page comes back with the same token)."""

    def __init__(self, dispatcher, address, recent, asyncio):
        self.dispatcher = dispatcher
        self.live = True
        self.trusted = False
        self.address = address
        self.brief = False
        self.every = False
        self.recent = recent
        self.lines = LineAssembler(self, dispatcher.handle_line, dispatcher.line_too_long)
        self.out = bytearray(OUT_SIZE)
        self.out_n = 0
        self.overflow = False  # a line did not fit: the connection is closed
        self.wake = asyncio.Event()  # the writer's
        self.drained = asyncio.Event()  # set by the writer when the queue is empty

    # --- the dispatcher's side ---------------------------------------------------------------

    @micropython.native
    def send(self, buf, n):
        """Queue one line (buf[:n]) as a text frame; a line that does not fit ends the socket."""
        self.queue(0x81, buf, n)  # FIN, text

    @micropython.native
    def queue(self, first, buf, n):
        """Queue a frame whose first byte is `first` with buf[:n] as its payload."""
        if not self.live or self.overflow:
            return
        at = self.out_n
        head = 2 if n < 126 else 4
        if at + head + n > OUT_SIZE:
            self.overflow = True
            self.wake.set()  # the writer sees it and closes the socket
            return
        out = self.out
        out[at] = first
        if head == 2:
            out[at + 1] = n
        else:
            out[at + 1] = 126
            out[at + 2] = n >> 8
            out[at + 3] = n & 0xFF
        at += head
        for i in range(n):
            out[at + i] = buf[i]
        self.out_n = at + n
        self.wake.set()

    def room(self):
        return OUT_SIZE - self.out_n


@micropython.native
def _unmask(buf, n, mask):
    for i in range(n):
        buf[i] ^= mask[i & 3]


async def _fill(reader, view, n):
    """Read exactly n bytes into view[:n]; Closed(0) at the end of the stream."""
    got = 0
    while got < n:
        k = await reader.readinto(view[got:n])
        if not k:
            raise Closed(0)
        got += k


def close_frame(code, reason=b""):
    """A close frame with `code` (0: without a status)."""
    if not code:
        return b"\x88\x00"
    return bytes((0x88, 2 + len(reason), code >> 8, code & 0xFF)) + reason


async def serve(link, reader, writer, conn, asyncio):
    """Run one WebSocket on `link` (a WebLink the socket took) until it ends: frames in, the
    writer task out. `conn` is the server's record of the connection (its `seen_ms`, `stuck_ms`
    are what the server's watch reads to end a silent or stuck socket)."""
    dispatcher = link.dispatcher
    head = bytearray(8)
    head_view = memoryview(head)
    payload = bytearray(MAX_PAYLOAD)
    view = memoryview(payload)
    writing = asyncio.create_task(_write(link, writer, conn))
    code = CLOSE_NORMAL
    reason = b""
    fragmented = False  # a text message was begun and not finished
    try:
        while True:
            await _fill(reader, head_view, 2)
            conn.seen_ms = ticks_ms()
            fin = head[0] & 0x80
            op = head[0] & 0x0F
            n = head[1] & 0x7F
            if head[0] & 0x70 or not head[1] & 0x80:
                raise Closed(CLOSE_PROTOCOL, b"bad frame")  # reserved bits, or not masked
            if n == 126:
                await _fill(reader, head_view, 2)
                n = head[0] << 8 | head[1]
            elif n == 127:
                raise Closed(CLOSE_TOO_BIG, b"frame too big")
            if n > MAX_PAYLOAD:
                raise Closed(CLOSE_TOO_BIG, b"frame too big")
            if op >= _OP_CLOSE and (n > 125 or not fin):
                raise Closed(CLOSE_PROTOCOL, b"bad control frame")
            await _fill(reader, head_view, 4)  # the mask
            mask = bytes(head_view[0:4])
            await _fill(reader, view, n)
            _unmask(payload, n, mask)
            conn.seen_ms = ticks_ms()
            if op == _OP_TEXT or op == _OP_CONTINUATION:
                if (op == _OP_TEXT) == fragmented:
                    raise Closed(CLOSE_PROTOCOL, b"bad fragment")
                fragmented = not fin
                while link.room() < HANDLE_ROOM:
                    link.drained.clear()
                    await link.drained.wait()  # its own replies always fit
                link.lines.feed(payload, n)
                dispatcher.input_done()
            elif op == _OP_PING:
                link.queue(0x8A, payload, n)  # pong, in turn with the replies
            elif op == _OP_CLOSE:
                code = payload[0] << 8 | payload[1] if n >= 2 else 0
                raise Closed(code)
            elif op == _OP_BINARY:
                raise Closed(CLOSE_UNSUPPORTED, b"text frames only")
            elif op != _OP_PONG:
                raise Closed(CLOSE_PROTOCOL, b"unknown opcode")
    except Closed as err:
        code = err.code
        reason = err.reason
    finally:
        writing.cancel()
    if code:
        try:
            link.out_n = 0
            writer.write(close_frame(code, reason))
            await writer.drain()
            # What the peer sent after is read and dropped until it closes too (at most
            # LINGER bytes; the server's head deadline, HEAD_MS, bounds the time): closing with
            # unread bytes would reset the connection, and the close frame could be lost.
            conn.head = True
            conn.socket = False
            conn.opened_ms = ticks_ms()
            left = LINGER
            while left > 0:
                k = await reader.readinto(view)
                if not k:
                    break
                left -= k
        except OSError:
            pass


async def _write(link, writer, conn):
    """The connection's writer: the slot's queue onto the socket. `conn.stuck_ms` is when a
    write began that has not finished (0: none). A line that did not fit the queue ends the
    socket: the close frame goes after what was queued, then the reader is stopped."""
    out = memoryview(link.out)
    while True:
        n = link.out_n
        if not n:
            if link.overflow:
                writer.write(close_frame(CLOSE_TRY_LATER, b"too slow"))
                await writer.drain()
                conn.task.cancel()
                return
            link.drained.set()
            link.wake.clear()
            await link.wake.wait()
            continue
        conn.stuck_ms = ticks_ms() or 1
        writer.write(out[:n])  # written now, or copied by the stream
        link.out_n = 0
        await writer.drain()
        conn.stuck_ms = 0
