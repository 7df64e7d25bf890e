"""The bridge's HTTP and WebSocket server (aiohttp on asyncio).

Security: bound to a loopback address the bridge answers anyone on this computer, but refuses
requests made by web pages of other origins (a page on the internet must not drive the board)
and requests whose Host is not a loopback name (DNS rebinding). Bound to any other address it
needs a token, and every request must carry it: `Authorization: Bearer TOKEN`, `?token=TOKEN`,
or the cookie the page sets when it is opened with `?token=`. With a token, pages of other
origins may call the API (CORS) if they send the token themselves (not the cookie).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

from cribboard.bridge import DEFAULT_HOST, DEFAULT_HTTP_PORT, catalogs
from cribboard.bridge.halltable import HallTable, TableSettings
from cribboard.bridge.openapi import openapi_document
from cribboard.bridge.ops import KEY_HEADER, OPS, ApiError, Op, board_error, parse_args
from cribboard.bridge.records import MOST_GAMES, BridgeRecords, RecordUnavailable
from cribboard.bridge.registry import BLE_PREFIX, BoardEntry, Opener, Registry
from cribboard.errors import CribboardError
from cribboard.i18n import LANGUAGES
from cribboard.names import player_number
from cribboard.playernames import BadName, clean_name
from cribboard.record.stats import Who
from cribboard.web import BOARD_FILES, meta
from cribboard.web.addresses import is_loopback
from cribboard.web.hub import Hub, follow

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
COOKIE = "cribboard_token"
MIN_LAN_TOKEN = 12
"""The shortest token a bridge reachable from the network takes (on loopback, any will do)."""
MAKE_TOKEN = "python3 -c 'import secrets; print(secrets.token_urlsafe(12))'"
"""A command that makes a good token (16 characters)."""
MAX_BODY = 16 * 1024
WAIT_FOR_BOARD_S = 2.0  # a request for a board that is reconnecting waits this long for it
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

REGISTRY: web.AppKey[Registry] = web.AppKey("registry", Registry)
HUB: web.AppKey[Hub] = web.AppKey("hub", Hub)
LAST_GAMES = 10  # games GET /api/history lists unless asked for more


class BridgeConfigError(CribboardError):
    """The bridge cannot start as asked (an address without a token, a port in use)."""


def _host_name(host_header: str) -> str:
    """The name in a Host header, without the port."""
    if host_header.startswith("["):
        return host_header[1:].partition("]")[0]
    return host_header.rpartition(":")[0] if host_header.count(":") == 1 else host_header


def _supplied_token(request: web.Request, cross_origin: bool) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    if "token" in request.query:
        return request.query["token"]
    if not cross_origin:
        return request.cookies.get(COOKIE)
    return None


def _cors(response: web.StreamResponse, origin: str) -> None:
    response.headers["Access-Control-Allow-Origin"] = origin
    response.headers["Vary"] = "Origin"


def _guard(token: str | None, loopback: bool) -> Middleware:
    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        cross = origin is not None and urlsplit(origin).netloc != request.host
        if request.method == "OPTIONS" and origin is not None and token is not None:
            # CORS preflight: a page of another origin may call the API with the token.
            preflight = web.Response(status=204)
            _cors(preflight, origin)
            preflight.headers["Access-Control-Allow-Methods"] = "GET, POST"
            preflight.headers["Access-Control-Allow-Headers"] = (
                f"Authorization, Content-Type, {KEY_HEADER}"
            )
            preflight.headers["Access-Control-Max-Age"] = "600"
            return preflight
        if token is None:
            if cross:
                raise ApiError(
                    403,
                    "cross_origin",
                    "requests from web pages of other origins "
                    "are refused: start the bridge with a token to allow them",
                )
            if loopback and not is_loopback(_host_name(request.host)):
                raise ApiError(
                    403, "bad_host", f"this bridge serves localhost only, not {request.host!r}"
                )
        else:
            supplied = _supplied_token(request, cross)
            if supplied is None or not hmac.compare_digest(supplied.encode(), token.encode()):
                raise ApiError(
                    401,
                    "unauthorized",
                    "this bridge needs its token: send "
                    "'Authorization: Bearer TOKEN' or add ?token=TOKEN",
                )
        response = await handler(request)
        if token is not None and cross and origin is not None and not response.prepared:
            _cors(response, origin)
        if (
            token is not None
            and not cross
            and "token" in request.query
            and request.path == "/"
            and not response.prepared
        ):
            # The page was opened with ?token=: its scripts, API calls and WebSocket carry the
            # token as a cookie from now on (same site only: SameSite=Strict).
            response.set_cookie(
                COOKIE, token, httponly=True, samesite="Strict", max_age=30 * 24 * 3600
            )
        return response

    return guard


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every error as a JSON body: {"error": CODE, "message": TEXT}."""
    try:
        return await handler(request)
    except ApiError as err:
        return web.json_response(err.body(), status=err.status)
    except web.HTTPException as err:
        if err.status < 400:
            raise
        message = err.reason
        if isinstance(err, web.HTTPMethodNotAllowed):
            allowed = sorted(err.allowed_methods - {"HEAD"}) or sorted(err.allowed_methods)
            message = f"{err.method} is not allowed on {request.path}: use {' or '.join(allowed)}"
        body = {"error": _HTTP_CODES.get(err.status, "http_error"), "message": message}
        response = web.json_response(body, status=err.status)
        if "Allow" in err.headers:
            response.headers["Allow"] = err.headers["Allow"]
        return response


def _no_cache(response: web.StreamResponse) -> web.StreamResponse:
    response.headers["Cache-Control"] = "no-cache"
    return response


def create_app(
    registry: Registry,
    hub: Hub,
    *,
    token: str | None = None,
    loopback: bool = True,
    records: BridgeRecords | None = None,
) -> web.Application:
    """The bridge's web application over a registry of boards (and their `records`: the
    record of games, its routes answer 503 without it)."""
    app = web.Application(middlewares=[_errors, _guard(token, loopback)], client_max_size=MAX_BODY)
    app[REGISTRY] = registry
    app[HUB] = hub
    sockets: set[web.WebSocketResponse] = set()
    layout = meta.layout_json()
    protocol = meta.protocol_json()
    document = openapi_document()

    async def index(request: web.Request) -> web.StreamResponse:
        return _no_cache(web.FileResponse(STATIC_DIR / "index.html"))

    def constant(data: dict[str, Any]) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            return web.json_response(data)

        return handler

    async def boards(request: web.Request) -> web.StreamResponse:
        return web.json_response({"boards": registry.boards_json()})

    def operation(op: Op) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            return await _run_op(registry, op, request)

        return handler

    async def websocket(request: web.Request) -> web.StreamResponse:
        return await _websocket(app, sockets, request)

    async def close_sockets(app: web.Application) -> None:
        for ws in list(sockets):
            await ws.close(code=1001, message=b"bridge shutting down")

    app.on_shutdown.append(close_sockets)
    router = app.router
    router.add_get("/", index)
    router.add_static("/static/", STATIC_DIR)
    router.add_static("/board/", BOARD_FILES)
    router.add_get("/layout.json", constant(layout))
    router.add_get("/protocol.json", constant(protocol))
    router.add_get("/openapi.json", constant(document))
    router.add_get("/i18n/languages.json", constant(catalogs.languages_json()))
    for code in LANGUAGES:  # each made once, from the compiled catalog
        router.add_get(f"/i18n/{code}.json", constant(catalogs.catalog_json(code)))
    router.add_get("/api/boards", boards)
    router.add_get("/api/ws", websocket)
    for op in OPS:
        handler = operation(op)
        for path in op.paths():
            router.add_route(op.method, path, handler)
    _add_record_routes(router, registry, records)
    return app


def _add_record_routes(
    router: web.UrlDispatcher, registry: Registry, records: BridgeRecords | None
) -> None:
    """The record of games: the players' names of a board's game, and what the record tells
    (docs/bridge.md, "The record of games")."""

    def the_records() -> BridgeRecords:
        if records is None:
            raise ApiError(503, "no_record", "this bridge keeps no record of games")
        return records

    async def answer(call: Awaitable[Any]) -> Any:
        try:
            return await call
        except RecordUnavailable as err:
            raise ApiError(503, "no_record", str(err)) from None
        except BadName as err:
            raise ApiError(400, "bad_name", str(err)) from None

    def entry_of(request: web.Request) -> BoardEntry:
        board_id = request.match_info.get("board")
        entry = registry.get(board_id)
        if entry is None:
            raise ApiError(404, "no_board", f"no board {board_id!r} (GET /api/boards lists them)")
        return entry

    async def names(request: web.Request) -> web.StreamResponse:
        return web.json_response(await answer(the_records().names(entry_of(request))))

    async def set_names(request: web.Request) -> web.StreamResponse:
        body = await _json_body(request)
        if not isinstance(body, dict) or set(body) != {"names"}:
            raise ApiError(400, "bad_request", 'the body is {"names": [NAME or null, ...]}')
        named = the_records().set_names(entry_of(request), body["names"])
        return web.json_response(await answer(named))

    async def history(request: web.Request) -> web.StreamResponse:
        games = _query_int(request, "games", LAST_GAMES, 1, MOST_GAMES)
        player = _query_name(request)
        return web.json_response(await answer(the_records().statistics(games, player)))

    async def game(request: web.Request) -> web.StreamResponse:
        number = _query_int(request, "game", None, 1, 2**62, request.match_info)
        found = await answer(the_records().game(number))
        if found is None:
            raise ApiError(404, "no_game", f"no game {number} in the record")
        return web.json_response(found)

    async def hands(request: web.Request) -> web.StreamResponse:
        player = _query_name(request)
        if player is not None:
            who = Who(player)
        else:
            side = player_number(request.query.get("colour", ""))
            if side is None or not 0 <= side <= 2:
                raise ApiError(400, "bad_request", "give ?player=NAME, or ?colour=blue (a seat)")
            who = Who(None, side)
        return web.json_response(await answer(the_records().hands(who)))

    for path in ("/api/names", "/api/boards/{board}/names"):
        router.add_get(path, names)
        router.add_post(path, set_names)
    router.add_get("/api/history", history)
    router.add_get("/api/history/games/{game}", game)
    router.add_get("/api/history/hands", hands)


async def _json_body(request: web.Request) -> object:
    raw = await request.read()
    try:
        return json.loads(raw) if raw.strip() else None
    except ValueError:
        raise ApiError(400, "bad_json", "the body is not valid JSON") from None


def _query_int(
    request: web.Request,
    name: str,
    default: int | None,
    low: int,
    high: int,
    source: Any = None,
) -> int:
    text = (source if source is not None else request.query).get(name)
    if text is None and default is not None:
        return default
    if text is None or not text.isdigit() or len(text) > 19 or not low <= int(text) <= high:
        raise ApiError(400, "bad_request", f"{name} is a whole number, {low} to {high}")
    return int(text)


def _query_name(request: web.Request) -> str | None:
    """?player=NAME, checked as a player's name (None when absent)."""
    text = request.query.get("player")
    if text is None:
        return None
    try:
        return clean_name(text[:200])
    except BadName as err:
        raise ApiError(400, "bad_name", str(err)) from None


async def _run_op(registry: Registry, op: Op, request: web.Request) -> web.StreamResponse:
    board_id = request.match_info.get("board")
    entry = registry.get(board_id)
    if entry is None:
        if board_id is not None:
            raise ApiError(404, "no_board", f"no board {board_id!r} (GET /api/boards lists them)")
        raise ApiError(
            503,
            "no_board",
            "no board yet: plug one in, or start the bridge with --virtual or --port",
        )
    body: object = None
    if op.method == "POST":
        raw = await request.read()
        if raw.strip():
            try:
                body = json.loads(raw)
            except ValueError:
                raise ApiError(400, "bad_json", "the body is not valid JSON") from None
    args = parse_args(op, body, request.headers.get(KEY_HEADER))
    if not (entry.connected and entry.board is not None):
        # Being opened or reopened (a restart, a replug): give it a moment before refusing.
        await registry.wait_board(entry, WAIT_FOR_BOARD_S)
    board = entry.board
    if board is None or not entry.connected:
        raise ApiError(
            503,
            "board_unavailable",
            f"board {entry.id} ({entry.port}) is not "
            f"connected" + (f": {entry.problem}" if entry.problem else ""),
        )
    try:
        result = await op.run(board, args)
    except CribboardError as err:
        raise board_error(err) from None
    return web.json_response(result)


async def _websocket(
    app: web.Application, sockets: set[web.WebSocketResponse], request: web.Request
) -> web.StreamResponse:
    registry, hub = app[REGISTRY], app[HUB]
    board_id = request.query.get("board") or None
    if board_id is not None and registry.get(board_id) is None:
        raise ApiError(404, "no_board", f"no board {board_id!r}")
    frames = request.query.get("frames", "0").lower() in ("1", "true", "yes")
    ws = web.WebSocketResponse(heartbeat=30.0)
    await ws.prepare(request)
    sub = hub.subscribe(board_id, frames)
    # The snapshot first (no await in between: nothing published can overtake it).
    Hub.send_to(sub, {"type": "boards", "boards": registry.boards_json()})
    for entry in registry.entries.values():
        if board_id is not None and entry.id != board_id:
            continue
        state = entry.state_json()
        if state is not None:
            Hub.send_to(sub, {"type": "state", "board": entry.id, "state": state})
        cfg = entry.cfg_json()
        if cfg is not None:
            Hub.send_to(sub, {"type": "cfg", "board": entry.id, **cfg})
        if frames:
            if entry.frame is not None:
                Hub.send_to(sub, {"type": "frame", "board": entry.id, **entry.frame})
            else:
                registry.want_frame(entry)
    await follow(ws, hub, sub, sockets)
    return ws


class Bridge:
    """The running bridge: boards, server and virtual boards; an async context manager.

    async with Bridge(ports=["/dev/ttyACM0"]) as bridge:
        print(bridge.url)
        await bridge.wait_closed()
    """

    def __init__(
        self,
        ports: Iterable[str] = (),
        *,
        virtual: int = 0,
        discover: bool = False,
        host: str = DEFAULT_HOST,
        http_port: int = DEFAULT_HTTP_PORT,
        token: str | None = None,
        opener: Opener | None = None,
        ble: Iterable[str] = (),
        table: TableSettings | None = None,
        say: Callable[[str], None] | None = None,
        record: bool = True,
        record_path: Path | None = None,
    ) -> None:
        self.ports = list(ports)
        self.ble = list(ble)
        self.table_settings = table
        self.hall_table: HallTable | None = None
        self._say = say or (lambda text: log.info("%s", text))
        self.virtual = virtual
        self.discover = discover
        self.host = host
        self.http_port = http_port
        self.token = token or None
        self.loopback = is_loopback(host)
        if not self.loopback and self.token is None:
            raise BridgeConfigError(
                f"binding to {host} lets other computers reach the board: it needs a token "
                f"(--token or $CRIBBOARD_TOKEN; {MAKE_TOKEN} makes one)"
            )
        if not self.loopback and self.token is not None and len(self.token) < MIN_LAN_TOKEN:
            raise BridgeConfigError(
                f"a token of {len(self.token)} characters is soon guessed by anyone on the "
                f"network: use at least {MIN_LAN_TOKEN} ({MAKE_TOKEN} makes one)"
            )
        self.hub = Hub()
        self.registry = (
            Registry(self.hub, opener=opener, say=say)
            if opener is not None
            else Registry(self.hub, say=say)
        )
        self.records = (
            BridgeRecords(self.registry, self.hub, path=record_path, say=self._say)
            if record
            else None
        )
        """The boards' games in the record of games (None: not recorded)."""
        self._virtual_boards: list[Any] = []
        self._runner: web.AppRunner | None = None
        self._stopped = asyncio.Event()
        self.bound_port = 0

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.bound_port}/"

    async def start(self) -> Bridge:
        try:
            if self.records is not None:
                self.records.start()
            for _ in range(self.virtual):
                from cribboard.virtual import VirtualBoard

                board = await asyncio.to_thread(VirtualBoard().start)
                self._virtual_boards.append(board)
                if self.records is not None:
                    self.records.flashes[board.port] = board.flash_path
                self.registry.add(board.port, "virtual")
            for port in self.ports:
                self.registry.add(port, "usb")
            for name in self.ble:
                self.registry.add(BLE_PREFIX + name, "ble")
            if self.discover:
                self.registry.start_discovery()
            app = create_app(
                self.registry,
                self.hub,
                token=self.token,
                loopback=self.loopback,
                records=self.records,
            )
            self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, self.http_port)
            try:
                await site.start()
            except OSError as err:
                raise BridgeConfigError(
                    f"cannot listen on {self.host}:{self.http_port}: {err.strerror or err}"
                ) from None
            self.bound_port = int(self._runner.addresses[0][1])
            if self.table_settings is not None:
                self.hall_table = HallTable(self.registry, self.table_settings, self._say)
                self.hall_table.start()  # in the background: a broker away holds up nothing
        except BaseException:
            await self.stop()
            raise
        return self

    async def stop(self) -> None:
        if self.hall_table is not None:
            await self.hall_table.stop()
            self.hall_table = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.registry.close()
        if self.records is not None:
            await self.records.stop()
        for board in self._virtual_boards:
            await asyncio.to_thread(board.stop)
        self._virtual_boards.clear()
        self._stopped.set()

    async def wait_closed(self) -> None:
        await self._stopped.wait()

    async def __aenter__(self) -> Bridge:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
