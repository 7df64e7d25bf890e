"""The play (pegging), one card at a time.

A `Pegging` holds the cards each seat has left and the running count; `play(card)` lays a card for
the seat whose turn it is and returns what it scored. Go is handled by the engine: a seat that
cannot lay a card without passing 31 says go and is passed over (`PlayResult.go_said`), the others
keep playing (one alone if need be), and when nobody can play the seat that laid the last card
pegs 1 for the go (2 for exactly 31, never both; the last card of the play pegs 1 as "last
card"). Then the count restarts at zero and the seat after the one who laid the last card leads.

    >>> play = Pegging([parse_cards("4H 3C"), parse_cards("2D 5S")], leader=0)
    >>> [play.play(parse_card(c)).points for c in ("4H", "2D", "3C", "5S")]
    [0, 0, 3, 5]

(the 5 completes a run of four and is the last card: 4 + 1.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cribboard.rules.cards import Card, check_distinct
from cribboard.rules.errors import IllegalMove
from cribboard.rules.show import Combo, Kind

_PAIR_KINDS = {2: (Kind.PAIR, 2), 3: (Kind.PAIR_ROYAL, 6), 4: (Kind.DOUBLE_PAIR_ROYAL, 12)}


def peg_combos(series: Sequence[Card]) -> tuple[Combo, ...]:
    """What the last card of `series` scores in the play. `series` is the cards laid since the
    count last restarted, the new card last; their total must not pass 31.

    15 and 31: 2 each. The same rank as the card before: 2; third in a row 6; fourth 12. The card
    completes a run of three or more with the cards just before it, in any order and with no
    foreign card among them: 1 per card (the longest such run). Flushes never score in the play.
    """
    if not series:
        return ()
    count = sum(card.value for card in series)
    if count > 31:
        raise IllegalMove(f"the count would be {count}, past 31")
    cards = tuple(series)
    found: list[Combo] = []
    if count == 15:
        found.append(Combo(Kind.FIFTEEN, 2, cards))
    if count == 31:
        found.append(Combo(Kind.THIRTY_ONE, 2, cards))
    last = cards[-1]
    same = 1
    while same < len(cards) and cards[-1 - same].rank == last.rank:
        same += 1
    if same >= 2:
        kind, points = _PAIR_KINDS[same]
        found.append(Combo(kind, points, cards[-same:]))
    else:
        for length in range(len(cards), 2, -1):
            tail = cards[-length:]
            ranks = {card.rank for card in tail}
            if len(ranks) == length and max(ranks) - min(ranks) == length - 1:
                found.append(Combo(Kind.RUN, length, tail))
                break
    return tuple(found)


@dataclass(frozen=True)
class Laid:
    """A card laid in the play, and by whom."""

    seat: int
    card: Card


@dataclass(frozen=True)
class PlayResult:
    """What laying one card did.

    `combos` is everything the seat scored with this card, the go (`Kind.GO`) or last card
    (`Kind.LAST_CARD`) point included; `count` is the running total the card made (before any
    restart); `go_said` the seats that then said go; `series_over` whether the count restarted
    after this card; `next_seat` whose turn it is now (None when the play is over).
    """

    seat: int
    card: Card
    count: int
    combos: tuple[Combo, ...]
    go_said: tuple[int, ...]
    series_over: bool
    next_seat: int | None

    @property
    def points(self) -> int:
        """The points the seat pegs for this card (combinations plus any go or last card)."""
        return sum(combo.points for combo in self.combos)


class Pegging:
    """The play of one deal, for 2 to 4 seats (seat numbers 0..n-1 in turn order).

    `hands` are the cards each seat kept; `leader` is the seat that leads (the one after the
    dealer). `once=True` is the five-card game's rule: the play goes to 31 (or a go) once only,
    and ends there with cards left in hand.
    """

    def __init__(self, hands: Sequence[Sequence[Card]], leader: int, *, once: bool = False) -> None:
        if not 2 <= len(hands) <= 4:
            raise IllegalMove(f"the play needs 2 to 4 seats, not {len(hands)}")
        if not 0 <= leader < len(hands):
            raise IllegalMove(f"no seat {leader} to lead")
        check_distinct([card for hand in hands for card in hand])
        self.seats = len(hands)
        self.once = once
        self._hands = [list(hand) for hand in hands]
        self.count = 0
        """The running total of the current series."""
        self.series: list[Laid] = []
        """The cards laid since the count last restarted."""
        self.laid: list[Laid] = []
        """Every card laid in this play, in order."""
        self.results: list[PlayResult] = []
        """What each card laid did, in order."""
        self._said_go: set[int] = set()
        self.to_play: int | None = self._next_with_cards(leader)
        """The seat whose turn it is; None when the play is over."""

    @property
    def done(self) -> bool:
        """True when the play is over."""
        return self.to_play is None

    def hand(self, seat: int) -> tuple[Card, ...]:
        """The cards `seat` has not laid yet."""
        return tuple(self._hands[seat])

    def can_play(self, seat: int) -> bool:
        """True if `seat` has a card it can lay without passing 31."""
        return any(self.count + card.value <= 31 for card in self._hands[seat])

    def playable(self, seat: int | None = None) -> tuple[Card, ...]:
        """The cards `seat` (default: the seat to play) may lay now."""
        if seat is None:
            if self.to_play is None:
                return ()
            seat = self.to_play
        return tuple(card for card in self._hands[seat] if self.count + card.value <= 31)

    def play(self, card: Card, seat: int | None = None) -> PlayResult:
        """Lay `card` for the seat whose turn it is (`seat`, if given, must be that seat).
        Raises IllegalMove for a card not in the hand, past 31, or out of turn."""
        current = self.to_play
        if current is None:
            raise IllegalMove("the play is over")
        if seat is not None and seat != current:
            raise IllegalMove(f"it is seat {current}'s turn, not seat {seat}'s")
        if card not in self._hands[current]:
            raise IllegalMove(f"seat {current} has no {card} to lay")
        if self.count + card.value > 31:
            raise IllegalMove(f"{card} would take the count past 31 (it is {self.count})")
        self._hands[current].remove(card)
        self.count += card.value
        laid = Laid(current, card)
        self.series.append(laid)
        self.laid.append(laid)
        combos = list(peg_combos([entry.card for entry in self.series]))
        count = self.count
        go_said: list[int] = []
        next_seat: int | None = None
        if count < 31:
            for step in range(1, self.seats + 1):
                seat_ = (current + step) % self.seats
                if not self._hands[seat_]:
                    continue
                if self.can_play(seat_):
                    next_seat = seat_
                    break
                if seat_ != current and seat_ not in self._said_go:
                    self._said_go.add(seat_)
                    go_said.append(seat_)
        series_over = next_seat is None
        if series_over:
            cards_left = any(self._hands)
            if count < 31:
                kind = Kind.GO if cards_left else Kind.LAST_CARD
                combos.append(Combo(kind, 1, (card,)))
            self.count = 0
            self.series = []
            self._said_go.clear()
            if not self.once and cards_left:
                next_seat = self._next_with_cards(current + 1)
        self.to_play = next_seat
        result = PlayResult(
            current, card, count, tuple(combos), tuple(go_said), series_over, next_seat
        )
        self.results.append(result)
        return result

    def _next_with_cards(self, start: int) -> int | None:
        # The first seat from `start` on, in turn order, that still holds cards.
        for step in range(self.seats):
            seat = (start + step) % self.seats
            if self._hands[seat]:
                return seat
        return None
