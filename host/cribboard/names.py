"""The players as the host names them: one home for their names, their colours as the host shows
them, and the words people type for them (the command line, the bridge, the scorekeeper, the
terminal drawing). What the board itself needs (how many players, the value limits) lives in
`cribcore.limits`; the board's colours in `cribcore.render`."""

from __future__ import annotations

from cribboard.i18n import N_, _
from cribcore import render
from cribcore.limits import MAX_PLAYERS

PLAYER_NAMES = ("blue", "orange", "purple")
"""Player 0, 1, 2 by the colour of their pegs: the words typed and the API's, in English in
every language (`player_name` is the colour as a person reads it)."""

_SHOWN_NAMES = (
    # Translators: player 0's name is the colour of its pegs; the keys stay b, o, p.
    N_("blue"),
    N_("orange"),
    N_("purple"),
)

BUTTON_LETTERS = ("a", "b", "c")
"""Player 0, 1, 2 by the letter of their buttons on the board (A+, B+, C+)."""

PLAYER_WORDS: dict[str, int] = {
    **{name: player for player, name in enumerate(PLAYER_NAMES)},
    **{letter: player for player, letter in enumerate(BUTTON_LETTERS)},
}
"""Every word that names a player on the command line and in the bridge's API."""

PLAYER_HELP = "0, 1, 2 or " + ", ".join(PLAYER_NAMES) + " (or " + ", ".join(BUTTON_LETTERS) + ")"
"""How to name a player, for the API's messages: `0, 1, 2 or blue, orange, purple (or a, b,
c)`."""


def player_help() -> str:
    """How to name a player, for people at the command line, in their language."""
    return _("0, 1, 2 or %(names)s", names=", ".join(PLAYER_NAMES))


def player_name(player: int) -> str:
    """Player 0, 1, 2 as a person reads it: the colour of its pegs in the language in use."""
    return _(_SHOWN_NAMES[player])


def player_number(word: int | str) -> int | None:
    """The player a word names, for the API, the command line and the bridge alike: a number
    (the board checks it is in the game), its digits (``"1"``), a colour or a button letter, in
    any case; None when it names no player."""
    if isinstance(word, bool):
        return None
    if isinstance(word, int):
        return word
    text = word.strip().lower()
    if text in PLAYER_WORDS:
        return PLAYER_WORDS[text]
    if text.isdigit() and int(text) < MAX_PLAYERS:
        return int(text)
    return None


def parse_player(text: str) -> int:
    """A player as 0, 1, 2, a colour or a button letter (any case); ValueError with a message
    for people otherwise."""
    player = player_number(text)
    if player is None:
        raise ValueError(_("unknown player %(word)r: use %(how)s", word=text, how=player_help()))
    return player


def game_players(players: int) -> str:
    """The players a game of `players` has, for the API's messages: `0 (blue) and 1 (orange)`."""
    named = [f"{p} ({PLAYER_NAMES[p]})" for p in range(players)]
    return ", ".join(named[:-1]) + " and " + named[-1]


def initial(player: int) -> str:
    """The scorekeeper's letter for a player: the first letter of the colour (b, o, p)."""
    return PLAYER_NAMES[player][0]


def colour_hex(player: int) -> str:
    """The player's front-peg colour as `#rrggbb` (the web page's player cards)."""
    return "#%02x%02x%02x" % render.FRONT_RGB[player]
