"""`count --all-hands`: the fast exact table against the straightforward count and against facts
derived here by counting (nothing in this file is taken from a published table)."""

from __future__ import annotations

import random
from itertools import combinations, combinations_with_replacement, product
from math import comb

import pytest

from cribboard.rules import SUITS, Card, Kind, count_hand, deck
from cribboard.rules.allhands import (
    COMBINATIONS,
    all_hands_table,
    pattern_table,
    straightforward_table,
)


@pytest.fixture(scope="module", params=[False, True], ids=["hands", "cribs"])
def table(request: pytest.FixtureRequest) -> tuple[bool, list[int]]:
    crib: bool = request.param
    return crib, all_hands_table(crib=crib)


def test_the_table_covers_every_combination(table: tuple[bool, list[int]]) -> None:
    _, counts = table
    assert COMBINATIONS == comb(52, 4) * 48 == 12_994_800 == sum(counts)
    assert len(counts) == 30


def test_impossible_scores(table: tuple[bool, list[int]]) -> None:
    _, counts = table
    assert [score for score, n in enumerate(counts) if n == 0] == [19, 25, 26, 27]


def test_the_highest_scores(table: tuple[bool, list[int]]) -> None:
    _, counts = table
    # 29: three fives and the jack of the starter's suit, the starter the fourth five. The
    # starter is one of the four fives and fixes the jack: 4 combinations.
    assert counts[29] == 4
    # 28, derived: (a) four fives in hand, starter any of the 16 ten-cards: 16; (b) three fives
    # and a ten-card in hand, the fourth five the starter: 4 starters x 15 ten-cards (not the
    # jack of the starter's suit, which makes 29): 60. 76 in all, hand or crib (that nothing
    # else makes 28 is checked by test_the_top_of_the_table_one_by_one).
    assert counts[28] == 16 + 4 * 15 == 76


def test_the_top_of_the_table_one_by_one(table: tuple[bool, list[int]]) -> None:
    """Every combination scoring 22 or more, found and counted with count_hand alone: the
    suits add at most 6 (flush 5, nobs 1), so only five-rank sets whose fifteens, pairs and
    runs make 16 or more can reach 22; all their hands are counted one by one."""
    crib, counts = table
    top = [0] * 30
    for ranks in combinations_with_replacement(range(1, 14), 5):
        if ranks[0] == ranks[4]:
            continue
        sample = [Card(r, SUITS[i % 4]) for i, r in enumerate(ranks)]  # distinct cards
        probe = count_hand(sample[:4], sample[4])
        if probe.total - probe.points(Kind.FLUSH) - probe.points(Kind.NOBS) < 16:
            continue
        for hand_ranks, starter_rank in {(ranks[:i] + ranks[i + 1 :], ranks[i]) for i in range(5)}:
            for score, n in enumerate(straightforward_pattern(hand_ranks, starter_rank, crib)):
                top[score] += n
    assert top[22:] == counts[22:]


def linear_total(crib: bool) -> int:
    """The points of all 12,994,800 combinations added up, by linearity of expectation: each
    scoring set of cards counted over the combinations that hold it (times 5: which of the five
    cards is the starter), with no hand counted one by one."""
    arrangements = 5  # a five-card set is 5 (hand, starter) combinations

    def holding(k: int, excluded: int = 0) -> int:  # five-card sets holding k given cards
        return comb(52 - k - excluded, 5 - k)

    # fifteens: card sets (k cards) adding up to 15; values 1-9 have 4 cards, 10 has 16
    ways = {(0, 0): 1}
    for value, cards in [(v, 4) for v in range(1, 10)] + [(10, 16)]:
        new = dict(ways)
        for (total, k), n in ways.items():
            for take in range(1, cards + 1):
                if total + take * value > 15 or k + take > 5:
                    break
                key = (total + take * value, k + take)
                new[key] = new.get(key, 0) + comb(cards, take) * n
        ways = new
    fifteens = sum(2 * n * holding(k) for (total, k), n in ways.items() if total == 15)
    pairs = 2 * 13 * comb(4, 2) * holding(2)
    runs = 0  # L cards, one of each rank a..a+L-1, and no card of the ranks either side
    for length in range(3, 6):
        for low in range(1, 14 - length + 1):
            sides = (low > 1) + (low + length - 1 < 13)
            runs += length * 4**length * holding(length, 4 * sides)
    flush_hands = 4 * comb(13, 4)  # four hand cards of one suit; 9 starters of it, 39 not
    flush = flush_hands * (9 * 5 + (0 if crib else 39 * 4))
    # nobs: a jack in the hand and a starter of its suit: per suit, 12 starters, and hands
    # holding the jack but not that starter
    nobs = 4 * 12 * comb(50, 3)
    return arrangements * (fifteens + pairs + runs) + flush + nobs


def test_the_points_add_up(table: tuple[bool, list[int]]) -> None:
    crib, counts = table
    total = sum(score * n for score, n in enumerate(counts))
    assert total == linear_total(crib)
    if not crib:
        assert round(total / COMBINATIONS, 4) == 4.7692  # the mean hand


def straightforward_pattern(
    hand_ranks: tuple[int, ...], starter_rank: int, crib: bool
) -> list[int]:
    """Every hand with these ranks and starter of this rank, as real cards, counted one by
    one with count_hand."""
    needed = {r: hand_ranks.count(r) for r in set(hand_ranks)}
    per_rank = [combinations([Card(r, s) for s in SUITS], n) for r, n in sorted(needed.items())]
    pairs = []
    for chosen in product(*per_rank):
        hand = [card for group in chosen for card in group]
        for suit in SUITS:
            starter = Card(starter_rank, suit)
            if starter not in hand:
                pairs.append((hand, starter))
    return straightforward_table(pairs, crib=crib)


ALL_PATTERNS = [
    (hand, starter)
    for hand in combinations_with_replacement(range(1, 14), 4)
    for starter in range(1, 14)
    if not hand[0] == hand[3] == starter
]


def test_the_patterns() -> None:
    assert len(ALL_PATTERNS) == comb(16, 4) * 13 - 13 == 23_647


@pytest.mark.parametrize("crib", [False, True], ids=["hands", "cribs"])
def test_fast_equals_straightforward_on_random_patterns(crib: bool) -> None:
    """A random subset of the rank patterns (with every suit assignment of each), plus the
    patterns that stress flush and nobs: four ranks with a jack, the starter's rank in hand."""
    rng = random.Random(20240607 + crib)
    chosen = rng.sample(ALL_PATTERNS, 100)
    chosen += [
        ((2, 5, 9, 11), 5),
        ((2, 5, 9, 11), 7),
        ((1, 11, 11, 13), 11),
        ((5, 5, 5, 11), 5),
        ((3, 4, 11, 12), 11),
        ((11, 11, 11, 11), 5),
    ]
    for hand, starter in chosen:
        assert pattern_table(hand, starter, crib=crib) == straightforward_pattern(
            hand, starter, crib
        ), (hand, starter)


def test_fast_equals_straightforward_for_every_hand_with_one_starter() -> None:
    """All C(51,4) = 249,900 hands with the 5 of hearts, counted one by one, against the fast
    table of the starter rank 5 (a quarter of it: the four suits are alike)."""
    starter = Card(5, "H")
    others = [card for card in deck() if card != starter]
    slow = straightforward_table((hand, starter) for hand in combinations(others, 4))
    fast = [0] * 30
    for hand, starter_rank in ALL_PATTERNS:
        if starter_rank == 5:
            for score, n in enumerate(pattern_table(hand, 5)):
                fast[score] += n
    assert sum(slow) == comb(51, 4) and [n // 4 for n in fast] == slow
    assert all(n % 4 == 0 for n in fast)


def test_the_patterns_make_the_table() -> None:
    summed = [0] * 30
    for hand, starter in ALL_PATTERNS:
        for score, n in enumerate(pattern_table(hand, starter)):
            summed[score] += n
    assert summed == all_hands_table()


def test_a_random_sample_follows_the_table() -> None:
    """The straightforward count of 20,000 random combinations has the table's shape."""
    from cribboard.rules.allhands import random_combinations

    sample = straightforward_table(random_combinations(20_000, random.Random(5)))
    exact = all_hands_table()
    for score in range(30):
        share = exact[score] / COMBINATIONS
        assert abs(sample[score] / 20_000 - share) < 5 * (share / 20_000) ** 0.5 + 1e-4
    assert (
        count_hand([Card(5, "H"), Card(5, "S"), Card(5, "C"), Card(11, "D")], Card(5, "D")).total
        == 29
    )
