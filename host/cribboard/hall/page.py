"""The projector page (aiohttp, like the bridge's): standings, every table's board in miniature,
who plays whom at which table, live over a WebSocket.

    GET /              the page (static/hall.html; large type, 1920x1080 and phones)
    GET /static/...    its script and style; /board/... the board's drawing (board.js), as the bridge's page
    GET /layout.json   the board's holes (the bridge's, from cribcore)
    GET /api/hall      the hall now, as the WebSocket's first messages
    GET /api/ws        those messages, then every change: {"type": "table" | "round" |
                       "standings" | "hall", ...}

The page only reads: it changes nothing in the hall, so it needs no token (bind it to
127.0.0.1 to keep it on this computer). Strangers on the club's network may connect to it, so
its door (:mod:`cribboard.hall.door`) caps the connections and times their headers, idle
keep-alive connections close after KEEPALIVE_S, WebSockets are capped (MAX_WEBSOCKETS, and
WEBSOCKETS_PER_ADDRESS from one address) and one that does not take what it is sent is closed
(:mod:`cribboard.hall.fanout`). It follows the bridge's rules (docs/bridge.md) all the
same: a request a web page of another origin makes (``Origin``) is refused with 403
``cross_origin``, and so is one whose ``Host`` is not a name of this computer (403
``bad_host``: a site that rebinds its DNS name to this address reads nothing). Bound to
loopback it answers loopback names only; bound to the network, also IP addresses and this
computer's own host name (what phones type or scan)."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

from cribboard.errors import HallError
from cribboard.fdlimit import fd_limit
from cribboard.hall.door import Door, DoorLimits
from cribboard.hall.view import HallView
from cribboard.web import BOARD_FILES, meta
from cribboard.web.addresses import is_loopback

STATIC_DIR = Path(__file__).resolve().parent / "static"
DEFAULT_HTTP_PORT = 8322
KEEPALIVE_S = 15.0  # an idle keep-alive connection is closed after this
MAX_WEBSOCKETS = 500
WEBSOCKETS_PER_ADDRESS = 32
HEARTBEAT_S = 30.0  # a WebSocket that answers no ping within half of it is closed
BACKLOG = 128


def host_name(host_header: str) -> str:
    """The name in a Host header, without the port."""
    if host_header.startswith("["):
        return host_header[1:].partition("]")[0]
    return host_header.rpartition(":")[0] if host_header.count(":") == 1 else host_header


def own_name(name: str, loopback: bool) -> bool:
    """Whether a Host header's name is this computer's: a loopback name, or (`loopback`
    False: the page is on the network) an IP address or this computer's host name."""
    if is_loopback(name):
        return True
    if loopback:
        return False
    try:
        ipaddress.ip_address(name.strip("[]"))
        return True
    except ValueError:
        pass
    own = socket.gethostname().lower()
    return name.lower().rstrip(".") in (own, own.split(".")[0], f"{own.split('.')[0]}.local")


_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _guard(loopback: bool) -> Middleware:
    @web.middleware
    async def guard(request: web.Request, handler: _Handler) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            return web.json_response(
                {
                    "error": "cross_origin",
                    "message": "requests from web pages of other origins are refused",
                },
                status=403,
            )
        if not own_name(host_name(request.host), loopback):
            return web.json_response(
                {
                    "error": "bad_host",
                    "message": f"this page answers this computer's names only, not "
                    f"{request.host!r}",
                },
                status=403,
            )
        return await handler(request)

    return guard


def create_app(
    view: HallView,
    *,
    loopback: bool = True,
    max_websockets: int = MAX_WEBSOCKETS,
    websockets_per_address: int = WEBSOCKETS_PER_ADDRESS,
) -> web.Application:
    """The page's web application over a hall's view; `loopback` True when it listens on a
    loopback address only (then only loopback Host names are answered)."""
    app = web.Application(middlewares=[_guard(loopback)])
    sockets: set[web.WebSocketResponse] = set()
    by_address: dict[str, int] = {}
    layout = meta.layout_json()

    async def index(request: web.Request) -> web.StreamResponse:
        response = web.FileResponse(STATIC_DIR / "hall.html")
        response.headers["Cache-Control"] = "no-cache"
        return response

    async def layout_json(request: web.Request) -> web.StreamResponse:
        return web.json_response(layout)

    async def hall(request: web.Request) -> web.StreamResponse:
        return web.json_response({"messages": view.snapshot()})

    async def websocket(request: web.Request) -> web.StreamResponse:
        address = request.remote or ""
        if len(sockets) >= max_websockets or by_address.get(address, 0) >= websockets_per_address:
            return web.json_response(
                {"error": "busy", "message": "too many live pages open: try again later"},
                status=503,
            )
        ws = web.WebSocketResponse(heartbeat=HEARTBEAT_S, max_msg_size=4096)
        await ws.prepare(request)
        sockets.add(ws)
        by_address[address] = by_address.get(address, 0) + 1
        try:
            await view.fanout.serve(request, ws, view.snapshot())
        finally:
            sockets.discard(ws)
            left = by_address.pop(address, 1) - 1
            if left:
                by_address[address] = left
        return ws

    async def close_sockets(app: web.Application) -> None:
        for ws in list(sockets):
            await ws.close(code=1001, message=b"the hall's page is stopping")

    app.on_shutdown.append(close_sockets)
    app.router.add_get("/", index)
    app.router.add_static("/static/", STATIC_DIR)
    app.router.add_static("/board/", BOARD_FILES)
    app.router.add_get("/layout.json", layout_json)
    app.router.add_get("/api/hall", hall)
    app.router.add_get("/api/ws", websocket)
    return app


class Page:
    """The page's server: ``async with Page(view, host, port) as page: page.url``. `limits`:
    its door's (default: as many connections as this process's descriptors allow, room kept
    for the rest of it)."""

    def __init__(
        self,
        view: HallView,
        host: str = "127.0.0.1",
        port: int = DEFAULT_HTTP_PORT,
        *,
        limits: DoorLimits | None = None,
        max_websockets: int = MAX_WEBSOCKETS,
        websockets_per_address: int = WEBSOCKETS_PER_ADDRESS,
    ):
        self.view = view
        self.host = host
        self.port = port
        self.bound_port = 0
        self.limits = limits
        self.max_websockets = max_websockets
        self.websockets_per_address = websockets_per_address
        self.door: Door | None = None
        self._runner: web.AppRunner | None = None
        self._listener: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.bound_port}/"

    async def start(self) -> Page:
        loopback = is_loopback(self.host) if self.host else False
        app = create_app(
            self.view,
            loopback=loopback,
            max_websockets=self.max_websockets,
            websockets_per_address=self.websockets_per_address,
        )
        self._runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            keepalive_timeout=KEEPALIVE_S,
            max_line_size=4096,
            max_field_size=4096,
            max_headers=64,
        )
        await self._runner.setup()
        try:
            self._listener = _listen(self.host or "0.0.0.0", self.port)
        except OSError as err:
            await self.stop()
            raise HallError(f"the page cannot listen on {self.host}:{self.port}: {err.strerror}")
        self.bound_port = int(self._listener.getsockname()[1])
        server = self._runner.server
        assert server is not None
        self.door = Door(server, self.limits or DoorLimits.for_fd_limit(fd_limit()))
        self._accepting = asyncio.create_task(self.door.serve(self._listener))
        return self

    async def stop(self) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accepting
            self._accepting = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Page:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def _listen(host: str, port: int) -> socket.socket:
    """A non-blocking listening TCP socket on `host`:`port` (0: a free port)."""
    info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _name, address = info[0]
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(BACKLOG)
        listener.setblocking(False)
    except OSError:
        listener.close()
        raise
    return listener
