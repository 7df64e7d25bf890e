"""One way to add a command (issue 25): every command, `hall`'s and `virtual` among them, is one
of the command rows; a group's sub-commands are rows nested in its row, parsed by the one parser,
with the one UsageError, their help in the language in use."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from cribboard.cli import COMMANDS, main, parse
from cribboard.cmdline.rows import Command


def rows(commands: tuple[Command, ...], outer: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for command in commands:
        yield (*outer, command.name)
        yield from rows(command.commands, (*outer, command.name))


def test_every_command_is_a_row_of_the_one_table() -> None:
    names = set(rows(COMMANDS))
    assert {
        ("virtual",),
        ("hall", "start"),
        ("hall", "players", "add"),
        ("hall", "held", "accept"),
    } <= (names)
    for command in COMMANDS:
        assert command.run is not None or command.commands, command.name


def feature_cli_modules() -> list[str]:
    """Every feature's `cli` module (`cribboard.<feature>.cli`), found as the package holds them."""
    import cribboard

    return [
        f"cribboard.{found.name}.cli"
        for found in pkgutil.iter_modules(cribboard.__path__)
        if found.ispkg and importlib.util.find_spec(f"cribboard.{found.name}.cli") is not None
    ]


def test_every_feature_exports_its_row_as_one_constant_named_after_its_command() -> None:
    """One convention for where a row lives (issue 40): a feature's `cli` module exports one
    `Command`, named after the command in capitals, and that very row is in the table."""
    modules = feature_cli_modules()
    assert {"cribboard.hall.cli", "cribboard.virtual.cli"} <= set(modules)
    for name in modules:
        module = importlib.import_module(name)
        exported = {
            key: value
            for key, value in vars(module).items()
            if isinstance(value, Command) and not key.startswith("_")
        }
        assert len(exported) == 1, f"{name} exports {sorted(exported)}: one row"
        ((key, row),) = exported.items()
        assert key == row.name.upper(), f"{name}.{key} holds the row {row.name}"
        assert any(command is row for command in COMMANDS), f"{name}.{key} is not in COMMANDS"


def test_every_help_string_is_said_in_the_language_in_use(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as shown:
        main(["--lang", "sv", "hall", "start", "--help"])
    assert shown.value.code == 0
    out = capsys.readouterr().out
    assert "hallens katalog (standard $CRIBBOARD_HALL_DIR, annars ./hall)" in " ".join(out.split())
    with pytest.raises(SystemExit):
        main(["hall", "--help", "--lang", "nl"])
    listed = " ".join(capsys.readouterr().out.split())
    assert "Een clubavond vanaf de opdrachtregel." in listed
    assert "start draai de zaal: de broker" in listed
    with pytest.raises(SystemExit):
        main(["virtual", "--help", "--lang", "nb"])
    assert "vis lysdiodene i terminalen" in capsys.readouterr().out


@pytest.mark.parametrize(
    "words, message, command",
    [
        (["hall"], "the following arguments are required: COMMAND", "cribboard hall"),
        (["hall", "round", "resend", "0"], "table must be 1..999, not 0", "cribboard hall round resend"),
        (["hall", "players", "add"], "required: NAME", "cribboard hall players add"),
        (["hall", "correct", "1", "2", "--why", "w"], "one of the arguments", "cribboard hall correct"),
        (["hall", "standings", "--jsn"], "unrecognized arguments: --jsn", "cribboard hall standings"),
        (["virtual", "--image", "x"], "--image needs --rp2", None),
        (["virtual", "--rp2", "--heap", "1M"], "--heap is for the unix-port board, not --rp2", None),
        # A command that reaches no board takes no board option, before or after it.
        (["--port", "/dev/ttyACM0", "hall", "standings"], "cribboard hall standings reaches no board: leave out --port", None),
        (["--ble", "--timeout=5", "count", "5H", "5C", "5S", "JD", "5D"], "cribboard count reaches no board: leave out --ble --timeout", None),
        (["virtual", "--timeout", "5"], "unrecognized arguments: --timeout 5", "cribboard virtual"),
        (["--po", "/dev/ttyACM0", "hall", "standings"], "leave out --port", None),  # abbreviated
    ],
)  # fmt: skip
def test_a_bad_argument_in_a_group_is_one_line_and_exit_2(
    words: list[str], message: str, command: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main(words)
    except SystemExit as stopped:  # argparse's own errors
        status = int(stopped.code or 0)
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("cribboard: ") and message in line
    if command is not None:
        assert line.endswith(f"(see {command} --help)")


def test_a_group_with_a_runner_runs_when_no_sub_command_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`hall held` lists, `hall held accept` decides: both rows, one parser."""
    assert main(["hall", "held", "--dir", str(tmp_path / "none")]) == 1
    assert "holds no hall yet" in capsys.readouterr().err
    assert main(["hall", "players", "add", "Ann", "Bob", "--dir", str(tmp_path / "h")]) == 0
    assert capsys.readouterr().out == "registered Ann, Bob (2 players)\n"
    assert main(["hall", "held", "--dir", str(tmp_path / "h")]) == 0
    assert capsys.readouterr().out == "no result is held\n"


def test_a_boardless_command_lists_no_board_option(capsys: pytest.CaptureFixture[str]) -> None:
    """`hall start --help` lists the hall's options and the common ones, not how to reach a
    board; a board command still lists them."""
    for words, board in ((["hall", "start"], False), (["count"], False), (["status"], True)):
        with pytest.raises(SystemExit):
            main([*words, "--help"])
        listed = capsys.readouterr().out
        assert "--verbose" in listed and "--lang" in listed
        assert all((option in listed) == board for option in ("--port", "--ble", "--timeout"))


OLD_SPELLINGS = [
    # (the old words, the new words, what the new words set, the help that must not show it)
    (["deal", "orange"], ["dealer", "orange"], {"player": 1}, []),
    (["sim", "--show"], ["virtual", "--show"], {"show": True}, []),
    (["link", "--broker", "mqtt://x", "--game", "g"], ["remote", "--broker", "mqtt://x", "--game", "g"], {"game": "g"}, []),
    (["hall", "serve", "--http-port", "9"], ["hall", "page", "--http-port", "9"], {"http_port": 9}, ["hall"]),
    (["serve", "--mqtt", "mqtt://x"], ["serve", "--broker", "mqtt://x"], {"broker": "mqtt://x"}, ["serve"]),
    (["serve", "--host", "0.0.0.0"], ["serve", "--http-host", "0.0.0.0"], {"http_host": "0.0.0.0"}, ["serve"]),
    (["hall", "start", "--username", "u"], ["hall", "start", "--user", "u"], {"user": "u"}, ["hall", "start"]),
    (["hall", "serve", "--username", "u"], ["hall", "page", "--user", "u"], {"user": "u"}, ["hall", "page"]),
    (["hall", "start", "--listen", "127.0.0.1"], ["hall", "start", "--mqtt-host", "127.0.0.1"], {"mqtt_host": "127.0.0.1"}, ["hall", "start"]),
]  # fmt: skip
"""The command line's old spellings (docs/architecture.md, "Old spellings"): each kept for one
release as a hidden alias of the new one."""


@pytest.mark.parametrize(
    "old, new, sets, helped", OLD_SPELLINGS, ids=[" ".join(old) for old, *_ in OLD_SPELLINGS]
)
def test_an_old_spelling_works_as_the_new_one_and_no_help_shows_it(
    old: list[str],
    new: list[str],
    sets: dict[str, object],
    helped: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A script that uses the old spelling gets what the new one gives (the same command, the
    same values, the new spelling's defaults); `--help` lists only the new one."""
    (old_args, old_rest), (new_args, new_rest) = parse(old), parse(new)
    assert old_rest == new_rest == []
    assert {name: getattr(new_args, name) for name in sets} == sets
    # The top's sub-command name is the word typed; nothing reads it (the chosen row runs).
    assert vars(old_args) | {"command": None} == vars(new_args) | {"command": None}
    with pytest.raises(SystemExit) as shown:
        main([*helped, "--help"])
    assert shown.value.code == 0
    listed = capsys.readouterr().out
    # The help looked at shows the last word that differs (`hall page`'s: `--user`).
    spelling, new_spelling = [(o, n) for o, n in zip(old, new, strict=True) if o != n][-1]
    if spelling.startswith("--"):
        assert new_spelling in listed
        assert not re.search(rf"{spelling}(?![\w-])", listed)
    else:  # a command: a row of its group's list
        assert re.search(rf"^ +{new_spelling} ", listed, re.MULTILINE)
        assert not re.search(rf"^ +{spelling}\b", listed, re.MULTILINE)


@pytest.mark.parametrize(
    "words, offered, old",
    [
        (["dael"], "'dealer'", ("'deal'", "'sim'", "'link'")),
        (["hall", "srve"], "'page'", ("'serve'",)),
    ],
)
def test_a_mistyped_command_is_offered_the_new_names_only(
    words: list[str], offered: str, old: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(words)
    (line,) = capsys.readouterr().err.splitlines()
    assert stopped.value.code == 2 and "invalid choice" in line and offered in line
    assert not [name for name in old if name in line]
