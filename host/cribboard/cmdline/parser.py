"""Argument parsing for the command lines: a bad argument is one line on stderr, exit 2, and
argparse's own words (`usage:`, `positional arguments`, its errors) in the language in use."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

from cribboard.i18n import N_, _

ARGPARSE_WORDS = (
    # Translators: argparse's own words, as Python writes them: keep each placeholder (%s, %r,
    # %(name)s) as it is. The first starts a command's usage line; the space after it stays.
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("show program's version number and exit"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"),
    N_("one of the arguments %s is required"),
    N_("not allowed with argument %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("expected %s argument"),
    N_("expected %s arguments"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("unrecognized arguments: %s"),
    N_("ignored explicit argument %r"),
)
"""What argparse says to people, marked for the catalog: argparse asks gettext for each as it
speaks, and `_argparse_text` answers from cribboard's catalog."""


def _argparse_text(message: str) -> str:
    return _(message) if message in ARGPARSE_WORDS else message


def _argparse_plural(singular: str, plural: str, count: int) -> str:
    # The catalog's languages say one and many as English does: each form is its own entry.
    return _argparse_text(singular if count == 1 else plural)


def _speak_for_argparse() -> None:
    """argparse finds its words through its module's own `_` and `ngettext` (gettext's, in the
    process's default domain, which cribboard does not use): point them at cribboard's catalog.
    English stays argparse's text, as does every message the catalog does not hold."""
    setattr(argparse, "_", _argparse_text)  # noqa: B010 (argparse's private name)
    setattr(argparse, "ngettext", _argparse_plural)  # noqa: B010


_speak_for_argparse()


def screen_width() -> int:
    """The terminal's width in columns: $COLUMNS when it is a positive number, else the
    terminal's on standard output, else 80: `shutil.get_terminal_size`'s rule, without
    importing shutil (it brings the compression modules, a one-shot command's cost for
    nothing)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout, told the terminal's width by :func:`screen_width` (argparse
    asks shutil, the same rule, for every argument it adds)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = screen_width() - 2 if width is None else width  # (2: argparse's margin)
        super().__init__(prog, indent_increment, max_help_position, width)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, not argparse's usage block: scripts read
    stderr, people read the first line. Its help is laid out by :class:`HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # A command not among the choices: the error offers those the help lists, never an
        # old name kept as a hidden alias (it is a choice, but not one to suggest).
        if isinstance(action, argparse._SubParsersAction) and value not in (action.choices or ()):
            listed = ", ".join(repr(choice.dest) for choice in action._get_subactions())
            raise argparse.ArgumentError(
                action,
                _argparse_text("invalid choice: %(value)r (choose from %(choices)s)")
                % {"value": value, "choices": listed},
            )
        super()._check_value(action, value)

    def error(self, message: str) -> NoReturn:
        line = _(
            "%(prog)s: %(message)s (see %(command)s --help)",
            prog=self.prog,
            message=message,
            command=self.prog,
        )
        self.exit(2, line + "\n")
