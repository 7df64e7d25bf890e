"""`cribboard serve`: run the bridge until Ctrl-C (or SIGTERM), saying where it is. The command
line (cribboard.cli) parses the arguments; this module imports the server only when it runs, so
the rest of the command line does not pay for aiohttp."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import signal
import sys
from typing import TYPE_CHECKING, Any

from cribboard.bridge import DEFAULT_HOST, DEFAULT_HTTP_PORT

if TYPE_CHECKING:  # the server (aiohttp) is imported when the bridge runs
    from cribboard.bridge.announce import Announcement
    from cribboard.bridge.halltable import TableSettings
    from cribboard.bridge.server import Bridge


def serve(
    ports: list[str],
    *,
    virtual: int = 0,
    host: str = DEFAULT_HOST,
    http_port: int = DEFAULT_HTTP_PORT,
    token: str | None = None,
    ble: list[str] | None = None,
    table: TableSettings | None = None,
    announce: bool = True,
    qr: bool = True,
    color: bool = False,
) -> int:
    """Serve the boards on `ports`, over Bluetooth LE (`ble`: names or addresses) and `virtual`
    new virtual boards; with none of them, every board found on USB, as it is plugged in. With
    `table`, the (first) board also sits at a club hall's table over MQTT. Listening beyond
    this computer, it announces itself on the local network as cribboard.local (`announce`) and
    prints the page's address as a QR code (`qr`; in colour with `color`)."""
    from cribboard.bridge.server import Bridge

    bridge = Bridge(
        ports,
        virtual=virtual,
        discover=not ports and not virtual and not ble,
        host=host,
        http_port=http_port,
        token=token,
        ble=ble or (),
        table=table,
        say=lambda text: print(text, flush=True),
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
            _announce(bridge)
            announcement = await _on_the_network(bridge, announce=announce, qr=qr, color=color)
            stopped: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
            waiting = {stopped}
            if bridge.hall_table is not None:
                waiting.add(bridge.hall_table.client.start_background())
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if announcement is not None:
                await announcement.stop()
            for task in done - {stopped}:
                task.result()  # a refused login: one line, exit 1
        print("cribboard bridge: stopped", file=sys.stderr, flush=True)

    asyncio.run(main())
    return 0


def _announce(bridge: Bridge) -> None:
    """Say which boards the bridge serves and where it listens."""
    for entry in bridge.registry.entries.values():
        problem = "" if entry.connected else f"; not connected yet: {entry.problem}"
        print(f"board {entry.id}: {entry.port} ({entry.kind}{problem})", flush=True)
    table = bridge.hall_table
    if table is not None:
        settings = table.settings
        print(
            f"table {settings.table} of hall {settings.hall}: joining {settings.address.url} as "
            f"{settings.address.username}",
            flush=True,
        )
    if bridge.discover:
        print(
            "boards: every board found on USB, as it is plugged in (none yet?: "
            "--virtual starts a virtual board)",
            flush=True,
        )
    suffix = f"?token={bridge.token}" if bridge.token else ""
    print(
        f"cribboard bridge: {bridge.url}{suffix}  (API: {bridge.url}openapi.json; Ctrl-C to stop)",
        flush=True,
    )
    if not bridge.loopback:
        lan = _network_address(bridge)
        if lan:
            print(
                f"on a phone on this network: http://{lan}:{bridge.bound_port}/{suffix}", flush=True
            )


def _network_address(bridge: Bridge) -> str | None:
    """The IPv4 address a phone reaches the bridge at: the one it listens on, or this
    computer's address on the local network when it listens on every address."""
    from cribboard.web.addresses import lan_address

    if bridge.host in ("0.0.0.0", "", "::"):
        return lan_address()
    try:
        return str(ipaddress.IPv4Address(bridge.host))
    except ValueError:
        return None


async def _on_the_network(
    bridge: Bridge, *, announce: bool, qr: bool, color: bool
) -> Announcement | None:
    """Off loopback: announce the bridge by mDNS and print the phone's address as a QR code.
    A network without multicast costs the announcement only (one line says so)."""
    address = None if bridge.loopback else _network_address(bridge)
    if address is None:
        return None
    suffix = f"?token={bridge.token}" if bridge.token else ""
    if qr:
        from cribboard.bridge.qr import terminal_text

        print("scan with a phone's camera:", flush=True)
        print(terminal_text(f"http://{address}:{bridge.bound_port}/{suffix}", color=color))
        print(flush=True)
    if not announce:
        return None
    from cribboard.bridge.announce import Announcement

    announcement = Announcement(bridge.bound_port, [address])
    try:
        await announcement.start()
    except Exception as err:  # zeroconf's own errors and OSError: a network without multicast
        print(f"not announced on the network (mDNS): {err}", file=sys.stderr, flush=True)
        return None
    print(f"on this network also as {announcement.url}{suffix}", flush=True)
    return announcement
