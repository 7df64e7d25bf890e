"""The scorekeeper's game model (`rules.scorekeeping`) on its own, with no board and no
terminal: whole deals driven through it as a table tells them, the show counted from the pone
round to the dealer with the dealer's crib last, the deal passing on, claims checked against
their cards, muggins, the five-card game's bonus, and undo. Its order and counts are held
against the rules engine's own deals (`rules.game`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cribboard.rules import (
    FIVE_CARD,
    FOUR_PLAYER,
    STANDARD,
    THREE_PLAYER,
    Game,
    IllegalMove,
    Phase,
    ScoreEvent,
    Variant,
    count_hand,
    parse_card,
    parse_cards,
)
from cribboard.rules.scorekeeping import (
    IMPOSSIBLE,
    IMPOSSIBLE_THREE,
    CardSeen,
    Counted,
    HeelsPegged,
    ImpossibleCount,
    JackExpected,
    NoSeat,
    NoStarter,
    NotAJack,
    NothingOverlooked,
    NothingToCount,
    OtherStarter,
    Pegs,
    Scorekeeping,
    StarterInHand,
    StarterKnown,
    Verdict,
    WrongCards,
)
from cribboard.rules.show import ShowHand, show_order


class Table:
    """A pencil-and-paper board for the model: each side's score, pegged as the model says,
    and the game won at the target, as the scorekeeper's board does."""

    def __init__(self, variant: Variant = STANDARD, dealer_side: int = 0) -> None:
        self.keeping = Scorekeeping(variant)
        self.keeping.new_game(dealer_side)
        self.target = variant.target
        self.scores = [0] * variant.sides
        self.passed: list[int] = []
        """The seats the deal passed to after each show."""

    @property
    def won(self) -> bool:
        return max(self.scores) >= self.target

    def peg(self, pegs: Pegs | None) -> None:
        if pegs is not None and pegs.points:
            assert not self.won, "no pegging after the game is won"
            self.scores[pegs.side] = min(self.scores[pegs.side] + pegs.points, self.target)

    def count(self, claim: int | None, cards: str = "") -> Counted:
        """A hand of the show, told as the scorekeeper tells it: pegged, then the next hand,
        or after the crib the deal passes on (unless the game is won)."""
        counted = self.keeping.count(claim, parse_cards(cards))
        self.peg(Pegs(counted.side, counted.points))
        if not self.keeping.next_hand(counted.overlooked) and not self.won:
            self.passed.append(self.keeping.pass_deal(counted.overlooked))
        return counted


def hand(seat: int, crib: bool = False) -> ShowHand:
    return ShowHand(seat, crib)


def pegs(event: ScoreEvent | None) -> Pegs | None:
    """The engine's score as the model's fact."""
    return None if event is None else Pegs(event.side, event.points)


def test_one_show_order_from_the_pone_round_to_the_dealer_then_the_crib() -> None:
    assert show_order(0, 2) == [(1, False), (0, False), (0, True)]
    assert show_order(1, 2) == [(0, False), (1, False), (1, True)]
    assert show_order(2, 3) == [(0, False), (1, False), (2, False), (2, True)]
    assert show_order(3, 4) == [hand(0), hand(1), hand(2), hand(3), hand(3, crib=True)]


def test_whole_deals_count_from_the_pone_and_the_deal_passes_after_the_crib() -> None:
    table = Table(STANDARD, dealer_side=0)
    keeping = table.keeping
    assert (keeping.turn.dealer, keeping.pone, keeping.turn.deal_no) == (0, 1, 1)
    assert keeping.hands_left() == [hand(1), hand(0), hand(0, crib=True)]
    assert table.count(12).hand == hand(1)  # the pone's hand first
    assert keeping.hand() == hand(0) and keeping.hands_left() == [hand(0), hand(0, True)]
    table.count(8)
    assert keeping.hand() == hand(0, crib=True)  # the dealer's crib last
    table.count(4)
    assert table.scores == [12, 12] and table.passed == [1]  # the deal passed to the pone
    assert (keeping.turn.dealer, keeping.turn.deal_no, keeping.turn.step) == (1, 2, 0)
    assert keeping.hand() == hand(0)  # the new pone counts first
    for claim in (6, 10, 2):  # deal 2: blue's hand, orange's hand, orange's crib
        table.count(claim)
    assert table.scores == [18, 24] and table.passed == [1, 0]
    assert keeping.turn.deal_no == 3 and keeping.hand() == hand(1)


def test_three_players_count_round_the_table_and_the_deal_goes_round() -> None:
    table = Table(THREE_PLAYER, dealer_side=2)
    keeping = table.keeping
    assert keeping.show_order() == [hand(0), hand(1), hand(2), hand(2, crib=True)]
    for claim in (4, 6, 8, 2):
        table.count(claim)
    assert table.scores == [4, 6, 10] and table.passed == [0]
    assert keeping.show_order() == [hand(1), hand(2), hand(0), hand(0, crib=True)]
    for claim in (1, 2, 3, 4):
        table.count(claim)
    assert table.passed == [0, 1] and table.scores == [4 + 3 + 4, 6 + 1, 10 + 2]


def test_four_players_count_by_seat_and_peg_for_their_partnership() -> None:
    table = Table(FOUR_PLAYER, dealer_side=0)
    keeping = table.keeping
    seat = keeping.seat_of(1, 1)  # orange 1 won the cut
    assert seat == 1 and keeping.number_of(3) == 2 and keeping.seat_of(0, 2) == 2
    keeping.deal_to(seat)
    assert keeping.turn.deal_no == 1
    assert keeping.show_order() == [hand(2), hand(3), hand(0), hand(1), hand(1, crib=True)]
    sides = [table.count(claim).side for claim in (6, 4, 8)]
    assert sides == [0, 1, 0] and table.scores == [14, 4]
    # orange 1 claims 2 of a 29: the overlooked 27 are blue's to take
    counted = table.count(2, "5H 5S 5C JD 5D")
    assert counted.verdict is Verdict.SHORT and counted.overlooked == Pegs(0, 27)
    table.peg(keeping.muggins())
    assert table.scores == [14 + 27, 6]
    table.count(5)  # orange 1's crib: the deal passes to blue 2 (seat 2), a seat of the other side
    assert table.scores == [41, 11] and table.passed == [2]
    assert keeping.side(keeping.turn.dealer) == 0 and keeping.hand() == hand(3)
    assert keeping.heels() == Pegs(0, 2)  # his heels: the dealer's partnership
    assert keeping.seat_dealing(1, after=3) == 3 and keeping.seat_dealing(1, after=0) == 1
    with pytest.raises(NoSeat):
        keeping.seat_dealing(2, after=0)  # four players are two sides
    for wrong in ((0, 3), (2, 1)):
        with pytest.raises(IllegalMove):
            keeping.seat_of(*wrong)
    with pytest.raises(IllegalMove):
        keeping.deal_to(4)
    with pytest.raises(IllegalMove):
        Scorekeeping(STANDARD, dealer=2)


def test_cards_counted_claims_checked_and_muggins() -> None:
    table = Table(STANDARD, dealer_side=0)
    keeping = table.keeping
    with pytest.raises(NoStarter):
        keeping.count(None, parse_cards("5H 5S 5C JD"))  # the starter is not known yet
    counted = table.count(None, "5H 5S 5C JD 5D")  # the pone's 29, the starter last
    assert counted.verdict is Verdict.COUNTED and counted.points == 29 and counted.count
    assert keeping.turn.starter == parse_card("5D")
    # the dealer claims 4 with the cards: the starter is remembered; the rest is overlooked
    actual = count_hand(parse_cards("2H 3H 4H 6D"), parse_card("5D")).total
    counted = table.count(4, "2H 3H 4H 6D")
    assert counted.verdict is Verdict.SHORT and counted.points == 4
    assert counted.overlooked == Pegs(1, actual - 4) == keeping.turn.overlooked
    assert table.scores == [4, 29]
    assert keeping.muggins() == Pegs(1, actual - 4)  # the opponent takes them
    with pytest.raises(NothingOverlooked):
        keeping.muggins()  # only once
    # the crib: a card already in a hand is a typo; nothing changes
    turn = keeping.turn
    with pytest.raises(CardSeen) as seen:
        keeping.count(None, parse_cards("2H 7C 8C 9C"))
    assert seen.value.hand == hand(0) and keeping.turn == turn
    with pytest.raises(StarterInHand):
        keeping.count(None, parse_cards("5D 7C 8C 9C"))
    with pytest.raises(WrongCards) as wrong:
        keeping.count(None, parse_cards("7C 8C 9C"))
    assert (wrong.value.size, wrong.value.given) == (4, 3)
    # an over-claim pegs what the crib has (a crib flush needs the starter's suit too)
    crib = count_hand(parse_cards("7C 8C 9C KC"), parse_card("5D"), crib=True).total
    counted = table.count(20, "7C 8C 9C KC")
    assert counted.verdict is Verdict.OVER and counted.points == crib
    assert table.passed == [1] and keeping.turn.starter is None  # a fresh deal
    assert keeping.turn.overlooked is None  # a right crib leaves nothing to take


def test_a_short_claim_for_the_crib_can_be_taken_in_the_next_deal() -> None:
    table = Table(STANDARD, dealer_side=0)
    table.count(0)
    table.count(0)
    counted = table.count(1, "5H 5S 5C JD 5D")  # the crib: 1 claimed of a 29
    assert counted.verdict is Verdict.SHORT and counted.overlooked == Pegs(1, 28)
    assert table.passed == [1] and table.keeping.turn.overlooked == Pegs(1, 28)
    assert table.keeping.muggins(taker=0) == Pegs(0, 28)  # a side named takes them


def test_the_starter_and_his_heels() -> None:
    keeping = Scorekeeping(STANDARD)
    keeping.new_game(1)  # orange deals
    assert keeping.starter(parse_card("JC")) == Pegs(1, 2)  # a jack: the dealer pegs 2
    keeping.count(None, parse_cards("5H 5S 5C 5D"))
    with pytest.raises(CardSeen):
        keeping.starter(parse_card("5H"))  # already in blue's hand


def test_one_starter_a_deal_and_his_heels_once_for_a_jack() -> None:
    """The issue's sequence at a fresh table, blue dealing: s JS, j, s 7D, j pegged his heels
    three times (twice on a jack, once on a 7). One starter a deal; his heels once, for a jack."""
    keeping = Scorekeeping(STANDARD)
    keeping.new_game(0)
    assert keeping.starter(parse_card("JS")) == Pegs(0, 2)
    with pytest.raises(HeelsPegged):
        keeping.heels()
    with pytest.raises(StarterKnown) as known:
        keeping.starter(parse_card("7D"))
    assert (known.value.starter, known.value.given) == (parse_card("JS"), parse_card("7D"))
    with pytest.raises(StarterKnown):
        keeping.starter(parse_card("JS"))  # the same again: his heels are not pegged twice
    with pytest.raises(HeelsPegged):
        keeping.heels()
    assert keeping.turn.starter == parse_card("JS") and keeping.turn.heels


def test_his_heels_before_the_starter_say_it_is_a_jack() -> None:
    keeping = Scorekeeping(STANDARD)
    keeping.new_game(0)
    assert keeping.heels() == Pegs(0, 2)  # j before any starter: taken, the starter a jack
    with pytest.raises(JackExpected):
        keeping.starter(parse_card("7D"))
    with pytest.raises(JackExpected):
        keeping.count(None, parse_cards("5H 5S 5C 2D 7D"))  # a count's starter, the same
    assert keeping.starter(parse_card("JD")) is None  # the jack told: no second heels
    assert keeping.turn.starter == parse_card("JD") and keeping.turn.heels
    other = Scorekeeping(STANDARD)
    other.new_game(0)
    other.heels()
    counted = other.count(None, parse_cards("5H 5S 5C 2D JD"))  # a jack starter: counted
    assert counted.count is not None and counted.count.starter == parse_card("JD")
    with pytest.raises(StarterKnown):
        other.starter(parse_card("JD"))


def test_his_heels_are_for_a_jack_only() -> None:
    keeping = Scorekeeping(STANDARD)
    keeping.new_game(0)
    assert keeping.starter(parse_card("7D")) is None
    with pytest.raises(NotAJack) as refused:
        keeping.heels()
    assert refused.value.starter == parse_card("7D") and not keeping.turn.heels
    # a starter known from a count, a jack, with his heels not pegged yet: s pegs them once
    counted = Scorekeeping(STANDARD)
    counted.new_game(1)
    counted.count(None, parse_cards("5H 5S 5C 2D JD"))
    assert counted.starter(parse_card("JD")) == Pegs(1, 2)
    with pytest.raises(HeelsPegged):
        counted.heels()


def test_a_count_agrees_with_the_deals_starter() -> None:
    """The issue: after s 7C, c 5H 5S 5C JD 5D pegged 29 (14 with 7C) while the deal said 7C.
    A count's last card is the deal's starter, or the count is refused."""
    keeping = Scorekeeping(STANDARD)
    keeping.new_game(0)
    keeping.starter(parse_card("7C"))
    turn = keeping.turn
    with pytest.raises(OtherStarter) as other:
        keeping.count(None, parse_cards("5H 5S 5C JD 5D"))
    assert (other.value.starter, other.value.given) == (parse_card("7C"), parse_card("5D"))
    assert keeping.turn == turn  # nothing remembered of it
    counted = keeping.count(None, parse_cards("5H 5S 5C JD"))  # the hand alone, with 7C
    assert counted.points == 14 and counted.count is not None
    assert counted.count.starter == parse_card("7C")
    keeping.next_hand()
    counted = keeping.count(None, parse_cards("2H 3H 4H 6D 7C"))  # or with 7C last
    assert counted.count is not None and counted.count.starter == parse_card("7C")
    # the first count with cards tells the starter when none was typed: then it holds
    fresh = Scorekeeping(STANDARD)
    fresh.new_game(0)
    fresh.count(None, parse_cards("5H 5S 5C JD 5D"))
    fresh.next_hand()
    with pytest.raises(OtherStarter):
        fresh.count(None, parse_cards("2H 3H 4H 6D 7C"))
    with pytest.raises(StarterKnown):
        fresh.starter(parse_card("7C"))


def test_undo_takes_the_starter_and_his_heels_back_with_the_entry() -> None:
    keeping = Scorekeeping(STANDARD)
    keeping.new_game(0)
    before = keeping.turn
    keeping.starter(parse_card("JS"))
    keeping.record(before, 1, "starter JS", depth=1)
    assert keeping.undo() is not None  # the jack and its heels go back together
    assert keeping.turn.starter is None and not keeping.turn.heels and keeping.depth == 0
    assert keeping.starter(parse_card("7D")) is None
    with pytest.raises(NotAJack):
        keeping.heels()


def test_claims_no_hand_can_make() -> None:
    table = Table(STANDARD)
    for impossible in (25, 26, 27, 30, -1):
        with pytest.raises(ImpossibleCount):
            table.keeping.count(impossible)
    with pytest.raises(ImpossibleCount):
        table.keeping.count(30, parse_cards("5H 5S 5C JD 5D"))  # more than any hand: refused
    with pytest.raises(NothingToCount):
        table.keeping.count(None)
    counted = table.count(19)  # nineteen: nothing
    assert counted.nineteen and counted.points == 0 and counted.claim == 0
    assert table.keeping.turn.step == 1
    assert 19 in IMPOSSIBLE and 19 in IMPOSSIBLE_THREE and 20 not in IMPOSSIBLE_THREE
    five = Table(FIVE_CARD)
    with pytest.raises(ImpossibleCount):
        five.keeping.count(17)  # no three-card hand counts 17
    five.count(20)  # 5 5 5 with a 5 starter: four fifteens 8, four of a kind 12
    five.count(0)
    five.count(17)  # the crib has four cards: 17 can be made


def test_five_card_game_the_pone_pegs_3_once() -> None:
    keeping = Scorekeeping(FIVE_CARD)
    keeping.new_game(0)
    assert keeping.turn.bonus_due
    keeping.deal_to(1)  # orange won the cut: the bonus waits for the deal to be settled
    assert keeping.turn.bonus_due and keeping.pone == 0
    keeping.pass_deal()
    assert keeping.turn.bonus_due and keeping.turn.dealer == 0 and keeping.turn.deal_no == 2
    keeping.deal_to(1)
    assert keeping.pone_bonus() == Pegs(0, 3) and not keeping.turn.bonus_due
    assert keeping.hand() == hand(0) and keeping.variant.kept == 3
    with pytest.raises(WrongCards) as wrong:
        keeping.count(None, parse_cards("2H 3H 4H 6D 9S"))
    assert wrong.value.size == 3


def test_undo_takes_entries_back_with_the_place_in_the_deal() -> None:
    table = Table(STANDARD)
    keeping = table.keeping
    for claim in (10, 6, 3):  # the crib passes the deal: one entry
        before = keeping.turn
        table.count(claim)
        keeping.record(before, changes=2 if claim == 3 else 1, what=f"count {claim}")
    assert keeping.turn.dealer == 1 and len(keeping.history) == 3
    before = keeping.turn
    keeping.record(before, changes=0, what="nothing")  # changed nothing: no undo step
    entry = keeping.undo()
    assert entry is not None and (entry.what, entry.changes) == ("count 3", 2)
    assert keeping.turn.dealer == 0 and keeping.hand() == hand(0, crib=True)
    assert [e.what for e in keeping.history] == ["count 10", "count 6"]
    keeping.undo()
    keeping.undo()
    assert keeping.turn.step == 0 and keeping.undo() is None


def test_changes_made_on_the_board_elsewhere_are_steps_of_their_own() -> None:
    """A change made elsewhere (its buttons, another program) is a step on top of the entries:
    undo takes it back first, and the entries under it stay; an entry undone elsewhere goes out
    of the history with the place in the deal it made."""
    keeping = Scorekeeping(STANDARD)
    keeping.new_game(0)
    before = keeping.turn
    keeping.count(5)
    keeping.next_hand()
    keeping.record(before, 1, "5", depth=1, after="5")
    assert keeping.elsewhere(2, "o3", dealer_side=0, what="orange 3") == []
    assert [(e.what, e.elsewhere, e.changes) for e in keeping.history] == [
        ("5", False, 1),
        ("orange 3", True, 1),
    ]
    assert keeping.hand() == hand(0)  # the show goes on where it was
    step = keeping.undo()
    assert step is not None and step.elsewhere and keeping.depth == 1
    assert keeping.hand() == hand(0)
    assert [e.what for e in keeping.history] == ["5"]
    # undone elsewhere: the entry goes, and the place in the deal with it
    undone = keeping.elsewhere(0, "start", dealer_side=0, what="undone")
    assert [e.what for e in undone] == ["5"] and keeping.history == []
    assert keeping.hand() == hand(1)
    # the dealer lamp moved elsewhere: the deal has passed, undo takes it back
    keeping.elsewhere(1, "deal", dealer_side=1, what="orange deals")
    assert (keeping.turn.dealer, keeping.turn.deal_no, keeping.turn.step) == (1, 2, 0)
    keeping.undo()
    assert (keeping.turn.dealer, keeping.turn.deal_no) == (0, 1)
    # changed and undone there at once (the same depth, the board unlike the entry's): whose
    # steps are whose cannot be told, so the entries can no longer be undone; so with a full
    # history (depth None)
    keeping.record(keeping.turn, 1, "b2", depth=1, after="b2")
    keeping.elsewhere(1, "o2", dealer_side=0, what="?")
    assert keeping.history == []
    keeping.record(keeping.turn, 1, "b2", depth=2, after="b2")
    keeping.elsewhere(None, "o2", dealer_side=0, what="?")
    assert keeping.history == []
    # part of an entry undone elsewhere (the crib's points stay, the deal passing went back)
    keeping = Scorekeeping(STANDARD)
    keeping.new_game(0)
    keeping.next_hand()
    keeping.next_hand()
    before = keeping.turn
    keeping.count(4)
    keeping.next_hand()
    keeping.pass_deal()
    keeping.record(before, 2, "crib 4", depth=2, after="passed")
    undone = keeping.elsewhere(1, "pegged", dealer_side=0, what="undone")
    assert [e.what for e in undone] == ["crib 4"] and keeping.turn == before
    assert [(e.what, e.changes, e.elsewhere) for e in keeping.history] == [("crib 4", 1, True)]


def test_the_boards_own_undo_keeps_the_deal_unless_the_dealer_changed() -> None:
    keeping = Scorekeeping(STANDARD)
    keeping.new_game(0)
    keeping.starter(parse_card("JS"))
    keeping.next_hand()
    keeping.restart_deal(dealer_side=0, depth=3)  # a step this table knows nothing of
    assert keeping.turn.heels and keeping.turn.step == 1 and keeping.depth == 3
    keeping.restart_deal(dealer_side=1, depth=2)  # the deal went back to orange: over again
    assert (keeping.turn.dealer, keeping.turn.step, keeping.turn.heels) == (1, 0, False)


@pytest.mark.parametrize("variant", [STANDARD, THREE_PLAYER, FOUR_PLAYER, FIVE_CARD])
def test_whole_games_told_to_the_model_agree_with_the_rules_engine(variant: Variant) -> None:
    """The engine deals, plays and counts whole games; the model, told the same cards, has the
    same dealer and pone, the same show order, counts and sides, and passes the deal as the
    engine does, until the game is won (possibly in the middle of the show)."""
    for seed in range(3):
        game = Game(variant, dealer=0, rng=random.Random(seed))
        table = Table(variant, dealer_side=0)
        keeping = table.keeping
        while not game.over:
            deal = game.deal()
            assert (keeping.turn.dealer, keeping.pone) == (deal.dealer, deal.pone)
            assert keeping.show_order() == deal.show_order()
            if keeping.turn.bonus_due:
                bonus = keeping.pone_bonus()
                assert [(e.side, e.points) for e in deal.events] == [bonus]
                table.peg(bonus)
            for seat in range(variant.players):
                deal.discard(seat, deal.hands[seat][: variant.discards])
            heels = pegs(deal.cut())
            assert deal.starter is not None and keeping.starter(deal.starter) == heels
            table.peg(heels)
            while deal.phase is Phase.PLAY:
                assert deal.pegging is not None
                _result, event = deal.play(deal.pegging.playable()[0])
                table.peg(pegs(event))
            for shown in deal.show():
                assert keeping.hand() == (shown.seat, shown.crib)
                cards = deal.crib if shown.crib else deal.hands[shown.seat]
                counted = table.count(shown.count.total, " ".join(map(str, cards)))
                assert counted.verdict is Verdict.RIGHT and counted.count == shown.count
                assert counted.side == variant.side_of(shown.seat)
            assert table.scores == game.scores
        assert table.won and table.scores.index(variant.target) == game.winner
        assert len(table.passed) == len(game.deals) - 1  # after every show but the last


def test_the_model_has_no_board_no_terminal_and_no_words() -> None:
    """What the model imports: the standard library and the rules, nothing that reads keys,
    talks to a board or translates (the scorekeeper says it all)."""
    import ast

    import cribboard.rules.scorekeeping as model

    tree = ast.parse(Path(model.__file__).read_text())
    imported = [
        node.module or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module != "__future__"
    ] + [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    ours = [name for name in imported if name.split(".")[0] in ("cribboard", "cribcore")]
    assert ours and all(name.startswith("cribboard.rules.") for name in ours), ours
    assert not {"asyncio", "builtins", "sys"} & {name.split(".")[0] for name in imported}
    calls = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert not calls & {"_", "n_", "N_", "L_", "print", "input", "open"}
