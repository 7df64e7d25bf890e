"""The score of every four-card hand with every starter: C(52,4) * 48 = 12,994,800 combinations.

`all_hands_table()` gets the exact table in a fraction of a second by symmetry: fifteens, pairs
and runs depend only on the five ranks, so each rank pattern (which ranks the hand holds, how
many of each, and the starter's rank: 23,647 patterns) is scored once; the suits only matter for
the flush and his nobs, and how many suit assignments of a pattern give each flush/nobs bonus
depends only on a small signature of the pattern (how many cards the hand holds of the
starter's rank and of jacks, and the other ranks' multiplicities), so that is worked out once
per signature by going through the suits of one representative pattern.

`straightforward_table()` is the slow reference: it counts each given combination one by one with
the engine's hand counter (`count_hand`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from itertools import combinations, combinations_with_replacement, product
from math import comb

from cribboard.rules.cards import JACK, SUITS, Card, deck
from cribboard.rules.show import count_hand

COMBINATIONS = comb(52, 4) * 48
"""12,994,800: four-card hands times starters."""
MAX_SCORE = 29
_VALUE = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)

Table = list[int]
"""Hands per score: `table[score]` for score 0..29."""


def rank_points(ranks: Sequence[int]) -> int:
    """Fifteens, pairs and runs of cards with these ranks (1..13): the part of a count that does
    not depend on suits. Independent of `count_hand` (it counts by multiplicities)."""
    counts = [0] * 15
    for rank in ranks:
        counts[rank] += 1
    points = 0
    # fifteens: sub-multisets of cards (choose k of the c cards of a rank) adding up to 15
    ways = [0] * 16
    ways[0] = 1
    for rank in range(1, 14):
        have = counts[rank]
        if not have:
            continue
        value = _VALUE[rank]
        new = ways[:]
        for total in range(16):
            if ways[total]:
                for take in range(1, have + 1):
                    reach = total + take * value
                    if reach > 15:
                        break
                    new[reach] += comb(have, take) * ways[total]
        ways = new
    points += 2 * ways[15]
    # pairs: every two cards of a rank
    points += sum(c * (c - 1) for c in counts)
    # runs: maximal stretches of consecutive ranks, length 3 or more, times the multiplicities
    rank = 1
    while rank <= 13:
        if not counts[rank]:
            rank += 1
            continue
        end, multiplier = rank, counts[rank]
        while counts[end + 1]:
            end += 1
            multiplier *= counts[end]
        if end - rank + 1 >= 3:
            points += (end - rank + 1) * multiplier
        rank = end + 1
    return points


@cache
def _bonus_spread(signature: tuple[object, ...], crib: bool) -> tuple[tuple[int, int], ...]:
    """(bonus, how many suit assignments) for a pattern with this signature: a representative
    pattern's suit assignments are gone through one by one."""
    others, at_starter, jacks, starter_is_jack = signature
    assert isinstance(others, tuple)
    assert isinstance(at_starter, int) and isinstance(jacks, int)
    starter_rank = JACK if starter_is_jack else 1
    hand: dict[int, int] = {}
    if at_starter:
        hand[starter_rank] = at_starter
    if jacks and not starter_is_jack:
        hand[JACK] = jacks
    spare = (r for r in range(2, 14) if r != JACK)
    for count in others:
        hand[next(spare)] = count
    ranks = sorted(hand)
    spread: dict[int, int] = {}
    for suits in product(*(combinations(SUITS, hand[r]) for r in ranks)):
        hand_cards = [(r, s) for r, chosen in zip(ranks, suits) for s in chosen]
        used = {s for r, s in hand_cards if r == starter_rank}
        for starter_suit in SUITS:
            if starter_suit in used:
                continue
            bonus = 0
            hand_suits = {s for _, s in hand_cards}
            if len(hand_suits) == 1:
                with_starter = starter_suit in hand_suits
                if with_starter:
                    bonus += 5
                elif not crib:
                    bonus += 4
            if any(r == JACK and s == starter_suit for r, s in hand_cards):
                bonus += 1
            spread[bonus] = spread.get(bonus, 0) + 1
    return tuple(sorted(spread.items()))


def _signature(hand: Sequence[int], starter: int) -> tuple[object, ...]:
    counts: dict[int, int] = {}
    for rank in hand:
        counts[rank] = counts.get(rank, 0) + 1
    at_starter = counts.pop(starter, 0)
    jacks = counts.pop(JACK, 0) if starter != JACK else 0
    return (tuple(sorted(counts.values())), at_starter, jacks, starter == JACK)


def pattern_table(hand_ranks: Sequence[int], starter_rank: int, *, crib: bool = False) -> Table:
    """The scores of every hand with these four ranks and every starter of this rank (all
    their suit assignments), by the fast method."""
    table = [0] * (MAX_SCORE + 1)
    if list(hand_ranks).count(starter_rank) >= 4:
        return table
    base = rank_points([*hand_ranks, starter_rank])
    for bonus, ways in _bonus_spread(_signature(hand_ranks, starter_rank), crib):
        table[base + bonus] += ways
    return table


def all_hands_table(*, crib: bool = False) -> Table:
    """The exact number of (four cards, starter) combinations with each score 0..29, over all
    12,994,800 (`crib=True`: counted as cribs, which score a flush only with all five)."""
    table = [0] * (MAX_SCORE + 1)
    ranks = range(1, 14)
    base_of: dict[tuple[int, ...], int] = {}
    for hand in combinations_with_replacement(ranks, 4):
        for starter in ranks:
            if hand[0] == hand[3] == starter:
                continue  # no fifth card of a rank
            key = tuple(sorted((*hand, starter)))
            base = base_of.get(key)
            if base is None:
                base = base_of[key] = rank_points(key)
            for bonus, ways in _bonus_spread(_signature(hand, starter), crib):
                table[base + bonus] += ways
    return table


def random_combinations(n: int, rng: random.Random) -> Iterator[tuple[tuple[Card, ...], Card]]:
    """`n` (hand, starter) combinations drawn uniformly (with replacement)."""
    cards = deck()
    for _ in range(n):
        five = rng.sample(cards, 5)
        yield tuple(five[:4]), five[4]


def straightforward_table(
    pairs: Iterable[tuple[Sequence[Card], Card]], *, crib: bool = False
) -> Table:
    """The slow reference: each (hand, starter) counted one by one with `count_hand`."""
    table = [0] * (MAX_SCORE + 1)
    for hand, starter in pairs:
        table[count_hand(hand, starter, crib=crib).total] += 1
    return table
