"""How the other `cribboard hall` commands reach a running director: HTTP with JSON bodies on a
Unix socket in the hall's directory (only its owner may connect: the directory's permissions
guard it, no token needed).

    POST /players        {"names": [...]}                       -> {"players": [...]}
    POST /round/next     {}                                     -> a round report
    POST /round/resend   {"tables": [...]}                      -> a round report
    POST /correct        {"round", "table", "winner", "loser_score", "target", "who", "why"}
    GET  /held                                                   -> {"held": [...]}
    POST /held/accept    {"round", "table", "who", "why"}        -> a correction
    POST /held/reject    {"round", "table", "who", "why"}        -> a correction
    GET  /status                                                 -> {"connected", "round", ...}

A refused request answers 409 with {"error": TEXT}; the command line prints TEXT."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from cribboard.errors import HallError
from cribboard.hall.director import Director, describe, held_json
from cribboard.hall.store import Store
from cribboard.tournament import Correction

SOCKET_NAME = "director.sock"
MAX_SOCKET_PATH = 100  # sockaddr_un holds 108 bytes on Linux, 104 on macOS


class DirectorNotRunning(HallError):
    """No director answers on the hall directory's socket."""


def socket_path(hall_dir: Path) -> Path:
    return hall_dir / SOCKET_NAME


def create_app(director: Director) -> web.Application:
    """The control application over a running director."""

    def body_of(obj: object) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise HallError("the request body is not a JSON object")
        return obj

    @web.middleware
    async def refusals(request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            response: web.StreamResponse = await handler(request)
            return response
        except HallError as err:
            return web.json_response({"error": str(err)}, status=409)
        except (ValueError, KeyError, TypeError) as err:
            return web.json_response({"error": f"bad request: {err}"}, status=400)

    async def players(request: web.Request) -> web.StreamResponse:
        names = body_of(await request.json())["names"]
        added = director.register([str(n) for n in names])
        return web.json_response(
            {"players": [p.name for p in added], "count": len(director.store.tournament.players)}
        )

    async def next_round(request: web.Request) -> web.StreamResponse:
        return web.json_response((await director.next_round()).to_json())

    async def resend(request: web.Request) -> web.StreamResponse:
        tables = body_of(await request.json()).get("tables") or []
        return web.json_response((await director.resend([int(n) for n in tables])).to_json())

    async def correct(request: web.Request) -> web.StreamResponse:
        body = body_of(await request.json())
        correction = director.correct(
            int(body["round"]),
            int(body["table"]),
            winner=body.get("winner"),
            loser_score=body.get("loser_score"),
            target=body.get("target"),
            who=str(body["who"]),
            why=str(body["why"]),
        )
        return web.json_response(correction_json(director.store, correction))

    async def held(request: web.Request) -> web.StreamResponse:
        return web.json_response({"held": held_json(director.store)})

    async def decide(request: web.Request) -> web.StreamResponse:
        body = body_of(await request.json())
        decide = (
            director.accept_held
            if request.match_info["verdict"] == "accept"
            else director.reject_held
        )
        correction = decide(
            int(body["round"]), int(body["table"]), who=str(body["who"]), why=str(body["why"])
        )
        return web.json_response(correction_json(director.store, correction))

    async def status(request: web.Request) -> web.StreamResponse:
        tournament = director.store.tournament
        return web.json_response(
            {
                "connected": director.connected.is_set(),
                "broker": director.address.url,
                "round": len(tournament.rounds),
                "players": len(tournament.players),
            }
        )

    app = web.Application(middlewares=[refusals])
    app.router.add_post("/players", players)
    app.router.add_post("/round/next", next_round)
    app.router.add_post("/round/resend", resend)
    app.router.add_post("/correct", correct)
    app.router.add_get("/held", held)
    app.router.add_post("/held/{verdict:accept|reject}", decide)
    app.router.add_get("/status", status)
    return app


def correction_json(store: Store, correction: Correction) -> dict[str, Any]:
    """A correction in words, for the command line."""
    return {
        "round": correction.round,
        "table": correction.table,
        "old": None if correction.old is None else describe(store, correction.old),
        "new": None if correction.new is None else describe(store, correction.new),
        "who": correction.who,
        "why": correction.why,
        "when": correction.when,
    }


class ControlServer:
    """The director's control socket: ``async with ControlServer(director, hall_dir)``."""

    def __init__(self, director: Director, hall_dir: Path) -> None:
        self.director = director
        self.path = socket_path(hall_dir)
        self._runner: web.AppRunner | None = None

    async def start(self) -> ControlServer:
        if len(str(self.path)) > MAX_SOCKET_PATH:
            raise HallError(f"the hall's directory path is too long for its socket: {self.path}")
        if self.path.exists():
            try:
                await call(self.path.parent, "GET", "/status")
            except DirectorNotRunning:
                self.path.unlink()  # left by a director that was killed
            else:
                raise HallError(f"a director is running on {self.path.parent} already")
        self._runner = web.AppRunner(create_app(self.director), handle_signals=False)
        await self._runner.setup()
        await web.UnixSite(self._runner, str(self.path)).start()
        self.path.chmod(0o600)
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> ControlServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def call(hall_dir: Path, method: str, route: str, body: object = None) -> dict[str, Any]:
    """Ask the director running on `hall_dir`; DirectorNotRunning when none answers,
    HallError with the director's words when it refuses."""
    path = socket_path(hall_dir)
    if not path.exists():
        raise DirectorNotRunning(f"no director is running on {hall_dir}")
    connector = aiohttp.UnixConnector(path=str(path))
    timeout = aiohttp.ClientTimeout(total=120)
    try:
        async with (
            aiohttp.ClientSession(connector=connector, timeout=timeout) as session,
            session.request(
                method, f"http://director{route}", data=None if body is None else json.dumps(body)
            ) as response,
        ):
            answer = await response.json()
    except aiohttp.ClientConnectionError:
        raise DirectorNotRunning(f"no director is running on {hall_dir}")
    if response.status != 200:
        raise HallError(str(answer.get("error", answer)))
    if not isinstance(answer, dict):
        raise HallError(f"the director answered {answer!r}")
    return answer
