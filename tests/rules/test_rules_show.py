"""The show's two forms: `hand_points` (the number, fast, remembered by ranks) agrees with
`count_hand` (the breakdown) and with the all-hands table's independent rank scorer."""

from __future__ import annotations

from itertools import combinations_with_replacement

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cribboard.rules import (
    Card,
    CardError,
    count_hand,
    deck,
    hand_points,
    parse_card,
    parse_cards,
    points_of_ranks,
)
from cribboard.rules.allhands import rank_points
from cribboard.words import combo_summary


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(deck()), min_size=5, max_size=5, unique=True),
    st.booleans(),
    st.sampled_from(["four", "three", "no starter"]),
)
def test_the_number_agrees_with_the_breakdown(cards: list[Card], crib: bool, shape: str) -> None:
    if shape == "four":
        hand, starter = cards[:4], cards[4]
    elif shape == "three":
        hand, starter, crib = cards[:3], cards[4], False
    else:
        hand, starter, crib = cards[:4], None, False
    assert hand_points(hand, starter, crib=crib) == count_hand(hand, starter, crib=crib).total


def test_the_points_of_every_rank_multiset_match_the_independent_scorer() -> None:
    """Every multiset of 3, 4 or 5 ranks (at most four of a rank) against the all-hands table's
    scorer, which counts by multiplicities instead of going through the cards."""
    checked = 0
    for size in (3, 4, 5):
        for ranks in combinations_with_replacement(range(1, 14), size):
            if max(ranks.count(rank) for rank in ranks) > 4:
                continue
            assert points_of_ranks(ranks) == rank_points(ranks), ranks
            assert points_of_ranks(reversed(ranks)) == rank_points(ranks)
            checked += 1
    assert checked == 455 + 1820 + 6188 - 13  # C(15,3) + C(16,4) + C(17,5), less 5 of a kind


def test_remembered_ranks_never_carry_the_suits_over() -> None:
    """The rank part is remembered; the flush and his nobs are worked out for every hand."""
    assert hand_points(parse_cards("2H 4H 6H 8H"), parse_card("QH")) == 5
    assert hand_points(parse_cards("2H 4H 6H 8H"), parse_card("QS")) == 4
    assert hand_points(parse_cards("2H 4H 6H 8H"), parse_card("QS"), crib=True) == 0
    assert hand_points(parse_cards("2H 4S 6H 8H"), parse_card("QH")) == 0
    assert hand_points(parse_cards("5H 5S 5C JD"), parse_card("5D")) == 29
    assert hand_points(parse_cards("5H 5S 5C JH"), parse_card("5D")) == 28
    assert hand_points(parse_cards("5H 5S 5C KD"), None) == 14


@pytest.mark.parametrize(
    "hand, starter, crib, says",
    [
        ("AH 2H 3H 4H 5H", "6H", False, "not 5"),
        ("AH 2H", "6H", False, "not 2"),
        ("AH 2H 3H", "6H", True, "crib has 4"),
        ("AH 2H 3H 4H", None, True, "counted with its starter"),
        ("AH 2H 3H 4H", "AH", False, "given twice"),
        ("AH 2H 3H", "3H", False, "given twice"),
    ],
)
def test_the_number_refuses_what_the_breakdown_refuses(
    hand: str, starter: str | None, crib: bool, says: str
) -> None:
    cards = [parse_card(word) for word in hand.split()]  # parse_cards refuses duplicates itself
    start = parse_card(starter) if starter else None
    for count in (hand_points, lambda *a, **k: count_hand(*a, **k).total):
        with pytest.raises(CardError, match=says):
            count(cards, start, crib=crib)
    # a card given twice inside the hand, its rank already remembered
    hand_points(parse_cards("7C 7D 8H 9S"), parse_card("KD"))
    with pytest.raises(CardError, match="7C given twice"):
        hand_points([parse_card("7C")] * 2 + list(parse_cards("8H 9S")), parse_card("KD"))


@pytest.mark.parametrize("ranks", [(1, 2, 3, 4, 5, 6), (0, 5), (14,), (5, 5, 5, 5, 5, 5, 5, 5)])
def test_points_of_ranks_refuses_impossible_ranks(ranks: tuple[int, ...]) -> None:
    with pytest.raises(CardError, match="ranks of up to five cards"):
        points_of_ranks(ranks)


def test_a_breakdown_never_puts_a_number_beside_its_points() -> None:
    """`run of 3 12` read as "run of 312": a run's length is a word, and a kind counted more
    than once is said in the plural."""
    count = count_hand(parse_cards("7H 8S 7C 8D"), parse_card("9D"), crib=False)
    assert combo_summary(count.combos) == "fifteens 8, pairs 4, runs of three 12"
    count = count_hand(parse_cards("5H 6S 7C 10D"), parse_card("KD"), crib=False)
    assert combo_summary(count.combos) == "fifteens 4, run of three 3"
