"""Drawing the board in a terminal, from an LED frame and the layout data.

The drawing serves `make run` (the scorekeeper), `play`, `demo`, `status` and `virtual --show`. Each
row is labelled with its player and the direction the pegs travel along it, the win hole sits at
the start end, and a legend line says what the marks mean.

With colour, each hole is a dot in its LED's colour, lifted for a screen (see `screen_rgb`).
Without colour (a pipe, NO_COLOR), each hole is a character that says whose peg it is and which:
`B` blue's front peg, `b` its back peg (`O o` orange, `P p` purple), `:` the second lap's glow,
`|` a skunk line, `*` a pending count, `.` an empty hole. The drawing reads the frame
alone, at any brightness (`virtual --show` draws the strip's light after the brightness scale), so
front and back pegs are told apart by their level relative to the brightest light of the same
colour: a back peg is a quarter of its front peg, the glow a twentieth.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable

from cribboard.boarddata import BoardState
from cribboard.cmdline.parser import screen_width
from cribboard.i18n import N_, _, n_
from cribboard.names import PLAYER_NAMES, player_name
from cribcore import render
from cribcore.layout import COLS, GROUP, ROWS, TRACK_ROWS_2P, WIN_HOLE

_RESULT_TEXT = {
    "won": N_("won"),
    "skunk": N_("won with a skunk"),
    "double_skunk": N_("won with a double skunk"),
}

SCREEN_GAMMA = 2.2
"""A screen's transfer function: its values are light to the power 1/2.2 (as sRGB, roughly)."""

_EMPTY_DOT = "\x1b[38;2;70;70;70m·\x1b[0m"
_FRONT_SHARE = 0.6  # of the brightest light of a colour: a front peg (a back peg is 0.25)
_BACK_SHARE = 0.15  # a back peg or a lap gauge hole; below: the second lap's glow (0.05)
_WINNER_OVER_TRACK = 1.5  # the win hole as bright as this over its colour's track: the winner
_WHITE_CHROMA = 0.25  # colour spread under this share of the level: white light


def screen_rgb(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """An LED's colour as a screen should show it. LED levels are linear light and a screen's
    are not: encoding each channel with the screen's gamma makes the screen give off light in
    the LEDs' own proportions, so the order and the ratio of brightness stay as on the board (a
    back peg a quarter of its front peg, the second lap's glow a twentieth) while the dim levels
    become visible. The web page (web/static/board.js, screenColor) does the same."""
    r, g, b = (round(255 * (c / 255) ** (1 / SCREEN_GAMMA)) for c in rgb)
    return (r, g, b)


def _hue(rgb: tuple[int, int, int]) -> int | None:
    """The player whose colour this light is, or None for white light (a skunk line, a count
    pending, the admission call)."""
    low, top = min(rgb), max(rgb)
    if top - low < _WHITE_CHROMA * top:
        return None
    chroma = [c - low for c in rgb]

    def closeness(player: int) -> float:  # the cosine, up to a factor shared by all players
        colour: tuple[int, int, int] = render.FRONT_RGB[player]
        length = math.sqrt(sum(c * c for c in colour))
        return sum(a * b for a, b in zip(chroma, colour)) / length

    return max(range(len(render.FRONT_RGB)), key=closeness)


class _Reading:
    """The frame read as pegs: for each hole, whose light it is and how bright among that
    player's lights."""

    def __init__(self, rgb: bytes) -> None:
        self.rgb = [(rgb[3 * h], rgb[3 * h + 1], rgb[3 * h + 2]) for h in range(WIN_HOLE + 1)]
        self.hue = [_hue(c) if max(c) else None for c in self.rgb]
        self.level = [max(c) for c in self.rgb]
        players = len(render.FRONT_RGB)
        track_top = [0] * players
        for hole in range(WIN_HOLE):
            player = self.hue[hole]
            if player is not None:
                track_top[player] = max(track_top[player], self.level[hole])
        self.top = list(track_top)
        win = self.hue[WIN_HOLE]
        win_level = self.level[WIN_HOLE]
        # The win hole pulses in the winner's colour at half to full strength; before the game
        # ends it glows faintly in the dealer's colour.
        self.winner = (
            win
            if win is not None
            and track_top[win]
            and win_level >= _WINNER_OVER_TRACK * track_top[win]
            else None
        )
        if self.winner is not None:
            self.top[self.winner] = win_level
        self.brightest = max(self.level)

    def char(self, hole: int) -> str:
        """The plain character for a hole."""
        level = self.level[hole]
        if not level:
            return "."
        player = self.hue[hole]
        if player is None:
            return "*" if level >= 0.5 * self.brightest else "|"
        letter = PLAYER_NAMES[player][0]
        if hole == WIN_HOLE:
            return letter.upper() if player == self.winner else letter
        share = level / self.top[player]
        if share >= _FRONT_SHARE:
            return letter.upper()
        return letter if share >= _BACK_SHARE else ":"

    def dot(self, hole: int) -> str:
        """The coloured dot for a hole."""
        if not self.level[hole]:
            return _EMPTY_DOT
        r, g, b = screen_rgb(self.rgb[hole])
        return f"\x1b[38;2;{r};{g};{b}m●\x1b[0m"

    def has(self, player: int) -> bool:
        return any(hue == player for hue in self.hue)


def _row_labels(players: int, color: bool) -> list[str]:
    """Each row's player and the way the pegs go along it (from the start end, on the left)."""
    right, left = ("→", "←") if color else (">", "<")
    names = [player_name(p) for p in range(len(PLAYER_NAMES))]
    width = max(6, *(len(name) for name in names))
    if players == 3:
        # Translators: the label of the board's fourth row, where three players' laps are counted.
        return [f"{name:<{width}} {right}" for name in names] + [_("laps")]
    labels = [""] * ROWS
    for player, (outer, inner) in enumerate(TRACK_ROWS_2P):
        labels[outer] = f"{names[player]:<{width}} {right}"
        labels[inner] = f"{names[player]:<{width}} {left}"
    return labels


def _legend(players: int, color: bool) -> str:
    """One line saying what the marks mean (at most 80 columns)."""
    names = ", ".join(player_name(p) for p in range(len(PLAYER_NAMES)))
    if color:
        if players == 3:
            return _(
                "bright: front peg · dim: back peg · laps row: a hole per lap, %(names)s",
                names=names,
            )
        return _("bright: front peg · dim: back peg · faint row: second lap · white: skunk line")
    # The marks are the keys' letters (B b blue, O o orange, P p purple) in every language.
    letters = " ".join(f"{n[0].upper()} {n[0]}" for n in PLAYER_NAMES[:players])
    if players == 3:
        return _(
            "%(letters)s: front, back peg · laps row: a hole per lap, %(names)s",
            letters=letters,
            names=names,
        )
    return _(
        "%(letters)s: front, back peg · ':' second lap · '|' skunk line · '*' count",
        letters=letters,
    )


def draw_frame(rgb: bytes, color: bool = True, players: int | None = None) -> str:
    """The 121 holes as text: four labelled rows in groups of five, the win hole at the start
    end between the pairs, then a legend line. `players` (2 or 3; the board's, so 2 for two
    partnerships) chooses the row labels; None reads it from the frame (purple light: 3)."""
    reading = _Reading(rgb)
    if players is None:
        players = 3 if reading.has(2) else 2
    labels = _row_labels(players, color)
    width = max(len(label) for label in labels)
    cell = reading.dot if color else reading.char

    lines = []
    for row in range(ROWS):
        if row == 2:
            # Translators: the label of the win (game) hole in the board's drawing.
            win = _("win")
            lines.append(f"{win:>{width}} {cell(WIN_HOLE)}")
        cells = []
        for col in range(COLS):
            if col and col % GROUP == 0:
                cells.append(" ")
            cells.append(cell(row * COLS + col))
        lines.append(f"{labels[row]:<{width}} " + " ".join(cells))
    lines.append(_legend(players, color))
    return "\n".join(lines)


def _game_line(state: BoardState, partnerships: bool) -> str:
    if partnerships:
        return _("game to %(target)d, four players in two partnerships", target=state.target)
    if state.players == 2:
        return _("game to %(target)d, two players", target=state.target)
    if state.players == 3:
        return _("game to %(target)d, three players", target=state.target)
    return n_(
        "game to %(target)d, %(count)d player",
        "game to %(target)d, %(count)d players",
        state.players,
        target=state.target,
    )


def match_form(kind: str, length: int) -> str:
    """A match's form as people say it: best of 3, first to 5."""
    if kind == "first_to":
        return _("first to %(games)d", games=length)
    return _("best of %(games)d", games=length)


def describe_match(state: BoardState) -> str | None:
    """The match the board plays in a line (None without one): its form, the game on the
    board or who won it, and the games won (the match's score)."""
    match = state.match
    if match is None:
        return None
    form = match_form(match.kind, match.length)
    if state.skunk_double:
        form = _("%(form)s, a skunk wins two", form=form)
    score = ", ".join(f"{player_name(p)} {state.games[p]}" for p in range(state.players))
    if match.winner is not None:
        return _(
            "match (%(form)s) won by %(player)s: %(score)s",
            form=form,
            player=player_name(match.winner),
            score=score,
        )
    return _("match (%(form)s), game %(game)d: %(score)s", form=form, game=match.game, score=score)


def describe_state(state: BoardState, partnerships: bool = False, match: bool = True) -> str:
    """The game in a line (and the match, in one, unless not `match`), then one line per player
    (or partnership): score, back peg, games, dealer; the result once the game ended.
    `partnerships`: four players in two sides."""
    lines = [_game_line(state, partnerships)]
    told = describe_match(state) if match else None
    if told is not None:
        lines.append(told)
    names = [player_name(p) for p in range(state.players)]
    width = max(7, *(len(name) + 1 for name in names))
    for p in range(state.players):
        marks = []
        if p == state.dealer:
            marks.append(_("dealer"))
        if state.pending[p]:
            marks.append(_("pending +%(points)d", points=state.pending[p]))
        if state.winner == p:
            marks.append(_(_RESULT_TEXT.get(state.result, "won")))
        extra = ("  " + ", ".join(marks)) if marks else ""
        lines.append(
            "  "
            + _(
                "%(name)s%(front)4d  (back %(back)3d)  games %(games)d",
                name=names[p].ljust(width),
                front=state.front[p],
                back=state.back[p],
                games=state.games[p],
            )
            + extra
        )
    return "\n".join(lines)


def fit_lines(lines: Iterable[str], width: int | None = None) -> list[str]:
    """Text lines wrapped at spaces to fit `width` columns (the terminal's by default), so that
    the terminal never breaks a word; a continuation is indented under its line. Lines with
    terminal colour codes (the board) are left as they are."""
    width = screen_width() if width is None else width
    out: list[str] = []
    for text in lines:
        for line in text.split("\n"):
            if len(line) <= width or "\x1b" in line:
                out.append(line)
                continue
            indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
            out.extend(
                textwrap.wrap(
                    line,
                    width,
                    subsequent_indent=indent,
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
    return out
