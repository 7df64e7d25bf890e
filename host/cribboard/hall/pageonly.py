"""`cribboard hall page`: the projector page alone, on another computer or for a second screen.
It follows the hall's broker as its viewer (the private broker's own viewer user when the hall's
directory holds one, else the broker named by ``--broker`` or the settings) and serves the page
until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from pathlib import Path

from cribboard.cmdline.rows import UsageError
from cribboard.fdlimit import raise_fd_limit
from cribboard.hall.broker import Broker
from cribboard.hall.home import BROKER_DIR, PRIVATE, read_settings
from cribboard.hall.options import (
    given_broker,
    http_port,
    local_address,
    page_url,
    refuse_password_on_the_line,
)
from cribboard.hall.page import Page
from cribboard.hall.view import HallView, follow
from cribboard.hallwire import topics
from cribboard.i18n import _
from cribboard.linelimit import quiet_loop_errors
from cribboard.mqtt.address import BrokerAddress


def run_page(hall_dir: Path, args: argparse.Namespace) -> int:
    """Serve the page until stopped; the exit status."""
    refuse_password_on_the_line(args)
    raise_fd_limit()
    settings = read_settings(hall_dir)
    if args.broker:
        address = given_broker(args, args.broker, topics.VIEWER_USER, args.cafile)
        hall = settings.get("hall", "club")
    elif settings.get("broker", PRIVATE) == PRIVATE and (hall_dir / BROKER_DIR).exists():
        broker = Broker.open(hall_dir / BROKER_DIR)
        address = local_address(broker, topics.VIEWER_USER)
        hall = broker.hall
    elif settings:
        address = given_broker(
            args, settings["broker"], topics.VIEWER_USER, args.cafile or settings.get("cafile")
        )
        hall = settings["hall"]
    else:
        raise UsageError(_("%(dir)s holds no hall: name its broker with --broker", dir=hall_dir))
    return asyncio.run(_serve(address, hall, args))


async def _serve(address: BrokerAddress, hall: str, args: argparse.Namespace) -> int:
    view = HallView(hall)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    quiet_loop_errors(loop)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    connected = asyncio.Event()
    following = asyncio.create_task(follow(view, address, connected))
    async with Page(view, args.http_host, http_port(args)) as page:
        print(
            _(
                "page: %(url)s; following %(broker)s (Ctrl-C stops)",
                url=page_url(page),
                broker=address.url,
            ),
            flush=True,
        )
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({following, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        following.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await following
    return 0
