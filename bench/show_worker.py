"""One counter of the show benchmark (bench/show_bench.py), timed in a fresh interpreter.

    python bench/show_worker.py COUNTER HANDS.json PASSES

Reads the hands (each five [rank, suit] pairs, rank 1..13, suit one of C D H S, the starter
last), turns them into the counter's own cards (not timed), counts them all PASSES times and
prints one JSON line: the scores of the first pass and the seconds of each pass. It imports only
the counter it times, so a peer runs in the scratch environment it was installed into, without
this project.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

Hand = list[list[Any]]
Counter = tuple[Callable[[Any], int], list[Any]]


def ours_number(hands: list[Hand]) -> Counter:
    from cribboard.rules import Card, hand_points

    prepared = [[Card(rank, suit) for rank, suit in hand] for hand in hands]
    return (lambda five: hand_points(five[:4], five[4])), prepared


def ours_breakdown(hands: list[Hand]) -> Counter:
    from cribboard.rules import Card, count_hand

    prepared = [[Card(rank, suit) for rank, suit in hand] for hand in hands]
    return (lambda five: count_hand(five[:4], five[4]).total), prepared


def cribbage_scorer(hands: list[Hand]) -> Counter:
    """PyPI `cribbage-scorer`: cards are (rank, suit letter) tuples."""
    from cribbage_scorer.cribbage_scorer import show_calc_score

    prepared = [[(rank, suit) for rank, suit in hand] for hand in hands]
    return (lambda five: show_calc_score(five[4], five[:4])[0]), prepared


def cribbage(hands: list[Hand]) -> Counter:
    """PyPI `cribbage`: cards are Card(index), index = suit * 13 + rank - 1, suits d c h s."""
    from cribbage.card import Card
    from cribbage.score import score_hand

    suits = "DCHS"
    prepared = [[Card(suits.index(suit) * 13 + rank - 1) for rank, suit in hand] for hand in hands]
    return (lambda five: score_hand(five[:4], five[4])), prepared


COUNTERS = {
    "ours-number": ours_number,
    "ours-breakdown": ours_breakdown,
    "cribbage-scorer": cribbage_scorer,
    "cribbage": cribbage,
}


def main() -> None:
    name, path, passes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(path) as file:
        hands = json.load(file)
    count, prepared = COUNTERS[name](hands)
    first: list[int] = []
    seconds = []
    for _ in range(passes):
        started = time.perf_counter()
        scores = [count(five) for five in prepared]
        seconds.append(time.perf_counter() - started)
        first = first or scores
    print(json.dumps({"scores": first, "seconds": seconds}))


if __name__ == "__main__":
    main()
