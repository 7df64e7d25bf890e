"""The cribbage rules engine: cards, counting hands and cribs, the play, and the game; and
`scorekeeping`, the rules a scorekeeper keeps for a game played with real cards.

from cribboard.rules import parse_cards, parse_card, count_hand, hand_points
count_hand(parse_cards("5H 5S 5C JD"), parse_card("5D")).total   # 29, with the breakdown
hand_points(parse_cards("5H 5S 5C JD"), parse_card("5D"))         # 29, the number alone, fast
"""

from __future__ import annotations

from cribboard.rules.cards import (
    JACK,
    SUITS,
    Card,
    check_distinct,
    deck,
    format_cards,
    parse_card,
    parse_cards,
    shuffled_deck,
)
from cribboard.rules.errors import CardError, IllegalMove, RulesError
from cribboard.rules.game import (
    Deal,
    Game,
    Phase,
    Reason,
    Result,
    ScoreEvent,
    ShowResult,
    cut_for_deal,
)
from cribboard.rules.pegging import Laid, Pegging, PlayResult, peg_combos
from cribboard.rules.scorekeeping import Scorekeeping
from cribboard.rules.show import (
    Combo,
    HandCount,
    Kind,
    ShowHand,
    count_hand,
    hand_points,
    points_of_ranks,
    show_order,
)
from cribboard.rules.variants import (
    FIVE_CARD,
    FOUR_PLAYER,
    SHORT,
    STANDARD,
    THREE_PLAYER,
    VARIANTS,
    Variant,
)

__all__ = [
    "JACK",
    "SUITS",
    "Card",
    "check_distinct",
    "deck",
    "format_cards",
    "parse_card",
    "parse_cards",
    "shuffled_deck",
    "CardError",
    "IllegalMove",
    "RulesError",
    "Deal",
    "Game",
    "Phase",
    "Reason",
    "Result",
    "ScoreEvent",
    "ShowResult",
    "cut_for_deal",
    "Laid",
    "Pegging",
    "PlayResult",
    "peg_combos",
    "Scorekeeping",
    "Combo",
    "HandCount",
    "Kind",
    "ShowHand",
    "count_hand",
    "hand_points",
    "points_of_ranks",
    "show_order",
    "FIVE_CARD",
    "FOUR_PLAYER",
    "SHORT",
    "STANDARD",
    "THREE_PLAYER",
    "VARIANTS",
    "Variant",
]
