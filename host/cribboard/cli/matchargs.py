"""The command line's words for match play (protocol 1.4), the same for `cribboard match` and
`cribboard keep`: --best-of N or --first-to N, and whether a skunk wins two of its games."""

from __future__ import annotations

import argparse

from cribboard.cmdline.rows import OneOf, arg, int_in
from cribboard.i18n import N_, _
from cribcore.limits import MATCH_MOST


def best_of(text: str) -> int:
    """An argument type: an odd number of games from 3 to MATCH_MOST."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not (3 <= value <= MATCH_MOST and value % 2):
        raise argparse.ArgumentTypeError(
            _(
                "best of takes an odd number of games, 3 to %(most)d, not %(text)r",
                most=MATCH_MOST,
                text=text,
            )
        )
    return value


BEST_OF = arg(
    "--best-of",
    type=best_of,
    metavar="N",
    help=N_("a match of the best of N games (3, 5, 7, ...): the first to win more than half"),
)
FIRST_TO = arg(
    "--first-to",
    type=int_in(2, MATCH_MOST, N_("first to")),
    metavar="N",
    help=N_("a match won by the first to win N games"),
)
SKUNKS = OneOf(
    (
        arg(
            "--skunks-double",
            action="store_true",
            help=N_("a skunk (or double skunk) wins two games of the match"),
        ),
        arg("--skunks-single", action="store_true", help=N_("a skunk wins one game, as any win")),
    )
)


def match_asked(args: argparse.Namespace) -> tuple[str, int] | None:
    """The match the command line asks for: (kind, length), or None."""
    if args.best_of is not None:
        return ("best_of", args.best_of)
    if args.first_to is not None:
        return ("first_to", args.first_to)
    return None


def skunks_asked(args: argparse.Namespace) -> bool | None:
    """Whether a skunk wins two games, as asked; None: not said."""
    if args.skunks_double:
        return True
    if args.skunks_single:
        return False
    return None
