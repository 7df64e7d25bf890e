"""The show: counting a hand or the crib with the starter, as a number or with a breakdown.

    >>> count = count_hand(parse_cards("5H 5S 5C JD"), parse_card("5D"))
    >>> count.total, count.points(Kind.FIFTEEN), count.points(Kind.PAIR), count.points(Kind.NOBS)
    (29, 16, 12, 1)
    >>> hand_points(parse_cards("5H 5S 5C JD"), parse_card("5D"))
    29

Each fifteen, pair and run is listed with its cards (cards may be reused across combinations);
a four-card run is one run of 4, duplicate ranks multiply runs (8-7-7-6 with a 2: two runs of
three). Flush: every hand card of one suit scores one per hand card (4 in the six-card game), one
more with the starter; the crib scores a flush only when all its cards and the starter share a
suit. His nobs: the jack of the starter's suit in the hand or crib, 1. `show_order`: whose hand
counts when (the one order, for the engine's deals and the scorekeeper alike).

One counter serves both forms. Fifteens, pairs and runs depend only on the cards' ranks: they are
found by going through positions (`_fifteens`, `_pairs`, `_runs`, which yield the positions of
each combination). `count_hand` turns those positions into cards; `hand_points` only needs their
points, which it remembers for each multiset of ranks (a few thousand at most), so a hand the
computer player weighs for the thousandth time costs a dictionary look-up plus the suits.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from itertools import combinations, product
from typing import NamedTuple

from cribboard.i18n import _
from cribboard.rules.cards import JACK, Card, check_distinct, format_cards
from cribboard.rules.errors import CardError


class Kind(StrEnum):
    """What a combination scores for, in the show and in the play."""

    FIFTEEN = "fifteen"
    PAIR = "pair"
    RUN = "run"
    FLUSH = "flush"
    NOBS = "nobs"
    # the play only
    THIRTY_ONE = "thirty-one"
    PAIR_ROYAL = "pair royal"
    DOUBLE_PAIR_ROYAL = "double pair royal"
    GO = "go"
    LAST_CARD = "last card"


@dataclass(frozen=True)
class Combo:
    """One scoring combination: what it is, its points, and the cards that make it."""

    kind: Kind
    points: int
    cards: tuple[Card, ...]

    def label(self) -> str:
        """`fifteen`, `pair`, `run of 3`, `flush`, `nobs`, ..."""
        if self.kind is Kind.RUN:
            return f"run of {len(self.cards)}"
        return self.kind.value

    def __str__(self) -> str:
        return f"{self.label()} {self.points}: {format_cards(self.cards)}"


@dataclass(frozen=True)
class HandCount:
    """A counted hand (or crib): the cards, the starter, and every combination it scores."""

    hand: tuple[Card, ...]
    starter: Card | None
    crib: bool
    combos: tuple[Combo, ...]

    @property
    def total(self) -> int:
        """The hand's score."""
        return sum(combo.points for combo in self.combos)

    def points(self, kind: Kind) -> int:
        """The points scored by one kind of combination."""
        return sum(combo.points for combo in self.combos if combo.kind is kind)

    def of_kind(self, kind: Kind) -> tuple[Combo, ...]:
        """The combinations of one kind."""
        return tuple(combo for combo in self.combos if combo.kind is kind)


class ShowHand(NamedTuple):
    """One hand of the show: whose it is (`seat`), and whether it is that seat's crib."""

    seat: int
    crib: bool


def show_order(dealer: int, players: int) -> list[ShowHand]:
    """The hands of the show in counting order: from the pone (the seat after `dealer`) round
    the table to the dealer, then the dealer's crib last. The order matters: the game ends the
    moment a side reaches the target, so the pone can peg out first."""
    hands = [ShowHand((dealer + 1 + i) % players, False) for i in range(players)]
    return [*hands, ShowHand(dealer, True)]


def count_hand(hand: Sequence[Card], starter: Card | None, *, crib: bool = False) -> HandCount:
    """Count a hand of 3 or 4 cards (a crib: 4) with its starter, with every combination.

    `starter=None` counts the given cards alone (fifteens, pairs, runs, a hand flush; no nobs),
    e.g. the worked check 5-5-5-K = 14. Raises CardError for a wrong number of cards or a card
    given twice. `hand_points` gives the same total, much faster, without the breakdown.
    """
    hand = tuple(hand)
    _check_size(hand, starter, crib)
    cards = hand + ((starter,) if starter is not None else ())
    check_distinct(cards)
    ranks = [card.rank for card in cards]
    combos = [Combo(Kind.FIFTEEN, 2, _pick(cards, at)) for at in _fifteens(ranks)]
    combos.extend(Combo(Kind.PAIR, 2, _pick(cards, at)) for at in _pairs(ranks))
    in_order = sorted(cards)
    combos.extend(
        Combo(Kind.RUN, len(at), _pick(in_order, at))
        for at in _runs([card.rank for card in in_order])
    )
    flush = _flush(hand, starter, crib)
    if flush:
        combos.append(Combo(Kind.FLUSH, len(flush), flush))
    combos.extend(Combo(Kind.NOBS, 1, (jack,)) for jack in _nobs(hand, starter))
    return HandCount(hand, starter, crib, tuple(combos))


def hand_points(hand: Sequence[Card], starter: Card | None, *, crib: bool = False) -> int:
    """The count of `hand` with `starter`: `count_hand(...).total` without the breakdown, for
    code that counts many hands (the computer player weighs every discard against every
    starter). Same arguments and errors as `count_hand`."""
    _check_size(hand, starter, crib)
    key = 0
    for card in hand:
        key += _RANK_BIT[card.rank]
    if starter is not None:
        key += _RANK_BIT[starter.rank]
    points = _POINTS_BY_RANKS.get(key)
    if points is None:
        ranks = [card.rank for card in hand]
        if starter is not None:
            ranks.append(starter.rank)
        points = _remember(key, ranks)
    if points < 0:  # a rank held twice or more: the same card may have been given twice
        check_distinct((*hand, starter) if starter is not None else hand)
        points = -1 - points
    return points + len(_flush(hand, starter, crib)) + len(_nobs(hand, starter))


def points_of_ranks(ranks: Iterable[int]) -> int:
    """Fifteens, pairs and runs of up to five cards with these ranks (1..13): the part of a
    count that does not depend on suits, e.g. for working out a crib's worth by rank."""
    ranks = tuple(ranks)
    if len(ranks) > 5 or not all(1 <= rank <= 13 for rank in ranks):
        raise CardError(f"ranks of up to five cards, each 1..13, not {ranks}")
    key = 0
    for rank in ranks:
        key += _RANK_BIT[rank]
    points = _POINTS_BY_RANKS.get(key)
    if points is None:
        points = _remember(key, ranks)
    return points if points >= 0 else -1 - points


# --- the counter -------------------------------------------------------------------------------

_VALUE = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
"""A rank's value for 15 (index 0 unused)."""

_RANK_BIT = tuple(1 << (3 * rank) for rank in range(14))
"""A multiset of ranks as one integer: 3 bits per rank hold how many cards of it (up to 7)."""

_POINTS_BY_RANKS: dict[int, int] = {}
"""Fifteens, pairs and runs per multiset of ranks (a few thousand at most); `-1 - points` where
a rank repeats, so that only those hands need the check for a card given twice."""


def _check_size(hand: Sequence[Card], starter: Card | None, crib: bool) -> None:
    size = len(hand)
    if size == 4 and starter is not None:
        return
    if size not in ((4,) if crib else (3, 4)):
        if crib:
            raise CardError(_("a crib has 4 cards, not %(given)d", given=size))
        raise CardError(
            _("a hand has 4 cards (3 in the five-card game), not %(given)d", given=size)
        )
    if crib and starter is None:
        raise CardError(_("a crib is counted with its starter"))


def _remember(key: int, ranks: Sequence[int]) -> int:
    """Count the rank part of a hand whose ranks make `key`, and remember it."""
    points = 2 * len(_fifteens(ranks)) + 2 * len(_pairs(ranks))
    points += sum(len(at) for at in _runs(ranks))
    stored = -1 - points if len(set(ranks)) < len(ranks) else points
    _POINTS_BY_RANKS[key] = stored
    return stored


def _fifteens(ranks: Sequence[int]) -> list[tuple[int, ...]]:
    """The positions of every distinct set of cards whose values add up to 15: 2 each."""
    found = []
    sums = [0] * (1 << len(ranks))  # the value of each set of positions, by bit mask
    for mask, smaller, last, at in _subsets(len(ranks)):
        total = sums[mask] = sums[smaller] + _VALUE[ranks[last]]
        if total == 15:
            found.append(at)
    return found


@cache
def _subsets(n: int) -> tuple[tuple[int, int, int, tuple[int, ...]], ...]:
    """Every non-empty set of n positions, by size and then in the order of `combinations`: its
    bit mask, the mask without its last position (a set listed before it), that position, and
    the positions."""
    return tuple(
        (sum(1 << i for i in at), sum(1 << i for i in at[:-1]), at[-1], at)
        for size in range(1, n + 1)
        for at in combinations(range(n), size)
    )


def _pairs(ranks: Sequence[int]) -> list[tuple[int, int]]:
    """The positions of every pair of cards of the same rank: 2 each (three of a kind is 3
    pairs, 6)."""
    return [(i, j) for i, j in combinations(range(len(ranks)), 2) if ranks[i] == ranks[j]]


def _runs(ranks: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """The positions of every run of three or more consecutive ranks (the ace low only), 1 per
    card; only maximal runs count, and each duplicate rank in a run makes another run. Positions
    of one rank are taken in the order given."""
    at_rank: dict[int, list[int]] = {}
    for position, rank in enumerate(ranks):
        at_rank.setdefault(rank, []).append(position)
    held = sorted(at_rank)
    start = 0
    while start < len(held):
        end = start
        while end + 1 < len(held) and held[end + 1] == held[end] + 1:
            end += 1
        if end - start >= 2:
            yield from product(*(at_rank[rank] for rank in held[start : end + 1]))
        start = end + 1


def _flush(hand: Sequence[Card], starter: Card | None, crib: bool) -> tuple[Card, ...]:
    """The cards of the flush (one point each), or none."""
    suit = hand[0].suit
    for card in hand:
        if card.suit != suit:
            return ()
    if starter is not None and starter.suit == suit:
        return (*hand, starter)
    return () if crib else tuple(hand)


def _nobs(hand: Sequence[Card], starter: Card | None) -> list[Card]:
    """His nobs: the jack of the starter's suit, if the hand holds it."""
    if starter is None:
        return []
    return [card for card in hand if card.rank == JACK and card.suit == starter.suit]


def _pick(cards: Sequence[Card], at: tuple[int, ...]) -> tuple[Card, ...]:
    return tuple(cards[i] for i in at)
