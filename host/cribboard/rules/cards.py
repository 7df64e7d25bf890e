"""Cards: written as short text, `5H`, `JD`, `10S` or `TS`, `AC` (any case; suits C D H S).

>>> parse_card("10s"), parse_card("TS"), str(parse_card("jd"))
(Card(rank=10, suit='S'), Card(rank=10, suit='S'), 'JD')
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cribboard.i18n import _
from cribboard.rules.errors import CardError

SUITS = "CDHS"
"""The suits in order: clubs, diamonds, hearts, spades."""

RANK_NAMES = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
"""How each rank (1..13) is written; index 0 is unused."""

JACK = 11
_RANK_WORDS = {name: rank for rank, name in enumerate(RANK_NAMES) if name}
_RANK_WORDS["T"] = 10
_RANK_WORDS["1"] = 0  # recognised only to give a helpful message


@dataclass(frozen=True, order=True)
class Card:
    """One card. `rank` is 1 (ace) .. 13 (king); `suit` one of C D H S. Cards sort by rank,
    then suit."""

    rank: int
    suit: str

    def __post_init__(self) -> None:
        if not 1 <= self.rank <= 13 or self.suit not in SUITS or len(self.suit) != 1:
            raise CardError(f"no such card: rank {self.rank!r}, suit {self.suit!r}")

    @property
    def value(self) -> int:
        """The card's value for 15 and 31: ace 1, number cards their face, J Q K 10."""
        return min(self.rank, 10)

    @property
    def index(self) -> int:
        """0..51, rank-major: `deck()[card.index] == card`."""
        return (self.rank - 1) * 4 + SUITS.index(self.suit)

    def __str__(self) -> str:
        return RANK_NAMES[self.rank] + self.suit


def parse_card(text: str) -> Card:
    """A card from its short text (`5H`, `jd`, `10S`, `TS`, `AC`); raises CardError, naming
    the card as cards are written (`1H`, whatever case it was typed in)."""
    word = text.strip().upper()
    if len(word) < 2:
        raise CardError(
            _("bad card %(text)r: write rank then suit, like 5H, JD, 10S or AC", text=word)
        )
    rank_word, suit = word[:-1], word[-1]
    rank = _RANK_WORDS.get(rank_word)
    if rank == 0:
        raise CardError(
            _(
                "bad card %(text)r: unknown rank %(rank)r (an ace is A); ranks are A 2-10 (or T) "
                "J Q K",
                text=word,
                rank=rank_word,
            )
        )
    if rank is None:
        raise CardError(
            _(
                "bad card %(text)r: unknown rank %(rank)r; ranks are A 2-10 (or T) J Q K",
                text=word,
                rank=rank_word,
            )
        )
    if suit not in SUITS:
        # Translators: the suits are typed as C D H S (clubs, diamonds, hearts, spades) in
        # every language.
        raise CardError(
            _(
                "bad card %(text)r: unknown suit %(suit)r; suits are C D H S",
                text=word,
                suit=suit,
            )
        )
    return Card(rank, suit)


def parse_cards(texts: str | Iterable[str]) -> tuple[Card, ...]:
    """Several cards, from a list of words or one string of words (`"5H 5S JD"`, commas
    allowed); raises CardError for a bad card or a card given twice."""
    words = texts.replace(",", " ").split() if isinstance(texts, str) else list(texts)
    cards = tuple(parse_card(word) for word in words)
    check_distinct(cards)
    return cards


def check_distinct(cards: Sequence[Card]) -> None:
    """Raise CardError if a card appears twice."""
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            raise CardError(_("card %(card)s given twice", card=card))
        seen.add(card)


def format_cards(cards: Iterable[Card]) -> str:
    """Cards as their short texts, separated by spaces."""
    return " ".join(str(card) for card in cards)


def deck() -> list[Card]:
    """A fresh 52-card deck in order (rank-major: AC AD AH AS 2C ...)."""
    return [Card(rank, suit) for rank in range(1, 14) for suit in SUITS]


def shuffled_deck(rng: random.Random | None = None) -> list[Card]:
    """A shuffled 52-card deck (`rng` for repeatable deals)."""
    cards = deck()
    (rng or random.Random()).shuffle(cards)
    return cards
