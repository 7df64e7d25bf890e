"""`make bench`: the show counter against its peers on PyPI.

Counts the same seeded random hands (four cards and a starter, drawn uniformly) with this
project's public counter, as the number alone (`hand_points`) and with the breakdown
(`count_hand`), and with the PyPI packages `cribbage-scorer` and `cribbage`. The peers are
installed by this benchmark into a scratch virtual environment under build/ (never into the
project's environment); a peer that cannot be installed is skipped, saying why. Each counter runs
in a fresh interpreter (bench/show_worker.py), so the first pass starts with nothing remembered;
the best of the passes is the steady speed. Every peer's score is checked against ours on every
hand, and the hands where they differ are printed with our breakdown, to be judged with the
rules. Prints figures only: nothing here asserts speed.

    .venv/bin/python bench/show_bench.py [--hands N] [--seed S] [--passes P]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from cribboard.rules import Card, Kind, count_hand, format_cards
from cribboard.rules.allhands import random_combinations

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "bench" / "show_worker.py"
PEER_VENV = ROOT / "build" / "show-bench-peers"
PEERS = {"cribbage-scorer": ("cribbage-scorer==0.2.5", "cribbage_scorer")}
PEERS["cribbage"] = ("cribbage==1.3.2", "cribbage")
HANDS = 20_000
SEED = 1
PASSES = 3
TARGET = 3.0  # the number alone, against the fastest peer
EXAMPLES = 3


def peer_python() -> tuple[Path | None, dict[str, str]]:
    """The scratch environment's interpreter and, for each peer, why it is missing (if it is)."""
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        made = subprocess.run(
            [sys.executable, "-m", "venv", str(PEER_VENV)], capture_output=True, text=True
        )
        if made.returncode != 0:
            why = last_line(made.stderr) or f"exit {made.returncode}"
            return None, {name: f"no scratch environment: {why}" for name in PEERS}
    missing = {}
    for name, (requirement, module) in PEERS.items():
        if importable(python, module):
            continue
        why = install(python, requirement)
        if why is None and not importable(python, module):
            why = f"{module} does not import after installing {requirement}"
        if why is not None:
            missing[name] = why
    return python, missing


def install(python: Path, requirement: str) -> str | None:
    """pip install into the scratch environment; why not, if it failed."""
    command = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    try:
        done = subprocess.run([*command, requirement], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return f"pip install {requirement} took over 600 s"
    if done.returncode != 0:
        return f"pip install {requirement} failed: {last_line(done.stderr) or done.returncode}"
    return None


def importable(python: Path, module: str) -> bool:
    return (
        subprocess.run([str(python), "-c", f"import {module}"], capture_output=True).returncode == 0
    )


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if not line.startswith("WARNING")]
    return lines[-1] if lines else ""


def run_worker(python: Path, counter: str, hands_file: Path, passes: int) -> dict[str, list[float]]:
    done = subprocess.run(
        [str(python), str(WORKER), counter, str(hands_file), str(passes)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{counter}: {last_line(done.stderr) or done.returncode}")
    result: dict[str, list[float]] = json.loads(done.stdout)
    return result


def features(hand: tuple[Card, ...], starter: Card) -> str:
    """What our breakdown holds that a counter could get wrong: runs, flush, nobs."""
    count = count_hand(hand, starter)
    runs = Counter(len(combo.cards) for combo in count.of_kind(Kind.RUN))
    said = [f"{n} run{'s' if n > 1 else ''} of {length}" for length, n in sorted(runs.items())]
    if count.points(Kind.FLUSH):
        said.append(f"flush of {count.points(Kind.FLUSH)}")
    if count.points(Kind.NOBS):
        said.append("nobs")
    return ", ".join(said) or "fifteens and pairs only"


def breakdown(hand: tuple[Card, ...], starter: Card) -> str:
    count = count_hand(hand, starter)
    parts = Counter(combo.label() for combo in count.combos)
    points = {label: 0 for label in parts}
    for combo in count.combos:
        points[combo.label()] += combo.points
    return " + ".join(f"{label} x{n} {points[label]}" for label, n in parts.items()) or "0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=HANDS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--passes", type=int, default=PASSES)
    args = parser.parse_args([] if __name__ != "__main__" else None)

    drawn = list(random_combinations(args.hands, random.Random(args.seed)))
    print(
        f"The show: {args.hands:,} random hands and starters (seed {args.seed}), "
        f"{args.passes} passes each, every counter in a fresh interpreter"
    )
    python, missing = peer_python()
    counters = [(name, Path(sys.executable)) for name in ("ours-number", "ours-breakdown")]
    for name in PEERS:
        if name in missing or python is None:
            print(f"   {name}: skipped ({missing.get(name, 'no scratch environment')})")
        else:
            counters.append((name, python))

    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        hands_file = Path(scratch) / "hands.json"
        hands_file.write_text(
            json.dumps([[[c.rank, c.suit] for c in (*hand, starter)] for hand, starter in drawn])
        )
        for name, interpreter in counters:
            results[name] = run_worker(interpreter, name, hands_file, args.passes)

    def speed(name: str, which: str) -> float:
        seconds = results[name]["seconds"]
        return args.hands / (seconds[0] if which == "first" else min(seconds))

    peers = [name for name, _ in counters if name in PEERS]
    fastest = max(peers, key=lambda name: speed(name, "best"), default=None)
    print(f"   {'counter':<34}{'first pass':>14}{'best pass':>14}   hands/s")
    labels = {
        "ours-number": "cribboard hand_points (number)",
        "ours-breakdown": "cribboard count_hand (breakdown)",
    }
    for name, _ in counters:
        line = f"   {labels.get(name, name):<34}{speed(name, 'first'):>14,.0f}{speed(name, 'best'):>14,.0f}"
        if fastest is not None and name not in PEERS:
            line += (
                f"   {speed(name, 'first') / speed(fastest, 'first'):.1f}x / "
                f"{speed(name, 'best') / speed(fastest, 'best'):.1f}x {fastest}"
            )
        print(line)
    if fastest is not None:
        ratio = speed("ours-number", "best") / speed(fastest, "best")
        cold = speed("ours-number", "first") / speed(fastest, "first")
        verdict = "met" if min(ratio, cold) >= TARGET else "NOT met"
        print(
            f"   target: the number at least {TARGET:g}x the fastest peer ({fastest}): "
            f"{cold:.1f}x on the first pass, {ratio:.1f}x at best: {verdict}"
        )

    ours = results["ours-number"]["scores"]
    if results["ours-breakdown"]["scores"] != ours:
        print("   ours: the number and the breakdown's total DISAGREE")
    for name in peers:
        theirs = results[name]["scores"]
        differ = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
        print(f"   {name}: agrees on {len(ours) - len(differ):,} of {len(ours):,} hands")
        if not differ:
            continue
        kinds = Counter((features(*drawn[i]), int(ours[i] - theirs[i])) for i in differ)
        for (what, gap), n in kinds.most_common():
            print(
                f"      {n:>6} hand{'s' if n > 1 else ''} with {what}: {name} says {abs(gap)} "
                f"{'less' if gap > 0 else 'more'}"
            )
        for i in differ[:EXAMPLES]:
            hand, starter = drawn[i]
            print(
                f"      e.g. {format_cards(hand)} + {starter}: ours {int(ours[i])} "
                f"({breakdown(hand, starter)}), {name} {int(theirs[i])}"
            )


if __name__ == "__main__":
    main()
