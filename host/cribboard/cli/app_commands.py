"""The commands that run an app rather than one request: sim (the virtual board), keep (the
scorekeeper), play, demo, count and serve (the bridge). Each imports what it runs only when it
runs, so the command line starts quickly."""

from __future__ import annotations

import argparse
import os
import time

from cribboard.bridge import DEFAULT_HOST, DEFAULT_HTTP_PORT, TOKEN_ENV
from cribboard.bridge.tableargs import TABLE_ARGS, table_settings
from cribboard.cli.table import Command, UsageError, arg, use_color
from cribboard.discovery import named_port
from cribboard.play.scorekeeper import TABLE_GAMES
from cribboard.rules.allhands import COMBINATIONS, all_hands_table
from cribboard.rules.cards import format_cards, parse_cards
from cribboard.rules.errors import CardError
from cribboard.rules.show import HandCount, count_hand
from cribboard.rules.variants import FIVE_CARD, STANDARD
from cribcore.limits import TARGETS


def _sim(args: argparse.Namespace) -> int:
    from cribboard.virtual.cli import main as sim_main

    return sim_main(args.rest)


def _demo(args: argparse.Namespace) -> int:
    from cribboard.demo import run_demo

    return run_demo(delay=args.delay, seed=args.seed, color=use_color(args))


def _keep(args: argparse.Namespace) -> int:
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
        color=use_color(args),
        timeout=args.timeout,
    )


def _play(args: argparse.Namespace) -> int:
    from cribboard.play.driver import run_play

    return run_play(
        port=args.port,
        virtual=args.virtual,
        target=args.target,
        seed=args.seed,
        color=use_color(args),
        timeout=args.timeout,
    )


def _serve(args: argparse.Namespace) -> int:
    from cribboard.bridge.serve import serve

    ports: list[str] = list(args.serve_ports or [])
    if args.port or not (ports or args.virtual or args.serve_ble):  # --port, or $CRIBBOARD_PORT
        named = named_port(args.port)
        if named and named not in ports:
            ports.insert(0, named)
    ble = list(args.serve_ble or [])
    return serve(
        ports,
        virtual=args.virtual,
        host=args.host,
        http_port=args.http_port,
        token=args.token or os.environ.get(TOKEN_ENV) or None,
        ble=ble,
        table=table_settings(args, len(ports) + len(ble) + args.virtual),
    )


# --- count -----------------------------------------------------------------------------------


def _count(args: argparse.Namespace) -> int:
    if args.all_hands:
        if args.cards or args.no_starter or args.five_card:
            raise UsageError("--all-hands takes no cards, no --no-starter and no --five-card")
        started = time.perf_counter()
        table = all_hands_table(crib=args.crib)
        elapsed = time.perf_counter() - started
        for score, hands in enumerate(table):
            print(score, hands)
        print(f"total {sum(table)} in {elapsed:.3f} s")
        assert sum(table) == COMBINATIONS
        return 0
    cards = parse_cards(args.cards)
    if not cards:
        raise CardError("give the hand's cards, then the starter (or --all-hands)")
    if args.no_starter and args.crib:
        raise UsageError("a crib is counted with its starter")
    _check_card_count(len(cards), args)
    if args.no_starter:
        hand_count = count_hand(cards, None)
    else:
        hand_count = count_hand(cards[:-1], cards[-1], crib=args.crib)
    print(format_count(hand_count))
    return 0


def _check_card_count(given: int, args: argparse.Namespace) -> None:
    """A hand is four cards (three in the five-card game), a crib four, then the starter: a
    card missing is an error, never a smaller hand counted."""
    size = 3 if args.five_card and not args.crib else 4
    wanted = size if args.no_starter else size + 1
    if given == wanted:
        return
    what = "crib" if args.crib else "hand"
    if args.no_starter:
        raise CardError(f"a {what} has {size} cards, not {given}")
    message = f"a {what} has {size} cards, then the starter: {wanted} cards, not {given}"
    if given == wanted - 1 and not args.crib and not args.five_card:
        message += " (the starter forgotten? a three-card hand of the five-card game: --five-card)"
    raise CardError(message)


def format_count(count: HandCount) -> str:
    """The breakdown: a heading, one line per combination (what, points, cards), the total."""
    what = "crib" if count.crib else "hand"
    heading = f"{what} {format_cards(count.hand)}"
    heading += f", starter {count.starter}" if count.starter else " (no starter)"
    lines = [heading]
    for combo in count.combos:
        lines.append(f"  {combo.label():<12}{combo.points:>3}  {format_cards(combo.cards)}")
    lines.append(f"  {'total':<12}{count.total:>3}")
    return "\n".join(lines)


# --- the table -------------------------------------------------------------------------------

_VIRTUAL = arg(
    "--virtual", action="store_true", help="use the virtual board even if a board is plugged in"
)
_TARGET = arg(
    "--target",
    type=int,
    choices=TARGETS,
    help=f"points to play to (default: keep: the board's game; play: {STANDARD.target})",
)

APP_COMMANDS: tuple[Command, ...] = (
    Command("sim", "run the virtual board (see `cribboard sim --help`)", _sim, takes_rest=True),
    Command(
        "demo",
        "peg a game on the virtual board, drawn in the terminal",
        _demo,
        (
            arg("--delay", type=float, default=0.6, help="seconds between moves"),
            arg("--seed", type=int, help="random seed for the moves"),
        ),
    ),
    Command(
        "keep",
        "keep the score of a game played with real cards: the table app (the board found on "
        "USB, else the virtual board)",
        _keep,
        (
            _VIRTUAL,
            _TARGET,
            arg(
                "--players",
                type=int,
                choices=tuple(TABLE_GAMES),
                default=2,
                help="2, 3, or 4 in two partnerships (partners opposite; default 2)",
            ),
            arg(
                "--five-card",
                action="store_true",
                help="the five-card game: two players, three-card hands, the pone's "
                f"{FIVE_CARD.pone_bonus} at the start, to {FIVE_CARD.target}",
            ),
            arg(
                "--new",
                action="store_true",
                help="start a new game even if the board shows one in progress",
            ),
        ),
        usb_only=True,
    ),
    Command(
        "play",
        "play a game against the computer, scored on the board",
        _play,
        (_VIRTUAL, _TARGET, arg("--seed", type=int, help="random seed for the deals")),
        usb_only=True,
    ),
    Command(
        "count",
        "count a hand or crib with its starter (or --all-hands)",
        _count,
        (
            arg(
                "cards",
                nargs="*",
                metavar="CARD",
                help="4 hand cards (a crib: 4; --five-card: 3), then the starter",
            ),
            arg("--crib", action="store_true", help="count as the crib (flush only with all five)"),
            arg("--no-starter", action="store_true", help="the cards alone, no starter"),
            arg(
                "--five-card",
                action="store_true",
                help="a three-card hand of the five-card game (its crib has four)",
            ),
            arg(
                "--all-hands",
                action="store_true",
                help=f"how many of the {COMBINATIONS:,} hand + starter combinations make each "
                "score, and the time taken",
            ),
        ),
        description="Count a hand or crib: the cards, the starter last (5H JD 10S or TS AC; "
        "suits C D H S).",
    ),
    Command(
        "serve",
        "the bridge: HTTP + WebSocket API and the web page (docs/bridge.md)",
        _serve,
        (
            arg(
                "--host",
                default=DEFAULT_HOST,
                help=f"address to listen on (default {DEFAULT_HOST}; any other needs a token)",
            ),
            arg(
                "--http-port",
                type=int,
                default=DEFAULT_HTTP_PORT,
                help=f"TCP port (default {DEFAULT_HTTP_PORT})",
            ),
            arg(
                "--token",
                help=f"the token every request must carry (default ${TOKEN_ENV}); required "
                "when --host is not localhost",
            ),
            arg(
                "--virtual",
                action="count",
                default=0,
                help="start a virtual board (repeat for more)",
            ),
            arg(
                "--port",
                dest="serve_ports",
                action="append",
                metavar="PORT",
                help="a board's serial port or pyserial URL (repeat for several boards)",
            ),
            *TABLE_ARGS,
        ),
        description="Hold the connection to boards and offer them over HTTP (JSON API, "
        "OpenAPI at /openapi.json), a WebSocket of board events, and a web page. Boards: "
        "--port (repeat it for several), --ble, --virtual, else every board found on USB. "
        "With --mqtt, the board also sits at a club hall's table (docs/mqtt.md).",
        usb_only=True,
    ),
)
