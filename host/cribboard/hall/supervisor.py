"""What runs `cribboard hall start`: one process that holds the hall together until it is
stopped. It takes the hall's lock, keeps the settings, gets the broker going (its private
broker started, or taken up as it is when a director that was killed left it running, or an
existing one named by ``--broker``), runs the director, its control socket and the page, watches
the private broker and starts it again when it dies, and on the way out stops what it started.

Signals: SIGTERM is Ctrl-C from the first moment, so whatever was started is stopped on the way
out; while the event loop is made a signal is only noted, then the loop takes both over and
stops; while stopping, a second signal is ignored so that it cannot leave the broker running.
The signal handlers the process had are given back at the end."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cribboard.cmdline.rows import UsageError
from cribboard.errors import HallError
from cribboard.fdlimit import raise_fd_limit
from cribboard.hall.broker import Broker
from cribboard.hall.brokersetup import private_broker, tell_tables
from cribboard.hall.control import ControlServer
from cribboard.hall.director import Director
from cribboard.hall.home import (
    BROKER_DIR,
    PID_FILE,
    PRIVATE,
    open_store,
    read_settings,
    write_settings,
)
from cribboard.hall.lifecycle import HallLock, supervise_broker
from cribboard.hall.options import (
    given_broker,
    http_port,
    local_address,
    page_url,
    refuse_password_on_the_line,
)
from cribboard.hall.page import Page
from cribboard.hall.store import Store
from cribboard.hallwire import topics
from cribboard.i18n import _, n_
from cribboard.linelimit import quiet_loop_errors
from cribboard.mqtt.address import BrokerAddress, refusal
from cribboard.mqtt.probe import CertificateRefused, lets_in


def start(hall_dir: Path, args: argparse.Namespace) -> int:
    """Run the hall until Ctrl-C or SIGTERM (or its broker dies for good); the exit status."""
    refuse_password_on_the_line(args)
    raise_fd_limit()  # strangers' idle connections must not run the hall out of descriptors
    # While the event loop is made, a signal is only noted (an interrupt inside asyncio's set-up
    # would leave a half-made loop behind); the loop then takes both signals over.
    _stop_asked.clear()
    previous = (
        signal.signal(signal.SIGTERM, _interrupt),
        signal.signal(signal.SIGINT, _interrupt),
    )
    try:
        with HallLock(hall_dir):
            return _start_locked(hall_dir, args)
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])


_stop_asked = threading.Event()
"""A stop was asked for before the event loop took the signals over: the loop, once it runs,
stops at once. (Python also drops a KeyboardInterrupt that lands in a finalizer, such as an
earlier event loop's __del__.)"""


def _interrupt(signum: int, frame: object) -> None:
    _stop_asked.set()
    raise KeyboardInterrupt


def _note_stop(signum: int, frame: object) -> None:
    _stop_asked.set()


@dataclass
class _Running:
    """What `hall start` runs: the store, the director's broker address, the private broker
    (None: an existing one, --broker) and the pid of a broker taken up from a killed director."""

    store: Store
    address: BrokerAddress
    broker: Broker | None
    adopted: int | None
    settings: dict[str, Any]


def _start_locked(hall_dir: Path, args: argparse.Namespace) -> int:
    saved = read_settings(hall_dir)
    hall = topics.check_hall(args.hall or saved.get("hall") or "club")
    if saved and args.hall and args.hall != saved.get("hall"):
        raise UsageError(
            _(
                "%(dir)s is the hall %(hall)r, not %(given)r",
                dir=hall_dir,
                hall=saved.get("hall"),
                given=args.hall,
            )
        )
    settings: dict[str, Any] = {
        "hall": hall,
        "target": args.target or saved.get("target") or 121,
        "rounds": args.rounds or saved.get("rounds") or 9,
        "broker": args.broker or saved.get("broker") or PRIVATE,
    }
    cafile = args.cafile or saved.get("cafile")
    if cafile:
        settings["cafile"] = cafile  # kept: the next start verifies the broker the same way
    if args.broker and saved.get("broker", PRIVATE) == PRIVATE and (hall_dir / BROKER_DIR).exists():
        raise UsageError(_("%(dir)s runs its own broker: leave out --broker", dir=hall_dir))
    store = open_store(hall_dir, create=True)
    broker: Broker | None = None
    adopted: int | None = None
    # The signal handlers this process had: given back once the hall has stopped (a caller in
    # the same process, and every process it starts later, must not inherit ignored signals).
    previous = (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT))
    try:
        if settings["broker"] == PRIVATE:
            broker = private_broker(hall_dir, hall, len(store.tournament.players), args)
            director_address = local_address(broker, topics.DIRECTOR_USER)
            adopted = _start_or_adopt(broker, director_address)
        else:
            if args.plain:
                raise UsageError(_("--plain is for the private broker: leave out --broker"))
            director_address = given_broker(args, settings["broker"], topics.DIRECTOR_USER, cafile)
        write_settings(hall_dir, settings)
        if broker is not None:
            tell_tables(broker, hall, args.credentials)
        running = _Running(store, director_address, broker, adopted, settings)
        signal.signal(signal.SIGTERM, _note_stop)
        signal.signal(signal.SIGINT, _note_stop)
        return asyncio.run(_run_hall(hall_dir, running, args))
    finally:
        # Stopping: a second signal must not cut it short and leave the broker running.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            store.close()
            if broker is not None:
                broker.stop()  # the one this process started (at first, or again)
            if adopted is not None and _recorded_pid(hall_dir / BROKER_DIR) == adopted:
                with contextlib.suppress(OSError):
                    os.kill(adopted, signal.SIGTERM)  # a clean stop: it saves its state
        finally:
            signal.signal(signal.SIGTERM, previous[0])
            signal.signal(signal.SIGINT, previous[1])


def _start_or_adopt(broker: Broker, director: BrokerAddress) -> int | None:
    """Start the private broker, or take it up as it is when it still runs: the pid of the one
    taken up (None: started here, its pid recorded for a later director)."""
    if asyncio.run(lets_director_in(director)):
        # A director that was killed leaves its broker running (its own session): it is this
        # hall's (the director's password works), so take it up as it is.
        print(
            _(
                "broker: this hall's broker is still running on port %(port)s: using it",
                port=broker.port,
            ),
            flush=True,
        )
        return _recorded_pid(broker.state_dir)
    broker.start()
    (broker.state_dir / PID_FILE).write_text(f"{broker.pid}\n")
    return None


def _recorded_pid(broker_dir: Path) -> int | None:
    """The pid of the broker a killed director left running, if it is still that mosquitto
    (its command line names this state directory's config)."""
    try:
        pid = int((broker_dir / PID_FILE).read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if str(broker_dir / "mosquitto.conf").encode() in cmdline else None


async def lets_director_in(address: BrokerAddress) -> bool:
    """Whether a broker at `address` lets the director in now, asked without touching the
    director's session: what the broker keeps for it stays (HallError: it answers, but
    refuses its certificate)."""
    try:
        return await lets_in(address, topics.DIRECTOR_USER)
    except CertificateRefused as err:
        raise HallError(refusal(err, address) or str(err)) from None


async def _run_hall(hall_dir: Path, hall: _Running, args: argparse.Namespace) -> int:
    store, address, settings = hall.store, hall.address, hall.settings
    director = Director(
        store,
        address,
        settings["hall"],
        target=settings["target"],
        rounds=settings["rounds"],
        max_tables=None if hall.broker is None else hall.broker.tables,
        say=lambda text: print(text, flush=True),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    quiet_loop_errors(loop)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if _stop_asked.is_set():
        stop.set()  # asked before the handlers above (while the loop was made, or lost in a finalizer)
    running = asyncio.create_task(director.run())
    stopping = asyncio.create_task(stop.wait())
    watched: set[asyncio.Task[Any]] = {running, stopping}
    watching = _watch_broker(hall)
    if watching is not None:
        watched.add(watching)
    status = 0
    try:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(ControlServer(director, hall_dir))
            if not args.no_page:
                page = await stack.enter_async_context(
                    Page(director.view, args.http_host, http_port(args))
                )
                print(_("page: %(url)s", url=page_url(page)), flush=True)
            connecting = asyncio.create_task(director.connected.wait())
            done, _pending = await asyncio.wait(
                watched | {connecting}, return_when=asyncio.FIRST_COMPLETED
            )
            connecting.cancel()
            if running in done:
                running.result()  # a refused login: HallError
            tournament = store.tournament
            if connecting in done:
                print(
                    n_(
                        "director: connected to %(url)s; %(count)d player, round %(round)d of "
                        "%(rounds)d (`cribboard hall round next` pairs the next one; Ctrl-C "
                        "stops)",
                        "director: connected to %(url)s; %(count)d players, round %(round)d of "
                        "%(rounds)d (`cribboard hall round next` pairs the next one; Ctrl-C "
                        "stops)",
                        len(tournament.players),
                        url=address.url,
                        round=len(tournament.rounds),
                        rounds=settings["rounds"],
                    ),
                    flush=True,
                )
                done, _pending = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
            if watching is not None and watching in done:
                print(
                    _("director: stopping: %(reason)s", reason=watching.result()),
                    file=sys.stderr,
                    flush=True,
                )
                status = 1
    finally:
        for task in watched:
            task.cancel()
        for task in watched:
            with contextlib.suppress(asyncio.CancelledError):
                await task
    print(_("director: stopped"), file=sys.stderr, flush=True)
    return status


def _watch_broker(hall: _Running) -> asyncio.Task[str] | None:
    """Watch the private broker (ours, or the one taken up): started again when it dies."""
    broker = hall.broker
    if broker is None or (hall.adopted is None and broker.pid is None):
        return None

    def started(pid: int) -> None:
        (broker.state_dir / PID_FILE).write_text(f"{pid}\n")
        hall.adopted = None  # the one taken up is gone: ours now

    return asyncio.create_task(
        supervise_broker(
            broker,
            lambda text: print(text, flush=True),
            pid=hall.adopted,
            on_start=started,
        )
    )
