"""Players for the game driver: what a seat sees, and how it decides.

A `Player` lays cards away (`discard`) and picks a card to lay in the play (`choose_card`); it
sees only what its seat may see (`DiscardView`, `PlayView`). `HumanTerminal` asks a person (its
input and output can be swapped for tests); `Computer` plays by expected values:

* discard: every way of laying away is tried; each keeps the hand whose average count over all
  the starters that can still come up is highest, plus the expected points the laid-away cards
  bring the crib when the crib is ours, minus them when it is the opponent's. The crib is worked
  out by rank over every (unknown crib cards, starter) the unseen cards allow, with flush and his
  nobs added by probability; a discard takes a few hundredths of a second.
* the play: points now (15, 31, pairs, runs) less what the opponent can be expected to score in
  reply with the cards still unseen (so no 5 or 21 left for a ten, no easy pair royal), and
  high cards before low ones so the low ones are left for the go.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations, combinations_with_replacement
from math import comb

from cribboard.i18n import _, n_
from cribboard.play.screen import terminal_input, terminal_output
from cribboard.rules.cards import JACK, SUITS, Card, deck, format_cards, parse_card
from cribboard.rules.errors import CardError
from cribboard.rules.pegging import Laid, peg_combos
from cribboard.rules.show import hand_points, points_of_ranks
from cribboard.rules.variants import Variant
from cribboard.terminal import fit_lines


@dataclass(frozen=True)
class DiscardView:
    """What a seat knows when it lays away: its dealt cards and whose crib it is."""

    seat: int
    hand: tuple[Card, ...]
    """The cards dealt to the seat."""
    discards: int
    """How many cards to lay away."""
    dealer: int
    my_crib: bool
    """The crib belongs to this seat (or its partnership)."""
    variant: Variant
    scores: tuple[int, ...]
    """Each side's score."""
    side: int


@dataclass(frozen=True)
class PlayView:
    """What a seat knows when it is its turn in the play."""

    seat: int
    hand: tuple[Card, ...]
    """The cards the seat has not laid yet."""
    playable: tuple[Card, ...]
    """The cards it may lay now (never empty: go is handled by the engine)."""
    count: int
    """The running total."""
    series: tuple[Card, ...]
    """The cards laid since the count last restarted, in order."""
    laid: tuple[Laid, ...]
    """Every card laid in this deal's play, in order."""
    starter: Card
    laid_away: tuple[Card, ...]
    """The cards this seat put in the crib."""
    cards_left: tuple[int, ...]
    """How many cards each seat still holds."""
    dealer: int
    variant: Variant
    scores: tuple[int, ...]
    side: int

    @property
    def seen(self) -> frozenset[Card]:
        """Every card this seat has seen: its own, the starter and the cards laid."""
        return (
            frozenset(self.hand)
            | frozenset(self.laid_away)
            | {self.starter}
            | frozenset(laid.card for laid in self.laid)
        )


class Player(ABC):
    """A seat at the table. `interactive` players read from a person: the driver asks them off
    its event loop so the board link stays alive while they think."""

    name: str
    interactive: bool = False
    prompt: str = ""
    """The question an interactive player is answering now: shown again after the screen is
    drawn while it is typed."""

    @abstractmethod
    def discard(self, view: DiscardView) -> Sequence[Card]:
        """The cards to lay away (`view.discards` of them, from `view.hand`)."""

    @abstractmethod
    def choose_card(self, view: PlayView) -> Card:
        """The card to lay now, one of `view.playable`."""


# --- the computer ----------------------------------------------------------------------------


def expected_hand(kept: Sequence[Card], unseen: Sequence[Card]) -> float:
    """The average count of `kept` over every starter in `unseen`."""
    return sum(hand_points(kept, starter) for starter in unseen) / len(unseen)


def expected_crib(laid_away: Sequence[Card], unseen: Sequence[Card]) -> float:
    """The expected count of a crib holding `laid_away` and, to make four, cards drawn at random
    from `unseen`, with a starter from `unseen` too. Fifteens, pairs and runs are exact over
    every rank combination the unseen cards allow; the flush and his nobs by probability."""
    k = 4 - len(laid_away)
    total = len(unseen)
    have = [0] * 14
    for card in unseen:
        have[card.rank] += 1
    base = tuple(card.rank for card in laid_away)
    weighted = 0.0
    for extra in combinations_with_replacement(range(1, 14), k):
        ways = 1
        for rank in set(extra):
            ways *= comb(have[rank], extra.count(rank))
        if not ways:
            continue
        for starter in range(1, 14):
            left = have[starter] - extra.count(starter)
            if left > 0:
                weighted += ways * left * points_of_ranks((*base, *extra, starter))
    expected = weighted / (comb(total, k) * (total - k))
    by_suit = {suit: sum(1 for card in unseen if card.suit == suit) for suit in SUITS}
    # his nobs: a jack laid away, or one of the unknown crib cards, of the starter's suit
    for card in laid_away:
        if card.rank == JACK:
            expected += by_suit[card.suit] / total
    for card in unseen:
        if card.rank == JACK:
            expected += (k / total) * (by_suit[card.suit] - 1) / (total - 1)
    # flush: all five of one suit
    suits = {card.suit for card in laid_away}
    if len(suits) == 1:
        left = by_suit[suits.pop()]
        chance = 1.0
        for i in range(k + 1):
            chance *= max(left - i, 0) / (total - i)
        expected += 5 * chance
    return expected


@dataclass(frozen=True)
class DiscardChoice:
    """One way of laying away, valued: the hand's and the crib's expected points."""

    laid_away: tuple[Card, ...]
    kept: tuple[Card, ...]
    hand: float
    crib: float
    value: float


def rank_discards(hand: Sequence[Card], discards: int, my_crib: bool) -> list[DiscardChoice]:
    """Every way of laying `discards` cards of `hand` away, best first: the value is the kept
    hand's expected count plus (our crib) or minus (theirs) the crib's expected count."""
    unseen = [card for card in deck() if card not in hand]
    sign = 1.0 if my_crib else -1.0
    choices = []
    for laid_away in combinations(hand, discards):
        kept = tuple(card for card in hand if card not in laid_away)
        hand_value = expected_hand(kept, unseen)
        crib_value = expected_crib(laid_away, unseen)
        choices.append(
            DiscardChoice(laid_away, kept, hand_value, crib_value, hand_value + sign * crib_value)
        )
    # best first; ties keep the lower cards out of the crib the same way every time
    choices.sort(key=lambda c: (-round(c.value, 9), [card.index for card in c.laid_away]))
    return choices


def _reply_risk(
    series: Sequence[Card], count: int, unseen: Sequence[Card], their_cards: int
) -> float:
    """The points an opponent holding `their_cards` of the `unseen` cards can be expected to
    score by laying one card on `series` (a rough bound: each rank's chance times its points)."""
    if count >= 31 or their_cards <= 0 or not unseen:
        return 0.0
    have = [0] * 14
    for card in unseen:
        have[card.rank] += 1
    total = len(unseen)
    hold = min(their_cards, total)
    risk = 0.0
    for rank in range(1, 14):
        if not have[rank] or count + min(rank, 10) > 31:
            continue
        reply = Card(rank, "C")
        points = sum(combo.points for combo in peg_combos([*series, reply]))
        if points:
            chance = 1.0 - comb(total - have[rank], hold) / comb(total, hold)
            risk += chance * points
    return risk


class Computer(Player):
    """A computer player: the discard with the best expected value, careful pegging."""

    def __init__(self, name: str = "computer") -> None:
        self.name = name

    def discard(self, view: DiscardView) -> tuple[Card, ...]:
        return rank_discards(view.hand, view.discards, view.my_crib)[0].laid_away

    def choose_card(self, view: PlayView) -> Card:
        return max(
            view.playable, key=lambda card: (self.card_value(view, card), card.value, -card.index)
        )

    def card_value(self, view: PlayView, card: Card) -> float:
        """How good laying `card` now looks: points now, less the expected reply."""
        series = [*view.series, card]
        count = view.count + card.value
        gain = float(sum(combo.points for combo in peg_combos(series)))
        seen = view.seen
        unseen = [c for c in deck() if c not in seen]
        n = view.variant.players
        nxt = (view.seat + 1) % n
        their_cards = view.cards_left[nxt] if len(view.cards_left) > nxt else 0
        risk = _reply_risk(series, count, unseen, their_cards)
        value = gain - risk
        left = [c for c in view.hand if c != card]
        # the go: after this card, can we keep laying while they cannot?
        if count < 31 and left and min(c.value for c in left) + count <= 31 and their_cards == 0:
            value += 0.5
        # leave the count where our own next card scores 15 or 31, if they cannot spoil it
        for mine in left:
            if count + mine.value in (15, 31):
                value += 0.3
                break
        return value


# --- a person at the terminal ------------------------------------------------------------------


def play_keys() -> str:
    """The keys of `cribboard play`, shown by `?`, in the language in use."""
    # Translators: the cards (5H JD 10S, suits C D H S) and the keys (?, q, Enter) are typed as
    # they are in every language: translate what they do, keep them and the columns.
    return _("""\
  5H JD 10S     cards by rank and suit (T or 10 for a ten; suits C D H S)
  1 2           cards by their place in your hand, as numbered
  Enter         lay the only card you can lay
  ?  help       q  leave the game""")


_QUIT_WORDS = ("q", "quit", "exit")
_HELP_WORDS = ("?", "h", "help")


class LeaveGame(Exception):  # noqa: N818 (not an error: the person chose to go)
    """The person at the terminal typed q: the game ends here."""


class HumanTerminal(Player):
    """A person typing at the terminal. `input` and `output` default to the built-ins; tests
    pass their own. Cards are typed as `5H JD 10S` (or `TS`), or by their position in the hand
    (`1`..`6`); Enter alone lays the only card that can be laid; `?` shows the keys and `q`
    leaves the game (LeaveGame)."""

    interactive = True

    def __init__(
        self,
        name: str = "you",
        *,
        input: Callable[[str], str] | None = None,
        output: Callable[[str], None] | None = None,
    ) -> None:
        self.name = name
        self._input = input or terminal_input
        self._output = output or terminal_output

    def _pick(self, words: Sequence[str], hand: Sequence[Card]) -> list[Card]:
        picked = []
        for word in words:
            if word.isdigit():
                index = int(word) - 1
                if not 0 <= index < len(hand):
                    raise CardError(
                        _(
                            "no card %(word)s: positions are 1..%(last)d",
                            word=word,
                            last=len(hand),
                        )
                    )
                picked.append(hand[index])
            else:
                card = parse_card(word)
                if card not in hand:
                    raise CardError(_("you do not hold %(card)s", card=card))
                picked.append(card)
        if len(set(picked)) != len(picked):
            raise CardError(_("the same card twice"))
        return picked

    @staticmethod
    def _numbered(hand: Sequence[Card]) -> str:
        return "  ".join(f"{i}:{card}" for i, card in enumerate(hand, 1))

    def _say(self, text: str) -> None:
        self._output("\n".join(fit_lines([text])))

    def _ask(self, prompt: str) -> str | None:
        """A line typed in answer to `prompt`; None after `?` (the keys were shown). Raises
        LeaveGame for `q`."""
        self.prompt = prompt
        line = self._input(prompt).strip()
        word = line.lower()
        if word in _QUIT_WORDS:
            raise LeaveGame
        if word in _HELP_WORDS:
            self._say(play_keys())
            return None
        return line

    def discard(self, view: DiscardView) -> tuple[Card, ...]:
        hand = sorted(view.hand)
        self._say(
            _("%(player)s: your cards  %(cards)s", player=self.name, cards=self._numbered(hand))
        )
        if view.my_crib:
            prompt = n_(
                "lay %(count)d away to your crib (? for help): ",
                "lay %(count)d away to your crib (? for help): ",
                view.discards,
            )
        else:
            prompt = n_(
                "lay %(count)d away to their crib (? for help): ",
                "lay %(count)d away to their crib (? for help): ",
                view.discards,
            )
        while True:
            line = self._ask(prompt)
            if line is None:
                continue
            try:
                picked = self._pick(line.replace(",", " ").split(), hand)
                if len(picked) != view.discards:
                    raise CardError(
                        _(
                            "lay away %(wanted)d, not %(given)d",
                            wanted=view.discards,
                            given=len(picked),
                        )
                    )
                return tuple(picked)
            except CardError as err:
                self._say(f"  {err}")

    def choose_card(self, view: PlayView) -> Card:
        hand = sorted(view.hand)
        series = format_cards(view.series) or "-"
        self._say(
            _(
                "%(player)s: count %(count)d (%(series)s); your cards  %(cards)s",
                player=self.name,
                count=view.count,
                series=series,
                cards=self._numbered(hand),
            )
        )
        only = view.playable[0] if len(view.playable) == 1 else None
        if only:
            prompt = _("lay a card [Enter: %(card)s]: ", card=only)
        else:
            prompt = _("lay a card (? for help): ")
        while True:
            line = self._ask(prompt)
            if line is None:
                continue
            try:
                if not line:
                    if only is None:
                        raise CardError(_("type a card (5H) or its position (1)"))
                    return only
                picked = self._pick(line.split(), hand)
                if len(picked) != 1:
                    raise CardError(_("one card at a time"))
                card = picked[0]
                if card not in view.playable:
                    raise CardError(
                        _(
                            "%(card)s would take the count past 31: lay %(cards)s",
                            card=card,
                            cards=format_cards(view.playable),
                        )
                    )
                return card
            except CardError as err:
                self._say(f"  {err}")
