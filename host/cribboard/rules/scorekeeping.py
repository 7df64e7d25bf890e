"""Keeping the score of a game played with real cards: what the scorekeeper knows of the rules,
with no board, no terminal and no words.

    keeping = Scorekeeping(STANDARD)
    keeping.new_game(dealer_side=0)        # blue deals: orange, the pone, counts first
    keeping.hand()                         # ShowHand(seat=1, crib=False)
    counted = keeping.count(12)            # a claimed count; or count(None, cards), or both
    ...                                    # the caller pegs counted.points for counted.side
    if not keeping.next_hand(counted.overlooked):   # the crib was the last hand
        keeping.pass_deal(counted.overlooked)       # unless the board says the game is won

The people at the table say what happened: a count (claimed, or its cards, or both), the
starter, his heels, who deals. A `Scorekeeping` knows whose hand counts next (the show order:
from the pone round to the dealer, then the dealer's crib), checks a count claimed with its
cards, keeps the points a short claim overlooked for the opponent (muggins), passes the deal
after the crib, gives the pone's bonus in the five-card game, and undoes entries. It returns
facts (who pegs how many, what a count was) and refuses what the rules do not allow with a
`Refused` that says what was wrong; its caller pegs on a board and says it all in words. The
scores are the board's: a Scorekeeping holds none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from cribboard.rules.cards import JACK, Card, check_distinct
from cribboard.rules.errors import IllegalMove
from cribboard.rules.show import HandCount, ShowHand, count_hand, show_order
from cribboard.rules.variants import STANDARD, Variant

IMPOSSIBLE = (19, 25, 26, 27)
"""Counts no four-card hand or crib can make (19 is the table's word for nothing)."""
IMPOSSIBLE_THREE = (16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 27, 28, 29)
"""Counts no three-card hand (five-card game) can make with its starter: 0-15 and 20 can."""
HIGHEST = 29
"""The most a hand or crib counts (three fives and the right jack, the fourth five turned)."""
NOTHING = 19
"""The count people call a hand that scores nothing (no hand counts 19)."""
HEELS = 2
"""What the dealer pegs when the starter is a jack."""


class Pegs(NamedTuple):
    """Points to peg: `side` (the board's player: a seat, or its partnership), `points`."""

    side: int
    points: int


@dataclass(frozen=True)
class Turn:
    """Where the table is in the current deal."""

    dealer: int
    deal_no: int = 1
    step: int = 0
    """How many hands of the show have been counted (the crib is the last)."""
    starter: Card | None = None
    seen: tuple[tuple[Card, ShowHand], ...] = ()
    """Cards typed in this deal, and whose they were (to catch a card typed twice)."""
    overlooked: Pegs | None = None
    """After a short claim: the side that may take the points, and how many."""
    bonus_due: bool = False
    """Five-card game: the pone's 3 not pegged yet (it goes on once the deal is settled)."""


class Verdict(StrEnum):
    """What a count came to, held against the count claimed."""

    UNCHECKED = "unchecked"
    """A count claimed without its cards: taken as claimed."""
    COUNTED = "counted"
    """The cards alone, counted."""
    RIGHT = "right"
    """The claim is what the cards make."""
    OVER = "over"
    """More claimed than the cards make: what they make is pegged."""
    SHORT = "short"
    """Less claimed than the cards make: the claim is pegged, the rest overlooked (muggins)."""


@dataclass(frozen=True)
class Counted:
    """One hand of the show, counted: whose (`hand`, pegging for `side`), the count claimed
    (0 for `nineteen`), the cards' count, the `points` to peg, and the points `overlooked` that
    the opponent may take. `turned`: the starter turned earlier, when the cards came with
    another one (they are counted with theirs)."""

    hand: ShowHand
    side: int
    claim: int | None
    count: HandCount | None
    points: int
    overlooked: Pegs | None = None
    nineteen: bool = False
    turned: Card | None = None

    @property
    def verdict(self) -> Verdict:
        """What the count came to against the claim."""
        if self.count is None:
            return Verdict.UNCHECKED
        if self.claim is None:
            return Verdict.COUNTED
        if self.claim == self.count.total:
            return Verdict.RIGHT
        return Verdict.OVER if self.claim > self.count.total else Verdict.SHORT


@dataclass(frozen=True)
class Entry:
    """One entry that can be undone: the turn before it, how many changes the caller made on
    its board for it, and what the caller calls it."""

    turn: Turn
    changes: int
    what: str


class Refused(IllegalMove):
    """An entry the rules do not allow now; the subclass and its fields say why."""


class NoSeat(Refused):
    """No seat pegs for `side` (the board plays another form of the game)."""

    def __init__(self, side: int) -> None:
        super().__init__(f"no seat plays for side {side}")
        self.side = side


class NothingToCount(Refused):
    """A count with neither a claim nor cards."""

    def __init__(self) -> None:
        super().__init__("a count needs a claim or the cards")


class ImpossibleCount(Refused):
    """No hand of this size counts `points`."""

    def __init__(self, points: int) -> None:
        super().__init__(f"no hand counts {points}")
        self.points = points


class NoStarter(Refused):
    """Cards counted without the starter, and none turned yet."""

    def __init__(self) -> None:
        super().__init__("the starter is not known")


class WrongCards(Refused):
    """`given` cards for a hand of `size` (and its starter)."""

    def __init__(self, size: int, given: int) -> None:
        super().__init__(f"{size} cards and the starter, not {given} cards")
        self.size = size
        self.given = given


class StarterInHand(Refused):
    """A card of the hand is the starter."""

    def __init__(self, card: Card) -> None:
        super().__init__(f"{card} is the starter")
        self.card = card


class CardSeen(Refused):
    """`card` was already typed in this deal, for `hand`."""

    def __init__(self, card: Card, hand: ShowHand) -> None:
        super().__init__(f"{card} was already in {hand}")
        self.card = card
        self.hand = hand


class NothingOverlooked(Refused):
    """Muggins with no short claim before it."""

    def __init__(self) -> None:
        super().__init__("nothing overlooked to take")


class Scorekeeping:
    """The rules of keeping the score of one table's games (see the module): `variant` is the
    form of the game, `dealer` the seat dealing first. `turn` is where the table is; `history`
    the entries that can be undone."""

    def __init__(self, variant: Variant = STANDARD, *, dealer: int = 0) -> None:
        self.variant = variant
        self.turn = Turn(dealer=self._seat(dealer))
        self.history: list[Entry] = []

    def _seat(self, seat: int) -> int:
        if not 0 <= seat < self.variant.players:
            raise IllegalMove(f"no seat {seat}")
        return seat

    # --- seats and order -----------------------------------------------------------------------

    @property
    def seats(self) -> int:
        """How many people play."""
        return self.variant.players

    def side(self, seat: int) -> int:
        """The board's player a seat pegs for: itself, or its partnership."""
        return self.variant.side_of(seat)

    @property
    def pone(self) -> int:
        """The seat after the dealer: it leads the play and counts first."""
        return (self.turn.dealer + 1) % self.seats

    @property
    def next_dealer(self) -> int:
        """The seat the deal passes to."""
        return self.pone

    def show_order(self) -> list[ShowHand]:
        """The hands of this deal's show, in counting order (the crib last)."""
        return show_order(self.turn.dealer, self.seats)

    def hand(self, step: int | None = None) -> ShowHand:
        """The hand of the show at `step` (by default the next to count)."""
        return self.show_order()[self.turn.step if step is None else step]

    def hands_left(self) -> list[ShowHand]:
        """The hands of the show still to count, the next first."""
        return self.show_order()[self.turn.step :]

    def seat_dealing(self, side: int, after: int) -> int:
        """The first seat from `after` on (round the table) that pegs for `side`."""
        for step in range(self.seats):
            seat = (after + step) % self.seats
            if self.side(seat) == side:
                return seat
        raise NoSeat(side)

    def seat_of(self, side: int, number: int) -> int:
        """Partnerships: the seat of a side's player `number` (1 or 2; partners sit opposite)."""
        if not self.variant.partnerships or side not in (0, 1) or number not in (1, 2):
            raise IllegalMove(f"no player {number} of side {side}")
        return side + 2 * (number - 1)

    def number_of(self, seat: int) -> int:
        """Partnerships: which of its side's players (1 or 2) a seat is."""
        return seat // 2 + 1

    # --- a game starts, the board moves on -----------------------------------------------------

    def new_game(self, dealer_side: int) -> None:
        """Deal 1 of a new game, dealt by the first seat of `dealer_side` (the pone's bonus is
        due in the five-card game). The entries before it can still be undone."""
        self.turn = Turn(
            dealer=self.seat_dealing(dealer_side, 0), bonus_due=self.variant.pone_bonus > 0
        )

    def go_on(self, dealer_side: int) -> None:
        """A game already in progress (on the board): its first seat of `dealer_side` deals,
        the show not begun."""
        self.turn = Turn(dealer=self.seat_dealing(dealer_side, 0))

    def changed_elsewhere(self, dealer_side: int) -> None:
        """The board was changed by something else: the entries no longer line up with it and
        cannot be undone; if its dealer is another side now, the deal has passed to it."""
        self.history.clear()
        if dealer_side != self.side(self.turn.dealer):
            self.turn = Turn(
                dealer=self.seat_dealing(dealer_side, self.turn.dealer + 1),
                deal_no=self.turn.deal_no + 1,
            )

    def restart_deal(self, dealer_side: int) -> None:
        """The deal starts over (the board went back a step of its own): dealt by `dealer_side`,
        the same deal's number."""
        self.turn = Turn(
            dealer=self.seat_dealing(dealer_side, self.turn.dealer), deal_no=self.turn.deal_no
        )

    # --- the deal --------------------------------------------------------------------------------

    def pass_deal(self, overlooked: Pegs | None = None) -> int:
        """A new deal, dealt by the next seat; returns it. `overlooked`: the points a short
        claim for the last hand left, which may still be taken. A pone's bonus still due waits
        on."""
        self.turn = Turn(
            dealer=self.next_dealer,
            deal_no=self.turn.deal_no + 1,
            overlooked=overlooked,
            bonus_due=self.turn.bonus_due,
        )
        return self.turn.dealer

    def deal_to(self, seat: int) -> None:
        """This deal is `seat`'s (it won the cut): the same deal's number, the show not begun."""
        self.turn = Turn(
            dealer=self._seat(seat), deal_no=self.turn.deal_no, bonus_due=self.turn.bonus_due
        )

    def pone_bonus(self) -> Pegs:
        """Five-card game, once at the start: the pone pegs 3; no longer due."""
        self.turn = dataclasses.replace(self.turn, bonus_due=False)
        return Pegs(self.side(self.pone), self.variant.pone_bonus)

    def starter(self, card: Card) -> Pegs | None:
        """The starter is turned; a jack is his heels: the dealer pegs 2 (returned). Refused
        when the card was already in a hand."""
        for seen, where in self.turn.seen:
            if seen == card:
                raise CardSeen(card, where)
        self.turn = dataclasses.replace(self.turn, starter=card)
        return self.heels() if card.rank == JACK else None

    def heels(self) -> Pegs:
        """His heels: the dealer pegs 2."""
        return Pegs(self.side(self.turn.dealer), HEELS)

    # --- the show --------------------------------------------------------------------------------

    def impossible(self, crib: bool) -> tuple[int, ...]:
        """The counts no hand (`crib`: no crib) of this game can make."""
        return IMPOSSIBLE if crib or self.variant.kept == 4 else IMPOSSIBLE_THREE

    def count(self, claim: int | None, cards: Sequence[Card] = ()) -> Counted:
        """The next hand of the show: a `claim`, its `cards` (the hand's, then the starter
        unless it was turned), or both. The cards are counted and the claim held against their
        count: an over-claim pegs what they make, a short one pegs the claim and leaves the rest
        for the opponent (`Counted.overlooked`). 19 claimed without cards means nothing; a claim
        no hand can make is refused. The cards are remembered (and the starter, if not turned
        yet); the place in the show moves on with `next_hand`, once the points are pegged."""
        hand = self.hand()
        side = self.side(hand.seat)
        if claim is not None and not 0 <= claim <= HIGHEST:
            raise ImpossibleCount(claim)
        if not cards:
            if claim is None:
                raise NothingToCount()
            if claim in self.impossible(hand.crib):
                if claim != NOTHING:
                    raise ImpossibleCount(claim)
                return Counted(hand, side, 0, None, 0, nineteen=True)
            return Counted(hand, side, claim, None, claim)
        count, turned = self._count_cards(cards, hand)
        if claim is None or claim >= count.total:
            return Counted(hand, side, claim, count, count.total, turned=turned)
        taker = (side + 1) % self.variant.sides
        overlooked = Pegs(taker, count.total - claim)
        return Counted(hand, side, claim, count, claim, overlooked, turned=turned)

    def _count_cards(self, cards: Sequence[Card], hand: ShowHand) -> tuple[HandCount, Card | None]:
        """The cards' count, and the starter turned when they came with another one."""
        check_distinct(cards)
        size = 4 if hand.crib else self.variant.kept
        turned = None
        if len(cards) == size + 1:
            held, starter = tuple(cards[:size]), cards[size]
            if self.turn.starter is not None and starter != self.turn.starter:
                turned = self.turn.starter
        elif len(cards) == size:
            if self.turn.starter is None:
                raise NoStarter()
            held, starter = tuple(cards), self.turn.starter
        else:
            raise WrongCards(size, len(cards))
        for card in held:
            if card == starter:
                raise StarterInHand(card)
            for seen, where in self.turn.seen:
                if seen == card and where != hand:
                    raise CardSeen(card, where)
        count = count_hand(held, starter, crib=hand.crib)
        self.turn = dataclasses.replace(
            self.turn,
            starter=self.turn.starter or starter,
            seen=self.turn.seen + tuple((card, hand) for card in held),
        )
        return count, turned

    def next_hand(self, overlooked: Pegs | None = None) -> bool:
        """After a hand of the show is pegged: on to the next hand (True); at the end of the
        show (False) the place stays on the crib, and the caller passes the deal unless the game
        is won. Either way the points `overlooked` may be taken."""
        step = self.turn.step + 1
        more = step < len(self.show_order())
        self.turn = dataclasses.replace(
            self.turn, step=step if more else self.turn.step, overlooked=overlooked
        )
        return more

    def overlooked(self) -> Pegs:
        """The points the last short claim overlooked, and the side that may take them."""
        if self.turn.overlooked is None:
            raise NothingOverlooked()
        return self.turn.overlooked

    def muggins(self, taker: int | None = None) -> Pegs:
        """Muggins: the overlooked points go to `taker` (by default the side after the one that
        overlooked them); they cannot be taken twice."""
        side, points = self.overlooked()
        self.turn = dataclasses.replace(self.turn, overlooked=None)
        return Pegs(side if taker is None else taker, points)

    # --- undo ------------------------------------------------------------------------------------

    def record(self, before: Turn, changes: int, what: str) -> None:
        """An entry is done: `before`, the turn it started from; `changes` made on the board
        for it; `what` the caller calls it. An entry that changed nothing is no undo step."""
        if changes or self.turn != before:
            self.history.append(Entry(before, changes, what))

    def undo(self) -> Entry | None:
        """Take back the last entry: the turn is as before it; returns it (its board changes
        are the caller's to undo), or None when there is none."""
        if not self.history:
            return None
        entry = self.history.pop()
        self.turn = entry.turn
        return entry
