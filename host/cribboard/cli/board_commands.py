"""The commands that act on one board: list, status, peg, set, undo, new, deal, match, bright,
test, admit, watch, deploy. Each opens the board named by --port (else $CRIBBOARD_PORT, else the only
board found) or --ble, acts, and closes it. What they run (asyncio, the library, the terminal's
drawing) is imported when they run: the table is read for every command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cribboard.cli.matchargs import BEST_OF, FIRST_TO, SKUNKS, match_asked, skunks_asked
from cribboard.cmdline.rows import (
    PROG,
    Args,
    Command,
    OneOf,
    Runner,
    UsageError,
    arg,
    int_in,
    use_color,
)
from cribboard.discovery import PORT_ENV, resolve_port
from cribboard.errors import CribboardError
from cribboard.i18n import L_, N_, _, n_
from cribboard.names import PLAYER_NAMES, parse_player
from cribcore.limits import (
    MAX_BRIGHTNESS,
    MAX_BUDGET_MA,
    MAX_POINTS,
    MIN_BUDGET_MA,
    PLAYER_COUNTS,
    TARGETS,
)

if TYPE_CHECKING:
    from cribboard.api import Board
    from cribboard.boarddata import BoardState, Frame, Health
    from cribboard.bootsel import BootselDrive
    from cribboard.client import Hello
    from cribboard.discovery import ChosenPort
    from cribboard.oneshot import OneShot

BLE_LIST_SCAN = 2.0  # seconds `list` scans for Bluetooth boards

Action = Callable[["Board", argparse.Namespace], Awaitable[int]]
AtOnce = Callable[["OneShot", argparse.Namespace], int]
"""A command's action on the one-shot path (cribboard.oneshot: no asyncio)."""


def player_arg(text: str) -> int:
    """A player as 0, 1, 2 or a name (blue, orange, purple; a, b, c)."""
    try:
        return parse_player(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def on_board(action: Action, *, reconnect: bool = False, at_once: AtOnce | None = None) -> Runner:
    """A runner that opens the board, runs `action` on it and closes it. With `reconnect` the
    link is opened again when it drops (a watcher rides out a board restart). With `at_once`,
    a command that asks a few things and exits: a board on a serial port is reached on the
    one-shot path (cribboard.oneshot, no asyncio), which runs `at_once` instead of `action`;
    Bluetooth, and a port only the asyncio path takes, run `action`."""

    def run(args: argparse.Namespace) -> int:
        chosen = None
        if at_once is not None and args.ble is None:
            from cribboard.discovery import resolve_port_at_once
            from cribboard.oneshot import NotAtOnce, at_once_on

            chosen = resolve_port_at_once(args.port)
            if chosen is not None:
                _say_which(chosen)
                try:
                    return at_once_on(chosen.port, args.timeout, lambda b: at_once(b, args))
                except NotAtOnce:
                    pass  # nothing was sent: the asyncio path takes it
        import asyncio

        return asyncio.run(_with_board(args, action, reconnect, chosen))

    return run


def _say_which(chosen: ChosenPort) -> None:
    if chosen.sim is not None:  # found running, not named: say which
        print(_("on %(board)s: no board found on USB", board=chosen.description), file=sys.stderr)


async def _with_board(
    args: argparse.Namespace, action: Action, reconnect: bool, chosen: ChosenPort | None = None
) -> int:
    from cribboard.api import Board

    if args.ble is not None:  # --ble [NAME_OR_ADDRESS]
        board = await Board.open_ble(args.ble or None, timeout=args.timeout, reconnect=reconnect)
    else:
        if chosen is None:  # (else chosen, and said, on the way to the one-shot path)
            chosen = await resolve_port(args.port)
            _say_which(chosen)
        board = await Board.open(chosen.port, timeout=args.timeout, reconnect=reconnect)
    async with board:
        return await action(board, args)


# --- reading ---------------------------------------------------------------------------------


async def _status(board: Board, args: argparse.Namespace) -> int:
    state = await board.state()
    frame = await board.frame()
    health = await board.health()
    return _show_status(args, board.name, board.hello, state, frame, health)


def _status_at_once(board: OneShot, args: argparse.Namespace) -> int:
    assert board.hello is not None
    return _show_status(args, board.name, board.hello, board.state(), board.frame(), board.health())


def _show_status(
    args: argparse.Namespace,
    name: str,
    hello: Hello,
    state: BoardState,
    frame: Frame,
    health: Health | None,
) -> int:
    from cribboard.terminal import describe_state, draw_frame

    if args.json:
        import json  # (only here: a status for people prints none)

        print(
            json.dumps(
                {
                    "port": name,
                    "board": hello.board,
                    "firmware": hello.firmware,
                    "state": state.to_json(),
                    "frame": frame.rgb.hex(),
                    "scale": frame.scale,
                    "milliamps": frame.milliamps,
                    "health": health.to_json() if health is not None else None,
                }
            )
        )
    else:
        print(draw_frame(frame.rgb, use_color(args), state.players))
        print(describe_state(state))
        if health is not None:
            print(describe_health(health, hello.fields))
    return 0


def describe_health(health: Health, hello: dict[str, str]) -> str:
    """The board's health in a line, and a warning line for each thing that needs a look."""
    from cribboard.wifisetup import describe_page

    minutes, seconds = divmod(health.uptime, 60)
    hours, minutes = divmod(minutes, 60)
    up = f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {seconds:02d} s"
    lines = [
        n_(
            "board: up %(up)s, %(kb)d KB free, %(count)d save to the flash",
            "board: up %(up)s, %(kb)d KB free, %(count)d saves to the flash",
            health.saves,
            up=up,
            kb=health.free_heap // 1024,
        )
    ]
    if health.save_errors:
        if health.last_save_error:
            warning = n_(
                "warning: %(count)d save to the flash failed (last: %(error)s): the game is not "
                "being kept through a power cut",
                "warning: %(count)d saves to the flash failed (last: %(error)s): the game is "
                "not being kept through a power cut",
                health.save_errors,
                error=health.last_save_error,
            )
        else:
            warning = n_(
                "warning: %(count)d save to the flash failed: the game is not being kept "
                "through a power cut",
                "warning: %(count)d saves to the flash failed: the game is not being kept "
                "through a power cut",
                health.save_errors,
            )
        lines.append(warning)
    if hello.get("fs") == "formatted" and hello.get("boots"):
        lines.append(
            _(
                "warning: the board's file system crashed its start %(boots)s times and was "
                "formatted (the game was kept)",
                boots=hello["boots"],
            )
        )
    if health.admission_errors:
        lines.append(_("warning: the admitted Bluetooth devices could not be saved"))
    page = describe_page(health)
    if page is not None:
        lines.insert(1, page)
    return "\n".join(lines)


async def _watch(board: Board, args: argparse.Namespace) -> int:
    from cribboard.boardid import board_identity
    from cribboard.recorder import Recording

    # The games it sees, and the board's own history, go into the record as they come (the
    # games played with the board's buttons alone too).
    recording = Recording.open(
        board_identity(board.name, board.hello),
        "board",
        say=lambda text: print(text, file=sys.stderr, flush=True),
    )
    try:
        if recording is not None:
            await recording.follow(board)
        return await _watch_events(board, args)
    finally:
        if recording is not None:
            await recording.close()


async def _watch_events(board: Board, args: argparse.Namespace) -> int:
    import json  # (here: most command lines print no JSON)

    from cribboard.api import LinkEvent
    from cribboard.terminal import describe_state
    from cribboard.watchwords import ChangeTeller

    with board.events() as events:
        # Said once subscribed: whatever changes from here on is printed.
        print(
            _("watching %(board)s (Ctrl-C to stop)", board=board.name), file=sys.stderr, flush=True
        )
        teller = ChangeTeller()
        watched = board.hello.fields.get("ble")  # which board it is, when it says
        if not (args.json or args.raw):  # the game as it is, then what changes
            teller.last = await board.state()
            print(describe_state(teller.last), flush=True)
        async for event in events:
            if args.json:
                print(json.dumps(event.to_json()), flush=True)
            elif args.raw:
                if event.line is not None:
                    fields = " ".join(f"{k}={v}" for k, v in event.line.fields.items())
                    print(f"{event.line.name} {fields}".rstrip(), flush=True)
            else:
                for line in teller.tell(event):
                    print(line, flush=True)
            if isinstance(event, LinkEvent):
                _say_where_the_board_went(board.name, event.state)
                answering = board.hello.fields.get("ble")
                if event.state == "back" and watched and answering not in (None, watched):
                    raise CribboardError(
                        _(
                            "another board answers on %(port)s now (%(board)s, not "
                            "%(watched)s): stopped watching",
                            port=board.name,
                            board=answering,
                            watched=watched,
                        )
                    )
    return 0


def _say_where_the_board_went(port: str, link: str) -> None:
    """While the link is lost, a hint on stderr when its port has gone (a virtual board that
    stopped); when it is given up, the end of the watch (exit 1)."""
    vanished = port.startswith("/") and not os.path.exists(port)
    if link == "lost" and vanished:
        print(
            _(
                "%(port)s is gone: was it a virtual board that stopped? `%(prog)s virtual` starts "
                "one (Ctrl-C to stop watching)",
                port=port,
                prog=PROG,
            ),
            file=sys.stderr,
            flush=True,
        )
    elif link == "gone":
        raise CribboardError(
            _("%(port)s did not come back: stopped watching", port=port)
            if not vanished
            else _("%(port)s is gone: stopped watching", port=port)
        )


def _list(args: argparse.Namespace) -> int:
    import asyncio
    import json  # (here: most command lines print no JSON)

    from cribboard.client import Hello
    from cribboard.discovery import find_boards

    boards = asyncio.run(find_boards())
    sims = asyncio.run(_running_sims())
    ble, ble_problem = _scan_ble()
    if args.json:
        found = [_usb_json(board) for board in boards] + [
            _sim_json(sim, hello) for sim, hello in sims
        ]
        found += [
            {"link": "ble", "address": b.address, "name": b.name, "rssi": b.rssi} for b in ble
        ]
        print(json.dumps({"boards": found, "bluetooth_problem": ble_problem}))
        return 0
    for board in boards:
        if board.hello is not None:
            h = board.hello
            print(
                f"{board.port}  {h.board}  firmware {h.firmware}  protocol "
                f"{h.protocol[0]}.{h.protocol[1]}"
            )
        else:
            print(f"{board.port}  {board.description}  (not answering: {board.problem})")
    for sim, hello in sims:
        where = _("virtual: %(program)s, pid %(pid)d", program=sim.label, pid=sim.pid)
        if isinstance(hello, Hello):
            print(
                f"{sim.port}  {hello.board}  firmware {hello.firmware}  protocol "
                f"{hello.protocol[0]}.{hello.protocol[1]}  ({where})"
            )
        else:
            print(f"{sim.port}  ({where}; not answering: {hello})")
    if ble_problem is not None:
        print(f"Bluetooth: {ble_problem}")
    for b in ble:
        rssi = f", {b.rssi} dBm" if b.rssi is not None else ""
        print(f"{b.address}  {b.name}  (Bluetooth LE{rssi}; --ble {b.name})")
    if not boards and not sims and not ble:
        print(
            _("no boards found; the virtual board: `%(prog)s virtual`", prog=PROG), file=sys.stderr
        )
    return 0


def _hello_json(hello: Hello) -> dict[str, object]:
    return {
        "board": hello.board,
        "firmware": hello.firmware,
        "protocol": f"{hello.protocol[0]}.{hello.protocol[1]}",
    }


def _usb_json(board: Any) -> dict[str, object]:
    """One board found on a serial port, for `list --json`."""
    entry: dict[str, object] = {"link": "usb", "port": board.port, "description": board.description}
    if board.hello is not None:
        return {**entry, **_hello_json(board.hello), "problem": None}
    return {**entry, "problem": board.problem}


def _sim_json(sim: Any, hello: Hello | BaseException) -> dict[str, object]:
    """One running `cribboard virtual`, for `list --json`."""
    from cribboard.client import Hello

    entry: dict[str, object] = {
        "link": "virtual",
        "port": sim.port,
        "pid": sim.pid,
        "program": sim.label,
        "flash": sim.flash or None,
    }
    if isinstance(hello, Hello):
        return {**entry, **_hello_json(hello), "problem": None}
    return {**entry, "problem": str(hello)}


async def _running_sims() -> list[tuple[Any, Hello | BaseException]]:
    """The virtual boards `cribboard virtual` runs now, each asked its hello as a USB board is."""
    import asyncio

    from cribboard.discovery import probe
    from cribboard.virtual.registry import running_sims

    sims = running_sims()
    hellos = await asyncio.gather(*(probe(sim.port) for sim in sims), return_exceptions=True)
    return list(zip(sims, hellos, strict=True))


def _scan_ble() -> tuple[list[Any], str | None]:
    """Boards advertising over Bluetooth LE (a short scan), and why Bluetooth could not be
    used (None when it could)."""
    import asyncio

    try:
        from cribboard.ble import BluetoothUnavailable, scan

        return list(asyncio.run(scan(BLE_LIST_SCAN))), None
    except ImportError as err:
        return [], f"not available ({err})"
    except BluetoothUnavailable as err:
        return [], f"not available ({err.reason})"
    except CribboardError as err:
        return [], f"scan failed ({err})"


# --- changing --------------------------------------------------------------------------------


Make = Callable[[Any, argparse.Namespace], Any]
"""A change, as a call on a board: the library's Board (awaited) or the one-shot path's."""


def changing(make: Make) -> Runner:
    """A runner that changes the board, then prints the game as it is."""

    async def action(board: Board, args: argparse.Namespace) -> int:
        from cribboard.terminal import describe_state

        await make(board, args)
        print(describe_state(await board.state()))
        return 0

    def at_once(board: OneShot, args: argparse.Namespace) -> int:
        from cribboard.terminal import describe_state

        make(board, args)
        print(describe_state(board.state()))
        return 0

    return on_board(action, at_once=at_once)


async def _match(board: Board, args: argparse.Namespace) -> int:
    import json  # (here: most command lines print no JSON)

    from cribboard.terminal import describe_match

    asked = match_asked(args)
    skunks = skunks_asked(args)
    if asked is not None:
        await board.start_match(asked[1], asked[0], skunk_double=skunks)
    elif args.end:
        await board.end_match()
    elif skunks is not None:
        await board.set_skunk_double(skunks)
    state = await board.state()
    if args.json:
        print(json.dumps({"match": None if state.match is None else state.match.to_json()}))
        return 0
    if state.game is None:
        print(_("this board's firmware has no match play: update it (cribboard deploy)"))
        return 0
    print(describe_match(state) or _("no match: one game after another"))
    return 0


async def _bright(board: Board, args: argparse.Namespace) -> int:
    print(await board.brightness(args.value))
    return 0


def _bright_at_once(board: OneShot, args: argparse.Namespace) -> int:
    print(board.brightness(args.value))
    return 0


async def _budget(board: Board, args: argparse.Namespace) -> int:
    print(await board.budget(args.milliamps))
    return 0


def _budget_at_once(board: OneShot, args: argparse.Namespace) -> int:
    print(board.budget(args.milliamps))
    return 0


async def _self_test(board: Board, args: argparse.Namespace) -> int:
    await board.self_test()
    print(_("self-test running: the LEDs light one by one in wiring order (about 3 s)"))
    return 0


async def _admit(board: Board, args: argparse.Namespace) -> int:
    if args.open or args.closed:
        admission = await board.set_open(args.open)
    elif args.clear:
        admission = await board.clear_admitted()
    else:
        admission = await board.admission()
    print(
        f"open mode: {'on' if admission.open else 'off'}; this link may change the board: "
        f"{'yes' if admission.may_change else 'no (tap deal on the board to admit it)'}; "
        f"admitted devices: {admission.admitted}"
    )
    return 0


def _deploy(args: argparse.Namespace) -> int:
    import asyncio

    from cribboard import portshare
    from cribboard.cli import deployargs
    from cribboard.deploy import deploy

    drive = _bootsel_drive(args)
    if drive is not None and (args.broker is not None or args.wifi is not None):
        raise UsageError(
            "--broker and --wifi are for a board running MicroPython: deploy them once it runs"
        )
    hall = deployargs.hall_setup(args)
    wifi = deployargs.wifi_setup(args)
    if drive is not None:
        from cribboard.bootsel import choose_image, flash
        from cribboard.virtual.rp2board import images_dir

        if args.source or args.firmware is not None or args.no_reset:
            raise UsageError(
                "--source, --firmware and --no-reset are for a board running MicroPython; "
                "a board in BOOTSEL mode gets a whole image (--image)"
            )
        flash(drive, choose_image(drive, args.image, images_dir()))
        if args.image is None and drive.chip.name == "RP2040":
            print("(a Pico W gets Bluetooth with --image cribboard-RPI_PICO_W.uf2)")
        return 0
    if args.image is not None:
        raise UsageError(
            "--image is for a board in BOOTSEL mode, and no BOOTSEL drive was found "
            "(hold BOOTSEL while plugging the board in, or name its drive with --drive)"
        )
    if args.firmware is not None and not (args.firmware / "main.py").is_file():
        raise UsageError(f"{args.firmware} is not a firmware tree (no main.py)")
    port = asyncio.run(resolve_port(args.port)).port
    holder = portshare.holder_of(port)
    if holder is not None:  # mpremote needs the port to itself
        raise CribboardError(
            _("port %(port)s in use by %(holder)s: stop it first", port=port, holder=holder)
        )
    deploy(
        port,
        root=args.firmware,
        compiled=not args.source,
        reset=not args.no_reset,
        # A board just reset needs longer than a reply: --timeout raises it for a slow one.
        answer_timeout=max(10.0, args.timeout),
    )
    deployargs.configure(port, hall, reset=not args.no_reset, wifi=wifi)
    return 0


def _bootsel_drive(args: argparse.Namespace) -> BootselDrive | None:
    """The BOOTSEL drive `deploy` flashes: --drive, else the only one mounted when no serial
    port is named (--port, $CRIBBOARD_PORT); None: deploy over the serial port."""
    from cribboard.bootsel import BootselError, find_drives, read_drive

    if args.drive is not None:
        try:
            return read_drive(args.drive)
        except BootselError as err:
            raise UsageError(str(err)) from None
    if args.port is not None or os.environ.get(PORT_ENV):
        return None
    drives = find_drives()
    if len(drives) > 1:
        names = ", ".join(str(drive.path) for drive in drives)
        raise UsageError(f"several boards in BOOTSEL mode ({names}): name one with --drive")
    return drives[0] if drives else None


def _deploy_args() -> Args:
    # The hall's options name its default hall, from its set-up (and the broker's client).
    from cribboard.cli.deployargs import HALL_ARGS

    return (
        arg(
            "--drive",
            type=Path,
            help=N_(
                "the BOOTSEL drive of a Pico to flash (default: the only one mounted, when "
                "no --port is named)"
            ),
        ),
        arg(
            "--image",
            help=N_(
                "the UF2 image to flash onto a BOOTSEL drive: a file, or a name in "
                "firmware/ports/rp2/images/ (default: cribboard-RPI_PICO.uf2 for an RP2040, "
                "cribboard-RPI_PICO2_W.uf2 for an RP2350; a Pico W takes "
                "cribboard-RPI_PICO_W.uf2 for Bluetooth)"
            ),
        ),
        arg("--no-reset", action="store_true", help=N_("do not reset the board after")),
        arg(
            "--source",
            action="store_true",
            help=N_(
                "copy .py source instead of compiling to .mpy (for a board whose "
                "MicroPython is older than 1.22)"
            ),
        ),
        arg(
            "--firmware",
            type=Path,
            help=N_("firmware tree to deploy (default: the one in this package)"),
        ),
        *HALL_ARGS,
    )


# --- the table -------------------------------------------------------------------------------

_PLAYERS = L_("0, 1, 2 or %(names)s", names=", ".join(PLAYER_NAMES))
_PLAYER = arg("player", type=player_arg, help=_PLAYERS)
_HOLE_MAX = max(TARGETS)

BOARD_COMMANDS: tuple[Command, ...] = (
    Command(
        "list",
        N_("list boards on serial ports, virtual boards running, and Bluetooth LE"),
        _list,
        (arg("--json", action="store_true", help=N_("print the boards found as JSON")),),
    ),
    Command(
        "status",
        N_("show the board"),
        on_board(_status, at_once=_status_at_once),
        (
            arg("--json", action="store_true", help=N_("print the state as JSON")),
            arg("--no-color", action="store_true", help=N_("plain characters")),
        ),
    ),
    Command(
        "peg",
        N_("score points for a player"),
        changing(lambda b, a: b.peg(a.player, a.points)),
        (
            _PLAYER,
            arg(
                "points",
                type=int_in(1, MAX_POINTS, "points"),
                help=L_("1..%(most)d", most=MAX_POINTS),
            ),
        ),
    ),
    Command(
        "set",
        N_("place a player's pegs (correct a mistake)"),
        changing(lambda b, a: b.set_pegs(a.player, a.front, a.back)),
        (
            _PLAYER,
            arg("front", type=int_in(0, _HOLE_MAX, "front")),
            arg("back", type=int_in(0, _HOLE_MAX, "back"), nargs="?"),
        ),
    ),
    Command("undo", N_("take back the last change"), changing(lambda b, a: b.undo())),
    Command(
        "new",
        N_("start a new game"),
        changing(lambda b, a: b.new_game(a.target, a.players)),
        (
            arg("--target", type=int, choices=TARGETS),
            arg("--players", type=int, choices=PLAYER_COUNTS),
        ),
    ),
    Command(
        "dealer",
        N_("pass the deal on, or give it to PLAYER"),
        changing(lambda b, a: b.set_dealer(a.player)),
        (
            arg(
                "player",
                type=player_arg,
                nargs="?",
                help=L_("%(players)s; absent: the next", players=_PLAYERS),
            ),
        ),
        old_names=("deal",),
    ),
    Command(
        "match",
        N_(
            "show the match the board plays, start one (with a new game; the games won are its "
            "score), or end match play"
        ),
        on_board(_match),
        (
            OneOf(
                (
                    BEST_OF,
                    FIRST_TO,
                    arg("--end", action="store_true", help=N_("no more match play")),
                )
            ),
            SKUNKS,
            arg("--json", action="store_true", help=N_("print the match as JSON")),
        ),
    ),
    Command(
        "bright",
        L_("show or set the LED brightness (0..%(most)d)", most=MAX_BRIGHTNESS),
        on_board(_bright, at_once=_bright_at_once),
        (arg("value", type=int_in(0, MAX_BRIGHTNESS, "brightness"), nargs="?"),),
    ),
    Command(
        "budget",
        L_(
            "show or set the LEDs' current budget in mA (%(least)d..%(most)d; the maker's guide "
            "says what a USB port gives)",
            least=MIN_BUDGET_MA,
            most=MAX_BUDGET_MA,
        ),
        on_board(_budget, at_once=_budget_at_once),
        (
            arg(
                "milliamps",
                type=int_in(MIN_BUDGET_MA, MAX_BUDGET_MA, "budget"),
                nargs="?",
                metavar="MA",
            ),
        ),
    ),
    Command(
        "test", N_("the wiring self-test: every hole lights in chain order"), on_board(_self_test)
    ),
    Command(
        "admit",
        N_(
            "who may change the board over Bluetooth: show, or switch open mode, or forget the "
            "admitted devices"
        ),
        on_board(_admit),
        (
            OneOf(
                (
                    arg(
                        "--open",
                        action="store_true",
                        help=N_("every Bluetooth device may change the board"),
                    ),
                    arg(
                        "--closed",
                        action="store_true",
                        help=N_(
                            "only admitted devices (a tap of the board's deal button admits one)"
                        ),
                    ),
                    arg("--clear", action="store_true", help=N_("forget every admitted device")),
                )
            ),
        ),
    ),
    Command(
        "watch",
        N_("say what changes on the board as it happens"),
        on_board(_watch, reconnect=True),
        (
            OneOf(
                (
                    arg("--json", action="store_true", help=N_("one JSON object per event")),
                    arg(
                        "--raw",
                        action="store_true",
                        help=N_("the events as the protocol writes them"),
                    ),
                )
            ),
        ),
    ),
    Command(
        "deploy",
        N_(
            "copy the firmware to a board running MicroPython (mpremote), or flash the image "
            "with the firmware frozen in onto a board in BOOTSEL mode"
        ),
        _deploy,
        _deploy_args,
        usb_only=True,
    ),
)
