"""The game driver and its players: whole computer games pegged on the virtual board, the
computer's discards and pegging, and the person at the terminal with scripted input."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys

import pytest

from cribboard.api import Board
from cribboard.play.driver import GameDriver
from cribboard.play.players import (
    Computer,
    DiscardView,
    HumanTerminal,
    LeaveGame,
    PlayView,
    expected_crib,
    rank_discards,
)
from cribboard.rules import (
    FIVE_CARD,
    FOUR_PLAYER,
    SHORT,
    STANDARD,
    THREE_PLAYER,
    Variant,
    count_hand,
    deck,
    parse_card,
    parse_cards,
)
from cribboard.virtual import VirtualBoard
from support import Spawn


@pytest.fixture
def vboard(module_vboard: VirtualBoard) -> VirtualBoard:
    """One virtual board for these tests: each plays a game of its own on it."""
    return module_vboard


# --- whole games on the board ------------------------------------------------------------------


@pytest.mark.parametrize(
    "variant, seed",
    [(STANDARD, 1), (STANDARD, 2), (SHORT, 3), (FIVE_CARD, 4), (THREE_PLAYER, 5), (FOUR_PLAYER, 6)],
    ids=lambda v: v.name if isinstance(v, Variant) else str(v),
)
async def test_computer_games_end_with_the_board_showing_the_engines_scores(
    board: Board, variant: Variant, seed: int
) -> None:
    lines: list[str] = []
    changes = 0

    async def changed() -> None:
        nonlocal changes
        changes += 1

    players = [Computer(f"p{seat}") for seat in range(variant.players)]
    driver = GameDriver(
        board, players, variant=variant, rng=random.Random(seed), say=lines.append, on_board=changed
    )
    game = await driver.play_game()
    assert game.over and game.winner is not None
    assert game.scores[game.winner] >= variant.target
    state = await board.state()
    target = variant.target
    assert state.target == target and state.players == variant.sides
    assert state.front[: variant.sides] == [min(score, target) for score in game.scores]
    assert state.winner == game.winner and state.result == game.result().value
    for side in range(variant.sides):  # the back peg: where the side's last score started
        last = [event for event in game.events if event.side == side][-1:]
        assert state.back[side] == (last[0].before if last else 0)
    assert state.pending == [0] * len(state.pending)
    assert changes >= len(game.events)  # the board was redrawn after every score
    assert "wins with" in lines[-1] and len(game.deals) >= 3


async def test_the_dealer_lamp_follows_the_deal_and_pending_counts_come_before_pegs(
    board: Board,
) -> None:
    seen: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []

    async def changed() -> None:
        state = await board.state()
        seen.append((state.dealer, tuple(state.pending[:2]), tuple(state.front[:2])))

    driver = GameDriver(
        board,
        [Computer("a"), Computer("b")],
        variant=SHORT,
        rng=random.Random(11),
        dealer=1,
        show_pending=True,
        on_board=changed,
        say=lambda text: None,
    )
    game = await driver.play_game()
    dealers = [deal.dealer for deal in game.deals]
    assert dealers[:4] == [1, 0, 1, 0]
    assert seen[0][0] == 1
    # each score: first the pending count alone, then the pegs moved and the pending count gone
    shown = [i for i, (_, pending, _) in enumerate(seen) if any(pending)]
    assert len(shown) == len(game.events)
    for i in shown:
        _, pending, front = seen[i]
        after = seen[i + 1]
        side = 0 if pending[0] else 1
        assert after[1] == (0, 0) and after[2][side] == min(front[side] + pending[side], 61)


# --- the computer ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hand, mine, best",
    [
        ("5H 5S 5C JD 2C 9S", True, "2C 9S"),  # the 29 hand, whoever's crib
        ("5H 5S 5C JD 2C 9S", False, "2C 9S"),
        ("3H 4H 5H 6H QS KS", False, "QS KS"),  # keep the flush run
        ("2C 3D 4H 6S 7C 8D", True, "7C 8D"),  # our crib: 7-8 make 15 there
        ("2C 3D 4H 6S 7C 8D", False, "3D 4H"),  # theirs: keep 6-7-8 + 2, give nothing
        ("5H 10D 7C 8S 9D KC", True, "5H KC"),  # our crib: a 5 and a ten card for it
        ("5H 10D 7C 8S 9D KC", False, "10D KC"),  # theirs: never give them a 5
    ],
)
def test_the_computer_lays_away_the_known_best(hand: str, mine: bool, best: str) -> None:
    view = DiscardView(
        seat=0,
        hand=parse_cards(hand),
        discards=2,
        dealer=0 if mine else 1,
        my_crib=mine,
        variant=STANDARD,
        scores=(0, 0),
        side=0,
    )
    assert sorted(Computer().discard(view)) == sorted(parse_cards(best))


def test_discard_values_are_expected_counts() -> None:
    hand = parse_cards("5H 5S 5C JD 2C 9S")
    unseen = [card for card in deck() if card not in hand]
    best = rank_discards(hand, 2, True)[0]
    exact = sum(count_hand(best.kept, starter).total for starter in unseen) / len(unseen)
    assert best.hand == pytest.approx(exact)
    # the crib: two fives are worth far more than a king and a queen
    five_five = expected_crib(parse_cards("5H 5S"), unseen)
    king_queen = expected_crib(
        parse_cards("KC QD"), [c for c in deck() if c not in parse_cards("5H 5S 5C KC QD 9S")]
    )
    assert 8 < five_five < 10 and 3 < king_queen < 4.5


def test_the_crib_estimate_matches_brute_force_on_a_small_deck() -> None:
    # with a handful of unseen cards, every (two crib cards, starter) can be counted exactly
    laid = parse_cards("5H JS")
    unseen = parse_cards("5D 10C JC QS 4S 6H 2S")
    total = n = 0
    for i, a in enumerate(unseen):
        for b in unseen[i + 1 :]:
            for starter in unseen:
                if starter not in (a, b):
                    total += count_hand((*laid, a, b), starter, crib=True).total
                    n += 1
    assert expected_crib(laid, unseen) == pytest.approx(total / n)


def play_view(
    hand: str, series: str = "", laid_away: str = "9C 9D", starter: str = "KH", their_cards: int = 4
) -> PlayView:
    cards = parse_cards(hand)
    played = parse_cards(series)
    from cribboard.rules import Laid

    count = sum(card.value for card in played)
    return PlayView(
        seat=0,
        hand=cards,
        playable=tuple(c for c in cards if count + c.value <= 31),
        count=count,
        series=played,
        laid=tuple(Laid(1, card) for card in played),
        starter=parse_card(starter),
        laid_away=parse_cards(laid_away),
        cards_left=(len(cards), their_cards),
        dealer=1,
        variant=STANDARD,
        scores=(0, 0),
        side=0,
    )


@pytest.mark.parametrize(
    "hand, series, best",
    [
        ("5S 4D 10C QH", "", "4D"),  # lead low: no 15 for them, never a 5
        ("5S 8D 10C QH", "7C", "8D"),  # 7 + 8: fifteen
        ("5S 8D 10C 3H", "QC KD 8S", "3H"),  # 31
        ("5S 8D 10C 3H", "8C", "8D"),  # pair the 8
        ("AS 8D", "KC 3H", "AS"),  # 14, not 21 (a ten-card makes 31)
    ],
)
def test_the_computer_pegs_sensibly(hand: str, series: str, best: str) -> None:
    assert Computer().choose_card(play_view(hand, series)) == parse_card(best)


def test_the_computer_does_not_leave_21_or_5() -> None:
    view = play_view("6S 9D KC 2H", "5C")  # 5 + 6 = 11, 5 + K = 15 (take it)
    assert Computer().choose_card(view) == parse_card("KC")
    view = play_view("AS 6D 9C 2H", "")  # lead: a 6 or 9 lets a 9/6 make 15; 2 and ace are safe
    assert Computer().choose_card(view) in parse_cards("AS 2H")


# --- the person at the terminal ------------------------------------------------------------------


class Script:
    """Scripted typing: answers in order, prompts and output recorded."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.out: list[str] = []

    def input(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)


def test_a_person_lays_away_by_card_or_position_and_mistakes_are_explained() -> None:
    script = Script("5H", "QS KS 2C", "7D 8D", "QS QS", "1 KS")
    human = HumanTerminal("ann", input=script.input, output=script.out.append)
    view = DiscardView(
        seat=0,
        hand=parse_cards("KS 5H QS 3D 6C 2C"),
        discards=2,
        dealer=1,
        my_crib=False,
        variant=STANDARD,
        scores=(0, 0),
        side=0,
    )
    assert human.discard(view) == parse_cards("2C KS")  # 1 is the lowest card: the 2
    assert "lay 2 away to their crib" in script.prompts[0]
    assert "1:2C" in script.out[0] and "6:KS" in script.out[0]
    problems = script.out[1:]
    assert [
        "lay away 2, not 1" in problems[0],
        "lay away 2, not 3" in problems[1],
        "you do not hold 7D" in problems[2],
        "the same card twice" in problems[3],
    ] == [True] * 4


def test_a_person_lays_a_card_enter_for_the_only_one() -> None:
    script = Script("", "KC", "9", "KC", "5s")
    human = HumanTerminal("ann", input=script.input, output=script.out.append)
    view = play_view("5S KC", "10C 10D 3S")  # 23: the king would pass 31
    assert human.choose_card(view) == parse_card("5S")  # Enter: the only card
    assert "[Enter: 5S]" in script.prompts[0]
    view = play_view("5S KC AH", "10C")
    assert human.choose_card(view) == parse_card("KC")
    view = play_view("5S KC", "10C 10D 3S")
    assert human.choose_card(view) == parse_card("5S")
    assert any("no card 9" in line for line in script.out)
    assert any("past 31" in line for line in script.out)


async def test_a_person_plays_a_whole_game_against_the_computer(board: Board) -> None:
    """The person's side is typed: lay away the first two, then try positions until one is
    accepted. The driver asks off its event loop; the board ends with the engine's scores."""
    out: list[str] = []
    tries = {"n": 0}

    def typing(prompt: str) -> str:
        if prompt.startswith("lay 2 away"):
            return "1 2"
        tries["n"] += 1
        return str(1 + tries["n"] % 4)

    human = HumanTerminal("ann", input=typing, output=out.append)
    driver = GameDriver(
        board, [human, Computer("cpu")], variant=SHORT, rng=random.Random(5), say=out.append
    )
    game = await driver.play_game()
    state = await board.state()
    assert state.front[:2] == [min(score, 61) for score in game.scores]
    assert any(line.startswith("ann lays") for line in out)
    assert any(line.startswith("cpu lays") for line in out)


def test_a_person_asks_for_help_and_leaves_with_q() -> None:
    script = Script("?", "q")
    human = HumanTerminal("ann", input=script.input, output=script.out.append)
    view = play_view("5S KC AH", "10C")
    with pytest.raises(LeaveGame):
        human.choose_card(view)
    assert not any("bad card" in line or "not a card" in line for line in script.out)
    assert any("leave the game" in line for line in script.out)  # ? shows the keys
    assert all("?" in prompt for prompt in script.prompts)  # every prompt offers help


def test_play_on_the_command_line_q_leaves_and_ctrl_c_is_130(
    vboard: VirtualBoard, spawn: Spawn
) -> None:
    cli = [sys.executable, "-m", "cribboard.cli", "--port", vboard.port, "play", "--seed", "3"]
    env = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run(
        cli, input="?\nq\n", capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    assert "leave the game" in result.stdout and "you left the game" in result.stdout
    assert "bad card" not in result.stdout
    # (a pipe does not echo the typed line: the prompt and the next line share one)
    shown = result.stdout.replace("(? for help): ", "(? for help):\n").splitlines()
    assert all(len(line) <= 80 for line in shown)
    # Ctrl-C while the game waits for the person: the conventional 130, not success
    player = spawn(
        cli, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert player.stdout is not None
        while "your cards" not in player.stdout.readline():
            pass
        player.send_signal(signal.SIGINT)
        assert player.wait(timeout=20) == 130
    finally:
        if player.poll() is None:
            player.kill()
            player.wait()
