"""The scorekeeper's deal, held to a ledger of its own: random sequences of every entry a table
types (counts claimed, cards, both, `s`, `j`, play pegs, `m`, `u`, `d`, `n`) and changes made
elsewhere (another program pegs, undoes, passes the deal), in the games of two, three and four
players and the five-card game. After each one the board's pegs, its dealer and its winner are
what a ledger of each deal, written here from the rules (/RULES: one starter a deal, his heels
once and only for a jack, a count's cards with the deal's starter, undo taking an entry back
whole), says they must be; an entry the ledger refuses changes nothing and is answered with one
line.

The board is the firmware's own game state (cribcore.state, the code the board runs) in this
process, pushing its state events as the board does: hundreds of games a second, so the search
runs in `make test`."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cribboard import wire
from cribboard.api import BoardState
from cribboard.events import BoardEvent, EventReader
from cribboard.play.scorekeeper import Scorekeeper
from cribboard.rules import FIVE_CARD, FOUR_PLAYER, STANDARD, THREE_PLAYER, Variant, count_hand
from cribboard.rules.cards import Card, deck
from cribcore.protocol import STATE_ROOM, LineWriter, write_state_event
from cribcore.state import GameError, GameState

JACK = 11
LETTERS = "bop"


class InProcessBoard:
    """The board's rules (cribcore.state) behind the few calls the scorekeeper makes, pushing
    a state event to its subscribers on every change as a board does."""

    def __init__(self, players: int, target: int) -> None:
        self.game = GameState(players, target)
        self._subscribers: list[Callable[[BoardEvent], None]] = []
        self._reader = EventReader()

    def subscribe(self, callback: Callable[[BoardEvent], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def _changed(self, rev: int) -> int:
        if self.game.rev != rev:
            writer = LineWriter(4 + STATE_ROOM + 2)
            write_state_event(writer, self.game)
            line = wire.decode_line(bytes(writer.buf[: writer.n]).rstrip(b"\n"))
            event = self._reader.read(line)  # typed, as Board.subscribe hands them out
            assert event is not None
            for callback in list(self._subscribers):
                callback(event)
        return int(self.game.rev)

    def _apply(self, change: Callable[[], object]) -> int:
        from cribboard.errors import BoardRejected

        rev = self.game.rev
        try:
            change()
        except GameError as err:
            raise BoardRejected(err.code, err.text) from None
        return self._changed(rev)

    async def health(self) -> None:
        return None  # as a board without the health verb answers: no page address to tell

    async def state(self) -> BoardState:
        game = self.game
        players = game.players
        return BoardState(
            rev=game.rev,
            target=game.target,
            players=players,
            dealer=game.dealer,
            winner=None if game.winner < 0 else game.winner,
            result=wire.RESULT_NAMES[game.result()],
            front=list(game.front[:players]),
            back=list(game.back[:players]),
            games=list(game.games[:players]),
            pending=list(game.pending[:players]),
            undo=game.undo_count,
            skunk_double=bool(game.skunk_double),
        )

    async def peg(self, player: int, points: int) -> int:
        return self._apply(lambda: self.game.peg(player, points))

    async def undo(self) -> int:
        return self._apply(self.game.undo)

    async def set_dealer(self, player: int | None = None) -> int:
        self._apply(lambda: self.game.set_dealer(player))
        return int(self.game.dealer)

    async def new_game(self, target: int | None = None, players: int | None = None) -> int:
        return self._apply(lambda: self.game.new_game(target or 0, players or 0))


# --- the ledger --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DealLedger:
    """One deal as the rules have it: who deals, the hands counted so far, the starter, his
    heels, the cards seen, the points a short claim left, the five-card game's bonus."""

    dealer: int  # a seat
    counted: int = 0  # hands of the show counted
    shown: bool = False  # the crib too: the show is over
    starter: Card | None = None
    heels: bool = False
    seen: dict[Card, tuple[int, bool]] = field(default_factory=dict)
    overlooked: tuple[int, int] | None = None  # (side that may take them, points)
    bonus_due: bool = False


@dataclass(frozen=True)
class Board:
    """The board as the ledger has it: each side's score, the dealer (a side), the winner."""

    scores: tuple[int, ...]
    dealer: int
    winner: int | None
    target: int


@dataclass
class Step:
    """What `u` takes back: the deal before it and how many board changes it made; `linked`:
    with the step under it (an entry's parts: the pone's bonus under it, the deal passing
    after the crib on it; the board may undo each alone)."""

    deal: DealLedger
    changes: int
    elsewhere: bool
    linked: bool = False


class Ledger:
    """What the board must show after each entry, by the rules (written apart from the
    scorekeeper's model, from the rules text)."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.seats = variant.players
        self.sides = variant.sides
        self.kept = variant.kept
        self.board = Board((0,) * self.sides, 0, None, variant.target)
        self.history: list[Board] = []  # the board before each of its changes
        self.deal = DealLedger(dealer=self.first_seat(0), bonus_due=variant.pone_bonus > 0)
        self.steps: list[Step] = []
        self.changes = 0  # board changes made by the entry being told

    # the table
    def side(self, seat: int) -> int:
        return seat % 2 if self.variant.partnerships else seat

    def first_seat(self, side: int) -> int:
        return next(seat for seat in range(self.seats) if self.side(seat) == side)

    def seat_after(self, side: int, after: int) -> int:
        for step in range(self.seats):
            seat = (after + step) % self.seats
            if self.side(seat) == side:
                return seat
        raise AssertionError

    def order(self) -> list[tuple[int, bool]]:
        dealer = self.deal.dealer
        hands = [((dealer + 1 + i) % self.seats, False) for i in range(self.seats)]
        return [*hands, (dealer, True)]

    # the board
    def _change(self, board: Board) -> None:
        self.history.append(self.board)
        self.board = board
        self.changes += 1

    def peg(self, side: int, points: int) -> None:
        board = self.board
        assert board.winner is None and points > 0
        scores = list(board.scores)
        scores[side] = min(scores[side] + points, board.target)
        winner = side if scores[side] >= board.target else None
        self._change(dataclasses.replace(board, scores=tuple(scores), winner=winner))

    def set_dealer(self, side: int) -> None:
        if side != self.board.dealer:
            self._change(dataclasses.replace(self.board, dealer=side))

    def new_board_game(self, target: int) -> None:
        board = self.board
        if board.winner is not None and self.sides == 2:
            dealer = 1 - board.winner
        else:
            dealer = (board.dealer + 1) % self.sides
        self._change(Board((0,) * self.sides, dealer, None, target))

    def board_undo(self) -> None:
        self.board = self.history.pop()

    # one entry
    def begin(self) -> DealLedger:
        self.changes = 0
        self.part = self.deal  # where the entry's part began
        self.linked = False
        return self.deal

    def done(self, before: DealLedger) -> None:
        """The entry's last part."""
        if self.changes or self.deal != self.part:
            self.steps.append(Step(self.part, self.changes, False, self.linked))

    def cut(self, deal_after: DealLedger) -> None:
        """The entry's part so far is a step; the next begins at `deal_after`."""
        if self.changes or deal_after != self.part:
            self.steps.append(Step(self.part, self.changes, False, self.linked))
            self.linked = True
        self.part = deal_after
        self.changes = 0

    def bonus(self) -> None:
        """The pone's 3, with the first entry taken: a step under the entry's own."""
        if self.part.bonus_due:
            self.deal = dataclasses.replace(self.deal, bonus_due=False)
            pone = (self.part.dealer + 1) % self.seats
            self.peg(self.side(pone), self.variant.pone_bonus)
            self.cut(dataclasses.replace(self.part, bonus_due=False))

    def won(self) -> bool:
        return self.board.winner is not None

    def new_deal(self, dealer: int, overlooked: tuple[int, int] | None = None) -> DealLedger:
        return DealLedger(dealer, overlooked=overlooked, bonus_due=self.deal.bonus_due)

    # The entries: each returns False when the rules refuse it (nothing changes then).
    def play_peg(self, side: int, points: int) -> bool:
        if self.won():
            return False
        self.bonus()
        self.peg(side, points)
        return True

    def starter(self, card: Card) -> bool:
        deal = self.deal
        if self.won() or card in deal.seen:
            return False
        if deal.starter is not None and not (
            deal.starter == card and card.rank == JACK and not deal.heels
        ):
            return False  # one starter a deal (the same jack again may still peg his heels)
        if deal.heels and card.rank != JACK:
            return False  # his heels were pegged: the starter is a jack
        heels = card.rank == JACK and not deal.heels
        self.deal = dataclasses.replace(deal, starter=card, heels=deal.heels or heels)
        self.bonus()
        if heels:
            self.peg(self.side(deal.dealer), 2)
        return True

    def heels(self) -> bool:
        deal = self.deal
        if self.won() or deal.heels:
            return False
        if deal.starter is not None and deal.starter.rank != JACK:
            return False
        self.deal = dataclasses.replace(deal, heels=True)
        self.bonus()
        self.peg(self.side(deal.dealer), 2)
        return True

    def count(self, claim: int | None, cards: tuple[Card, ...]) -> bool:
        deal = self.deal
        if self.won() or deal.shown:
            return False
        seat, crib = self.order()[deal.counted]
        side = self.side(seat)
        if claim is not None and not 0 <= claim <= 29:
            return False
        overlooked = None
        if not cards:
            if claim is None:
                return False
            impossible = {19, 25, 26, 27}
            if not crib and self.kept == 3:
                impossible = set(range(16, 30)) - {20}
            if claim in impossible and claim != 19:
                return False
            points = 0 if claim == 19 else claim
            starter = deal.starter
            held: tuple[Card, ...] = ()
        else:
            size = 4 if crib else self.kept
            if len(cards) == size + 1:
                held, starter = cards[:size], cards[size]
                if deal.starter is not None and starter != deal.starter:
                    return False  # the deal's starter, or none
                if deal.heels and starter.rank != JACK:
                    return False
            elif len(cards) == size and deal.starter is not None:
                held, starter = cards, deal.starter
            else:
                return False
            if starter in held:
                return False
            if any(card in deal.seen and deal.seen[card] != (seat, crib) for card in held):
                return False
            total = count_hand(held, starter, crib=crib).total
            points = total if claim is None or claim >= total else claim
            if points < total:
                overlooked = ((side + 1) % self.sides, total - points)
        seen = dict(deal.seen)
        seen.update({card: (seat, crib) for card in held})
        self.deal = dataclasses.replace(deal, starter=starter, seen=seen)
        self.bonus()
        deal = self.deal
        if points:
            self.peg(side, points)
        if deal.counted + 1 < len(self.order()):
            self.deal = dataclasses.replace(deal, counted=deal.counted + 1, overlooked=overlooked)
        else:
            self.deal = dataclasses.replace(deal, shown=True, overlooked=overlooked)
            if not self.won():  # after the crib the deal passes on: a part of its own
                self.cut(self.deal)
                pone = (deal.dealer + 1) % self.seats
                self.set_dealer(self.side(pone))
                self.deal = self.new_deal(pone, overlooked)
        return True

    def muggins(self, taker: int | None) -> bool:
        deal = self.deal
        if deal.overlooked is None or self.won():
            return False
        side, points = deal.overlooked
        self.deal = dataclasses.replace(deal, overlooked=None)
        self.bonus()
        self.peg(side if taker is None else taker, points)
        return True

    def pass_deal(self, side: int | None) -> bool:
        if side is None:
            seat = (self.deal.dealer + 1) % self.seats
            self.set_dealer(self.side(seat))
            self.deal = dataclasses.replace(self.new_deal(seat))
        else:
            seat = self.seat_after(side, self.deal.dealer + 1)
            self.set_dealer(side)
            self.deal = self.new_deal(seat)
        return True

    def new_game(self, target: int | None) -> bool:
        self.new_board_game(target or self.board.target)
        self.deal = DealLedger(
            self.first_seat(self.board.dealer), bonus_due=self.variant.pone_bonus > 0
        )
        return True

    def undo(self) -> bool:
        if not self.steps:
            return False  # (the board's history starts with the keeper's: nothing under it)
        while True:  # the entry, all its parts
            step = self.steps.pop()
            for _ in range(step.changes):
                self.board_undo()
            self.deal = step.deal
            if not step.linked:
                return True

    # changes made elsewhere: each a step of its own
    def elsewhere_peg(self, side: int, points: int) -> bool:
        if self.won():
            return False
        before = self.deal
        self.changes = 0
        self.peg(side, points)
        self.steps.append(Step(before, 1, True))
        return True

    def elsewhere_deal(self, side: int) -> bool:
        if side == self.board.dealer:
            return False
        before = self.deal
        self.changes = 0
        self.set_dealer(side)
        self.steps.append(Step(before, 1, True))
        self.deal = DealLedger(self.seat_after(side, before.dealer + 1), bonus_due=before.bonus_due)
        return True

    def elsewhere_undo(self) -> bool:
        """Another program undoes the board's last change: the step it belonged to goes (its
        deal back as before it); what stays of a step of several changes is a step elsewhere."""
        if not self.history:
            return False
        self.board_undo()
        while True:  # the step of that change, and the steps that changed nothing after it
            step = self.steps.pop()
            self.deal = step.deal
            if step.changes:
                break
        if step.changes > 1:
            self.steps.append(Step(step.deal, step.changes - 1, True))
        return True


# --- the search -----------------------------------------------------------------------------

DECK = deck()
CLAIMS = st.sampled_from([0, 2, 5, 8, 12, 14, 17, 19, 20, 25, 29, 30])


def card_text(card: Card) -> str:
    return str(card)


async def play(data: st.DataObject, variant: Variant) -> None:
    board = InProcessBoard(variant.sides, variant.target)
    keeper = Scorekeeper(board, output=lambda text: None, game=variant)  # type: ignore[arg-type]
    ledger = Ledger(variant)
    await keeper.start()
    letters = LETTERS[: variant.sides]
    for _ in range(data.draw(st.integers(1, 24), label="entries")):
        kind = data.draw(
            st.sampled_from(
                [
                    "claim",
                    "cards",
                    "cards",
                    "starter",
                    "heels",
                    "peg",
                    "muggins",
                    "undo",
                    "undo",
                    "deal",
                    "new",
                    "other peg",
                    "other undo",
                    "other deal",
                ]
            ),
            label="kind",
        )
        before = ledger.begin()
        line = None
        if kind == "claim":
            claim = data.draw(CLAIMS, label="claim")
            line, taken = str(claim), ledger.count(claim, ())
        elif kind == "cards":
            seat, crib = ledger.order()[ledger.deal.counted]
            size = 4 if crib else variant.kept
            given = data.draw(st.sampled_from([size, size + 1, size + 1, size - 1]), label="n")
            cards = data.draw(
                st.lists(st.sampled_from(DECK), min_size=given, max_size=given, unique=True),
                label="cards",
            )
            if ledger.deal.starter is not None and given == size + 1:
                if data.draw(st.booleans(), label="the deal's starter last"):
                    starter = ledger.deal.starter
                    cards = [c for c in cards[:size] if c != starter]
                    cards += [c for c in DECK if c not in cards and c != starter][
                        : size - len(cards)
                    ]
                    cards.append(starter)
            claim = data.draw(st.none() | CLAIMS, label="claim")
            words = " ".join(map(card_text, cards))
            line = f"c {words}" if claim is None else f"{claim} {words}"
            taken = ledger.count(claim, tuple(cards))
        elif kind == "starter":
            if data.draw(st.booleans(), label="a jack"):
                card = data.draw(st.sampled_from([c for c in DECK if c.rank == JACK]))
            else:
                card = data.draw(st.sampled_from(DECK), label="starter")
            line, taken = f"s {card}", ledger.starter(card)
        elif kind == "heels":
            line, taken = "j", ledger.heels()
        elif kind == "peg":
            side = data.draw(st.integers(0, variant.sides - 1), label="side")
            points = data.draw(st.integers(1, 29), label="points")
            line = letters[side] + ("" if points == 1 else str(points))
            taken = ledger.play_peg(side, points)
        elif kind == "muggins":
            taker = data.draw(st.none() | st.integers(0, variant.sides - 1), label="taker")
            line = "m" if taker is None else f"m {letters[taker]}"
            taken = ledger.muggins(taker)
        elif kind == "undo":
            line, taken = "u", ledger.undo()
        elif kind == "deal":
            side = data.draw(st.none() | st.integers(0, variant.sides - 1), label="dealer")
            line = "d" if side is None else f"d {letters[side]}"
            taken = ledger.pass_deal(side)
        elif kind == "new":
            target = data.draw(st.sampled_from([None, 61, 121]), label="target")
            line = "n" if target is None else f"n {target}"
            taken = ledger.new_game(target)
        elif kind == "other peg":
            side = data.draw(st.integers(0, variant.sides - 1), label="side")
            points = data.draw(st.integers(1, 29), label="points")
            if ledger.elsewhere_peg(side, points):
                await board.peg(side, points)
            continue
        elif kind == "other undo":
            if ledger.elsewhere_undo():
                await board.undo()
            continue
        else:
            side = data.draw(st.integers(0, variant.sides - 1), label="side")
            if ledger.elsewhere_deal(side):
                await board.set_dealer(side)
            continue
        if taken:
            if kind != "undo":
                ledger.done(before)
        await check(keeper, board, ledger, line, taken)


async def check(
    keeper: Scorekeeper, board: InProcessBoard, ledger: Ledger, line: str, taken: bool
) -> None:
    before = await board.state()
    assert await keeper.handle(line)
    state = await board.state()
    said = f"{line!r}: {keeper.messages}"
    if not taken:
        assert (state.front, state.back, state.dealer) == (before.front, before.back, before.dealer)
        refusal = [m for m in keeper.messages if not elsewhere(m)]
        assert len(refusal) == 1, said  # one line, saying what to type instead
    expected = ledger.board
    assert tuple(state.front) == expected.scores, said
    assert state.dealer == expected.dealer, said
    assert state.winner == expected.winner and state.target == expected.target, said
    turn, deal = keeper.turn, ledger.deal
    assert (turn.dealer, turn.step, turn.shown, turn.starter, turn.heels) == (
        deal.dealer,
        deal.counted,
        deal.shown,
        deal.starter,
        deal.heels,
    ), said
    assert turn.bonus_due == deal.bonus_due, said
    assert turn.overlooked == (None if deal.overlooked is None else deal.overlooked), said


def elsewhere(message: str) -> bool:
    """A line about a change made elsewhere, said before the entry's own."""
    return message.endswith("(from another program or a phone)") or message.startswith(
        "taken back there:"
    )


SEARCH = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SEARCH
@given(data=st.data())
def test_two_players(data: st.DataObject) -> None:
    asyncio.run(play(data, STANDARD))


@SEARCH
@given(data=st.data())
def test_three_players(data: st.DataObject) -> None:
    asyncio.run(play(data, THREE_PLAYER))


@SEARCH
@given(data=st.data())
def test_four_players_in_partnerships(data: st.DataObject) -> None:
    asyncio.run(play(data, FOUR_PLAYER))


@SEARCH
@given(data=st.data())
def test_the_five_card_game(data: st.DataObject) -> None:
    asyncio.run(play(data, FIVE_CARD))
