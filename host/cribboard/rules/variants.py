"""The forms of the game the engine knows: what is dealt, laid away, played to, and the lines a
loser must pass to escape a skunk."""

from __future__ import annotations

from dataclasses import dataclass

from cribboard.rules.errors import RulesError


@dataclass(frozen=True)
class Variant:
    """One form of cribbage.

    Each seat is dealt `dealt` cards and lays `discards` of them away to the dealer's crib;
    `crib_from_deck` cards go to the crib straight from the deck (three players). `partnerships`:
    four players in two sides, partners opposite (seats 0 and 2 against 1 and 3).
    `play_once`: the play goes to 31 once only (five-card game). `pone_bonus`: points the pone
    pegs at the start of the game's first deal (five-card game: 3). A loser below
    `skunk_line` is skunked, below `double_skunk_line` double skunked (0: no such line).
    """

    name: str
    players: int = 2
    dealt: int = 6
    discards: int = 2
    crib_from_deck: int = 0
    target: int = 121
    skunk_line: int = 91
    double_skunk_line: int = 61
    play_once: bool = False
    pone_bonus: int = 0
    partnerships: bool = False

    def __post_init__(self) -> None:
        if not 2 <= self.players <= 4:
            raise RulesError(f"{self.name}: 2 to 4 players, not {self.players}")
        if self.partnerships and self.players != 4:
            raise RulesError(f"{self.name}: partnerships need four players")
        crib = self.players * self.discards + self.crib_from_deck
        if crib != 4 or self.kept < 3:
            raise RulesError(f"{self.name}: the crib must get 4 cards and each hand keep 3 or 4")
        if self.players * self.dealt + self.crib_from_deck + 1 > 52:
            raise RulesError(f"{self.name}: not enough cards")

    @property
    def kept(self) -> int:
        """Cards each hand keeps after laying away (4; 3 in the five-card game)."""
        return self.dealt - self.discards

    @property
    def sides(self) -> int:
        """How many sides score: the players, or 2 partnerships."""
        return 2 if self.partnerships else self.players

    def side_of(self, seat: int) -> int:
        """The side a seat scores for (its partnership with four players)."""
        return seat % 2 if self.partnerships else seat


STANDARD = Variant("six-card 121")
"""Two players, six cards each, two laid away, to 121; skunk below 91, double below 61."""
SHORT = Variant("six-card 61", target=61, skunk_line=31, double_skunk_line=0)
"""The short game: as STANDARD, to 61; skunk below 31."""
FIVE_CARD = Variant(
    "five-card",
    dealt=5,
    target=61,
    skunk_line=31,
    double_skunk_line=0,
    play_once=True,
    pone_bonus=3,
)
"""Five cards each, two laid away, the pone's 3 once at the start, play to 31 once, to 61."""
THREE_PLAYER = Variant("three players", players=3, dealt=5, discards=1, crib_from_deck=1)
"""Three players: five cards each, one card from the deck to the crib, each lays away one."""
FOUR_PLAYER = Variant("four players", players=4, dealt=5, discards=1, partnerships=True)
"""Four players in two partnerships: five cards each, each lays away one."""

VARIANTS = {v.name: v for v in (STANDARD, SHORT, FIVE_CARD, THREE_PLAYER, FOUR_PLAYER)}
"""The variants by name."""
