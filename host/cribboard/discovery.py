"""Finding boards: serial ports whose USB ids belong to a supported microcontroller board,
each confirmed by a protocol hello (a Pico running something else is not a cribbage board);
without one, the virtual board running now (`cribboard virtual`, or the one `keep` or `play`
started), found in the runtime directory (cribboard.virtual.registry).

Cheap to import (the command line's table names PORT_ENV): the port listing, the protocol
client and asyncio are imported when a board is looked for, never for a port that is named."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from cribboard.errors import CribboardError, NoBoardFound
from cribboard.i18n import _, n_
from cribboard.logsetup import QuietLog

if TYPE_CHECKING:
    from cribboard.client import Hello
    from cribboard.virtual.registry import RunningSim

log = QuietLog(__name__)

PORT_ENV = "CRIBBOARD_PORT"
"""The environment variable that names the board's port when `--port` does not."""


class FoundBoard(NamedTuple):
    """A board found on a port: `hello` is None when the port did not answer as a board."""

    port: str
    description: str
    hello: Hello | None
    problem: str = ""
    at_prompt: bool = False
    """It is at MicroPython's prompt, its app stopped (opening it by its port restarts it)."""


def known_usb_ids() -> dict[tuple[int, int], str]:
    """USB (vendor, product) ids of the supported boards, from the firmware's board profiles:
    the names of the profiles with those ids, joined by "/" (the Picos share MicroPython's)."""
    from cribcore.profiles import PROFILES

    ids: dict[tuple[int, int], str] = {}
    for profile in PROFILES.values():
        for vid_pid in profile.usb_ids:
            key = (vid_pid[0], vid_pid[1])
            ids[key] = f"{ids[key]}/{profile.name}" if key in ids else profile.name
    return ids


def candidate_ports() -> list[tuple[str, str]]:
    """(device, description) of serial ports with a supported board's USB ids."""
    from serial.tools import list_ports

    known = known_usb_ids()
    found = []
    for port in list_ports.comports():
        if port.vid is not None and port.pid is not None and (port.vid, port.pid) in known:
            found.append((port.device, f"{known[(port.vid, port.pid)]} ({port.description})"))
    return sorted(found)


async def probe(port: str, timeout: float = 1.5) -> Hello:
    """Say hello on `port`; raises CribboardError when no board answers (AtPrompt for a board
    at MicroPython's prompt: looking restarts nothing)."""
    from cribboard.client import Client
    from cribboard.sharing import serial_transport

    client = Client(
        lambda: serial_transport(port),
        timeout=timeout,
        heartbeat=0,
        reconnect=False,
        restart_at_prompt=False,
    )
    try:
        return await client.connect()
    finally:
        await client.close()


async def find_boards(ports: list[tuple[str, str]] | None = None) -> list[FoundBoard]:
    """Every candidate port, probed in parallel."""
    import asyncio

    from cribboard.repl import AtPrompt

    ports = candidate_ports() if ports is None else ports
    log.info("probing %d port(s): %s", len(ports), ", ".join(d for d, _ in ports) or "none")

    async def one(device: str, description: str) -> FoundBoard:
        try:
            return FoundBoard(device, description, await probe(device))
        except AtPrompt as err:
            return FoundBoard(device, description, None, str(err), at_prompt=True)
        except CribboardError as err:
            log.info("%s: no board (%s)", device, err)
            return FoundBoard(device, description, None, str(err))

    return list(await asyncio.gather(*(one(d, desc) for d, desc in ports)))


class ChosenPort(NamedTuple):
    """The port a command or app uses, and a sentence saying which board it is; `sim`: the
    running virtual board it is, when it was found as one."""

    port: str
    description: str
    sim: RunningSim | None = None


def running_virtual_board() -> ChosenPort | None:
    """The virtual board running now, if one is (None when none is); NoBoardFound naming each
    when several are, since none of them is the one."""
    from cribboard.virtual.registry import running_sims

    sims = running_sims()
    if len(sims) > 1:
        raise NoBoardFound(
            _(
                "no board found on USB, and several virtual boards run: %(boards)s; choose one "
                "with --port",
                boards="; ".join(_sim_text(sim) for sim in sims),
            )
        )
    if not sims:
        return None
    return ChosenPort(
        sims[0].port, _("the virtual board %(board)s", board=_sim_text(sims[0])), sims[0]
    )


def _sim_text(sim: RunningSim) -> str:
    """`/dev/pts/4 (cribboard keep, pid 4242)`."""
    return _("%(port)s (%(program)s, pid %(pid)d)", port=sim.port, program=sim.label, pid=sim.pid)


def named_port(port: str | None = None) -> str | None:
    """The port the user named: `port` (``--port``), else $CRIBBOARD_PORT; None for neither."""
    return port or os.environ.get(PORT_ENV) or None


async def resolve_port(port: str | None = None, *, first_of_several: bool = False) -> ChosenPort:
    """The board to use: `port` (``--port``), else $CRIBBOARD_PORT, else the board found on USB
    (the first one with `first_of_several`, else only when it is the only one), else the
    virtual board running now (only when one runs). Raises NoBoardFound, saying what to do."""
    named = named_port(port)
    if named:
        return ChosenPort(named, _("the board on %(port)s", port=named))
    found = await usb_board(first_of_several=first_of_several)
    if found is None:
        found = running_virtual_board()
    if found is None:
        raise _no_board()
    return found


def resolve_port_at_once(port: str | None = None) -> ChosenPort | None:
    """As resolve_port, when no port needs a hello to be chosen (without asyncio): the port
    named, else the virtual board running when no serial port has a supported board's USB ids;
    None when such ports must be asked (resolve_port does)."""
    named = named_port(port)
    if named:
        return ChosenPort(named, _("the board on %(port)s", port=named))
    if candidate_ports():
        return None
    found = running_virtual_board()
    if found is None:
        raise _no_board()
    return found


def _no_board() -> NoBoardFound:
    return NoBoardFound(
        _("no board found: plug one in, or start the virtual board with `cribboard virtual`")
    )


async def usb_board(*, first_of_several: bool = False) -> ChosenPort | None:
    """The board found on USB (the first one with `first_of_several`, else only when it is
    the only one); None when no board answers there. Raises NoBoardFound for several boards,
    or a board that sits at MicroPython's prompt."""
    found = await find_boards()
    boards = [board for board in found if board.hello is not None]
    stopped = [board.port for board in found if board.at_prompt]
    if not boards and stopped:
        raise NoBoardFound(
            _(
                "no board answered; %(ports)s sits at the MicroPython prompt (after mpremote?): "
                "name it with --port and its app is restarted",
                ports=", ".join(stopped),
            )
        )
    if not boards:
        return None
    if len(boards) > 1 and not first_of_several:
        raise NoBoardFound(
            _(
                "several boards found (%(ports)s): choose one with --port",
                ports=", ".join(b.port for b in boards),
            )
        )
    first = boards[0]
    assert first.hello is not None
    values = {"port": first.port, "board": first.hello.board, "firmware": first.hello.firmware}
    if len(boards) > 1:
        text = n_(
            "the board on %(port)s (%(board)s, firmware %(firmware)s); %(count)d more found, "
            "choose one with --port",
            "the board on %(port)s (%(board)s, firmware %(firmware)s); %(count)d more found, "
            "choose one with --port",
            len(boards) - 1,
            **values,
        )
    else:
        text = _("the board on %(port)s (%(board)s, firmware %(firmware)s)", **values)
    return ChosenPort(first.port, text)
