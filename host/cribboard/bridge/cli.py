"""`cribboard serve`: the bridge on the command line. This module only imports the server when
the command runs, so adding the sub-command costs the rest of the command line nothing."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

from cribboard.bridge import DEFAULT_HOST, DEFAULT_HTTP_PORT, TOKEN_ENV

PORT_ENV = "CRIBBOARD_PORT"


def add_parser(sub: Any) -> None:
    serve = sub.add_parser(
        "serve",
        help="the bridge: HTTP + WebSocket API and the web page (docs/bridge.md)",
        description="Hold the connection to boards and offer them over HTTP (JSON API, "
        "OpenAPI at /openapi.json), a WebSocket of board events, and a web page. Boards: "
        "--port (repeat it for several), --virtual, else every board found on USB.",
    )
    serve.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}; any other needs a token)",
    )
    serve.add_argument(
        "--http-port",
        type=int,
        default=DEFAULT_HTTP_PORT,
        help=f"TCP port (default {DEFAULT_HTTP_PORT})",
    )
    serve.add_argument(
        "--token",
        help=f"the token every request must carry (default "
        f"${TOKEN_ENV}); required when --host is not localhost",
    )
    serve.add_argument(
        "--virtual", action="count", default=0, help="start a virtual board (repeat for more)"
    )
    serve.add_argument(
        "--port",
        dest="serve_ports",
        action="append",
        metavar="PORT",
        help="a board's serial port or pyserial URL (repeat for several boards)",
    )


def run(args: argparse.Namespace) -> int:
    from cribboard.bridge.server import Bridge, lan_address

    ports: list[str] = list(args.serve_ports or [])
    if args.port and args.port not in ports:
        ports.insert(0, args.port)
    if not ports and not args.virtual and os.environ.get(PORT_ENV):
        ports.append(os.environ[PORT_ENV])
    token = args.token or os.environ.get(TOKEN_ENV) or None
    bridge = Bridge(
        ports,
        virtual=args.virtual,
        discover=not ports and not args.virtual,
        host=args.host,
        http_port=args.http_port,
        token=token,
    )

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with bridge:
            if bridge.registry.entries:  # the boards named: give them a moment to answer
                with contextlib.suppress(asyncio.TimeoutError):
                    await bridge.registry.wait_connected(5.0)
            for entry in bridge.registry.entries.values():
                problem = "" if entry.connected else f"; not connected yet: {entry.problem}"
                print(f"board {entry.id}: {entry.port} ({entry.kind}{problem})", flush=True)
            if bridge.discover:
                print(
                    "boards: every board found on USB, as it is plugged in (none yet?: "
                    "--virtual starts a virtual board)",
                    flush=True,
                )
            suffix = f"?token={token}" if token else ""
            print(
                f"cribboard bridge: {bridge.url}{suffix}  (API: {bridge.url}openapi.json; "
                f"Ctrl-C to stop)",
                flush=True,
            )
            if not bridge.loopback:
                lan = lan_address()
                if lan:
                    print(
                        f"on a phone on this network: http://{lan}:{bridge.bound_port}/{suffix}",
                        flush=True,
                    )
            await stop.wait()
        print("cribboard bridge: stopped", file=sys.stderr, flush=True)

    asyncio.run(main())
    return 0
