"""Games made up for the record of games (cribboard.record), for its tests and benchmark: each
game is played on the core's GameState (the board's own rules) with made-up counts, and every
state and note goes into the record the way a host tells them. What was played is kept on the
side (`Played`), so that a test counts the statistics itself, without the record.

    played = play_games(record, 20, random.Random(7))
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from cribboard.record.store import Note, Record, Seen
from cribcore.state import RESULT_NAMES, GameState

PEOPLE = ("Ann", "Bob", "Cy", "Di")
HAND_COUNTS = (0, 2, 4, 4, 5, 6, 6, 7, 8, 8, 9, 10, 12, 12, 14, 16, 20, 24, 29)
"""What a made-up hand counts (drawn evenly from these: low counts come more often)."""


@dataclass
class Played:
    """One game as the generator played it: the players by side, each score (side, kind,
    points; a hand of nothing with 0 points), its deals (begun), and the end."""

    names: tuple[str, str]
    target: int
    scores: list[tuple[int, str, int]] = field(default_factory=list)
    deals: int = 0
    winner: int | None = None
    result: str = "playing"
    front: tuple[int, int] = (0, 0)


def _seen(game: GameState) -> Seen:
    return Seen(
        target=game.target,
        sides=2,
        dealer=game.dealer,
        winner=None if game.winner < 0 else game.winner,
        result=RESULT_NAMES[game.result()],
        front=tuple(game.front[:2]),
        back=tuple(game.back[:2]),
        games=tuple(game.games[:2]),
        undo=game.undo_count,
        skunk_double=game.skunk_double,
    )


def play_games(
    record: Record,
    count: int,
    rng: random.Random,
    *,
    board: str = "gen:board",
    people: tuple[str, ...] = PEOPLE,
    source: str = "keep",
    unfinished_every: int = 7,
    seated: bool = False,
) -> list[Played]:
    """Play `count` games on one board into `record`, two of `people` in each (`seated`: the
    first two, in their order, in every game, as the players of a match); every
    `unfinished_every`-th is left before its end (a new game started over it)."""
    state = GameState()
    played: list[Played] = []
    for number in range(count):
        pair = list(people[:2]) if seated else rng.sample(people, 2)
        target = rng.choice((121, 121, 121, 61))
        state.new_game(target, 2)
        game = record.observe(board, _seen(state), source=source, gap=number == 0)
        record.name_seats(game, pair)
        one = Played((pair[0], pair[1]), target)
        played.append(one)
        stop_at = rng.randint(3, 6) if number % unfinished_every == unfinished_every - 1 else None

        def peg(side: int, kind: str, points: int, game: int = game, one: Played = one) -> None:
            if points:
                state.peg(side, points)
                record.observe(board, _seen(state), source=source)
            record.note(game, Note(kind, side, points, side))
            scored = min(points, state.front[side] - state.back[side]) if points else 0
            one.scores.append((side, kind, scored))

        one.deals = 1  # the first deal; each pass of the deal starts another
        while state.winner < 0:
            if stop_at is not None and one.deals > stop_at:
                break
            dealer = state.dealer
            pone = 1 - dealer
            if rng.random() < 1 / 13:
                peg(dealer, "heels", 2)
            for _ in range(rng.randint(1, 4)):
                if state.winner >= 0:
                    break
                peg(rng.choice((0, 1)), "play", rng.randint(1, 3))
            for side, kind in ((pone, "hand"), (dealer, "hand"), (dealer, "crib")):
                if state.winner >= 0:
                    break
                peg(side, kind, rng.choice(HAND_COUNTS))
                if state.winner < 0 and rng.random() < 0.08:
                    peg(1 - side, "muggins", rng.randint(1, 4))
            if state.winner < 0:
                state.next_dealer()
                record.observe(board, _seen(state), source=source)
                one.deals += 1
        one.winner = None if state.winner < 0 else state.winner
        one.result = RESULT_NAMES[state.result()]
        one.front = (state.front[0], state.front[1])
    return played
