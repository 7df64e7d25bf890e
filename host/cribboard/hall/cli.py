"""`cribboard hall ...`: a club night from the command line. This module is the ``hall`` group's
command rows, read for every command line; what each command runs is imported when it runs.

    cribboard hall start                 the broker (a private mosquitto), the director, the page
    cribboard hall players add NAME...   register players (before round 1)
    cribboard hall round next            pair the next round; the tables get their new games
    cribboard hall round resend [TABLE]  send a table its new game again (it was busy, or away)
    cribboard hall standings             the standings in the terminal
    cribboard hall correct R T ...       replace (or strike) a result, with a reason
    cribboard hall held [accept|reject R T --why W]   the results held for the director
    cribboard hall export --standings F --games F    CSV
    cribboard hall page                  the projector page alone (another computer, a second
                                         screen): it follows the broker as a viewer

What runs them: :mod:`cribboard.hall.supervisor` (``start``), :mod:`cribboard.hall.pageonly`
(``page``), :mod:`cribboard.hall.actions` (the commands a running director answers; without one
they change the store themselves where no table needs to hear of it), :mod:`cribboard.hall.readout`
(``players list``, ``export``: the store read out). Where a hall's files are:
:mod:`cribboard.hall.home`.

The command line's rows hold :data:`HALL`, the group of these commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from cribboard.cmdline.rows import Arg, Command, OneOf, arg, int_in
from cribboard.hall.home import DEFAULT_DIR, DEFAULT_TABLES, DIR_ENV, PASSWORD_ENV, hall_dir
from cribboard.i18n import L_, N_
from cribcore.hall import MAX_TABLES

# The runners: each imports what its command runs, when it runs (docs/architecture.md, "The
# command line starts at once").


def _start(args: argparse.Namespace) -> int:
    from cribboard.hall.supervisor import start

    return start(hall_dir(args.dir), args)


def _page(args: argparse.Namespace) -> int:
    from cribboard.hall.pageonly import run_page

    return run_page(hall_dir(args.dir), args)


def _players_add(args: argparse.Namespace) -> int:
    from cribboard.hall.actions import players_add

    return players_add(hall_dir(args.dir), args.names)


def _players_list(args: argparse.Namespace) -> int:
    from cribboard.hall.readout import players_list

    return players_list(hall_dir(args.dir))


def _round_next(args: argparse.Namespace) -> int:
    from cribboard.hall.actions import round_next

    return round_next(hall_dir(args.dir))


def _round_resend(args: argparse.Namespace) -> int:
    from cribboard.hall.actions import round_resend

    return round_resend(hall_dir(args.dir), args.tables)


def _standings(args: argparse.Namespace) -> int:
    from cribboard.hall.actions import standings

    return standings(hall_dir(args.dir), args.json)


def _correct(args: argparse.Namespace) -> int:
    from cribboard.hall.actions import correct

    return correct(hall_dir(args.dir), args)


def _held(verdict: str | None) -> Callable[[argparse.Namespace], int]:
    """`hall held` (`verdict` None), `hall held accept` or `reject`."""

    def run(args: argparse.Namespace) -> int:
        from cribboard.hall.actions import held

        return held(hall_dir(args.dir), verdict, args)

    return run


def _export(args: argparse.Namespace) -> int:
    from cribboard.hall.readout import export

    return export(hall_dir(args.dir), args.standings, args.games)


_DIR = arg(
    "--dir",
    type=Path,
    default=None,
    help=L_(
        "the hall's directory (default $%(env)s, else ./%(dir)s)", env=DIR_ENV, dir=DEFAULT_DIR
    ),
)
_BROKER_ARGS: tuple[Arg, ...] = (
    arg(
        "--broker",
        metavar="URL",
        help=N_("an existing broker: mqtt://HOST:PORT or mqtts://HOST:PORT"),
    ),
    arg("--user", old_names=("--username",), help=N_("the broker user (with --broker)")),
    arg(
        "--password-env",
        metavar="VAR",
        help=L_(
            "the environment variable that holds the broker user's password (default $%(env)s "
            "when set, else asked for on a terminal)",
            env=PASSWORD_ENV,
        ),
    ),
    arg(
        "--cafile",
        metavar="PEM",
        help=N_(
            "the CA that signed an mqtts:// broker's certificate (with --broker; default: the "
            "system's CAs)"
        ),
    ),
    # A password on the command line is visible to every user of the computer (ps): refused,
    # with the way to give it (cribboard.hall.options.refuse_password_on_the_line).
    arg("--password", help=argparse.SUPPRESS),
)
# Translators: the names of numbers in "%(what)s must be 1..999, not 0".
_PORT = int_in(0, 65535, N_("a port"))
_TABLE = int_in(1, MAX_TABLES, N_("table"))
_ROUND = int_in(1, 99, N_("round"))
_PAGE_ARGS: tuple[Arg, ...] = (
    arg(
        "--http-host",
        default="0.0.0.0",
        help=N_(
            "the page's address (default 0.0.0.0: phones on the club's network see it too; the "
            "page only reads)"
        ),
    ),
    arg("--http-port", type=_PORT, default=None, help=N_("the page's TCP port (default 8322)")),
)
_WHY = arg("--why", required=True, help=N_("the reason, for the audit trail"))

_START = Command(
    "start",
    N_("run the hall: the broker (unless --broker), the director and the page"),
    _start,
    (
        _DIR,
        *_BROKER_ARGS,
        *_PAGE_ARGS,
        arg("--hall", help=N_("the hall's name in the topics (default club)")),
        arg(
            "--tables",
            type=int_in(1, MAX_TABLES, N_("tables")),
            help=L_(
                "boards the private broker makes users for (default %(tables)d, or enough for "
                "the players registered)",
                tables=DEFAULT_TABLES,
            ),
        ),
        arg("--target", type=int, choices=(61, 121), help=N_("games to 121 (default) or 61")),
        arg(
            "--rounds",
            type=int_in(1, 99, N_("rounds")),
            help=N_("rounds the evening plans (default 9)"),
        ),
        arg(
            "--mqtt-host",
            old_names=("--listen",),
            default="0.0.0.0",
            help=N_(
                "the private broker's address (default 0.0.0.0: the tables on the Wi-Fi reach it)"
            ),
        ),
        arg("--mqtt-port", type=_PORT, help=N_("the private broker's port (default: a free one)")),
        arg(
            "--credentials",
            type=Path,
            metavar="FILE",
            help=N_(
                "write how the tables connect (URL, users, passwords) to FILE instead of printing"
            ),
        ),
        arg("--no-page", action="store_true", help=N_("do not serve the page")),
        arg(
            "--renew-ca",
            action="store_true",
            help=N_(
                "give the private broker a new CA (the old one expired or soon will): every "
                "table then needs the new ca.pem"
            ),
        ),
        arg(
            "--plain",
            action="store_true",
            help=N_(
                "the private broker without TLS (made so once, kept): passwords cross the "
                "network in the clear"
            ),
        ),
    ),
)

_PLAYERS = Command(
    "players",
    N_("the players"),
    commands=(
        Command(
            "add",
            N_("register players (before round 1)"),
            _players_add,
            (_DIR, arg("names", nargs="+", metavar="NAME", help=N_("the players' names"))),
        ),
        Command(
            "list",
            N_("the players registered"),
            _players_list,
            (_DIR,),
        ),
    ),
)

_ROUNDS = Command(
    "round",
    N_("the rounds"),
    commands=(
        Command(
            "next",
            N_("pair the next round and send every table its new game (needs `hall start`)"),
            _round_next,
            (_DIR,),
        ),
        Command(
            "resend",
            N_("send a table its new game again (it was busy, or away)"),
            _round_resend,
            (
                _DIR,
                arg(
                    "tables",
                    nargs="*",
                    type=_TABLE,
                    metavar="TABLE",
                    help=N_("the tables (default: every table that has not started its game)"),
                ),
            ),
        ),
    ),
)

_CORRECT = Command(
    "correct",
    N_("replace or strike a table's result; the audit trail keeps it"),
    _correct,
    (
        _DIR,
        arg("round", type=_ROUND, help=N_("the round")),
        arg("table", type=_TABLE, help=N_("the table")),
        OneOf(
            (
                arg("--winner", metavar="NAME", help=N_("the winner's name")),
                arg(
                    "--strike",
                    action="store_true",
                    help=N_("no result (the game is replayed)"),
                ),
            ),
            required=True,
        ),
        arg(
            "--loser-score",
            type=int_in(0, 120, N_("the loser's score")),
            help=N_("with --winner"),
        ),
        arg("--target", type=int, choices=(61, 121), help=N_("default: the hall's")),
        _WHY,
        arg("--who", default="director", help=N_("who corrects (default director)")),
    ),
)


def _verdict(name: str, help_text: str) -> Command:
    """`hall held accept` or `reject`: a held result counted or dropped."""
    return Command(
        name,
        help_text,
        _held(name),
        (
            _DIR,
            arg("round", type=_ROUND, help=N_("the round")),
            arg("table", type=_TABLE, help=N_("the table")),
            _WHY,
            arg("--who", default="director", help=N_("who decides (default director)")),
        ),
    )


_HELD = Command(
    "held",
    N_("the results held for the director (not counted: they were not consistent)"),
    _held(None),
    (_DIR,),
    commands=(
        _verdict("accept", N_("count a held result (the audit trail keeps it)")),
        _verdict("reject", N_("drop a held result (the audit trail keeps it)")),
    ),
)

HALL = Command(
    "hall",
    N_("a club night: the tournament director, its broker and projector page"),
    boardless=True,  # the tables' boards reach the hall through its broker
    description=L_(
        "A club night from the command line. Everything of a hall lives in one directory "
        "(--dir, default $%(env)s, else ./%(dir)s): its store, its settings, its private "
        "broker and, while `start` runs, the director's socket. The commands that change the "
        "tournament ask the running director; without one, those that need no table (players, "
        "corrections) change the store themselves.",
        env=DIR_ENV,
        dir=DEFAULT_DIR,
    ),
    commands=(
        _START,
        _PLAYERS,
        _ROUNDS,
        Command(
            "standings",
            N_("the standings"),
            _standings,
            (_DIR, arg("--json", action="store_true", help=N_("as the standings topic's JSON"))),
        ),
        _CORRECT,
        _HELD,
        Command(
            "export",
            N_("the standings and games as CSV"),
            _export,
            (
                _DIR,
                arg("--standings", type=Path, metavar="FILE", help=N_("'-' for stdout")),
                arg("--games", type=Path, metavar="FILE", help=N_("'-' for stdout")),
            ),
        ),
        Command(
            "page",
            N_("the projector page alone, following the broker as a viewer"),
            _page,
            (_DIR, *_BROKER_ARGS, *_PAGE_ARGS),
            old_names=("serve",),
        ),
    ),
)
"""The ``hall`` group of the command rows."""
