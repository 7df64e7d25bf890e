"""One way to add a command (issue 25): every command, `hall`'s and `sim` among them, is a row
of the one table; a group's sub-commands are rows nested in its row, parsed by the one parser,
with the one UsageError, their help in the language in use."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cribboard.cli import COMMANDS, main
from cribboard.cmdline.table import Command


def rows(commands: tuple[Command, ...], outer: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for command in commands:
        yield (*outer, command.name)
        yield from rows(command.commands, (*outer, command.name))


def test_every_command_is_a_row_of_the_one_table() -> None:
    names = set(rows(COMMANDS))
    assert {
        ("sim",),
        ("hall", "start"),
        ("hall", "players", "add"),
        ("hall", "held", "accept"),
    } <= (names)
    for command in COMMANDS:
        assert command.run is not None or command.commands, command.name


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
        main(["sim", "--help", "--lang", "nb"])
    assert "vis lysdiodene i terminalen" in capsys.readouterr().out


@pytest.mark.parametrize(
    "words, message, command",
    [
        (["hall"], "the following arguments are required: COMMAND", "cribboard hall"),
        (["hall", "round", "resend", "0"], "table must be 1..999, not 0", "cribboard hall round resend"),
        (["hall", "players", "add"], "required: NAME", "cribboard hall players add"),
        (["hall", "correct", "1", "2", "--why", "w"], "one of the arguments", "cribboard hall correct"),
        (["hall", "standings", "--jsn"], "unrecognized arguments: --jsn", "cribboard hall standings"),
        (["sim", "--image", "x"], "--image needs --rp2", None),
        (["sim", "--rp2", "--heap", "1M"], "--heap is for the unix-port board, not --rp2", None),
        # A command that reaches no board takes no board option, before or after it.
        (["--port", "/dev/ttyACM0", "hall", "standings"], "cribboard hall standings reaches no board: leave out --port", None),
        (["--ble", "--timeout=5", "count", "5H", "5C", "5S", "JD", "5D"], "cribboard count reaches no board: leave out --ble --timeout", None),
        (["sim", "--timeout", "5"], "unrecognized arguments: --timeout 5", "cribboard sim"),
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
