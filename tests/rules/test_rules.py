"""The rules engine (cribboard.rules): cards, the show, the play, and `cribboard count`.
Worked examples are the team's RULES.md (an English summary of the rules, from the Swedish,
Norwegian and Dutch sources)."""

from __future__ import annotations

import doctest
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cribboard.cli import main
from cribboard.errors import CribboardError
from cribboard.rules import (
    Card,
    CardError,
    IllegalMove,
    Kind,
    Pegging,
    allhands,
    cards,
    count_hand,
    deck,
    parse_card,
    parse_cards,
    peg_combos,
    pegging,
    show,
)


def c(text: str) -> Card:
    return parse_card(text)


def cs(text: str) -> tuple[Card, ...]:
    return parse_cards(text)


def total(hand: str, starter: str | None, crib: bool = False) -> int:
    return count_hand(cs(hand), c(starter) if starter else None, crib=crib).total


# --- cards ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, rank, suit",
    [
        ("5H", 5, "H"),
        ("5h", 5, "H"),
        ("JD", 11, "D"),
        ("jd", 11, "D"),
        ("10S", 10, "S"),
        ("TS", 10, "S"),
        ("ts", 10, "S"),
        ("AC", 1, "C"),
        ("ac", 1, "C"),
        ("KS", 13, "S"),
        ("qd", 12, "D"),
        (" 9c ", 9, "C"),
        ("2H", 2, "H"),
    ],
)
def test_cards_are_read_from_short_text(text: str, rank: int, suit: str) -> None:
    assert parse_card(text) == Card(rank, suit)


@pytest.mark.parametrize(
    "text, says",
    [
        ("5X", "unknown suit 'X'"),
        ("1H", "an ace is A"),
        ("11S", "unknown rank '11'"),
        ("", "write rank then suit"),
        ("H", "write rank then suit"),
        ("ZZ", "unknown rank 'Z'"),
        ("10", "unknown rank '1'"),
        ("5", "write rank then suit"),
        ("JK", "unknown suit 'K'"),
    ],
)
def test_a_bad_card_is_a_clear_error(text: str, says: str) -> None:
    with pytest.raises(CardError) as err:
        parse_card(text)
    assert says in str(err.value) and repr(text) in str(err.value)
    assert isinstance(err.value, CribboardError)


def test_card_text_round_trips_and_values() -> None:
    full = deck()
    assert len(set(full)) == 52
    assert [parse_card(str(card)) for card in full] == full
    assert [full[card.index] for card in full] == full
    assert [card.value for card in cs("AC 2C 9C 10C JC QC KC")] == [1, 2, 9, 10, 10, 10, 10]
    assert str(c("TS")) == "10S" and cards.format_cards(cs("ah 10d")) == "AH 10D"
    assert parse_cards("5H, 5S JD") == (c("5H"), c("5S"), c("JD"))
    with pytest.raises(CardError, match="given twice"):
        parse_cards("5H 5h")
    with pytest.raises(CardError):
        Card(14, "H")


# --- the show ------------------------------------------------------------------------------------


def test_the_29_hand() -> None:
    """Three fives and the jack of the starter's suit, the starter the fourth five."""
    count = count_hand(cs("5H 5S 5C JD"), c("5D"))
    assert count.total == 29
    assert len(count.of_kind(Kind.FIFTEEN)) == 8  # 4 of three fives, 4 of a five and the jack
    assert len(count.of_kind(Kind.PAIR)) == 6 and count.points(Kind.PAIR) == 12
    assert count.of_kind(Kind.NOBS)[0].cards == (c("JD"),)
    assert count.points(Kind.RUN) == count.points(Kind.FLUSH) == 0
    assert total("5H 5S 5C JH", "5D") == 28  # the jack of another suit: no nobs


def test_8_7_7_6_with_a_2_is_16() -> None:
    """Four fifteens 8, the pair of sevens 2, two runs of three 6 (002)."""
    count = count_hand(cs("8H 7S 7C 6D"), c("2C"))
    assert count.total == 16
    assert count.points(Kind.FIFTEEN) == 8 and count.points(Kind.PAIR) == 2
    assert [combo.label() for combo in count.of_kind(Kind.RUN)] == ["run of 3", "run of 3"]
    assert {frozenset(r.cards) for r in count.of_kind(Kind.RUN)} == {
        frozenset(cs("6D 7S 8H")),
        frozenset(cs("6D 7C 8H")),
    }
    fifteens = {frozenset(f.cards) for f in count.of_kind(Kind.FIFTEEN)}
    assert fifteens == {
        frozenset(cs("8H 7S")),
        frozenset(cs("8H 7C")),
        frozenset(cs("7S 6D 2C")),
        frozenset(cs("7C 6D 2C")),
    }
    # the same five cards score 16 whichever of them is the starter
    five = cs("8H 7S 7C 6D 2C")
    for i, starter in enumerate(five):
        assert count_hand(five[:i] + five[i + 1 :], starter).total == 16


def test_5_5_5_K_without_a_starter_is_14() -> None:
    """Four fifteens (5+5+5, three 5+K) 8 and the pair royal 6 = 14; source 001's "three fifteens,
    6 points" is wrong, and so is 000's "5 5 5 K: three ways to 15"."""
    count = count_hand(cs("5H 5S 5C KD"), None)
    assert count.points(Kind.FIFTEEN) == 8 and len(count.of_kind(Kind.FIFTEEN)) == 4
    assert count.points(Kind.PAIR) == 6
    assert count.total == 14
    # as a hand with a starter that adds nothing (2C: no fifteen, pair, run, flush or nobs)
    assert total("5H 5S 5C KD", "2C") == 14


def test_runs() -> None:
    four = count_hand(cs("3H 4S 5C 6D"), c("KC"))
    assert [r.points for r in four.of_kind(Kind.RUN)] == [4]  # one run of 4, not two of 3
    assert count_hand(cs("3H 4S 5C 6D"), c("7C")).points(Kind.RUN) == 5
    assert count_hand(cs("3H 4S 5C 5D"), c("6C")).points(Kind.RUN) == 8  # double run of four
    assert count_hand(cs("3H 3S 4C 4D"), c("5C")).points(Kind.RUN) == 12  # double double run
    assert count_hand(cs("3H 3S 3C 4D"), c("5C")).points(Kind.RUN) == 9  # triple run
    assert count_hand(cs("QH KS AC 5D"), c("9C")).points(Kind.RUN) == 0  # Q-K-A is no run
    assert count_hand(cs("JH QS KC 5D"), c("9C")).points(Kind.RUN) == 3
    assert count_hand(cs("AH 2S 3C 9D"), c("KC")).points(Kind.RUN) == 3  # the ace is low
    assert count_hand(cs("10H QS KC 2D"), c("9C")).points(Kind.PAIR) == 0  # 10 and Q: no pair


def test_hand_flush_is_four_or_five() -> None:
    assert count_hand(cs("2H 4H 6H 8H"), c("QS")).points(Kind.FLUSH) == 4
    assert count_hand(cs("2H 4H 6H 8H"), c("QH")).points(Kind.FLUSH) == 5
    assert count_hand(cs("2H 4H 6H 8S"), c("QH")).points(Kind.FLUSH) == 0  # 3 + starter: none
    # even cards never make 15: the flush is the whole count
    assert total("2H 4H 6H 8H", "QS") == 4 and total("2H 4H 6H 8H", "QH") == 5
    assert count_hand(cs("2H 4H 6H 8H"), c("QH")).of_kind(Kind.FLUSH)[0].cards == cs(
        "2H 4H 6H 8H QH"
    )


def test_crib_flush_only_with_all_five() -> None:
    assert count_hand(cs("2H 4H 6H 8H"), c("QS"), crib=True).points(Kind.FLUSH) == 0
    assert count_hand(cs("2H 4H 6H 8H"), c("QH"), crib=True).points(Kind.FLUSH) == 5
    assert count_hand(cs("2H 4H 6H 8S"), c("QH"), crib=True).points(Kind.FLUSH) == 0
    assert total("2H 4H 6H 8H", "QS") - total("2H 4H 6H 8H", "QS", crib=True) == 4


def test_his_nobs() -> None:
    assert count_hand(cs("JH 2C 4D 9S"), c("6H")).points(Kind.NOBS) == 1
    assert count_hand(cs("JH 2C 4D 9S"), c("6S")).points(Kind.NOBS) == 0
    assert count_hand(cs("JH 2C 4D 9S"), c("6H"), crib=True).points(Kind.NOBS) == 1
    assert count_hand(cs("JH 2C 4D 9S"), c("JS")).points(Kind.NOBS) == 0  # a jack starter
    assert count_hand(cs("JH 2C 4D 9S"), None).points(Kind.NOBS) == 0


def test_three_card_hands_of_the_five_card_game() -> None:
    # Not in RULES.md: the usual five-card rule, a flush of the three hand cards 3, 4 with the
    # starter (the six-card rule scaled); the crib still needs all five.
    assert count_hand(cs("2H 4H 9H"), c("KS")).points(Kind.FLUSH) == 3
    assert count_hand(cs("2H 4H 9H"), c("KH")).points(Kind.FLUSH) == 4
    assert total("5H 5S 5C", "JD") == 2 * 4 + 6


def test_wrong_hands_are_errors() -> None:
    with pytest.raises(CardError, match="not 5"):
        count_hand(cs("AH 2H 3H 4H 5H"), c("6H"))
    with pytest.raises(CardError, match="crib has 4"):
        count_hand(cs("AH 2H 3H"), c("6H"), crib=True)
    with pytest.raises(CardError, match="given twice"):
        count_hand(cs("AH 2H 3H 4H"), c("AH"))


def test_a_hand_with_nothing() -> None:
    assert total("2C 4D 6H 8S", "KS") == 0  # even values never add up to 15
    assert count_hand(cs("AC 3D 9H QS"), c("KD")).combos == ()


# --- the play ------------------------------------------------------------------------------------


def series_points(text: str, kind: Kind | None = None) -> list[int]:
    """The points each card of one series scores (of one kind only, if given)."""
    laid = cs(text)
    return [
        sum(
            combo.points
            for combo in peg_combos(laid[: i + 1])
            if kind is None or combo.kind is kind
        )
        for i in range(len(laid))
    ]


def test_play_runs_in_any_order() -> None:
    # 002: in 4-2-3-5-6 the 3 scores 3, the 5 scores 4, the 6 scores 5
    assert series_points("4H 2S 3C 5D 6H") == [0, 0, 3, 4, 5]
    # 002: 8-7-7-6 is no run (the second 7 is foreign); the first 7 makes 15, the second pairs
    assert series_points("8H 7S 7C 6D", Kind.RUN) == [0, 0, 0, 0]
    assert series_points("8H 7S 7C 6D") == [0, 2, 2, 0]
    # 003: 3-6-4-5 is 4 for the last player; a 2 next makes 5
    assert series_points("3H 6S 4C 5D") == [0, 0, 0, 4]
    assert series_points("3H 6S 4C 5D 2H") == [0, 0, 0, 4, 5]
    assert series_points("QH KS AC") == [0, 0, 0]  # Q-K-A: no run (and 21)
    assert series_points("5H 4S 6C 4D") == [0, 0, 5, 0]  # 15 and a run of 3; then 4-6-4 nothing
    assert series_points("2H 3S 2C 4D") == [0, 0, 0, 3]  # 3-2-4 with the run's cards last


def test_play_pairs_and_stacks() -> None:
    assert series_points("9H 9S 9C") == [0, 2, 6]
    assert series_points("3H 3S 3C 3D") == [0, 2, 6, 12]
    # a 5 led, a 5 paired (2), a third 5 makes 15 and a pair royal (2 + 6)
    assert series_points("5H 5S 5C") == [0, 2, 8]
    assert [k.kind for k in peg_combos(cs("5H 5S 5C"))] == [Kind.FIFTEEN, Kind.PAIR_ROYAL]
    assert series_points("10H QS") == [0, 0]  # 10 and Q: no pair
    assert series_points("KH QS JC AD") == [0, 0, 3, 2]  # 31 with the ace: 2, no run
    assert series_points("10H 5S 8C 8D") == [0, 2, 0, 4]  # 15; then a pair making 31: 2 + 2
    assert series_points("7H 8S 9C") == [0, 2, 3]  # 15 on the 8, run of 3 on the 9 (24)


def test_flushes_never_score_in_the_play() -> None:
    assert series_points("2H 4H 6H 8H") == [0, 0, 0, 0]


def play_all(play: Pegging, moves: str) -> list[tuple[int, int, list[str]]]:
    """Lay the cards in order; (seat, points, kinds) for each."""
    out = []
    for text in moves.split():
        result = play.play(c(text))
        out.append((result.seat, result.points, [str(k.kind) for k in result.combos]))
    return out


def test_go_then_31_pegs_2_and_the_other_leads() -> None:
    play = Pegging([cs("10S 9H 2C AD"), cs("KC QD 5H 4S")], leader=0)
    first = play_all(play, "10S KC 9H")
    assert first == [(0, 0, []), (1, 0, []), (0, 0, [])]
    assert play.results[-1].go_said == (1,) and play.to_play == 0  # B says go, A plays on
    assert play.playable(1) == () and play.playable() == cs("2C AD")
    result = play.play(c("2C"))
    assert (result.count, result.points, [k.kind for k in result.combos]) == (
        31,
        2,
        [Kind.THIRTY_ONE],
    )  # 2 for 31, never 31 and go
    assert result.series_over and play.count == 0 and play.to_play == 1  # the other leads
    rest = play_all(play, "QD AD 4S")
    assert rest == [(1, 0, []), (0, 0, []), (1, 2, ["fifteen"])]
    assert play.hand(0) == () and play.to_play == 1  # A is out: B plays alone
    last = play.play(c("5H"))
    assert (last.points, last.combos[-1].kind, play.done) == (1, Kind.LAST_CARD, True)


def test_go_pegs_1_and_runs_do_not_carry_over() -> None:
    play = Pegging([cs("QH QC 5C 6D"), cs("QS 9C 8D 7S")], leader=0)
    assert play_all(play, "QH QS") == [(0, 0, []), (1, 2, ["pair"])]
    result = play.play(c("QC"))  # pair royal at 30; nobody can play: A pegs 1 for the go
    assert [k.kind for k in result.combos] == [Kind.PAIR_ROYAL, Kind.GO]
    assert result.points == 7 and result.go_said == (1,) and result.count == 30
    assert result.series_over and result.next_seat == 1  # the player after A leads
    assert play_all(play, "9C 5C 8D") == [(1, 0, []), (0, 0, []), (1, 0, [])]
    result = play.play(c("6D"))  # 28: 9-5-8-6 is no run; B's 7 would pass 31: go to A
    assert (result.points, result.go_said, result.next_seat) == (1, (1,), 1)
    assert result.combos[0].kind is Kind.GO
    last = play.play(c("7S"))  # B alone; a new series: no run with the 8 and 6 before the reset
    assert [k.kind for k in last.combos] == [Kind.LAST_CARD] and play.done


def test_last_card_at_31_pegs_2_only() -> None:
    play = Pegging([cs("10H 5S"), cs("10D 6C")], leader=0)
    results = play_all(play, "10H 10D 5S 6C")
    assert results[-1] == (1, 2, ["thirty-one"]) and play.done


def test_three_players_go_round_the_table() -> None:
    play = Pegging([cs("JD 5C"), cs("KH 9C"), cs("QS 2D")], leader=1)
    assert play_all(play, "KH QS") == [(1, 0, []), (2, 0, [])]
    result = play.play(c("JD"))  # J-Q-K at 30; seats 1 and 2 say go, nobody can play
    assert (result.points, result.go_said, result.next_seat) == (4, (1, 2), 1)
    assert play_all(play, "9C 2D 5C") == [(1, 0, []), (2, 0, []), (0, 1, ["last card"])]

    play = Pegging([cs("JD 5C"), cs("KH 9C"), cs("QS AD")], leader=1)
    play_all(play, "KH QS JD")
    assert play.results[-1].go_said == (1,) and play.to_play == 2  # seat 1 goes, 2 plays on
    assert play_all(play, "AD") == [(2, 2, ["thirty-one"])]
    assert play.to_play == 0  # the seat after the one who laid the last card leads
    assert play_all(play, "5C 9C") == [(0, 0, []), (1, 1, ["last card"])]


def test_the_five_card_play_goes_to_31_once() -> None:
    play = Pegging([cs("QH QC 5C"), cs("QS 9C 8D")], leader=0, once=True)
    results = play_all(play, "QH QS QC")
    assert results[-1] == (0, 7, ["pair royal", "go"])
    assert play.done and play.hand(0) == (c("5C"),) and play.hand(1) == cs("9C 8D")


def test_illegal_plays() -> None:
    play = Pegging([cs("KH QH 5C AS"), cs("QS 9C 8D 7S")], leader=0)
    with pytest.raises(IllegalMove, match="turn"):
        play.play(c("QS"), seat=1)
    with pytest.raises(IllegalMove, match="no QS"):
        play.play(c("QS"))
    play_all(play, "KH QS")
    play_all(play, "QH")  # 30
    assert play.to_play == 0 and play.playable() == (c("AS"),)
    with pytest.raises(IllegalMove, match="past 31"):
        play.play(c("5C"))
    play.play(c("AS"))  # 31
    play_all(play, "9C 5C 8D 7S")
    assert play.done
    with pytest.raises(IllegalMove, match="over"):
        play.play(c("7S"))
    with pytest.raises(CardError, match="given twice"):
        Pegging([cs("KH QH"), cs("KH 9C")], leader=0)


# --- properties ----------------------------------------------------------------------------------

card_st = st.builds(Card, st.integers(1, 13), st.sampled_from("CDHS"))
five_cards = st.lists(card_st, min_size=5, max_size=5, unique=True)


@given(five_cards, st.permutations(range(4)), st.booleans())
def test_reordering_a_hand_never_changes_its_score(
    cards_: list[Card], order: list[int], crib: bool
) -> None:
    hand, starter = cards_[:4], cards_[4]
    first = count_hand(hand, starter, crib=crib)
    again = count_hand([hand[i] for i in order], starter, crib=crib)
    assert first.total == again.total
    assert {(k.kind, frozenset(k.cards)) for k in first.combos} == {
        (k.kind, frozenset(k.cards)) for k in again.combos
    }
    assert 0 <= first.total <= 29 and first.total not in (19, 25, 26, 27)


@given(five_cards)
def test_the_fast_rank_scorer_agrees_with_the_counter(cards_: list[Card]) -> None:
    count = count_hand(cards_[:4], cards_[4])
    by_ranks = count.total - count.points(Kind.FLUSH) - count.points(Kind.NOBS)
    assert allhands.rank_points([card.rank for card in cards_]) == by_ranks


@settings(max_examples=300)
@given(st.integers(2, 4), st.integers(3, 4), st.randoms(use_true_random=False), st.booleans())
def test_a_random_play_keeps_the_rules(seats: int, size: int, rng: object, once: bool) -> None:
    import random

    assert isinstance(rng, random.Random)
    full = deck()
    rng.shuffle(full)
    hands = [full[i * size : (i + 1) * size] for i in range(seats)]
    leader = rng.randrange(seats)
    play = Pegging(hands, leader, once=once)
    assert play.to_play == leader
    ends = 0
    while not play.done:
        seat = play.to_play
        assert seat is not None and play.playable()
        result = play.play(rng.choice(play.playable()))
        assert result.seat == seat and 0 < result.count <= 31 and play.count <= 31
        enders = [k for k in result.combos if k.kind in (Kind.GO, Kind.LAST_CARD, Kind.THIRTY_ONE)]
        assert len(enders) == (1 if result.series_over else 0)
        ends += result.series_over
        assert result.points == sum(k.points for k in result.combos) >= 0
        if result.series_over and not play.done:
            assert play.count == 0 and play.series == []
            # the seat after the one who laid the last card (that still has cards) leads
            nxt = next(s % seats for s in range(seat + 1, seat + seats + 1) if play.hand(s % seats))
            assert play.to_play == nxt
    last = play.results[-1]
    assert last.series_over
    if once:
        assert ends == 1
    else:
        assert len(play.laid) == seats * size and not any(play.hand(s) for s in range(seats))
        assert {k.kind for k in last.combos} & {Kind.LAST_CARD, Kind.THIRTY_ONE}


def test_docstring_examples() -> None:
    extra = {"parse_card": parse_card, "parse_cards": parse_cards}
    for module in (cards, show, pegging):
        failed, _ = doctest.testmod(module, extraglobs=extra)
        assert failed == 0, module.__name__


# --- cribboard count ------------------------------------------------------------------------------

CLI = [sys.executable, "-m", "cribboard.cli"]


def test_count_prints_the_breakdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["count", "5H", "5S", "5C", "JD", "5D"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "hand 5H 5S 5C JD, starter 5D"
    assert lines[-1].split() == ["total", "29"]
    words = [line.split() for line in lines[1:-1]]
    assert sum(1 for w in words if w[:2] == ["fifteen", "2"]) == 8
    assert sum(1 for w in words if w[:2] == ["pair", "2"]) == 6
    assert ["nobs", "1", "JD"] in words
    assert ["fifteen", "2", "5H", "5S", "5C"] in words and ["pair", "2", "5C", "5D"] in words

    assert main(["count", "8h", "7s", "7c", "6d", "2c"]) == 0
    out = capsys.readouterr().out
    assert "run of 3      3  6D 7S 8H" in out and out.splitlines()[-1].split() == ["total", "16"]


def test_count_a_crib_and_cards_without_a_starter(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["count", "2H", "4H", "6H", "8H", "QS"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == ["total", "4"]
    assert main(["count", "--crib", "2H", "4H", "6H", "8H", "QS"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("crib 2H") and out[-1].split() == ["total", "0"]
    assert main(["count", "--crib", "2H", "4H", "6H", "8H", "10H"]) == 0
    assert "flush         5  2H 4H 6H 8H 10H" in capsys.readouterr().out
    assert main(["count", "--no-starter", "5H", "5S", "5C", "KD"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "hand 5H 5S 5C KD (no starter)" and out[-1].split() == ["total", "14"]
    assert main(["count", "--five-card", "5H", "5S", "5C", "JD"]) == 0  # three cards, starter
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "hand 5H 5S 5C, starter JD" and out[-1].split() == ["total", "14"]


def test_count_all_hands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["count", "--all-hands"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 31
    table = [tuple(map(int, line.split())) for line in lines[:30]]
    assert [score for score, _ in table] == list(range(30))
    assert table[29] == (29, 4) and table[19] == (19, 0)
    last = lines[-1].split()
    assert last[:3] == ["total", "12994800", "in"] and last[4] == "s" and float(last[3]) > 0


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            ["5X", "5S", "5C", "JD", "5D"],
            "cribboard: bad card '5X': unknown suit 'X'; suits are C D H S",
        ),
        (["5H", "5S", "5C", "JD", "1D"], "an ace is A"),
        (["5H", "5S", "5C", "JD", "5H"], "card 5H given twice"),
        (["5H", "5S", "5C", "JD", "5D", "6D"], "a hand has 4 cards"),
        (["5H"], "then the starter"),
        ([], "give the hand's cards"),
        (
            ["--crib", "5H", "5S", "5C", "JD"],
            "a crib has 4 cards, then the starter: 5 cards, not 4",
        ),
        (["5H", "5S", "5C", "JD"], "the starter forgotten? a three-card hand"),
        (["--five-card", "5H", "5S", "5C", "JD", "5D"], "a hand has 3 cards, then the starter"),
        (["--no-starter", "5H", "5S", "5C"], "a hand has 4 cards, not 3"),
        (["--all-hands", "5H"], "--all-hands takes no cards"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_count_errors_are_one_line(argv: list[str], says: str) -> None:
    done = subprocess.run([*CLI, "count", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("cribboard: ")
    assert says in done.stderr
