"""The `cribboard` command line. Errors end as one line on stderr and a non-zero exit."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import NoReturn

from cribboard import __version__
from cribboard.api import Board
from cribboard.bridge import cli as bridge_cli
from cribboard.cliparse import OneLineParser
from cribboard.errors import CribboardError, NoBoardFound
from cribboard.rules import count_cli
from cribboard.terminal import PLAYER_NAMES, describe_state, draw_frame

PROG = "cribboard"
PORT_ENV = "CRIBBOARD_PORT"
BLE_LIST_SCAN = 2.0  # seconds `list` scans for Bluetooth boards
_PLAYER_WORDS = {name: i for i, name in enumerate(PLAYER_NAMES)}
_PLAYER_WORDS.update({"a": 0, "b": 1, "c": 2})


class UsageError(CribboardError):
    """A bad command-line argument."""


class _SubParser(OneLineParser):
    # Sub-commands report errors under the program's name, as the main parser does.
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: {message} (see {self.prog} --help)\n")


def player_arg(text: str) -> int:
    """A player as 0, 1, 2 or a name (blue, orange, purple; a, b, c)."""
    word = text.strip().lower()
    if word in _PLAYER_WORDS:
        return _PLAYER_WORDS[word]
    if word.isdigit() and int(word) < 3:
        return int(word)
    raise argparse.ArgumentTypeError(
        f"unknown player {text!r}: use 0, 1, 2 or blue, orange, purple"
    )


def _int_in(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number, not {text!r}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be {low}..{high}, not {value}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG, description="Drive an LED cribbage board over USB serial, or the virtual board."
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument(
        "--port",
        help=f"the board's serial port or pyserial URL (default: "
        f"${PORT_ENV}, else the only board found)",
    )
    parser.add_argument(
        "--ble",
        nargs="?",
        const="",
        default=None,
        metavar="NAME_OR_ADDRESS",
        help="reach the board over Bluetooth LE: its name (Cribboard-XXXX) or "
        "address, or alone for the only board advertising",
    )
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for a reply")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_SubParser)
    sub.required = True

    sub.add_parser("list", help="list boards on serial ports and Bluetooth LE")
    status = sub.add_parser("status", help="show the board")
    status.add_argument("--json", action="store_true", help="print the state as JSON")
    status.add_argument("--no-color", action="store_true", help="plain characters")
    peg = sub.add_parser("peg", help="score points for a player")
    peg.add_argument("player", type=player_arg)
    peg.add_argument("points", type=_int_in(1, 29, "points"))
    set_ = sub.add_parser("set", help="place a player's pegs (correct a mistake)")
    set_.add_argument("player", type=player_arg)
    set_.add_argument("front", type=_int_in(0, 121, "front"))
    set_.add_argument("back", type=_int_in(0, 121, "back"), nargs="?")
    sub.add_parser("undo", help="take back the last change")
    new = sub.add_parser("new", help="start a new game")
    new.add_argument("--target", type=int, choices=(61, 121))
    new.add_argument("--players", type=int, choices=(2, 3))
    deal = sub.add_parser("deal", help="pass the deal on, or give it to PLAYER")
    deal.add_argument("player", type=player_arg, nargs="?")
    bright = sub.add_parser("bright", help="show or set the LED brightness (0..255)")
    bright.add_argument("value", type=_int_in(0, 255, "brightness"), nargs="?")
    sub.add_parser("test", help="the wiring self-test: every hole lights in chain order")
    admit = sub.add_parser(
        "admit",
        help="who may change the board over Bluetooth: show, or "
        "switch open mode, or forget the admitted devices",
    )
    mode = admit.add_mutually_exclusive_group()
    mode.add_argument(
        "--open", action="store_true", help="every Bluetooth device may change the board"
    )
    mode.add_argument(
        "--closed",
        action="store_true",
        help="only admitted devices (a tap of the board's deal button admits one)",
    )
    mode.add_argument("--clear", action="store_true", help="forget every admitted device")
    watch = sub.add_parser("watch", help="print the board's events as they come")
    watch.add_argument("--json", action="store_true", help="one JSON object per event")
    deploy = sub.add_parser("deploy", help="copy the firmware to a board (mpremote)")
    deploy.add_argument("--no-reset", action="store_true", help="do not reset the board after")
    deploy.add_argument(
        "--source",
        action="store_true",
        help="copy .py source instead of "
        "compiling to .mpy (for a board whose MicroPython is older than 1.22)",
    )
    deploy.add_argument(
        "--firmware", type=Path, help="firmware tree to deploy (default: the one in this package)"
    )
    sub.add_parser("sim", help="run the virtual board (see `cribboard sim --help`)", add_help=False)
    demo = sub.add_parser("demo", help="peg a game on the virtual board, drawn in the terminal")
    demo.add_argument("--delay", type=float, default=0.6, help="seconds between moves")
    demo.add_argument("--seed", type=int, help="random seed for the moves")
    keep = sub.add_parser(
        "keep",
        help="keep the score of a game played with real cards: the "
        "table app (the board found on USB, else the virtual board)",
    )
    play = sub.add_parser("play", help="play a game against the computer, scored on the board")
    for table in (keep, play):
        table.add_argument(
            "--virtual",
            action="store_true",
            help="use the virtual board even if a board is plugged in",
        )
        table.add_argument(
            "--target",
            type=int,
            choices=(61, 121),
            help="points to play to (default: keep: the board's game; play: 121)",
        )
    keep.add_argument(
        "--players",
        type=int,
        choices=(2, 3, 4),
        default=2,
        help="2, 3, or 4 in two partnerships (partners opposite; default 2)",
    )
    keep.add_argument(
        "--five-card",
        action="store_true",
        help="the five-card game: two players, three-card hands, the pone's 3 at the start, to 61",
    )
    keep.add_argument(
        "--new",
        action="store_true",
        help="start a new game even if the board shows one in progress",
    )
    play.add_argument("--seed", type=int, help="random seed for the deals")
    count_cli.add_parser(sub)
    bridge_cli.add_parser(sub)
    return parser


# --- finding the board ---------------------------------------------------------------------------


def resolve_port(port: str | None) -> str:
    """--port, else $CRIBBOARD_PORT, else the only board found on the serial ports."""
    if port:
        return port
    if os.environ.get(PORT_ENV):
        return os.environ[PORT_ENV]
    from cribboard.discovery import find_boards

    boards = [b for b in asyncio.run(find_boards()) if b.hello is not None]
    if len(boards) == 1:
        return boards[0].port
    if not boards:
        raise NoBoardFound(
            "no board found: plug one in, or start the virtual board with "
            f"`{PROG} sim` and pass the path it prints as --port"
        )
    raise NoBoardFound(
        "several boards found (" + ", ".join(b.port for b in boards) + "): choose one with --port"
    )


async def _with_board(
    port: str | None, args: argparse.Namespace, action: Callable[[Board], Awaitable[int]]
) -> int:
    if args.ble is not None:  # --ble [NAME_OR_ADDRESS]
        board = await Board.open_ble(args.ble or None, timeout=args.timeout, reconnect=False)
    else:
        board = await Board.open(port or resolve_port(None), timeout=args.timeout, reconnect=False)
    try:
        return await action(board)
    finally:
        await board.close()


# --- commands --------------------------------------------------------------------------------


async def _status(board: Board, as_json: bool, color: bool) -> int:
    state = await board.state()
    if as_json:
        frame = await board.frame()
        print(
            json.dumps(
                {
                    "port": board.client.name,
                    "board": board.hello.board,
                    "firmware": board.hello.firmware,
                    "state": state.to_json(),
                    "frame": frame.rgb.hex(),
                    "scale": frame.scale,
                    "milliamps": frame.milliamps,
                }
            )
        )
    else:
        frame = await board.frame()
        print(draw_frame(frame.rgb, color))
        print(describe_state(state))
    return 0


async def _after_change(board: Board, color: bool) -> int:
    print(describe_state(await board.state()))
    return 0


async def _watch(board: Board, as_json: bool) -> int:
    print(f"watching {board.client.name} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    board.client.reconnect = True  # a watcher rides out a board restart
    async for event in board.events():
        if as_json:
            print(json.dumps({"event": event.name, **event.fields}), flush=True)
        else:
            fields = " ".join(f"{k}={v}" for k, v in event.fields.items())
            print(f"{event.name} {fields}".rstrip(), flush=True)
    return 0


def _run_command(args: argparse.Namespace) -> int:
    command = args.command
    color = (
        sys.stdout.isatty()
        and not os.environ.get("NO_COLOR")
        and not getattr(args, "no_color", False)
    )
    if command == "list":
        return _list()
    if args.ble is not None and command in ("deploy", "keep", "play", "serve"):
        raise UsageError(f"{command} needs a USB link: leave out --ble")
    if command == "deploy":
        from cribboard.deploy import deploy

        if args.firmware is not None and not (args.firmware / "main.py").is_file():
            raise UsageError(f"{args.firmware} is not a firmware tree (no main.py)")
        deploy(
            resolve_port(args.port),
            root=args.firmware,
            compiled=not args.source,
            reset=not args.no_reset,
        )
        return 0
    if command == "demo":
        from cribboard.demo import run_demo

        return run_demo(delay=args.delay, seed=args.seed, color=color)
    if command == "count":
        return count_cli.run(args)
    if command == "serve":
        return bridge_cli.run(args)
    if command == "keep":
        from cribboard.play.scorekeeper import run_scorekeeper, table_game

        try:
            game = table_game(args.players, args.five_card)
        except ValueError as err:
            raise UsageError(str(err)) from None
        return run_scorekeeper(
            port=args.port,
            virtual=args.virtual,
            target=args.target,
            game=game,
            new=args.new,
            color=color,
            timeout=args.timeout,
        )
    if command == "play":
        from cribboard.play.driver import run_play

        return run_play(
            port=args.port,
            virtual=args.virtual,
            target=args.target or 121,
            seed=args.seed,
            color=color,
            timeout=args.timeout,
        )
    actions: dict[str, Callable[[Board], Awaitable[int]]] = {
        "status": lambda b: _status(b, args.json, color),
        "peg": lambda b: _change(b, b.peg(args.player, args.points), color),
        "set": lambda b: _change(b, b.set_pegs(args.player, args.front, args.back), color),
        "undo": lambda b: _change(b, b.undo(), color),
        "new": lambda b: _change(b, b.new_game(args.target, args.players), color),
        "deal": lambda b: _change(b, b.set_dealer(args.player), color),
        "bright": lambda b: _print_value(b.brightness(args.value)),
        "watch": lambda b: _watch(b, args.json),
        "test": _self_test,
        "admit": lambda b: _admit(b, args),
    }
    port = None if args.ble is not None else resolve_port(args.port)
    return asyncio.run(_with_board(port, args, actions[command]))


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


async def _change(board: Board, change: Awaitable[int], color: bool) -> int:
    await change
    return await _after_change(board, color)


async def _self_test(board: Board) -> int:
    await board.self_test()
    print("self-test running: the LEDs light one by one in wiring order (about 3 s)")
    return 0


async def _print_value(value: Awaitable[int]) -> int:
    print(await value)
    return 0


def _list() -> int:
    from cribboard.discovery import find_boards

    boards = asyncio.run(find_boards())
    for found in boards:
        if found.hello is not None:
            h = found.hello
            print(
                f"{found.port}  {h.board}  firmware {h.firmware}  protocol "
                f"{h.protocol[0]}.{h.protocol[1]}"
            )
        else:
            print(f"{found.port}  {found.description}  (not answering: {found.problem})")
    found_ble = _list_ble()
    if not boards and not found_ble:
        print(f"no boards found; the virtual board: `{PROG} sim`", file=sys.stderr)
    return 0


def _list_ble() -> int:
    """Boards advertising over Bluetooth LE (a short scan); one line if Bluetooth is
    unavailable. Returns how many were found."""
    try:
        from cribboard.ble import BluetoothUnavailable, scan

        boards = asyncio.run(scan(BLE_LIST_SCAN))
    except ImportError as err:
        print(f"Bluetooth: not available ({err})")
        return 0
    except BluetoothUnavailable as err:
        print(f"Bluetooth: not available ({err.reason})")
        return 0
    except CribboardError as err:
        print(f"Bluetooth: scan failed ({err})")
        return 0
    for found in boards:
        rssi = f", {found.rssi} dBm" if found.rssi is not None else ""
        print(f"{found.address}  {found.name}  (Bluetooth LE{rssi}; --ble {found.name})")
    return len(boards)


def _ble_before_command(argv: list[str]) -> list[str]:
    """`--ble status`: argparse would take the command for --ble's optional value, so a
    command name right after --ble is the command (a board named like one: --ble=NAME)."""
    if "--ble" not in argv:
        return list(argv)
    commands: set[str] = set()
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands.update(action.choices)
    out = list(argv)
    for i, word in enumerate(out[:-1]):
        if word == "--ble" and out[i + 1] in commands:
            out[i] = "--ble="
    return out


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["sim"]:  # the virtual board has its own options
        from cribboard.virtual.cli import main as sim_main

        return sim_main(argv[1:])
    args = build_parser().parse_args(_ble_before_command(argv))
    try:
        return _run_command(args)
    except UsageError as err:  # as argparse's own: one line, exit status 2
        print(f"{PROG}: {err}", file=sys.stderr)
        return 2
    except CribboardError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
