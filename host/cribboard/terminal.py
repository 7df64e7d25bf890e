"""Drawing the board in a terminal, from an LED frame and the layout data."""

from __future__ import annotations

from cribboard.api import BoardState
from cribboard.names import PLAYER_NAMES
from cribcore.layout import COLS, GROUP, ROWS, WIN_HOLE

_RESULT_TEXT = {
    "won": "won",
    "skunk": "won with a skunk",
    "double_skunk": "won with a double skunk",
}


def _visible(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    # Faint LEDs (the second-lap glow) are bright in a room but lost on a screen: lift them.
    top = max(rgb)
    if 0 < top < 110:
        return (rgb[0] * 110 // top, rgb[1] * 110 // top, rgb[2] * 110 // top)
    return rgb


def _cell(rgb: tuple[int, int, int], color: bool) -> str:
    if color:
        if rgb == (0, 0, 0):
            return "\x1b[38;2;70;70;70m·\x1b[0m"
        r, g, b = _visible(rgb)
        return f"\x1b[38;2;{r};{g};{b}m●\x1b[0m"
    top = max(rgb)
    if top == 0:
        return "."
    if top < 30:
        return ":"  # faint: the second-lap glow, the dealer lamp
    if top - min(rgb) < 20:
        return "*"  # white: a skunk line or a pending count
    return "#" if top >= 200 else "+"


def draw_frame(rgb: bytes, color: bool = True) -> str:
    """The 121 holes as text: four rows in groups of five, the win hole between the pairs."""

    def hole(h: int) -> str:
        return _cell((rgb[3 * h], rgb[3 * h + 1], rgb[3 * h + 2]), color)

    lines = []
    for row in range(ROWS):
        if row == 2:
            lines.append(hole(WIN_HOLE) + "  win")
        cells = []
        for col in range(COLS):
            if col and col % GROUP == 0:
                cells.append(" ")
            cells.append(hole(row * COLS + col))
        lines.append(" ".join(cells))
    return "\n".join(lines)


def describe_state(state: BoardState) -> str:
    """One line per player: score, back peg, games, dealer; then the result if the game ended."""
    lines = [f"game to {state.target}, {state.players} players"]
    for p in range(state.players):
        marks = []
        if p == state.dealer:
            marks.append("dealer")
        if state.pending[p]:
            marks.append(f"pending +{state.pending[p]}")
        if state.winner == p:
            marks.append(_RESULT_TEXT.get(state.result, "won"))
        name = PLAYER_NAMES[p]
        extra = ("  " + ", ".join(marks)) if marks else ""
        lines.append(
            f"  {name:<7}{state.front[p]:>4}  (back {state.back[p]:>3})  "
            f"games {state.games[p]}{extra}"
        )
    return "\n".join(lines)
