"""The command table's parts: a command is one small entry (its name, help, arguments and
runner), and the parser is built from the table."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from cribboard.cmdline.parser import OneLineParser
from cribboard.errors import CribboardError
from cribboard.i18n import Later, _

PROG = "cribboard"

Runner = Callable[[argparse.Namespace], int]


class UsageError(CribboardError):
    """A bad command-line argument that argparse cannot see (exit status 2, as argparse's)."""


@dataclass(frozen=True)
class Arg:
    """One argument, as argparse's add_argument takes it."""

    names: tuple[str, ...]
    options: dict[str, Any]


def arg(*names: str, **options: Any) -> Arg:
    """An argument: `arg("--json", action="store_true", help="...")`."""
    return Arg(names, options)


@dataclass(frozen=True)
class OneOf:
    """Arguments of which at most one may be given."""

    args: tuple[Arg, ...]


@dataclass(frozen=True)
class Command:
    """One sub-command: `run(args)` returns the exit status and raises CribboardError (or
    UsageError) for one line on stderr."""

    name: str
    help: str | Later
    run: Runner
    args: tuple[Arg | OneOf, ...] = ()
    description: str | Later | None = None
    usb_only: bool = False
    """It needs a serial link: refused with --ble."""
    takes_rest: bool = False
    """It parses the rest of the line itself (`sim`): `args.rest` holds the words."""
    extra: dict[str, Any] = field(default_factory=dict)
    """More of add_parser's options."""


class _SubParser(OneLineParser):
    # Sub-commands report errors under the program's name, as the main parser does.
    def error(self, message: str) -> NoReturn:
        self.exit(
            2,
            _(
                "%(prog)s: %(message)s (see %(command)s --help)",
                prog=PROG,
                message=message,
                command=self.prog,
            )
            + "\n",
        )


def said(text: str | Later) -> str:
    """A help text in the language in use: marked with N_ (translated here) or L_."""
    return str(text) if isinstance(text, Later) else _(text)


def _options(option: Arg) -> dict[str, Any]:
    """add_argument's options, the help in the language in use."""
    options = dict(option.options)
    if isinstance(options.get("help"), str | Later):
        options["help"] = said(options["help"])
    if isinstance(options.get("version"), Later):
        options["version"] = str(options["version"])
    return options


def build_parser(
    commands: Sequence[Command], global_args: Sequence[Arg], description: str
) -> argparse.ArgumentParser:
    """The command line's parser: the global options, then one sub-parser per command. The
    global options are accepted after the command too (`cribboard peg blue 12 --port X`),
    except where the command has an option of the same name (`serve --port`). Help texts are
    translated as the parser is built (the language is chosen before)."""
    parser = OneLineParser(prog=PROG, description=said(description))
    for option in global_args:
        parser.add_argument(*option.names, **_options(option))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_SubParser)
    sub.required = True
    for command in commands:
        options = dict(command.extra)
        if command.description is not None:
            options["description"] = said(command.description)
        if command.takes_rest:
            options["add_help"] = False  # its own parser answers --help
        sub_parser = sub.add_parser(command.name, help=said(command.help), **options)
        for item in command.args:
            if isinstance(item, OneOf):
                group = sub_parser.add_mutually_exclusive_group()
                for one in item.args:
                    group.add_argument(*one.names, **_options(one))
            else:
                sub_parser.add_argument(*item.names, **_options(item))
        if not command.takes_rest:
            _add_global_args(sub_parser, command, global_args)
    return parser


def _add_global_args(
    sub_parser: argparse.ArgumentParser, command: Command, global_args: Sequence[Arg]
) -> None:
    """The global options, for after the command: given there, they replace the values given
    before it (or the defaults); not given, they leave those alone (SUPPRESS)."""
    own = {
        name
        for item in command.args
        for one in (item.args if isinstance(item, OneOf) else (item,))
        for name in one.names
    }
    for option in global_args:
        if option.options.get("action") == "version" or own & set(option.names):
            continue
        sub_parser.add_argument(*option.names, **{**_options(option), "default": argparse.SUPPRESS})


def use_color(args: argparse.Namespace) -> bool:
    """Colour on a terminal, unless NO_COLOR is set or --no-color given."""
    return (
        sys.stdout.isatty()
        and not os.environ.get("NO_COLOR")
        and not getattr(args, "no_color", False)
    )


def int_in(low: int, high: int, what: str) -> Callable[[str], int]:
    """An argument type: a whole number from `low` to `high`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                _("%(what)s must be a whole number, not %(text)r", what=what, text=text)
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                _(
                    "%(what)s must be %(low)d..%(high)d, not %(value)d",
                    what=what,
                    low=low,
                    high=high,
                    value=value,
                )
            )
        return value

    return parse
