"""`cribboard count`: count a hand or crib with its starter, or tabulate every hand.

cribboard count 5H 5S 5C JD 5D          # the hand, then the starter: breakdown and total
cribboard count --crib 2H 4H 6H 8H 10H  # a crib (a flush only with all five)
cribboard count --no-starter 5H 5S 5C KD
cribboard count --all-hands [--crib]    # hands per score over all 12,994,800, and the time
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from cribboard.rules.allhands import COMBINATIONS, all_hands_table
from cribboard.rules.cards import format_cards, parse_cards
from cribboard.rules.errors import CardError, RulesError
from cribboard.rules.show import HandCount, count_hand


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Register `count` on the command line's sub-command parsers."""
    count = sub.add_parser(
        "count",
        help="count a hand or crib with its starter (or --all-hands)",
        description="Count a hand or crib: the cards, the starter last "
        "(5H JD 10S or TS AC; suits C D H S).",
    )
    count.add_argument(
        "cards", nargs="*", metavar="CARD", help="3 or 4 hand cards (a crib: 4), then the starter"
    )
    count.add_argument(
        "--crib", action="store_true", help="count as the crib (flush only with all five)"
    )
    count.add_argument("--no-starter", action="store_true", help="the cards alone, no starter")
    count.add_argument(
        "--all-hands",
        action="store_true",
        help="how many of the 12,994,800 "
        "hand + starter combinations make each score, and the time taken",
    )


def run(args: argparse.Namespace) -> int:
    """Run `count`; raises a CribboardError (one line) for bad cards or options."""
    if args.all_hands:
        if args.cards or args.no_starter:
            raise RulesError("--all-hands takes no cards and no --no-starter")
        started = time.perf_counter()
        table = all_hands_table(crib=args.crib)
        elapsed = time.perf_counter() - started
        for score, hands in enumerate(table):
            print(score, hands)
        print(f"total {sum(table)} in {elapsed:.3f} s")
        assert sum(table) == COMBINATIONS
        return 0
    cards = parse_cards(args.cards)
    if not cards:
        raise CardError("give the hand's cards, then the starter (or --all-hands)")
    if args.no_starter:
        if args.crib:
            raise RulesError("a crib is counted with its starter")
        hand_count = count_hand(cards, None)
    else:
        if len(cards) < 2:
            raise CardError("give the hand's cards, then the starter")
        hand_count = count_hand(cards[:-1], cards[-1], crib=args.crib)
    print(format_count(hand_count))
    return 0


def format_count(count: HandCount) -> str:
    """The breakdown: a heading, one line per combination (what, points, cards), the total."""
    what = "crib" if count.crib else "hand"
    heading = f"{what} {format_cards(count.hand)}"
    heading += f", starter {count.starter}" if count.starter else " (no starter)"
    lines = [heading]
    for combo in count.combos:
        lines.append(f"  {combo.label():<12}{combo.points:>3}  {format_cards(combo.cards)}")
    lines.append(f"  {'total':<12}{count.total:>3}")
    return "\n".join(lines)
