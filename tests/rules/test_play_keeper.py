"""The scorekeeper (`cribboard keep`, `make run`) driven by typed lines against the virtual
board: counts in the show order, the deal passing on, cards counted and muggins, undo, a new
game, and the command line."""

from __future__ import annotations

import builtins
import re
import signal
import subprocess
import sys

import pytest

from cribboard.api import Board, BoardState
from cribboard.cli import main
from cribboard.play.scorekeeper import Scorekeeper
from cribboard.rules import count_hand, parse_card, parse_cards
from cribboard.rules.variants import FIVE_CARD, FOUR_PLAYER, THREE_PLAYER
from cribboard.virtual import VirtualBoard
from support import Spawn


@pytest.fixture
def vboard(module_vboard: VirtualBoard) -> VirtualBoard:
    """One virtual board for these tests: each starts a game of its own on it."""
    return module_vboard


@pytest.fixture
async def keeper(board: Board) -> Scorekeeper:
    await board.new_game(121, 2)
    await board.set_dealer(0)  # blue deals: orange is the pone
    keeper = Scorekeeper(board, output=lambda text: None)
    await keeper.start()
    return keeper


async def typed(keeper: Scorekeeper, *lines: str) -> BoardState:
    for line in lines:
        assert await keeper.handle(line)
    return await keeper.board.state()


async def test_counts_follow_the_show_order_and_the_deal_passes_on(keeper: Scorekeeper) -> None:
    assert keeper.whose() == "orange's hand"  # the pone counts first
    state = await typed(keeper, "b2", "o", "o 3")  # pegging, any time, by colour
    assert state.front[:2] == [2, 4] and state.back[:2] == [0, 1]
    state = await typed(keeper, "12")  # orange's hand
    assert state.front[:2] == [2, 16] and keeper.whose() == "blue's hand"
    state = await typed(keeper, "8")  # blue's hand
    assert state.front[:2] == [10, 16] and keeper.whose() == "blue's crib"
    assert "show: 12⏎ counts blue's crib" in keeper.status()[1]
    state = await typed(keeper, "4")  # blue's crib; then the deal passes to orange
    assert state.front[:2] == [14, 16] and state.dealer == 1
    assert keeper.turn.deal_no == 2 and keeper.whose() == "blue's hand"
    assert any("passes to orange" in m for m in keeper.messages)
    state = await typed(keeper, "0", "19", "26")  # nothing, nothing, impossible
    assert state.front[:2] == [14, 16] and keeper.whose() == "orange's crib"
    assert keeper.messages == ["no hand counts 26"]
    state = await typed(keeper, "j")  # his heels for the dealer
    assert state.front[:2] == [14, 18]


async def test_cards_are_counted_and_a_short_claim_is_muggins(keeper: Scorekeeper) -> None:
    state = await typed(keeper, "c 5H 5S 5C JD 5D")  # orange's hand: the 29
    assert state.front[1] == 29 and keeper.turn.starter == parse_card("5D")
    assert any("fifteens 16, pairs 12, nobs 1 = 29" in m for m in keeper.messages)
    # blue claims 4 with the cards: the starter is remembered, the hand has more
    hand = parse_cards("2H 3H 4H 6D")
    actual = count_hand(hand, parse_card("5D")).total
    state = await typed(keeper, "4 2H 3H 4H 6D")
    assert state.front[0] == 4 and any(
        m.startswith("MUGGINS!") and f"has {actual}, not 4" in m for m in keeper.messages
    )
    state = await typed(keeper, "m")  # orange takes the points blue missed
    assert state.front[1] == 29 + actual - 4
    assert await keeper.handle("m") and "nothing overlooked" in keeper.messages[0]
    # the crib: a card already in a hand is a typo, nothing is pegged
    state = await typed(keeper, "c 2H 7C 8C 9C")
    assert "2H was already in blue's hand" in keeper.messages[0]
    assert keeper.whose() == "blue's crib" and state.front[0] == 4
    # an over-claim pegs what the crib really has (a crib flush needs the starter's suit)
    crib = count_hand(parse_cards("7C 8C 9C KC"), parse_card("5D"), crib=True).total
    state = await typed(keeper, "20 7C 8C 9C KC")
    assert state.front[0] == 4 + crib and any(f"has {crib}, not 20" in m for m in keeper.messages)
    assert state.dealer == 1 and keeper.turn.starter is None  # a fresh deal


async def test_one_starter_a_deal_and_his_heels_once_for_a_jack(keeper: Scorekeeper) -> None:
    """The issue's sequence in a fresh keep, blue dealing: s JS, j, s 7D, j pegged blue 2, 4,
    4 and 6 (his heels twice, then on a 7). Each refused entry says what to type instead."""
    state = await typed(keeper, "s JS")
    assert state.front[:2] == [2, 0]
    assert keeper.messages == ["starter JS", "his heels: blue pegs 2"]
    state = await typed(keeper, "j")
    assert state.front[:2] == [2, 0]
    assert keeper.messages == [
        "his heels were pegged in this deal already: once a deal (u takes them back)"
    ]
    state = await typed(keeper, "s 7D")
    assert state.front[:2] == [2, 0]
    assert keeper.messages == [
        "this deal's starter is JS already: to change it, u back to it, then s 7D"
    ]
    state = await typed(keeper, "j")
    assert state.front[:2] == [2, 0] and "starter JS" in keeper.status()[0]
    state = await typed(keeper, "u", "s 7D")  # the way to change it: his heels go back too
    assert state.front[:2] == [0, 0] and keeper.messages == ["starter 7D"]
    state = await typed(keeper, "j")
    assert state.front[:2] == [0, 0]
    assert keeper.messages == [
        "the starter is 7D, no jack: no heels (u back to the starter to change it)"
    ]


async def test_a_count_agrees_with_the_deals_starter(keeper: Scorekeeper) -> None:
    """The issue: after s 7C, c 5H 5S 5C JD 5D said "(the starter was 7C; counted with 5D)" and
    pegged 29 (14 with 7C) while the deal line said starter 7C."""
    state = await typed(keeper, "s 7C", "c 5H 5S 5C JD 5D")
    assert state.front[:2] == [0, 0] and keeper.whose() == "orange's hand"
    assert keeper.messages == [
        "the starter is 7C, not 5D: c 5H 5S 5C JD counts orange's hand with it"
    ]
    state = await typed(keeper, "14 5H 5S 5C JD 5D")
    assert keeper.messages == [  # a claim too: what to type keeps it
        "the starter is 7C, not 5D: 14 5H 5S 5C JD counts orange's hand with it"
    ]
    state = await typed(keeper, "c 5H 5S 5C JD")
    assert state.front[:2] == [0, 14] and "starter 7C" in keeper.status()[0]
    # j before any starter: the starter must then be a jack
    state = await typed(keeper, "d", "j", "s 7D")
    assert state.front[:2] == [0, 16]  # orange deals now: his heels, once
    assert keeper.messages == [
        "his heels were pegged, so the starter is a jack, not 7D (u takes the heels back)"
    ]


async def test_undo_takes_back_entries_and_the_place_in_the_deal(keeper: Scorekeeper) -> None:
    await typed(keeper, "o2", "10", "6")
    assert keeper.whose() == "blue's crib"
    state = await typed(keeper, "3")  # the crib; the deal passes on
    assert state.dealer == 1 and state.front[:2] == [9, 12]
    state = await typed(keeper, "u")  # the crib and the deal passing, in one undo
    assert state.dealer == 0 and state.front[:2] == [6, 12] and keeper.whose() == "blue's crib"
    assert keeper.messages == ["undone: blue's crib 3"]
    state = await typed(keeper, "u", "u")
    assert state.front[:2] == [0, 2] and keeper.whose() == "orange's hand"
    state = await typed(keeper, "u")
    assert state.front[:2] == [0, 0]
    # with nothing left of its own, undo goes back into the board's history (the new game)
    state = await typed(keeper, "u")
    assert keeper.messages == ["undone: the board's last change"]


async def test_a_game_to_the_end_and_a_new_one(keeper: Scorekeeper) -> None:
    state = await typed(keeper, "n 61")
    assert state.target == 61 and state.front[:2] == [0, 0] and keeper.turn.deal_no == 1
    state = await typed(keeper, "d o")  # orange won the cut
    assert state.dealer == 1 and keeper.whose() == "blue's hand"
    state = await typed(keeper, "o29", "o29", "b5", "o5")
    assert state.winner == 1 and state.result == "skunk" and state.front[:2] == [5, 61]
    assert keeper.status()[0].startswith("ORANGE WINS with a skunk")
    state = await typed(keeper, "12")
    assert "the game is over" in keeper.messages[0] and state.front[0] == 5
    state = await typed(keeper, "n")  # the loser deals first
    assert state.target == 61 and state.winner is None and state.dealer == 0
    assert state.games[:2] == [0, 1] and keeper.whose() == "orange's hand"
    state = await typed(keeper, "u")  # a new game by mistake: back to the finished one
    assert state.winner == 1 and state.front[:2] == [5, 61]


async def test_changes_made_elsewhere_are_told_and_undone_as_steps_of_their_own(
    keeper: Scorekeeper,
) -> None:
    # Two requests that reach the board together get one state event; the steps are told
    # apart only when each has its own, which `every 1` asks for.
    await keeper.board.ask_every_change()
    await typed(keeper, "b4")
    await keeper.board.peg(1, 7)  # another program pegs, and passes the deal
    await keeper.board.set_dealer(1)
    state = await typed(keeper, "5")
    assert keeper.messages[:2] == [
        "orange pegs 7: 7 (from another program or a phone)",
        "orange deals (from another program or a phone)",
    ]
    assert state.front[:2] == [9, 7] and state.dealer == 1  # blue, now the pone, counted 5
    state = await typed(keeper, "u")  # the 5
    assert state.front[:2] == [4, 7] and keeper.whose() == "blue's hand"
    state = await typed(keeper, "u")  # the deal passing, taken back: blue deals again
    assert state.dealer == 0 and keeper.whose() == "orange's hand"
    assert keeper.messages == ["undone: orange deals (from another program or a phone)"]
    state = await typed(keeper, "u", "u")  # orange's 7, then the b4 under it
    assert state.front[:2] == [0, 0]


async def test_the_deal_passing_undone_elsewhere_leaves_the_crib_counted(
    keeper: Scorekeeper,
) -> None:
    """The crib's count and the deal passing after it are one entry in two steps: another
    program's undo (the page's) takes back the passing alone, and the crib stays counted:
    it is not counted twice."""
    state = await typed(keeper, "2", "3", "4")  # the crib; the deal passes to orange
    assert state.dealer == 1 and state.front[:2] == [7, 2]
    await keeper.board.undo()  # the page's undo
    state = await typed(keeper, "4")
    assert keeper.messages[-1] == "the show of this deal is over: d passes the deal on"
    assert state.dealer == 0 and state.front[:2] == [7, 2]
    assert "taken back there: the deal passes to orange" in keeper.messages
    state = await typed(keeper, "d")
    assert state.dealer == 1 and keeper.whose() == "blue's hand"
    state = await typed(keeper, "u", "u")  # the d, then the crib
    assert state.front[:2] == [3, 2] and keeper.whose() == "blue's crib"
    assert keeper.messages == ["undone: blue's crib 4"]


async def test_the_app_runs_on_typed_lines_and_draws_the_board(vboard: VirtualBoard) -> None:
    lines = iter(["o12", "?", "what", "q"])
    out: list[str] = []
    async with await Board.open(vboard.port) as board:
        await board.new_game(121, 2)
        await board.set_dealer(0)
        await board.set_pegs(0, 30, 20)  # a game in progress on the board: it goes on
        keeper = Scorekeeper(
            board,
            input=lambda prompt: next(lines),
            output=out.append,
            where="the test board",
            target=121,
        )
        assert await keeper.run() == 0
        state = await board.state()
    assert state.front[:2] == [30, 12]
    first = out[0].splitlines()
    assert first[0] == "cribboard scorekeeper on the test board"
    assert any("going on with the game on the board: blue 30" in line for line in first)
    assert len(out) == 4 and "12⏎" in out[0]
    assert "orange   12" in out[1]
    assert "u undo the last entry" in out[2]
    assert "'what'? the players are b/o; ? shows the keys" in out[3]


def test_keep_on_the_command_line_honours_port(
    vboard: VirtualBoard, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    typed_lines = iter(["n", "b7", "q"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(typed_lines))
    assert main(["--port", vboard.port, "keep"]) == 0
    out = capsys.readouterr().out
    assert f"playing on the board on {vboard.port}" in out and "blue      7" in out


def test_make_run_starts_the_scorekeeper_on_the_virtual_board() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cribboard.cli", "keep", "--virtual"],
        input="12\nc 5H 5S 5C JD 5D\nq\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "playing on the virtual board on /dev/" in result.stdout
    assert "orange   12" in result.stdout and "blue     29" in result.stdout
    makefile = (__import__("pathlib").Path(__file__).parents[2] / "Makefile").read_text()
    assert "\t$(BIN)/cribboard keep\n" in makefile


async def test_three_players_count_round_from_the_pone(vboard: VirtualBoard) -> None:
    async with await Board.open(vboard.port) as board:
        keeper = Scorekeeper(board, output=lambda text: None, game=THREE_PLAYER)
        await keeper.start()
        state = await typed(keeper, "d p")  # purple deals: blue, orange, purple, the crib
        assert state.players == 3 and state.dealer == 2
        assert [keeper.whose(step) for step in range(4)] == [
            "blue's hand",
            "orange's hand",
            "purple's hand",
            "purple's crib",
        ]
        state = await typed(keeper, "p3", "4", "6", "8", "2")
        assert state.front[:3] == [4, 6, 13] and state.dealer == 0
        assert keeper.whose() == "orange's hand"


async def test_four_players_in_partnerships_peg_for_their_side(vboard: VirtualBoard) -> None:
    async with await Board.open(vboard.port) as board:
        await board.new_game(121, 3)  # another game on the board: four players start anew
        keeper = Scorekeeper(board, output=lambda text: None, game=FOUR_PLAYER)
        await keeper.start()
        state = await keeper.board.state()
        assert state.players == 2 and "game of four, in partnerships" in keeper.messages[0]
        state = await typed(keeper, "d o1")  # orange 1 won the cut
        assert state.dealer == 1
        assert [keeper.whose(step) for step in range(5)] == [
            "blue 2's hand",
            "orange 2's hand",
            "blue 1's hand",
            "orange 1's hand",
            "orange 1's crib",
        ]
        state = await typed(keeper, "b2", "o3")  # the play: by side
        assert state.front[:2] == [2, 3] and keeper.messages == ["orange pegs 3"]
        state = await typed(keeper, "6", "4", "8", "2 5H 5S 5C JD 5D")
        # blue 2 6, orange 2 4, blue 1 8, orange 1 claims 2 of a 29: muggins for blue
        assert state.front[:2] == [16, 9]
        assert any("MUGGINS!" in m and "m: blue takes them" in m for m in keeper.messages)
        state = await typed(keeper, "m")
        assert state.front[:2] == [16 + 27, 9]
        state = await typed(keeper, "5")  # orange 1's crib; the deal passes to blue 2
        assert state.front[:2] == [43, 14] and state.dealer == 0
        assert keeper.name(keeper.turn.dealer) == "blue 2"
        assert keeper.whose() == "orange 2's hand"
        state = await typed(keeper, "j")  # his heels: blue 2's side
        assert state.front[:2] == [45, 14]
        state = await typed(keeper, "u", "u")  # heels, then the crib and the deal
        assert state.dealer == 1 and keeper.whose() == "orange 1's crib"
        assert await keeper.handle("d x1") and "the players are b/o" in keeper.messages[0]


async def test_five_card_game_pone_bonus_and_three_card_hands(vboard: VirtualBoard) -> None:
    async with await Board.open(vboard.port) as board:
        keeper = Scorekeeper(board, output=lambda text: None, game=FIVE_CARD)
        await keeper.start(new=True)
        state = await keeper.board.state()
        assert state.target == 61 and state.front[:2] == [0, 0]
        assert "five-card game to 61" in keeper.messages[0] and keeper.turn.bonus_due
        state = await typed(keeper, "d o")  # orange deals: the bonus waits for the deal
        assert state.front[:2] == [0, 0] and state.dealer == 1
        assert "blue pegs 3 with the first entry" in keeper.status()[1]
        state = await typed(keeper, "o2")  # the first entry: blue, the pone, gets 3 first
        assert state.front[:2] == [3, 2] and not keeper.turn.bonus_due
        assert keeper.messages[0] == "blue, the pone, pegs 3 for the first deal"
        state = await typed(keeper, "u")  # one undo takes both back; the bonus is due again
        assert state.front[:2] == [0, 0] and keeper.turn.bonus_due
        state = await typed(keeper, "o2", "17")  # no three-card hand counts 17
        assert keeper.messages == ["no hand counts 17"] and state.front[:2] == [3, 2]
        state = await typed(keeper, "c 5H 5S JD 5D")  # blue's hand: 3 cards and the starter
        assert state.front[:2] == [3 + 15, 2]
        assert any("= 15" in m for m in keeper.messages)
        assert (
            await keeper.handle("c 2H 3H 4H 6D 9S")
            and "three cards, then the starter" in keeper.messages[0]
        )
        state = await typed(keeper, "c 2H 3H 4H")  # orange's hand with the starter 5D
        assert state.front[1] == 2 + count_hand(parse_cards("2H 3H 4H"), parse_card("5D")).total
        state = await typed(keeper, "c 2C 7C 8C 9C")  # the crib has four cards
        assert state.dealer == 0 and not keeper.turn.bonus_due  # once per game


def test_keep_rejects_a_five_card_game_for_three(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keep", "--virtual", "--players", "3", "--five-card"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["cribboard: the five-card game is for two players"]


async def test_four_players_at_80_columns_no_line_wraps(
    vboard: VirtualBoard, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a four-player table sees on an 80-column terminal: the game says four players in
    two partnerships, and no line is longer than the terminal (a longer one would break a
    word where the terminal wraps it)."""
    monkeypatch.setenv("COLUMNS", "80")
    lines = iter(["d o1", "b2", "6", "4", "8", "2 5H 5S 5C JD 5D", "?", "q"])
    out: list[str] = []
    async with await Board.open(vboard.port) as board:
        keeper = Scorekeeper(
            board,
            input=lambda prompt: next(lines),
            output=out.append,
            where=f"the virtual board on {vboard.port}: no board found on USB",
            game=FOUR_PLAYER,
        )
        assert await keeper.run(new=True) == 0
    screens = [screen.splitlines() for screen in out]
    assert all(
        any(line.endswith(", four players in two partnerships") for line in s) for s in screens
    )
    assert any(any("MUGGINS!" in line for line in s) for s in screens)
    too_long = [line for s in screens for line in s if len(line) > 80]
    assert too_long == []
    words = " ".join(" ".join(s) for s in screens).split()
    assert "orange 1's crib" in " ".join(words) and "blue 2's hand" in " ".join(words)


def test_ctrl_c_leaves_the_scorekeeper_with_130(vboard: VirtualBoard, spawn: Spawn) -> None:
    keeper = spawn(
        [sys.executable, "-m", "cribboard.cli", "--port", vboard.port, "keep"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert keeper.stdout is not None
        while "? keys" not in keeper.stdout.readline():
            pass
        keeper.send_signal(signal.SIGINT)
        assert keeper.wait(timeout=20) == 130
    finally:
        if keeper.poll() is None:
            keeper.kill()
            keeper.wait()


@pytest.mark.parametrize("lang", ["en", "sv", "nb", "nl"])
async def test_the_keys_fit_with_the_board_on_an_80x24_terminal(
    board: Board, lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`?` once scrolled the board off the screen: the keys, the board and the prompt fit."""
    from cribboard.i18n import language

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")
    for game in (FIVE_CARD, THREE_PLAYER, FOUR_PLAYER):
        with language(lang):
            shown: list[str] = []
            keeper = Scorekeeper(board, output=shown.append, where=board.name, game=game)
            await keeper.start(True)
            assert await keeper.handle("?")
            await keeper.draw()
        lines = shown[-1].splitlines()
        assert any("n 61" in line for line in lines)  # the keys are there
        hand = "5H 5S JD [5D]" if game is FIVE_CARD else "5H 5S 5C JD [5D]"  # three cards, or four
        assert any(f"c {hand} " in line for line in lines), lines
        assert len(lines) + 1 <= 24, (lang, game.players, lines)  # and the prompt's line
        assert max(len(line) for line in lines) <= 80, (lang, lines)


def test_a_peg_while_the_scorekeeper_runs_rides_on_its_connection(
    vboard: VirtualBoard, spawn: Spawn
) -> None:
    """The scorekeeper owns the board's port; a command typed in another terminal meanwhile
    is answered, and the scorekeeper sees the change (cribboard.portshare)."""
    keeper = spawn(
        [sys.executable, "-m", "cribboard.cli", "--port", vboard.port, "keep", "--new"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert keeper.stdout is not None and keeper.stdin is not None
        while "? keys" not in keeper.stdout.readline():
            pass
        for expected in (2, 4, 6):
            pegged = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "cribboard.cli",
                    "--port",
                    vboard.port,
                    "peg",
                    "orange",
                    "2",
                ],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert pegged.returncode == 0, pegged.stderr
            assert f"orange  {expected:>3}" in pegged.stdout
        keeper.stdin.write("r\n")  # redraw: the board's state, changed from elsewhere
        keeper.stdin.flush()
        while not re.search(r"orange\s+6\s+\(back\s+4\)", line := keeper.stdout.readline()):
            assert line, "the scorekeeper ended"
        keeper.stdin.write("q\n")
        keeper.stdin.flush()
        assert keeper.wait(timeout=20) == 0
    finally:
        if keeper.poll() is None:
            keeper.kill()
            keeper.wait()
