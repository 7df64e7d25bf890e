"""The small things a newcomer met (issue 34, section 6, and the bridge's players of section 5),
each as it was met: at the scorekeeper, at the command line, from `serve` and `watch`, and over
HTTP. (The catalogs' words: tests/docs/test_l10n.py, MISREAD; `watch`'s undo: test_watchwords.py.)"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from cribboard.api import Board, LinkEvent
from cribboard.bridge.server import Bridge, BridgeConfigError
from cribboard.cli import main
from cribboard.cli.board_commands import _watch_events  # (what watch says; not its record)
from cribboard.errors import CribboardError
from cribboard.i18n import language
from cribboard.play.scorekeeper import Scorekeeper
from cribboard.rules import count_hand, parse_card, parse_cards
from cribboard.rules.errors import CardError
from cribboard.rules.variants import THREE_PLAYER
from cribboard.virtual import VirtualBoard, VirtualControl
from support import WAIT_S, Spawn, running_bridge

CLI = [sys.executable, "-m", "cribboard.cli"]
DOC = Path(__file__).resolve().parents[2] / "docs" / "bridge.md"


@pytest.fixture
def vboard(module_vboard: VirtualBoard) -> VirtualBoard:
    return module_vboard


async def keeper_on(board: Board, **options: Any) -> Scorekeeper:
    keeper = Scorekeeper(board, output=lambda text: None, **options)
    await keeper.start(new=True)
    return keeper


# --- at the scorekeeper ---------------------------------------------------------------------


async def test_nineteen_with_its_cards_is_nothing_not_a_claim_of_19(board: Board) -> None:
    keeper = await keeper_on(board)
    assert await keeper.handle("d b")  # blue deals: orange's hand counts first
    assert await keeper.handle("19 2D 4C 6S 8H KC")  # nothing, and so it is
    assert "orange's hand: nineteen, nothing, is right" in keeper.messages
    assert not any("not 19" in m for m in keeper.messages), keeper.messages
    points = count_hand(parse_cards("2H 3H 4H 6D"), parse_card("KC")).total
    assert await keeper.handle("19 2H 3H 4H 6D")  # blue's hand, with the same starter
    assert f"blue's hand has {points}, not nothing: pegged {points}" in keeper.messages


async def test_a_wrong_number_of_cards_is_counted_in_words(board: Board) -> None:
    keeper = await keeper_on(board)
    assert await keeper.handle("22 5H")
    assert keeper.messages[-1].endswith("four cards, then the starter, not 1 card")
    assert await keeper.handle("c 5H 5S")
    assert keeper.messages[-1].endswith("not 2 cards")


def test_a_bad_card_is_named_as_cards_are_written() -> None:
    with pytest.raises(CardError, match=r"bad card '1H': unknown rank '1' \(an ace is A\)"):
        parse_cards("1h 2h 3h 4h")


async def test_three_players_hear_every_key_of_the_cut(board: Board) -> None:
    keeper = await keeper_on(board, game=THREE_PLAYER)
    (said,) = keeper.messages
    assert "Cut for the deal: blue deals" in said
    assert "d o if orange does" in said and "d p if purple does" in said


async def test_after_a_won_game_the_loser_deals_and_no_cut_is_asked(board: Board) -> None:
    keeper = await keeper_on(board)
    await board.set_pegs(0, 120)
    assert await keeper.handle("b")  # blue pegs the last point
    assert (await board.state()).winner == 0
    assert await keeper.handle("n")
    said = keeper.messages[-1]
    assert "orange lost the last game and deals first (d b if blue does)" in said
    assert "Cut" not in said and (await board.state()).dealer == 1


# --- at the command line --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "usage", "positional"),
    [
        ("sv", "användning: ", "positionsargument"),
        ("nb", "bruk: ", "posisjonsargumenter"),
        ("nl", "gebruik: ", "positionele argumenten"),
    ],
)
def test_argparse_speaks_the_language_too(
    code: str, usage: str, positional: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["--lang", code, "peg", "--help"])
    shown = capsys.readouterr().out
    assert shown.startswith(usage) and f"\n{positional}:\n" in shown, shown
    assert "usage:" not in shown and "show this help message" not in shown
    with pytest.raises(SystemExit):
        main(["--lang", code, "peg"])
    assert "the following arguments are required" not in capsys.readouterr().err
    with language("en"):  # and English stays argparse's own
        assert argparse.ArgumentParser(prog="x").format_usage() == "usage: x [-h]\n"


@pytest.mark.parametrize("timeout", ["-1", "0", "nan", "soon"])
def test_a_timeout_is_seconds_above_zero(timeout: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["--timeout", timeout, "status"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert f"the timeout must be a number of seconds above 0, not '{timeout}'" in err


# --- serve and watch when the board goes away ------------------------------------------------


def test_serve_says_when_its_board_goes_and_comes_back(spawn: Spawn) -> None:
    with VirtualBoard() as board:
        with VirtualControl(board.control) as sim:
            pid = int(sim.info()["pid"])
        serve = spawn(
            [*CLI, "serve", "--port", board.port, "--http-port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert serve.stdout is not None
            while "cribboard bridge: http" not in serve.stdout.readline():
                pass
            os.kill(pid, signal.SIGSTOP)  # the board stops answering: the heartbeat says so
            try:
                line = serve.stdout.readline()
            finally:
                os.kill(pid, signal.SIGCONT)
            assert line.rstrip() == f"board b1 ({board.port}) is lost: reconnecting"
            assert serve.stdout.readline().rstrip() == f"board b1 ({board.port}) is back"
        finally:
            serve.send_signal(signal.SIGINT)
            serve.communicate(timeout=WAIT_S)


class _Hello:
    def __init__(self, name: str) -> None:
        self.fields = {"ble": name}


class _LeavingBoard:
    """A board as `watch` sees it when its link drops: each event, then who answers (no 30 s
    waits, no pty numbers to be taken by another board)."""

    name = "/dev/pts/nowhere"

    def __init__(self, *steps: tuple[LinkEvent, str]) -> None:
        self.steps = steps
        self.hello = _Hello("Cribboard-71A3")

    def events(self) -> Any:
        board = self

        class Events:
            def __enter__(self) -> Events:
                return self

            def __exit__(self, *exc: object) -> None:
                pass

            async def __aiter__(self) -> AsyncIterator[LinkEvent]:
                for event, answering in board.steps:
                    board.hello = _Hello(answering)
                    yield event
                raise AssertionError("watch went on")

        return Events()


async def test_watch_says_where_the_board_went_and_stops_when_it_is_given_up(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = argparse.Namespace(json=True, raw=False)
    gone = _LeavingBoard((LinkEvent("lost"), "Cribboard-71A3"), (LinkEvent("gone"), ""))
    with pytest.raises(CribboardError, match="/dev/pts/nowhere is gone: stopped watching"):
        await _watch_events(gone, args)  # type: ignore[arg-type]
    out, err = capsys.readouterr()
    assert [json.loads(line)["state"] for line in out.splitlines()] == ["lost", "gone"]
    assert "/dev/pts/nowhere is gone: was it a virtual board that stopped?" in err
    assert "cribboard virtual` starts one" in err
    # The port taken by another board meanwhile (a pty's number is used again): not watched.
    other = _LeavingBoard(
        (LinkEvent("lost"), "Cribboard-71A3"), (LinkEvent("back"), "Cribboard-0F10")
    )
    with pytest.raises(CribboardError, match=r"another board answers on /dev/pts/nowhere now"):
        await _watch_events(other, args)  # type: ignore[arg-type]


# --- the bridge -----------------------------------------------------------------------------


def test_a_bridge_on_the_network_refuses_a_short_token() -> None:
    with pytest.raises(BridgeConfigError, match="a token of 3 characters is soon guessed"):
        Bridge([], host="0.0.0.0", token="abc")
    Bridge([], host="0.0.0.0", token="twelve-chars")
    Bridge([], host="127.0.0.1", token="abc")  # this computer only: any token will do


async def test_a_player_the_game_lacks_is_told_which_players_it_has(vboard: VirtualBoard) -> None:
    async with running_bridge(vboard.port) as bridge, aiohttp.ClientSession() as http:
        async with http.post(bridge.url + "api/new", json={"players": 2}):
            pass
        async with http.post(bridge.url + "api/peg", json={"player": 2, "points": 3}) as reply:
            assert reply.status == 400
            assert await reply.json() == {
                "error": "bad_player",
                "message": "no such player: this game has players 0 (blue) and 1 (orange)",
            }
        async with http.get(bridge.url + "api/state") as reply:
            state = await reply.json()
    # docs/bridge.md's State names every field the bridge answers, health's too.
    doc = DOC.read_text()
    described = doc[doc.index("**State**") : doc.index("**Frame**")]
    for key in [*state, *state["health"]]:
        assert f"`{key}`" in described, f"docs/bridge.md's State does not say `{key}`"
