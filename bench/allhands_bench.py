"""`cribboard count --all-hands` against the straightforward way.

The fast table (rank patterns + flush/nobs by signature, cribboard.rules.allhands) is timed in
this process and as the real command. The straightforward implementation counts each
(hand, starter) combination one by one with the engine's `count_hand`; all 12,994,800 take
minutes, so by default it runs on a uniform random sample (--sample, default 200,000) and the
full time is extrapolated from it (the report says so). `--full` runs it on every combination
(spread over --jobs processes, by starter card) and checks the two tables are equal exactly.

    .venv/bin/python bench/allhands_bench.py [--sample N] [--crib] [--full [--jobs J]]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from itertools import combinations
from pathlib import Path

from cribboard.rules import allhands
from cribboard.rules.cards import deck
from cribboard.rules.show import count_hand


def starter_table(args: tuple[int, bool]) -> list[int]:
    """The straightforward table for one starter card: every hand from the other 51 cards."""
    index, crib = args
    cards = deck()
    starter = cards.pop(index)
    table = [0] * (allhands.MAX_SCORE + 1)
    for hand in combinations(cards, 4):
        table[count_hand(hand, starter, crib=crib).total] += 1
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--crib", action="store_true", help="count as cribs")
    parser.add_argument("--full", action="store_true", help="all 12,994,800, checked exactly")
    parser.add_argument("--jobs", type=int, default=1, help="processes for --full")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of the fast table")
    args = parser.parse_args()
    n = allhands.COMBINATIONS
    print(
        f"all four-card hands x starters: {n:,} combinations"
        f"{' (counted as cribs)' if args.crib else ''}"
    )

    times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        fast = allhands.all_hands_table(crib=args.crib)
        times.append(time.perf_counter() - started)
    assert sum(fast) == n
    print(
        f"fast table, in process: best {min(times):.3f} s, median "
        f"{sorted(times)[len(times) // 2]:.3f} s of {args.runs} runs"
    )
    command = [str(Path(sys.executable).parent / "cribboard"), "count", "--all-hands"]
    if args.crib:
        command.append("--crib")
    started = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - started
    printed = {
        int(a): int(b) for a, b, *_ in (line.split() for line in out.splitlines()) if a.isdigit()
    }
    assert printed == dict(enumerate(fast)), "the command's table differs"
    print(f"`{' '.join(command[-3:])}` wall clock, process start to exit: {wall:.3f} s")

    if args.full:
        started = time.perf_counter()
        with ProcessPoolExecutor(args.jobs) as pool:
            parts = list(pool.map(starter_table, [(i, args.crib) for i in range(52)]))
        slow_time = time.perf_counter() - started
        slow = [sum(column) for column in zip(*parts)]
        print(
            f"straightforward, all {n:,} counted with count_hand on {args.jobs} process(es): "
            f"{slow_time:.1f} s wall"
        )
        print("tables equal exactly" if slow == fast else "TABLES DIFFER")
        for score, (a, b) in enumerate(zip(fast, slow)):
            if a != b:
                print(f"   {score}: fast {a} straightforward {b}")
        return 0 if slow == fast else 1

    rng = random.Random(args.seed)
    started = time.perf_counter()
    sampled = allhands.straightforward_table(
        allhands.random_combinations(args.sample, rng), crib=args.crib
    )
    slow_time = time.perf_counter() - started
    estimate = slow_time / args.sample * n
    print(
        f"straightforward on a random sample of {args.sample:,}: {slow_time:.1f} s, "
        f"{1e6 * slow_time / args.sample:.1f} us each"
    )
    print(
        f"   extrapolated to all {n:,}: {estimate:.0f} s (~{estimate / 60:.1f} min), an "
        "estimate, not a run (--full runs it)"
    )
    print(
        f"speed-up: {estimate / min(times):,.0f}x in process, {estimate / wall:,.0f}x against "
        "the whole command"
    )
    worst = max(abs(sampled[s] / args.sample - fast[s] / n) for s in range(len(fast)))
    print(
        f"sample agrees with the exact table: largest difference in a score's share "
        f"{100 * worst:.3f} percentage points"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
