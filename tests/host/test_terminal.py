"""The board drawn in a terminal (cribboard.terminal): frames made by the firmware's own renderer,
read back from the drawing. What `make run`, `play`, `demo`, `status` and `virtual --show` show."""

from __future__ import annotations

import random
import re

import pytest

from cribboard.api import BoardState
from cribboard.names import PLAYER_NAMES
from cribboard.terminal import describe_state, draw_frame, fit_lines, screen_rgb
from cribcore.layout import (
    COLS,
    OFF_BOARD,
    WIN_HOLE,
    hole_for_score,
    lap_gauge_hole,
    skunk_lines,
    track,
)
from cribcore.render import Renderer
from cribcore.state import GameState

_DOT = re.compile(r"\x1b\[38;2;(\d+);(\d+);(\d+)m●")


def frame_of(game: GameState, scale: int = 256, t_ms: int = 0) -> bytes:
    """The frame the board draws for `game`, as the strip gives it off at `scale` (of 256)."""
    renderer = Renderer(None)
    renderer.draw(game, t_ms)
    return bytes(c * scale >> 8 for c in renderer.frame)


def game_with(players: int, target: int, pegs: list[tuple[int, int]]) -> GameState:
    game = GameState(players, target)
    for player, (front, back) in enumerate(pegs):
        if front:
            game.set_pegs(player, front, back)
    return game


def cells(drawing: str) -> dict[int, str]:
    """Hole id -> the plain character the drawing shows for it."""
    lines = drawing.splitlines()
    board = [line for line in lines if " win " not in f" {line} "]
    win_line = next(line for line in lines if line.strip().startswith("win "))
    out = {WIN_HOLE: win_line.split()[-1]}
    for row, line in enumerate(board[:4]):
        marks = line.split()[-COLS:]
        assert len(marks) == COLS, line
        for col, mark in enumerate(marks):
            out[row * COLS + col] = mark
    return out


def dots(drawing: str) -> dict[int, tuple[int, int, int] | None]:
    """Hole id -> the colour of its dot (None: an empty hole)."""
    lines = drawing.splitlines()
    out: dict[int, tuple[int, int, int] | None] = {}
    board = [line for line in lines if "win" not in line][:4]
    for row, line in enumerate(board):
        holes = re.findall(r"\x1b\[38;2;(\d+);(\d+);(\d+)m(●|·)", line)
        assert len(holes) == COLS
        for col, (r, g, b, mark) in enumerate(holes):
            out[row * COLS + col] = (int(r), int(g), int(b)) if mark == "●" else None
    return out


def test_the_back_peg_on_the_second_lap_stands_out_from_the_glow() -> None:
    # The case: blue at 90, back 66: the glow of the home stretch all round.
    game = game_with(2, 121, [(90, 66), (40, 30)])
    frame = frame_of(game)
    drawn = dots(draw_frame(frame, color=True, players=2))
    front = drawn[hole_for_score(2, 0, 90, 121)]
    back = drawn[hole_for_score(2, 0, 66, 121)]
    glow = drawn[hole_for_score(2, 0, 70, 121)]
    assert front and back and glow
    assert max(front) > max(back) > max(glow)  # the order of brightness
    assert back != glow and max(back) - max(glow) >= 50
    # the screen gives off light in the LEDs' proportions (its gamma undoes the lift)
    for score, seen in ((66, back), (70, glow)):
        hole = hole_for_score(2, 0, score, 121)
        led = max(frame[3 * hole : 3 * hole + 3])
        assert (max(seen) / 255) ** 2.2 == pytest.approx(led / 255, rel=0.05)


def test_screen_colour_keeps_order_and_hue() -> None:
    levels = [screen_rgb((0, 0, v))[2] for v in range(256)]
    assert levels == sorted(levels) and levels[0] == 0 and levels[255] == 255
    assert all(a < b for a, b in zip(levels[:50], levels[1:50]))  # dim levels stay apart
    assert screen_rgb((255, 100, 0)) == (255, screen_rgb((0, 100, 0))[1], 0)


@pytest.mark.parametrize("scale", [256, 128, 48])
def test_the_plain_drawing_names_every_peg(scale: int) -> None:
    """Any state a game reaches, at any brightness: each player's front peg is the upper-case
    letter of their colour, the back peg the lower-case one, in the right holes."""
    rng = random.Random(scale)
    for _ in range(150):
        players = rng.choice((2, 3))
        target = rng.choice((61, 121))
        game = GameState(players, target)
        for player in range(players):
            front = rng.randrange(0, target + 1)
            if front:
                lap = 60 if players == 2 else 30
                back = rng.choice([0, rng.randrange(max(0, front - lap + 1), front + 1)])
                back = min(back, target - 1)
                game.set_pegs(player, front, back)
        game.set_dealer(rng.randrange(players))
        drawing = draw_frame(frame_of(game, scale), color=False)
        seen = cells(drawing)
        for player in range(players):
            letter = PLAYER_NAMES[player][0]
            front, back = game.front[player], game.back[player]
            front_hole = hole_for_score(players, player, front, target)
            uppers = [h for h, c in seen.items() if c == letter.upper()]
            lowers = {h for h, c in seen.items() if c == letter}
            if front_hole == WIN_HOLE:
                assert uppers == [WIN_HOLE], (drawing, front, back)
            elif front_hole != OFF_BOARD:
                assert uppers == [front_hole], (drawing, front, back)
            if back and back != front:
                assert hole_for_score(players, player, back, target) in lowers, drawing
            if players == 3 and front:
                laps = (front - 1) // 30 + 1 if front < target else (target - 1) // 30 + 1
                for lap in range(min(laps, 10)):
                    assert seen[lap_gauge_hole(player, lap)] == letter, drawing
        if players == 2:
            for player in range(2):
                if 60 < game.front[player] < target:
                    scores = (game.front[player], game.back[player])
                    pegs = {hole_for_score(2, player, s, target) for s in scores}
                    lines = {hole_for_score(2, player, s, target) for s in skunk_lines(target)}
                    for hole in set(track(2, player)) - pegs - lines:
                        assert seen[hole] == ":", drawing


def test_the_rows_are_labelled_with_player_and_direction() -> None:
    game = game_with(2, 121, [(3, 0), (0, 0)])
    lines = draw_frame(frame_of(game), color=False, players=2).splitlines()
    assert lines[0].startswith("blue   > . . B . .")
    assert lines[1].startswith("blue   < . .")
    assert lines[2] == "     win b"  # at the start end: blue deals
    assert lines[3].startswith("orange < ") and lines[4].startswith("orange > ")
    assert "B b O o: front, back peg" in lines[5]
    coloured = draw_frame(frame_of(game), color=True, players=2).splitlines()
    assert coloured[0].startswith("blue   → ") and coloured[1].startswith("blue   ← ")
    three = draw_frame(frame_of(game_with(3, 121, [(3, 0), (0, 0), (5, 2)])), color=False)
    labels = [line.split()[0] for line in three.splitlines()[:5]]
    assert labels == ["blue", "orange", "win", "purple", "laps"]
    assert all(len(line) <= 80 for line in three.splitlines())


def test_the_win_hole_shows_the_dealer_faintly_and_the_winner_in_full() -> None:
    game = game_with(2, 121, [(10, 4), (0, 0)])
    game.set_dealer(1)
    assert cells(draw_frame(frame_of(game), color=False))[WIN_HOLE] == "o"
    game.set_pegs(1, 119, 110)
    game.peg(1, 5)
    assert game.winner == 1
    for t_ms in (0, 300, 600):  # the pulse, from its dimmest to its brightest
        seen = cells(draw_frame(frame_of(game, 128, t_ms), color=False))
        assert seen[WIN_HOLE] == "O" and seen[hole_for_score(2, 1, 119, 121)] == "o"


def test_skunk_lines_and_counts_being_entered() -> None:
    game = game_with(2, 121, [(95, 90), (50, 40)])
    game.set_pending(1, 6)
    seen = cells(draw_frame(frame_of(game, 128), color=False))
    assert seen[hole_for_score(2, 1, 61, 121)] == "|" and seen[hole_for_score(2, 1, 91, 121)] == "|"
    assert seen[hole_for_score(2, 1, 56, 121)] == "*"


def test_four_players_are_two_partnerships() -> None:
    state = BoardState(3, 121, 2, 0, None, "playing", [5, 7], [0, 0], [0, 0], [0, 0], 2, False)
    assert describe_state(state).splitlines()[0] == "game to 121, two players"
    heading = describe_state(state, partnerships=True).splitlines()[0]
    assert heading == "game to 121, four players in two partnerships"


def test_long_lines_wrap_at_spaces() -> None:
    line = "show: 12⏎ counts orange 2's hand, then blue 1's hand, orange 1's hand, blue 2's crib"
    wrapped = fit_lines([line, "short"], 40)
    assert all(len(part) <= 40 for part in wrapped) and wrapped[-1] == "short"
    assert " ".join(part.strip() for part in wrapped[:-1]) == line


@pytest.mark.parametrize("columns", [None, "123", "0", "-4", "wide"])
def test_the_screen_width_follows_shutils_rule(
    monkeypatch: pytest.MonkeyPatch, columns: str | None
) -> None:
    import shutil

    from cribboard.cmdline.parser import screen_width

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert screen_width() == shutil.get_terminal_size((80, 24)).columns
