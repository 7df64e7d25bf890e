"""The `cribboard` command line. The commands are rows (cli/board_commands.py: the commands
that act on one board; cli/app_commands.py: the apps; cli/history.py; the groups `hall` and
`remote` and the command `virtual` from their features' `cli` modules, each one constant named
after its command: `HALL`, `REMOTE`, `VIRTUAL`); each row holds its arguments, help and runner, a
group its sub-commands. Errors are caught once, here: one line on stderr, `cribboard: message`, exit status 1
(2 for a usage error, as argparse's own).

The language people are spoken to in is chosen first (`--lang`, before or after the command,
else the environment: see cribboard.i18n), so that the help is built in it too.

It starts at once: the rows import what they run when they run it, and the parser makes only
the named command's arguments (cribboard.cmdline.rows); `--version` and `--help` load no
board, network or app code (tests/host/test_cli_imports.py)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from cribboard.cli.app_commands import APP_COMMANDS
from cribboard.cli.board_commands import BOARD_COMMANDS
from cribboard.cli.history import HISTORY
from cribboard.cmdline.rows import (
    PROG,
    Command,
    UsageError,
    arg,
    build_parser,
    chosen,
    command_line,
    seconds,
)
from cribboard.discovery import PORT_ENV
from cribboard.errors import CribboardError
from cribboard.hall.cli import HALL
from cribboard.i18n import L_, N_, _, choose_language, language, language_list
from cribboard.logsetup import configure as configure_logging
from cribboard.logsetup import verbosity, without_verbosity
from cribboard.remote.cli import REMOTE
from cribboard.version import PROTOCOL_VERSION, VERSION
from cribboard.virtual.cli import VIRTUAL

COMMANDS: tuple[Command, ...] = BOARD_COMMANDS + (VIRTUAL,) + APP_COMMANDS + (HISTORY, HALL, REMOTE)
COMMANDS_BY_NAME = {
    name: command for command in COMMANDS for name in (command.name, *command.old_names)
}

LANG_OPTION = "--lang"
EXIT_PIPE_CLOSED = 141
"""The status when the output's reader has gone (as a shell reports a process that SIGPIPE
ended: 128 + 13)."""

GLOBAL_ARGS = (
    arg(
        "--version",
        action="version",
        version=L_(
            "%(prog)s %(version)s (protocol %(protocol)s)",
            prog=PROG,
            version=VERSION,
            protocol=PROTOCOL_VERSION,
        ),
    ),
    arg(
        "--port",
        board=True,
        help=L_(
            "the board's serial port or pyserial URL (default: $%(env)s, else the only board "
            "found)",
            env=PORT_ENV,
        ),
    ),
    arg(
        "--ble",
        board=True,
        nargs="?",
        const="",
        default=None,
        metavar="NAME_OR_ADDRESS",
        help=N_(
            "reach the board over Bluetooth LE: its name (Cribboard-XXXX) or address, or alone "
            "for the only board advertising"
        ),
    ),
    arg(
        "--timeout",
        type=seconds(N_("the timeout")),
        default=2.0,
        board=True,
        help=N_("seconds to wait for a reply"),
    ),
    arg(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help=N_("say what the program does on stderr (-vv: every protocol line too)"),
    ),
    arg(
        LANG_OPTION,
        metavar="LANG",
        help=L_(
            "the language to speak: %(codes)s (default: from LANGUAGE, LC_ALL, LC_MESSAGES or "
            "LANG, else English)",
            codes=language_list(),
        ),
    ),
)


def parser() -> argparse.ArgumentParser:
    """The whole command line's parser, from the command rows, in the language in use."""
    return build_parser(
        COMMANDS,
        GLOBAL_ARGS,
        N_("Drive an LED cribbage board over USB serial, or the virtual board."),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status. It speaks the language chosen by
    `--lang` or the environment while it runs, and the one before it after."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        chosen = choose_language(_lang_given(words))
    except ValueError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 2
    with language(chosen):
        try:
            return _run(words)
        except BrokenPipeError:
            # The reader went away (`cribboard status --json | head`): what is left to print
            # has nowhere to go, and Python's last flush must not complain about it either.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_PIPE_CLOSED


def _lang_given(words: Sequence[str]) -> str | None:
    """The value of --lang wherever it is on the line (`--lang sv`, `--lang=sv`), the last
    one winning; None when absent. Read before the parser is built, which speaks it."""
    given = None
    for i, word in enumerate(words):
        if word == "--":
            break
        if word == LANG_OPTION and i + 1 < len(words):
            given = words[i + 1]
        elif word.startswith(LANG_OPTION + "="):
            given = word.split("=", 1)[1]
    return given


def parse(words: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """A command line read as `cribboard` reads it (the words after the program's name): the
    arguments, and the words it did not take. A bad argument exits as argparse does (status
    2, one line on stderr)."""
    return parser().parse_known_args(_ble_before_command(without_verbosity(list(words))))


def _run(words: list[str]) -> int:
    # -v counts wherever it stands, counted before the parser sees the line.
    configure_logging(verbosity(words))
    args, rest = parse(words)
    commands = chosen(args)
    command = commands[-1]
    if not any(one.boardless for one in commands):
        from cribboard import portshare

        portshare.owner_label = command_line(commands)  # as another process names us
    if rest:
        # The command's own help lists what it takes (the global options too).
        print(
            _(
                "%(prog)s: %(message)s (see %(command)s --help)",
                prog=PROG,
                message=_("unrecognized arguments: %(words)s", words=" ".join(rest)),
                command=command_line(commands),
            ),
            file=sys.stderr,
        )
        return 2
    try:
        if any(one.boardless for one in commands):
            given = _board_options_given(args)
            if given:
                raise UsageError(
                    _(
                        "%(command)s reaches no board: leave out %(options)s",
                        command=command_line(commands),
                        options=" ".join(given),
                    )
                )
        if args.ble is not None and any(one.usb_only for one in commands):
            raise UsageError(
                _("%(command)s needs a USB link: leave out --ble", command=command.name)
            )
        assert command.run is not None  # the parser chose a command that runs
        return command.run(args)
    except UsageError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 2
    except CribboardError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _board_options_given(args: argparse.Namespace) -> list[str]:
    """The global board options (`--port`, `--ble`, `--timeout`) given, as the parser read
    them (abbreviated too): those whose value is not their default."""
    return [
        option.names[-1]
        for option in GLOBAL_ARGS
        if option.board
        and getattr(args, option.names[-1].lstrip("-")) != option.options.get("default")
    ]


def _ble_before_command(words: list[str]) -> list[str]:
    """`--ble status`: argparse would take the command for --ble's optional value, so a
    command name right after --ble is the command (a board named like one: --ble=NAME)."""
    out = list(words)
    for i, word in enumerate(out[:-1]):
        if word == "--ble" and out[i + 1] in COMMANDS_BY_NAME:
            out[i] = "--ble="
    return out
