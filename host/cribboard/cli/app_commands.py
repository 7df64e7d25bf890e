"""The commands that run an app rather than one request: keep (the scorekeeper), play, demo,
count and serve (the bridge). Each imports what it runs only when it runs, and a row whose help
needs the rules' figures makes its arguments in a function, so the command line starts
quickly."""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING

from cribboard.bridge import DEFAULT_HOST, DEFAULT_HTTP_PORT, TOKEN_ENV
from cribboard.cli.matchargs import BEST_OF, FIRST_TO, SKUNKS, match_asked, skunks_asked
from cribboard.cli.tableargs import TABLE_ARGS, table_settings
from cribboard.cmdline.rows import Arg, Args, Command, OneOf, UsageError, arg, use_color
from cribboard.discovery import named_port
from cribboard.i18n import L_, N_, _
from cribcore.limits import TARGETS

if TYPE_CHECKING:
    from cribboard.rules.show import HandCount


def _demo(args: argparse.Namespace) -> int:
    from cribboard.demo import run_demo

    return run_demo(delay=args.delay, seed=args.seed, color=use_color(args))


def _keep(args: argparse.Namespace) -> int:
    from cribboard.play.scorekeeper import run_scorekeeper, table_game
    from cribboard.playernames import parse_names

    try:
        game = table_game(args.players, args.five_card)
        names = None if args.names is None else parse_names(args.names, game.players)
    except ValueError as err:  # BadName too
        raise UsageError(str(err)) from None
    return run_scorekeeper(
        port=args.port,
        virtual=args.virtual,
        target=args.target,
        game=game,
        new=args.new,
        color=use_color(args),
        timeout=args.timeout,
        names=names,
        match=match_asked(args),
        skunk_double=skunks_asked(args),
    )


def _play(args: argparse.Namespace) -> int:
    from cribboard.play.driver import COMPUTER_NAME, run_play
    from cribboard.playernames import SEPARATOR, parse_names

    try:
        text = args.names
        if text is not None and SEPARATOR not in text:  # yours alone: the computer's as ever
            text += SEPARATOR + COMPUTER_NAME
        names = None if text is None else parse_names(text, 2)
    except ValueError as err:
        raise UsageError(str(err)) from None
    return run_play(
        port=args.port,
        virtual=args.virtual,
        target=args.target,
        seed=args.seed,
        color=use_color(args),
        timeout=args.timeout,
        new=args.new,
        names=names,
    )


def _serve(args: argparse.Namespace) -> int:
    from cribboard.bridge.run import serve

    ports: list[str] = list(args.serve_ports or [])
    if args.port or not (ports or args.virtual or args.serve_ble):  # --port, or $CRIBBOARD_PORT
        named = named_port(args.port)
        if named and named not in ports:
            ports.insert(0, named)
    ble = list(args.serve_ble or [])
    return serve(
        ports,
        virtual=args.virtual,
        host=args.http_host,
        http_port=args.http_port,
        token=args.token or os.environ.get(TOKEN_ENV) or None,
        ble=ble,
        table=table_settings(args, len(ports) + len(ble) + args.virtual),
        announce=not args.no_announce,
        qr=not args.no_qr,
        color=use_color(args),
    )


# --- count -----------------------------------------------------------------------------------


def _count(args: argparse.Namespace) -> int:
    import json  # (here: most command lines print no JSON)

    from cribboard.rules.allhands import COMBINATIONS, all_hands_table
    from cribboard.rules.cards import parse_cards
    from cribboard.rules.errors import CardError
    from cribboard.rules.show import count_hand

    if args.all_hands:
        if args.cards or args.no_starter or args.five_card:
            raise UsageError(_("--all-hands takes no cards, no --no-starter and no --five-card"))
        started = time.perf_counter()
        table = all_hands_table(crib=args.crib)
        elapsed = time.perf_counter() - started
        assert sum(table) == COMBINATIONS
        if args.json:
            print(json.dumps({"crib": args.crib, "hands": table, "total": sum(table)}))
            return 0
        for score, hands in enumerate(table):
            print(score, hands)
        print(_("total %(hands)d in %(seconds).3f s", hands=sum(table), seconds=elapsed))
        return 0
    cards = parse_cards(args.cards)
    if not cards:
        raise CardError(_("give the hand's cards, then the starter (or --all-hands)"))
    if args.no_starter and args.crib:
        raise UsageError(_("a crib is counted with its starter"))
    _check_card_count(len(cards), args)
    if args.no_starter:
        hand_count = count_hand(cards, None)
    else:
        hand_count = count_hand(cards[:-1], cards[-1], crib=args.crib)
    print(json.dumps(count_json(hand_count)) if args.json else format_count(hand_count))
    return 0


def count_json(count: HandCount) -> dict[str, object]:
    """A counted hand for programs (`count --json`): the cards as typed (`5H`, `10S`), each
    combination with its kind (English, as in the protocol), points and cards."""
    return {
        "hand": [str(card) for card in count.hand],
        "starter": None if count.starter is None else str(count.starter),
        "crib": count.crib,
        "total": count.total,
        "combos": [
            {
                "kind": combo.kind.value,
                "points": combo.points,
                "cards": [str(c) for c in combo.cards],
            }
            for combo in count.combos
        ],
    }


def _check_card_count(given: int, args: argparse.Namespace) -> None:
    """A hand is four cards (three in the five-card game), a crib four, then the starter: a
    card missing is an error, never a smaller hand counted."""
    from cribboard.rules.errors import CardError

    size = 3 if args.five_card and not args.crib else 4
    wanted = size if args.no_starter else size + 1
    if given == wanted:
        return
    values = {"size": size, "wanted": wanted, "given": given}
    if args.no_starter:
        if args.crib:
            raise CardError(_("a crib has %(size)d cards, not %(given)d", **values))
        raise CardError(_("a hand has %(size)d cards, not %(given)d", **values))
    if args.crib:
        message = _(
            "a crib has %(size)d cards, then the starter: %(wanted)d cards, not %(given)d",
            **values,
        )
    else:
        message = _(
            "a hand has %(size)d cards, then the starter: %(wanted)d cards, not %(given)d",
            **values,
        )
    if given == wanted - 1 and not args.crib and not args.five_card:
        message += " " + _(
            "(the starter forgotten? a three-card hand of the five-card game: --five-card)"
        )
    raise CardError(message)


def format_count(count: HandCount) -> str:
    """The breakdown: a heading, one line per combination (what, points, cards), the total, in
    the language in use."""
    from cribboard.rules.cards import format_cards
    from cribboard.words import combo_label

    cards = format_cards(count.hand)
    if count.starter is None:
        heading = _("hand %(cards)s (no starter)", cards=cards)
    elif count.crib:
        heading = _("crib %(cards)s, starter %(starter)s", cards=cards, starter=count.starter)
    else:
        heading = _("hand %(cards)s, starter %(starter)s", cards=cards, starter=count.starter)
    # Translators: the last line of a count's breakdown: the hand's points.
    total = _("total")
    labels = [combo_label(combo) for combo in count.combos]
    width = max(12, *(len(label) + 1 for label in [*labels, total]))
    lines = [heading]
    for label, combo in zip(labels, count.combos):
        lines.append(f"  {label:<{width}}{combo.points:>3}  {format_cards(combo.cards)}")
    lines.append(f"  {total:<{width}}{count.total:>3}")
    return "\n".join(lines)


# --- the table -------------------------------------------------------------------------------

_VIRTUAL = arg(
    "--virtual",
    action="store_true",
    help=N_("use the virtual board even if a board is plugged in"),
)


def _target() -> Arg:
    from cribboard.rules.variants import STANDARD

    return arg(
        "--target",
        type=int,
        choices=TARGETS,
        help=L_(
            "points to play to (default: keep: the board's game; play: %(target)d)",
            target=STANDARD.target,
        ),
    )


def _keep_args() -> Args:
    from cribboard.play.scorekeeper import TABLE_GAMES
    from cribboard.playernames import MAX_NAME
    from cribboard.rules.variants import FIVE_CARD

    return (
        _VIRTUAL,
        _target(),
        arg(
            "--players",
            type=int,
            choices=tuple(TABLE_GAMES),
            default=2,
            help=N_("2, 3, or 4 in two partnerships (partners opposite; default 2)"),
        ),
        arg(
            "--five-card",
            action="store_true",
            help=L_(
                "the five-card game: two players, three-card hands, the pone's %(bonus)d at "
                "the start, to %(target)d",
                bonus=FIVE_CARD.pone_bonus,
                target=FIVE_CARD.target,
            ),
        ),
        arg(
            "--new",
            action="store_true",
            help=N_("start a new game even if the board shows one in progress"),
        ),
        arg(
            "--names",
            metavar="NAMES",
            help=L_(
                "the players' names for the record of games, in seat order (blue first), "
                "separated by commas: Ann,Bob (each up to %(most)d characters; without it, "
                "keep asks)",
                most=MAX_NAME,
            ),
        ),
        OneOf((BEST_OF, FIRST_TO)),
        SKUNKS,
    )


def _count_args() -> Args:
    from cribboard.rules.allhands import COMBINATIONS

    return (
        arg(
            "cards",
            nargs="*",
            metavar="CARD",
            help=N_("4 hand cards (a crib: 4; --five-card: 3), then the starter"),
        ),
        arg(
            "--crib",
            action="store_true",
            help=N_("count as the crib (flush only with all five)"),
        ),
        arg("--no-starter", action="store_true", help=N_("the cards alone, no starter")),
        arg(
            "--json",
            action="store_true",
            help=N_("print the count as JSON (with --all-hands: the hands per score)"),
        ),
        arg(
            "--five-card",
            action="store_true",
            help=N_("a three-card hand of the five-card game (its crib has four)"),
        ),
        arg(
            "--all-hands",
            action="store_true",
            help=L_(
                "how many of the %(combinations)s hand + starter combinations make each "
                "score, and the time taken",
                combinations=f"{COMBINATIONS:,}",
            ),
        ),
    )


APP_COMMANDS: tuple[Command, ...] = (
    Command(
        "demo",
        N_("peg a game on the virtual board, drawn in the terminal"),
        _demo,
        (
            arg("--delay", type=float, default=0.6, help=N_("seconds between moves")),
            arg("--seed", type=int, help=N_("random seed for the moves")),
        ),
    ),
    Command(
        "keep",
        N_(
            "keep the score of a game played with real cards: the table app (the board found "
            "on USB, else the virtual board, whose game is kept for the next time)"
        ),
        _keep,
        _keep_args,
        usb_only=True,
    ),
    Command(
        "play",
        N_("play a game against the computer, scored on the board"),
        _play,
        lambda: (
            _VIRTUAL,
            _target(),
            arg("--seed", type=int, help=N_("random seed for the deals")),
            arg(
                "--new",
                action="store_true",
                help=N_("start a new game even if the board shows one in progress"),
            ),
            arg(
                "--names",
                metavar="NAMES",
                help=N_(
                    "your name for the record of games (Ann), or yours and the computer's "
                    "(Ann,Hal; by default the computer is computer)"
                ),
            ),
        ),
        usb_only=True,
    ),
    Command(
        "count",
        N_("count a hand or crib with its starter (or --all-hands)"),
        _count,
        _count_args,
        boardless=True,
        description=N_(
            "Count a hand or crib: the cards, the starter last (5H JD 10S or TS AC; suits C D H S)."
        ),
    ),
    Command(
        "serve",
        N_("the bridge: HTTP + WebSocket API and the web page (docs/bridge.md)"),
        _serve,
        (
            arg(
                "--http-host",
                old_names=("--host",),
                default=DEFAULT_HOST,
                help=L_(
                    "address to listen on (default %(host)s; any other needs a token)",
                    host=DEFAULT_HOST,
                ),
            ),
            arg(
                "--http-port",
                type=int,
                default=DEFAULT_HTTP_PORT,
                help=L_("TCP port (default %(port)d)", port=DEFAULT_HTTP_PORT),
            ),
            arg(
                "--token",
                help=L_(
                    "the token every request must carry (default $%(env)s); required when "
                    "--http-host is not localhost",
                    env=TOKEN_ENV,
                ),
            ),
            arg(
                "--virtual",
                action="count",
                default=0,
                help=N_("start a virtual board (repeat for more)"),
            ),
            arg(
                "--no-announce",
                action="store_true",
                help=N_(
                    "off localhost: do not announce the bridge on the local network "
                    "(mDNS, cribboard.local)"
                ),
            ),
            arg(
                "--no-qr",
                action="store_true",
                help=N_("off localhost: do not print the page's address as a QR code"),
            ),
            arg(
                "--port",
                dest="serve_ports",
                action="append",
                metavar="PORT",
                help=N_("a board's serial port or pyserial URL (repeat for several boards)"),
            ),
            *TABLE_ARGS,
        ),
        description=N_(
            "Hold the connection to boards and offer them over HTTP (JSON API, OpenAPI at "
            "/openapi.json), a WebSocket of board events, and a web page. Boards: --port "
            "(repeat it for several), --ble, --virtual, else every board found on USB. With "
            "--broker, the board also sits at a club hall's table (docs/mqtt.md)."
        ),
        usb_only=True,
    ),
)
