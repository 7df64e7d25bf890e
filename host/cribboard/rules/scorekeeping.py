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

One deal is one story, whatever order the table tells it in:
- it has one starter: the first `starter`, or the last card of the first count typed with its
  cards; another starter after that is refused (`StarterKnown`, `OtherStarter`), and undo is
  the way to change it;
- his heels are pegged at most once, and only for a jack: by `starter` of a jack, or by
  `heels` while the starter is a jack or not yet known (`HeelsPegged`, `NotAJack`); a starter
  told after `heels` must be a jack (`JackExpected`). A count never pegs his heels;
- after the crib the show is over (`Turn.shown`): another count is refused until the deal
  passes (`ShowOver`);
- undo puts the whole deal back as it was before the entry, its starter and heels included.
  An entry that changes the board more than once (the five-card game's bonus before it, the
  deal passing after the crib) is recorded in parts, a step each, linked: the board's own
  undo takes back one change, and the table then stands where that part left it.

The board may also be changed elsewhere (its buttons, another program, a phone): `elsewhere`
takes such a change as a step of its own, on top of the entries, so undo takes it back first,
and an entry undone elsewhere is taken out of the history with the place in the deal it made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
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
    heels: bool = False
    """His heels were pegged in this deal (the starter is a jack, even before it is told)."""
    shown: bool = False
    """The crib is counted: the show of this deal is over (the deal passes, unless the game
    was won or the passing was undone elsewhere)."""
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
    the opponent may take."""

    hand: ShowHand
    side: int
    claim: int | None
    count: HandCount | None
    points: int
    overlooked: Pegs | None = None
    nineteen: bool = False

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
    """One step that can be undone: the turn before it, how many changes (undo steps) the
    board holds for it, what the caller calls it, and the board after it: its undo depth
    (`depth`) and what it looked like (`after`, the caller's). `elsewhere`: a change made on
    the board by something else, not an entry of this table."""

    turn: Turn
    changes: int
    what: str
    depth: int = 0
    after: Hashable = None
    elsewhere: bool = False
    linked: bool = False
    """Undo takes it back with the step under it: a part of one entry (the pone's bonus
    before it, the deal passing after the crib), each part a step of its own on the board."""
    auto: bool = False
    """A part the table did not type (the bonus, the deal passing)."""


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


class OtherStarter(Refused):
    """A count's last card is not `starter`, this deal's starter."""

    def __init__(self, starter: Card, given: Card) -> None:
        super().__init__(f"the starter is {starter}, not {given}")
        self.starter = starter
        self.given = given


class StarterKnown(Refused):
    """The starter typed again (`given`): this deal's is `starter` already."""

    def __init__(self, starter: Card, given: Card) -> None:
        super().__init__(f"the starter is {starter} already")
        self.starter = starter
        self.given = given


class HeelsPegged(Refused):
    """His heels again: they were pegged in this deal."""

    def __init__(self) -> None:
        super().__init__("his heels were pegged in this deal already")


class NotAJack(Refused):
    """His heels with a `starter` that is no jack."""

    def __init__(self, starter: Card) -> None:
        super().__init__(f"the starter {starter} is not a jack")
        self.starter = starter


class JackExpected(Refused):
    """A starter (`given`) that is no jack, after his heels were pegged."""

    def __init__(self, given: Card) -> None:
        super().__init__(f"his heels were pegged: the starter is a jack, not {given}")
        self.given = given


class ShowOver(Refused):
    """A count after the crib: the show of this deal is over."""

    def __init__(self) -> None:
        super().__init__("the show of this deal is over")


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
        self.depth = 0
        """The board's undo depth as last known (after the last entry or change elsewhere)."""

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

    def elsewhere(
        self, depth: int | None, after: Hashable, dealer_side: int, what: str
    ) -> list[Entry]:
        """The board was changed elsewhere (its buttons, another program): it holds `depth` undo
        steps now (None: its history is full, so steps cannot be told apart) and looks like
        `after`. Entries whose steps it no longer holds were undone there: they are taken out,
        the place in the deal going back with them (returned, the last first; what stays of an
        entry partly undone is a step of its own). Steps added are one entry `elsewhere` called
        `what`, which undo takes back before the entries under it. When the steps cannot be
        told apart, the entries can no longer be undone. If the dealer is another side now, the
        deal has passed to it."""
        undone: list[Entry] = []
        if depth is None:
            self.history.clear()
        else:
            while self.history and self.history[-1].depth > depth:
                entry = self.history.pop()
                undone.append(entry)
                self.turn = entry.turn
                start = entry.depth - entry.changes
                if start < depth:  # part of it is still on the board: a step of its own
                    self.history.append(
                        dataclasses.replace(
                            entry,
                            changes=depth - start,
                            depth=depth,
                            after=after,
                            elsewhere=True,
                            linked=False,
                        )
                    )
            known = self.history[-1].depth if self.history else min(self.depth, depth)
            if depth > known:
                self.history.append(Entry(self.turn, depth - known, what, depth, after, True))
            elif self.history and self.history[-1].after != after:
                self.history.clear()  # changed and undone there: whose steps are whose?
        self.depth = depth or 0
        if dealer_side != self.side(self.turn.dealer):
            self.turn = Turn(
                dealer=self.seat_dealing(dealer_side, self.turn.dealer + 1),
                deal_no=self.turn.deal_no + 1,
                overlooked=None,
                bonus_due=self.turn.bonus_due,
            )
        return undone

    def restart_deal(self, dealer_side: int, depth: int) -> None:
        """The board went back a step this table knows nothing of (its undo, with no entry left
        to take back); it holds `depth` steps now. With the same dealer the deal goes on as it
        was; with another, that side's deal starts over (the same deal's number)."""
        self.depth = depth
        if dealer_side != self.side(self.turn.dealer):
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
        """The starter is turned; a jack is his heels: the dealer pegs 2 (returned), unless they
        were pegged already. Refused when the card was already in a hand, when the deal has
        another starter (or this one, and nothing is left to peg), and when his heels were
        pegged and it is no jack."""
        for seen, where in self.turn.seen:
            if seen == card:
                raise CardSeen(card, where)
        known = self.turn.starter
        if known is not None and (known != card or card.rank != JACK or self.turn.heels):
            raise StarterKnown(known, card)
        if self.turn.heels and card.rank != JACK:
            raise JackExpected(card)
        heels = card.rank == JACK and not self.turn.heels
        self.turn = dataclasses.replace(self.turn, starter=card, heels=self.turn.heels or heels)
        return self._heels_pegs() if heels else None

    def heels(self) -> Pegs:
        """His heels: the dealer pegs 2 (returned). Refused when they were pegged in this deal
        already, or the starter is known and no jack; before the starter is told, it must be a
        jack when it is."""
        if self.turn.heels:
            raise HeelsPegged()
        if self.turn.starter is not None and self.turn.starter.rank != JACK:
            raise NotAJack(self.turn.starter)
        self.turn = dataclasses.replace(self.turn, heels=True)
        return self._heels_pegs()

    def _heels_pegs(self) -> Pegs:
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
        no hand can make is refused, and so are cards whose last one is not this deal's starter
        (or no jack after his heels). The cards are remembered (and the starter, if not turned
        yet); the place in the show moves on with `next_hand`, once the points are pegged."""
        if self.turn.shown:
            raise ShowOver()
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
        count = self._count_cards(cards, hand)
        if claim is None or claim >= count.total:
            return Counted(hand, side, claim, count, count.total)
        taker = (side + 1) % self.variant.sides
        overlooked = Pegs(taker, count.total - claim)
        return Counted(hand, side, claim, count, claim, overlooked)

    def _count_cards(self, cards: Sequence[Card], hand: ShowHand) -> HandCount:
        """The cards' count (with this deal's starter, which they may tell)."""
        check_distinct(cards)
        size = 4 if hand.crib else self.variant.kept
        if len(cards) == size + 1:
            held, starter = tuple(cards[:size]), cards[size]
            if self.turn.starter is not None and starter != self.turn.starter:
                raise OtherStarter(self.turn.starter, starter)
            if self.turn.heels and starter.rank != JACK:
                raise JackExpected(starter)
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
        return count

    def next_hand(self, overlooked: Pegs | None = None) -> bool:
        """After a hand of the show is pegged: on to the next hand (True); at the end of the
        show (False) the place stays on the crib, the show is over, and the caller passes the
        deal unless the game is won. Either way the points `overlooked` may be taken."""
        step = self.turn.step + 1
        more = step < len(self.show_order())
        self.turn = dataclasses.replace(
            self.turn,
            step=step if more else self.turn.step,
            shown=not more,
            overlooked=overlooked,
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

    def record(
        self,
        before: Turn,
        changes: int,
        what: str,
        depth: int = 0,
        after: Hashable = None,
        *,
        linked: bool = False,
        auto: bool = False,
    ) -> None:
        """An entry (or a part of one) is done: `before`, the turn it started from; `changes`
        made on the board for it, which holds `depth` undo steps after it and looks like
        `after`; `what` the caller calls it; `linked`, `auto`: see Entry. An entry that changed
        nothing is no undo step."""
        if changes or self.turn != before:
            self.history.append(Entry(before, changes, what, depth, after, False, linked, auto))
        self.depth = depth

    def undo(self) -> Entry | None:
        """Take back the last step (an entry, or a change made elsewhere): the turn is as before
        it; returns it (its board changes are the caller's to undo), or None when there is
        none."""
        if not self.history:
            return None
        entry = self.history.pop()
        self.turn = entry.turn
        self.depth = max(0, entry.depth - entry.changes)
        return entry
