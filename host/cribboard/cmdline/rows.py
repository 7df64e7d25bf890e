"""The command rows' parts: a command is one small entry (its name, help, arguments and
runner), a group of commands an entry holding its own (`hall start`), and the parser is built
from the rows.

The command line starts at once: a row is cheap to import (what it runs, and any heavy module
its arguments' help needs, is imported by its runner or by a function that makes its
arguments), and the parser adds a command's arguments only when the line names it (or asks for
its help): `cribboard peg` builds `peg`'s, never `keep`'s."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from cribboard.cmdline.parser import OneLineParser
from cribboard.errors import CribboardError
from cribboard.i18n import Later, _

PROG = "cribboard"

Runner = Callable[[argparse.Namespace], int]


class UsageError(CribboardError):
    """A bad command-line argument that argparse cannot see (exit status 2, as argparse's)."""


class Arg:
    """One argument, as argparse's add_argument takes it: its `names` and `options`; `board`:
    a global option that says how to reach the board (`--port`), not for a boardless command;
    `old_names`: its old spellings (`--mqtt` for `--broker`), accepted as before for one
    release, never shown in the help."""

    __slots__ = ("names", "options", "board", "old_names")

    def __init__(
        self,
        names: tuple[str, ...],
        options: dict[str, Any],
        board: bool = False,
        old_names: tuple[str, ...] = (),
    ) -> None:
        self.names = names
        self.options = options
        self.board = board
        self.old_names = old_names


def arg(*names: str, board: bool = False, old_names: tuple[str, ...] = (), **options: Any) -> Arg:
    """An argument: `arg("--json", action="store_true", help="...")`; `old_names`: its old
    spellings, accepted but hidden."""
    return Arg(names, options, board, old_names)


class OneOf:
    """Arguments of which at most one may be given (exactly one when `required`)."""

    __slots__ = ("args", "required")

    def __init__(self, args: tuple[Arg, ...], required: bool = False) -> None:
        self.args = args
        self.required = required


Args = tuple[Arg | OneOf, ...]
"""A command's arguments."""


CHOSEN = "chosen"
"""The parsed arguments' attribute that holds the commands named, outermost first."""


class Command:
    """One sub-command: `run(args)` returns the exit status and raises CribboardError (or
    UsageError) for one line on stderr. A group (`hall`) holds its sub-commands in `commands`:
    one of them is named after it, unless the group has a `run` of its own, which runs when
    none is (`hall held`, `hall held accept`).

    - `args`: its arguments, or a function that makes them (called only when its parser is
      built: a row whose help needs a heavy module's figures imports it there);
    - `usb_only`: it needs a serial link, refused with --ble (a group: each of its commands);
    - `boardless`: it reaches no board (a group: each of its commands): the global board
      options are not in its help, and given they are refused;
    - `commands`: its sub-commands, rows of the same kind;
    - `extra`: more of add_parser's options;
    - `old_names`: its old names (`deal` for `dealer`): each runs it as before for one
      release, and no help, list or guide shows it.

    (The rows' classes are plain classes, not dataclasses: every command line reads them, and
    `dataclasses` alone costs a one-shot command 10 ms to import.)"""

    __slots__ = (
        "name",
        "help",
        "run",
        "args",
        "description",
        "usb_only",
        "boardless",
        "commands",
        "extra",
        "old_names",
    )

    def __init__(
        self,
        name: str,
        help: str | Later,
        run: Runner | None = None,
        args: Args | Callable[[], Args] = (),
        description: str | Later | None = None,
        usb_only: bool = False,
        boardless: bool = False,
        commands: tuple[Command, ...] = (),
        extra: dict[str, Any] | None = None,
        old_names: tuple[str, ...] = (),
    ) -> None:
        if run is None and not commands:
            raise ValueError(f"{name}: a command runs, or holds commands that do")
        self.name = name
        self.help = help
        self.run = run
        self.args = args
        self.description = description
        self.usb_only = usb_only
        self.boardless = boardless
        self.commands = commands
        self.extra: dict[str, Any] = {} if extra is None else extra
        self.old_names = old_names

    def arguments(self) -> Args:
        """Its arguments (made now when the row gives a function)."""
        return self.args() if callable(self.args) else self.args


def chosen(args: argparse.Namespace) -> tuple[Command, ...]:
    """The commands the parsed line names, outermost first (`hall`, `start`)."""
    commands: tuple[Command, ...] = getattr(args, CHOSEN)
    return commands


def command_line(commands: Sequence[Command]) -> str:
    """How a person types the commands: `cribboard hall start`."""
    return " ".join((PROG, *(command.name for command in commands)))


class _SubParser(OneLineParser):
    """A command's parser. Sub-commands report errors under the program's name, as the main
    parser does. Its arguments are added when it first parses or shows its help (`fill`):
    a line names one command, and only that one's arguments are made."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fill: Callable[[], None] | None = None

    def _filled(self) -> None:
        fill, self.fill = self.fill, None
        if fill is not None:
            fill()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._filled()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._filled()
        return super().format_usage()

    def format_help(self) -> str:
        self._filled()
        return super().format_help()

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
    if isinstance(options.get("help"), str | Later) and options["help"] != argparse.SUPPRESS:
        options["help"] = said(options["help"])
    if isinstance(options.get("version"), Later):
        options["version"] = str(options["version"])
    return options


def build_parser(
    commands: Sequence[Command], global_args: Sequence[Arg], description: str
) -> argparse.ArgumentParser:
    """The command line's parser: the global options, then one sub-parser per command (and
    within a group, one per sub-command). The global options are accepted after the command
    too (`cribboard peg blue 12 --port X`), except where the command has an option of the same
    name (`serve --port`). Help texts are translated as the parser is built (the language is
    chosen before)."""
    parser = OneLineParser(prog=PROG, description=said(description))
    for option in global_args:
        parser.add_argument(*option.names, **_options(option))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_SubParser)
    sub.required = True
    for command in commands:
        _add_command(sub, command, (), global_args)
    return parser


def _add_command(
    sub: argparse._SubParsersAction[_SubParser],
    command: Command,
    outer: tuple[Command, ...],
    global_args: Sequence[Arg],
) -> None:
    """A command's sub-parser (its name and help in its group's list now), its arguments and
    its own sub-commands' beneath it once it is named; one more, out of the list, for each of
    its old names."""
    options = dict(command.extra)
    if command.description is not None:
        options["description"] = said(command.description)
    path = (*outer, command)
    # add_parser lists a name only when given a help: an old name, added without, is hidden.
    parsers = [sub.add_parser(command.name, help=said(command.help), **options)]
    parsers += [sub.add_parser(old, **options) for old in command.old_names]
    for sub_parser in parsers:
        sub_parser.fill = _filler(sub_parser, path, global_args)


def _filler(
    sub_parser: _SubParser, path: tuple[Command, ...], global_args: Sequence[Arg]
) -> Callable[[], None]:
    command = path[-1]

    def fill() -> None:
        args = command.arguments()
        _add_args(sub_parser, args)
        if command.run is not None:
            sub_parser.set_defaults(**{CHOSEN: path})
            boardless = any(one.boardless for one in path)
            _add_global_args(
                sub_parser, args, [a for a in global_args if not (boardless and a.board)]
            )
        if command.commands:
            inner = sub_parser.add_subparsers(metavar="COMMAND", parser_class=_SubParser)
            inner.required = command.run is None
            for one in command.commands:
                _add_command(inner, one, path, global_args)

    return fill


def _add_args(parser: argparse.ArgumentParser, args: Args) -> None:
    for item in args:
        if isinstance(item, OneOf):
            group = parser.add_mutually_exclusive_group(required=item.required)
            for one in item.args:
                _add_arg(group, one)
        else:
            _add_arg(parser, item)


def _add_arg(parser: argparse._ActionsContainer, option: Arg) -> None:
    """An argument, and its old spellings beside it: the same value under the same name, out
    of the help, and no default of their own (the new spelling's holds)."""
    options = _options(option)
    action = parser.add_argument(*option.names, **options)
    if option.old_names:
        options.pop("required", None)
        hidden = {"dest": action.dest, "help": argparse.SUPPRESS, "default": argparse.SUPPRESS}
        parser.add_argument(*option.old_names, **{**options, **hidden})


def parser_of(command: Command) -> argparse.ArgumentParser:
    """A parser for one row alone (a module run as a program: `python -m
    cribboard.virtual.cli`), its errors as the command line's."""
    description = None if command.description is None else said(command.description)
    parser = _SubParser(prog=command_line((command,)), description=description)
    _add_args(parser, command.arguments())
    return parser


def _add_global_args(
    sub_parser: argparse.ArgumentParser, args: Args, global_args: Sequence[Arg]
) -> None:
    """The global options, for after a command whose own arguments are `args`: given there,
    they replace the values given before it (or the defaults); not given, they leave those
    alone (SUPPRESS)."""
    own = {
        name
        for item in args
        for one in (item.args if isinstance(item, OneOf) else (item,))
        for name in (*one.names, *one.old_names)
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


def int_in(low: int, high: int, what: str | Later) -> Callable[[str], int]:
    """An argument type: a whole number from `low` to `high`; `what` names it in the error
    (marked with N_ to be said in the language in use)."""

    def parse(text: str) -> int:
        what_said = said(what)
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                _("%(what)s must be a whole number, not %(text)r", what=what_said, text=text)
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                _(
                    "%(what)s must be %(low)d..%(high)d, not %(value)d",
                    what=what_said,
                    low=low,
                    high=high,
                    value=value,
                )
            )
        return value

    return parse


def seconds(what: str | Later) -> Callable[[str], float]:
    """An argument type: a number of seconds above 0 (`2`, `0.5`); `what` names it in the
    error (marked with N_ to be said in the language in use)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(
                _(
                    "%(what)s must be a number of seconds above 0, not %(text)r",
                    what=said(what),
                    text=text,
                )
            )
        return value

    return parse
