"""The projector page (aiohttp, like the bridge's): standings, every table's board in miniature,
who plays whom at which table, live over a WebSocket.

    GET /              the page (static/hall.html; large type, 1920x1080 and phones)
    GET /static/...    its script and style; /board/... the board's drawing (board.js), as the bridge's page
    GET /layout.json   the board's holes (the bridge's, from cribcore)
    GET /api/hall      the hall now, as the WebSocket's first messages
    GET /api/ws        those messages, then every change: {"type": "table" | "round" |
                       "standings" | "hall", ...}

The page only reads: it changes nothing in the hall, so it needs no token (bind it to
127.0.0.1 to keep it on this computer). It follows the bridge's rules (docs/bridge.md) all the
same: a request a web page of another origin makes (``Origin``) is refused with 403
``cross_origin``, and so is one whose ``Host`` is not a name of this computer (403
``bad_host``: a site that rebinds its DNS name to this address reads nothing). Bound to
loopback it answers loopback names only; bound to the network, also IP addresses and this
computer's own host name (what phones type or scan)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

from cribboard.errors import HallError
from cribboard.hall.view import HallView
from cribboard.web import BOARD_FILES, meta
from cribboard.web.addresses import is_loopback
from cribboard.web.hub import Hub, follow

STATIC_DIR = Path(__file__).resolve().parent / "static"
DEFAULT_HTTP_PORT = 8322


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


def create_app(view: HallView, *, loopback: bool = True) -> web.Application:
    """The page's web application over a hall's view; `loopback` True when it listens on a
    loopback address only (then only loopback Host names are answered)."""
    app = web.Application(middlewares=[_guard(loopback)])
    sockets: set[web.WebSocketResponse] = set()
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
        ws = web.WebSocketResponse(heartbeat=30.0)
        await ws.prepare(request)
        sub = view.hub.subscribe()
        for snapshot in view.snapshot():  # no await in between: nothing can overtake it
            Hub.send_to(sub, snapshot)
        await follow(ws, view.hub, sub, sockets)
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
    """The page's server: ``async with Page(view, host, port) as page: page.url``."""

    def __init__(self, view: HallView, host: str = "127.0.0.1", port: int = DEFAULT_HTTP_PORT):
        self.view = view
        self.host = host
        self.port = port
        self.bound_port = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.bound_port}/"

    async def start(self) -> Page:
        loopback = is_loopback(self.host) if self.host else False
        self._runner = web.AppRunner(
            create_app(self.view, loopback=loopback), handle_signals=False, access_log=None
        )
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, self.host, self.port).start()
        except OSError as err:
            await self.stop()
            raise HallError(f"the page cannot listen on {self.host}:{self.port}: {err.strerror}")
        self.bound_port = int(self._runner.addresses[0][1])
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Page:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
