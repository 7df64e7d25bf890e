"""A game of cribbage, deal by deal: the scorekeeping a game driver builds on.

    game = Game(STANDARD, dealer=0, rng=random.Random(7))
    deal = game.deal()                     # shuffles and deals (or game.deal(deck=...))
    for seat in range(2):
        deal.discard(seat, choose_two(deal.hands[seat]))
    deal.cut()                             # the starter; his heels scored here
    while deal.phase is Phase.PLAY:
        result, event = deal.play(choose_card(deal.pegging.playable()))
    for shown in deal.show():              # pone, dealer, crib; stops when the game is won
        print(shown.seat, shown.crib, shown.count.total)

Every point goes through `Game.score`, which returns a `ScoreEvent` (who, how many, why, the
combinations, the new score) and ends the game the moment a side reaches the target, even in the
middle of the play or the show; after that every move raises IllegalMove.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from cribboard.rules.cards import JACK, Card, check_distinct, deck, format_cards
from cribboard.rules.errors import CardError, IllegalMove
from cribboard.rules.pegging import Pegging, PlayResult
from cribboard.rules.show import Combo, HandCount, ShowHand, count_hand, show_order
from cribboard.rules.variants import STANDARD, Variant


class Reason(StrEnum):
    """Why points were pegged."""

    BONUS = "pone's three"  # five-card game, once at the start
    HEELS = "his heels"
    PLAY = "play"
    HAND = "hand"
    CRIB = "crib"


class Result(StrEnum):
    """How a game stands or ended (the board's words)."""

    PLAYING = "playing"
    WON = "won"
    SKUNK = "skunk"
    DOUBLE_SKUNK = "double_skunk"


class Phase(StrEnum):
    """Where a deal is."""

    DISCARD = "discard"
    CUT = "cut"
    PLAY = "play"
    SHOW = "show"
    DONE = "done"


@dataclass(frozen=True)
class ScoreEvent:
    """Points pegged: by `seat`, for `side` (the seat, or its partnership), from `before` to
    `after`; `won` when this event ended the game."""

    seat: int
    side: int
    points: int
    reason: Reason
    combos: tuple[Combo, ...]
    before: int
    after: int
    won: bool

    def __str__(self) -> str:
        what = ", ".join(combo.label() for combo in self.combos)
        return (
            f"seat {self.seat}: {self.points} for {self.reason}"
            f"{f' ({what})' if what else ''} -> {self.after}{' wins' if self.won else ''}"
        )


@dataclass(frozen=True)
class ShowResult:
    """One hand counted in the show: whose, whether it is the crib, the count, and the points
    pegged (None for a hand of 0)."""

    seat: int
    crib: bool
    count: HandCount
    event: ScoreEvent | None


def cut_for_deal(cuts: Sequence[Card]) -> int | None:
    """Who deals first, from one cut card per seat: the lowest rank; None when the lowest is
    tied (cut again)."""
    low = min(card.rank for card in cuts)
    lowest = [seat for seat, card in enumerate(cuts) if card.rank == low]
    return lowest[0] if len(lowest) == 1 else None


class Game:
    """The scores of one game and its deals. `dealer` is the seat dealing first; each new deal
    passes the deal to the next seat. `rng` shuffles and cuts when no cards are given."""

    def __init__(
        self, variant: Variant = STANDARD, *, dealer: int = 0, rng: random.Random | None = None
    ) -> None:
        if not 0 <= dealer < variant.players:
            raise IllegalMove(f"no seat {dealer} to deal")
        self.variant = variant
        self.dealer = dealer
        """The seat dealing the current (or first) deal."""
        self.rng = rng or random.Random()
        self.scores = [0] * variant.sides
        """Each side's score."""
        self.winner: int | None = None
        """The side that reached the target, once one has."""
        self.events: list[ScoreEvent] = []
        """Every score, in order."""
        self.deals: list[Deal] = []

    @property
    def over(self) -> bool:
        """True once a side has reached the target."""
        return self.winner is not None

    @property
    def current(self) -> Deal | None:
        """The deal in progress (or the last one)."""
        return self.deals[-1] if self.deals else None

    def result(self) -> Result:
        """PLAYING, or how the game was won, judged on the lowest losing score."""
        if self.winner is None:
            return Result.PLAYING
        lowest = min(score for side, score in enumerate(self.scores) if side != self.winner)
        if lowest < self.variant.double_skunk_line:
            return Result.DOUBLE_SKUNK
        if lowest < self.variant.skunk_line:
            return Result.SKUNK
        return Result.WON

    def score(
        self, seat: int, points: int, reason: Reason, combos: tuple[Combo, ...] = ()
    ) -> ScoreEvent:
        """Peg `points` for `seat`'s side. Reaching the target ends the game at once, and the
        score stops at the target, as the board's peg does (the event keeps every point
        claimed). Raises IllegalMove once the game is over."""
        if self.winner is not None:
            raise IllegalMove("the game is over")
        if not 0 <= seat < self.variant.players:
            raise IllegalMove(f"no seat {seat}")
        side = self.variant.side_of(seat)
        before = self.scores[side]
        after = min(before + points, self.variant.target)
        self.scores[side] = after
        won = after >= self.variant.target
        if won:
            self.winner = side
        event = ScoreEvent(seat, side, points, reason, combos, before, after, won)
        self.events.append(event)
        return event

    def deal(self, deck_order: Sequence[Card] | None = None) -> Deal:
        """Start the next deal: the deal passes to the next seat (not for the first deal), the
        cards are shuffled (or dealt from `deck_order`, top card first), and in the five-card
        game the pone pegs 3 on the first deal. Raises IllegalMove while a deal is unfinished
        or once the game is over."""
        if self.winner is not None:
            raise IllegalMove("the game is over")
        if self.deals:
            if self.deals[-1].phase is not Phase.DONE:
                raise IllegalMove("the current deal is not finished")
            self.dealer = (self.dealer + 1) % self.variant.players
        if deck_order is None:
            cards = deck()
            self.rng.shuffle(cards)
        else:
            cards = list(deck_order)
        new = Deal(self, cards)
        self.deals.append(new)
        if len(self.deals) == 1 and self.variant.pone_bonus:
            new.events.append(self.score(new.pone, self.variant.pone_bonus, Reason.BONUS))
        return new


class Deal:
    """One deal: DISCARD (each seat lays away) -> CUT (the starter) -> PLAY -> SHOW -> DONE.
    Made by `Game.deal`."""

    def __init__(self, game: Game, cards: Sequence[Card]) -> None:
        variant = game.variant
        needed = variant.players * variant.dealt + variant.crib_from_deck + 1
        if len(cards) < needed:
            raise CardError(f"{variant.name} needs at least {needed} cards, not {len(cards)}")
        check_distinct(cards)
        self.game = game
        self.variant = variant
        self.dealer = game.dealer
        self.pone = (self.dealer + 1) % variant.players
        """The seat after the dealer: leads the play and counts first."""
        n = variant.players
        order = [(self.pone + i) % n for i in range(n)]
        dealt: list[list[Card]] = [[] for _ in range(n)]
        stock = list(cards)
        for _ in range(variant.dealt):  # one at a time, starting with the pone
            for seat in order:
                dealt[seat].append(stock.pop(0))
        self.hands: list[tuple[Card, ...]] = [tuple(hand) for hand in dealt]
        """The cards each seat was dealt; after its discard, the cards it kept."""
        self.crib: list[Card] = [stock.pop(0) for _ in range(variant.crib_from_deck)]
        """The dealer's crib."""
        self.stock = stock
        """The undealt cards, from which the starter is cut."""
        self.discarded = [False] * n
        self.starter: Card | None = None
        self.pegging: Pegging | None = None
        """The play, once the starter is cut."""
        self.shown: list[ShowResult] = []
        self.events: list[ScoreEvent] = []
        """Every score made in this deal, in order."""
        self.phase = Phase.DISCARD

    def discard(self, seat: int, cards: Sequence[Card]) -> None:
        """`seat` lays `cards` away to the crib (as many as the variant says)."""
        self._need(Phase.DISCARD)
        if not 0 <= seat < self.variant.players:
            raise IllegalMove(f"no seat {seat}")
        if self.discarded[seat]:
            raise IllegalMove(f"seat {seat} has already laid away")
        cards = tuple(cards)
        if len(cards) != self.variant.discards:
            raise IllegalMove(f"lay away {self.variant.discards} card(s), not {len(cards)}")
        check_distinct(cards)
        missing = [card for card in cards if card not in self.hands[seat]]
        if missing:
            raise IllegalMove(f"seat {seat} does not hold {format_cards(missing)}")
        self.hands[seat] = tuple(card for card in self.hands[seat] if card not in cards)
        self.crib.extend(cards)
        self.discarded[seat] = True
        if all(self.discarded):
            self.phase = Phase.CUT

    def cut(self, starter: Card | None = None, *, at: int | None = None) -> ScoreEvent | None:
        """Turn the starter: `starter` itself (cards played at a real table), or the card at
        position `at` of the stock, or a random one. A jack: the dealer pegs 2 for his heels
        (returned; it can win the game)."""
        self._need(Phase.CUT)
        if starter is None:
            index = self.game.rng.randrange(len(self.stock)) if at is None else at
            if not 0 <= index < len(self.stock):
                raise IllegalMove(f"cut at 0..{len(self.stock) - 1}, not {index}")
            starter = self.stock[index]
        elif starter not in self.stock:
            raise IllegalMove(f"{starter} is not in the stock")
        self.stock.remove(starter)
        self.starter = starter
        event = None
        if starter.rank == JACK:
            event = self._score(self.dealer, 2, Reason.HEELS)
        self.pegging = Pegging(self.hands, self.pone, once=self.variant.play_once)
        self.phase = Phase.DONE if self.game.over else Phase.PLAY
        return event

    @property
    def to_play(self) -> int | None:
        """The seat whose turn it is in the play (None outside the play)."""
        if self.phase is not Phase.PLAY or self.pegging is None:
            return None
        return self.pegging.to_play

    def play(self, card: Card, seat: int | None = None) -> tuple[PlayResult, ScoreEvent | None]:
        """Lay `card` for the seat to play; returns what it did and the points pegged (None for
        none). Go is automatic: see `Pegging`."""
        self._need(Phase.PLAY)
        assert self.pegging is not None
        result = self.pegging.play(card, seat)
        event = None
        if result.points:
            event = self._score(result.seat, result.points, Reason.PLAY, result.combos)
        if self.game.over:
            self.phase = Phase.DONE
        elif self.pegging.done:
            self.phase = Phase.SHOW
        return result, event

    def show_order(self) -> list[ShowHand]:
        """(seat, is the crib) in counting order: from the pone round to the dealer, then the
        dealer's crib (`rules.show.show_order`)."""
        return show_order(self.dealer, self.variant.players)

    def count_next(self) -> ShowResult:
        """Count the next hand of the show and peg it. The game may end here."""
        self._need(Phase.SHOW)
        assert self.starter is not None
        seat, crib = self.show_order()[len(self.shown)]
        cards = self.crib if crib else self.hands[seat]
        count = count_hand(cards, self.starter, crib=crib)
        event = None
        if count.total:
            event = self._score(
                seat, count.total, Reason.CRIB if crib else Reason.HAND, count.combos
            )
        shown = ShowResult(seat, crib, count, event)
        self.shown.append(shown)
        if self.game.over or len(self.shown) == len(self.show_order()):
            self.phase = Phase.DONE
        return shown

    def show(self) -> list[ShowResult]:
        """Count the rest of the show in order, stopping the moment the game is won."""
        counted = []
        while self.phase is Phase.SHOW:
            counted.append(self.count_next())
        return counted

    def _score(
        self, seat: int, points: int, reason: Reason, combos: tuple[Combo, ...] = ()
    ) -> ScoreEvent:
        event = self.game.score(seat, points, reason, combos)
        self.events.append(event)
        return event

    def _need(self, phase: Phase) -> None:
        if self.game.over:
            raise IllegalMove("the game is over")
        if self.phase is not phase:
            raise IllegalMove(f"cannot {phase} now: the deal is at {self.phase}")
