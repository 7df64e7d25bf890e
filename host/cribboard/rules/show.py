"""The show: counting a hand or the crib with the starter, with a breakdown.

    >>> count = count_hand(parse_cards("5H 5S 5C JD"), parse_card("5D"))
    >>> count.total, count.points(Kind.FIFTEEN), count.points(Kind.PAIR), count.points(Kind.NOBS)
    (29, 16, 12, 1)

Each fifteen, pair and run is listed with its cards (cards may be reused across combinations);
a four-card run is one run of 4, duplicate ranks multiply runs (8-7-7-6 with a 2: two runs of
three). Flush: every hand card of one suit scores one per hand card (4 in the six-card game), one
more with the starter; the crib scores a flush only when all its cards and the starter share a
suit. His nobs: the jack of the starter's suit in the hand or crib, 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations, product

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


def count_hand(hand: Sequence[Card], starter: Card | None, *, crib: bool = False) -> HandCount:
    """Count a hand of 3 or 4 cards (a crib: 4) with its starter.

    `starter=None` counts the given cards alone (fifteens, pairs, runs, a hand flush; no nobs),
    e.g. the worked check 5-5-5-K = 14. Raises CardError for a wrong number of cards or a card
    given twice.
    """
    hand = tuple(hand)
    sizes = (4,) if crib else (3, 4)
    if len(hand) not in sizes:
        what = "a crib has 4 cards" if crib else "a hand has 4 cards (3 in the five-card game)"
        raise CardError(f"{what}, not {len(hand)}")
    if crib and starter is None:
        raise CardError("a crib is counted with its starter")
    cards = hand + ((starter,) if starter is not None else ())
    check_distinct(cards)
    combos = [*fifteens(cards), *pairs(cards), *runs(cards)]
    flush = _flush(hand, starter, crib)
    if flush is not None:
        combos.append(flush)
    if starter is not None:
        combos.extend(
            Combo(Kind.NOBS, 1, (card,))
            for card in hand
            if card.rank == JACK and card.suit == starter.suit
        )
    return HandCount(hand, starter, crib, tuple(combos))


def fifteens(cards: Sequence[Card]) -> list[Combo]:
    """Every distinct set of cards whose values add up to 15: 2 each."""
    found = []
    for size in range(2, len(cards) + 1):
        for subset in combinations(cards, size):
            if sum(card.value for card in subset) == 15:
                found.append(Combo(Kind.FIFTEEN, 2, subset))
    return found


def pairs(cards: Sequence[Card]) -> list[Combo]:
    """Every pair of cards of the same rank: 2 each (three of a kind is 3 pairs, 6)."""
    return [Combo(Kind.PAIR, 2, (a, b)) for a, b in combinations(cards, 2) if a.rank == b.rank]


def runs(cards: Sequence[Card]) -> list[Combo]:
    """Every run of three or more consecutive ranks (the ace low only), 1 per card; only
    maximal runs count, and each duplicate rank in a run makes another run."""
    by_rank: dict[int, list[Card]] = {}
    for card in sorted(cards):
        by_rank.setdefault(card.rank, []).append(card)
    found: list[Combo] = []
    rank = 1
    while rank <= 13:
        if rank not in by_rank:
            rank += 1
            continue
        end = rank
        while end + 1 in by_rank:
            end += 1
        length = end - rank + 1
        if length >= 3:
            for choice in product(*(by_rank[r] for r in range(rank, end + 1))):
                found.append(Combo(Kind.RUN, length, choice))
        rank = end + 1
    return found


def _flush(hand: tuple[Card, ...], starter: Card | None, crib: bool) -> Combo | None:
    suit = hand[0].suit
    if any(card.suit != suit for card in hand):
        return None
    with_starter = starter is not None and starter.suit == suit
    if crib and not with_starter:
        return None
    if with_starter:
        assert starter is not None
        return Combo(Kind.FLUSH, len(hand) + 1, hand + (starter,))
    return Combo(Kind.FLUSH, len(hand), hand)
