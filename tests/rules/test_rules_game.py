"""The game layer of the rules engine: deals, discards, the starter, the play and the show as a
game driver runs them, the end of the game mid-count, skunks and the variants."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from cribboard.rules import (
    FIVE_CARD,
    FOUR_PLAYER,
    SHORT,
    STANDARD,
    THREE_PLAYER,
    VARIANTS,
    Card,
    Deal,
    Game,
    IllegalMove,
    Kind,
    Phase,
    Reason,
    Result,
    Variant,
    cut_for_deal,
    deck,
    parse_card,
    parse_cards,
)


def c(text: str) -> Card:
    return parse_card(text)


def stacked(
    variant: Variant, dealer: int, hands: Sequence[str], crib_extra: str = ""
) -> list[Card]:
    """A deck order that deals `hands` (per seat) one card at a time from the pone round, then
    `crib_extra` to the crib, then the rest of the deck."""
    n = variant.players
    per_seat = [parse_cards(h) for h in hands]
    order = [(dealer + 1 + i) % n for i in range(n)]
    top = [per_seat[seat][i] for i in range(variant.dealt) for seat in order]
    top += parse_cards(crib_extra)
    return top + [card for card in deck() if card not in top]


def discard_and_cut(deal: Deal, discards: Sequence[str], starter: str) -> None:
    for seat, cards in enumerate(discards):
        deal.discard(seat, parse_cards(cards))
    deal.cut(c(starter))


def play_out(deal: Deal, order: str) -> None:
    for text in order.split():
        deal.play(c(text))


def test_a_deal_from_start_to_end() -> None:
    game = Game(STANDARD, dealer=0)
    deal = game.deal(stacked(STANDARD, 0, ["5H 5S 5C JD 2C 3C", "10S 9H 2D AD KC QC"]))
    assert (deal.dealer, deal.pone, deal.phase) == (0, 1, Phase.DISCARD)
    assert deal.hands[1] == parse_cards("10S 9H 2D AD KC QC") and len(deal.stock) == 40
    with pytest.raises(IllegalMove, match="cannot cut now"):
        deal.cut()
    with pytest.raises(IllegalMove, match="lay away 2"):
        deal.discard(0, parse_cards("2C"))
    with pytest.raises(IllegalMove, match="does not hold"):
        deal.discard(0, parse_cards("2C 4C"))
    deal.discard(0, parse_cards("2C 3C"))
    with pytest.raises(IllegalMove, match="already"):
        deal.discard(0, parse_cards("5H 5S"))
    deal.discard(1, parse_cards("KC QC"))
    assert deal.phase is Phase.CUT and sorted(deal.crib) == sorted(parse_cards("2C 3C KC QC"))
    assert deal.cut(c("5D")) is None  # not a jack: no heels
    assert deal.phase is Phase.PLAY and deal.to_play == 1  # the pone leads
    play_out(deal, "10S 5H")  # 15 for the dealer
    assert [(e.seat, e.points, e.reason) for e in deal.events] == [(0, 2, Reason.PLAY)]
    play_out(deal, "9H 5S")  # 29 (no pair: the 9 between the fives)
    assert deal.to_play == 1 and deal.pegging is not None
    assert deal.pegging.playable() == parse_cards("2D AD")
    result, event = deal.play(c("2D"))  # 31 for the pone: 2
    assert [k.kind for k in result.combos] == [Kind.THIRTY_ONE] and result.series_over
    assert event is not None and (event.seat, event.points) == (1, 2)
    assert deal.to_play == 0  # the seat after the one who laid the last card leads
    play_out(deal, "5C AD")
    result, event = deal.play(c("JD"))  # 16, the last card: 1
    assert [k.kind for k in result.combos] == [Kind.LAST_CARD] and deal.phase is Phase.SHOW
    assert game.scores == [3, 2]
    shown = deal.show()
    assert (
        [(s.seat, s.crib) for s in shown]
        == deal.show_order()
        == [(1, False), (0, False), (0, True)]
    )
    # pone: 10+5, 9+A+5 = 4; dealer: the 29 hand; crib 2C 3C KC QC + 5D: 2+3+K, 2+3+Q, K+5,
    # Q+5 = 8, no flush (the starter is a diamond)
    assert [s.count.total for s in shown] == [4, 29, 8]
    assert [s.event.reason for s in shown if s.event] == [Reason.HAND, Reason.HAND, Reason.CRIB]
    assert deal.phase is Phase.DONE and game.scores == [3 + 29 + 8, 2 + 4]
    assert game.scores == [sum(e.points for e in game.events if e.side == side) for side in (0, 1)]


def test_his_heels_pegs_2_for_the_dealer_and_can_win() -> None:
    game = Game(STANDARD, dealer=1)
    deal = game.deal()
    for seat in (0, 1):
        deal.discard(seat, deal.hands[seat][:2])
    jack = next(card for card in deal.stock if card.rank == 11)
    event = deal.cut(jack)
    assert event is not None and (event.seat, event.points, event.reason) == (1, 2, Reason.HEELS)
    assert game.scores == [0, 2]

    game = Game(STANDARD, dealer=0)
    game.score(0, 119, Reason.PLAY)
    deal = game.deal()
    for seat in (0, 1):
        deal.discard(seat, deal.hands[seat][:2])
    jack = next(card for card in deal.stock if card.rank == 11)
    event = deal.cut(jack)
    assert event is not None and event.won and game.winner == 0 and game.scores == [121, 0]
    assert deal.phase is Phase.DONE and game.result() is Result.DOUBLE_SKUNK
    with pytest.raises(IllegalMove, match="over"):
        deal.play(deal.hands[1][0])
    with pytest.raises(IllegalMove, match="over"):
        game.deal()


def test_the_pone_pegs_out_before_the_dealer_counts() -> None:
    game = Game(STANDARD, dealer=0)
    game.score(0, 115, Reason.PLAY)
    game.score(1, 97, Reason.PLAY)
    deal = game.deal(stacked(STANDARD, 0, ["5H 5S 5C JD 2C 3C", "7H 8S 7C 8D KC QC"]))
    discard_and_cut(deal, ["2C 3C", "KC QC"], "9D")
    play_out(deal, "7H 5H 7C 5S")  # 7, 12, 19, 24
    assert deal.pegging is not None and deal.pegging.results[-1].go_said == (1,)  # 8 > 7
    result, _ = deal.play(c("5C"))  # the dealer plays on: a pair at 29, and nobody can play
    assert [k.kind for k in result.combos] == [Kind.PAIR, Kind.GO] and result.points == 3
    play_out(deal, "8S JD 8D")  # the pone's last card
    assert game.scores == [115 + 3, 97 + 1] and deal.phase is Phase.SHOW
    first = deal.count_next()
    # the pone's 7 8 7 8 + 9: four 15s 8, two pairs 4, four runs of three 12 = 24
    assert (first.seat, first.crib, first.count.total) == (1, False, 24)
    # 118 + 24 is past 121: the peg stops at the target
    assert first.event is not None and first.event.won and first.event.after == 121
    assert game.winner == 1 and deal.phase is Phase.DONE and len(deal.shown) == 1
    assert game.result() is Result.WON  # the dealer's 15-point hand is never counted
    with pytest.raises(IllegalMove, match="over"):
        deal.count_next()


def test_the_game_ends_mid_play() -> None:
    game = Game(STANDARD, dealer=0)
    game.score(1, 119, Reason.PLAY)
    deal = game.deal(stacked(STANDARD, 0, ["5H 5S 5C JD 2C 3C", "10S 9H 2D AD KC QC"]))
    discard_and_cut(deal, ["2C 3C", "KC QC"], "4D")
    play_out(deal, "10S 5H 9H 5S")
    result, event = deal.play(c("2D"))  # 31: the pone pegs out with cards still in hand
    assert event is not None and event.won and game.scores == [2, 121]
    assert deal.phase is Phase.DONE and game.result() is Result.DOUBLE_SKUNK
    with pytest.raises(IllegalMove, match="over"):
        deal.play(c("5C"))


@pytest.mark.parametrize(
    "variant, loser, result",
    [
        (STANDARD, 91, Result.WON),
        (STANDARD, 90, Result.SKUNK),
        (STANDARD, 61, Result.SKUNK),
        (STANDARD, 60, Result.DOUBLE_SKUNK),
        (SHORT, 31, Result.WON),
        (SHORT, 30, Result.SKUNK),
        (SHORT, 0, Result.SKUNK),
        (FIVE_CARD, 30, Result.SKUNK),
        (FIVE_CARD, 45, Result.WON),
    ],
)
def test_skunks(variant: Variant, loser: int, result: Result) -> None:
    game = Game(variant)
    assert game.result() is Result.PLAYING
    game.score(1, loser, Reason.PLAY)
    event = game.score(0, variant.target + 3, Reason.HAND)
    assert event.won and game.winner == 0 and game.result() is result
    with pytest.raises(IllegalMove, match="over"):
        game.score(1, 2, Reason.PLAY)


def test_the_deal_passes_round() -> None:
    for variant in (STANDARD, THREE_PLAYER, FOUR_PLAYER):
        game = Game(variant, dealer=1, rng=random.Random(3))
        dealers = []
        for _ in range(5):
            deal = game.deal()
            dealers.append(deal.dealer)
            with pytest.raises(IllegalMove, match="not finished"):
                game.deal()
            deal.phase = Phase.DONE  # skip the deal for this test
        n = variant.players
        assert dealers == [(1 + i) % n for i in range(5)]


def test_cut_for_deal() -> None:
    assert cut_for_deal(parse_cards("9H 3C")) == 1
    assert cut_for_deal(parse_cards("AH KC")) == 0
    assert cut_for_deal(parse_cards("3H 3C")) is None  # equal ranks cut again
    assert cut_for_deal(parse_cards("3H 5C 3D")) is None
    assert cut_for_deal(parse_cards("QH 10C JD")) == 1


def test_five_card_game() -> None:
    game = Game(FIVE_CARD, dealer=0, rng=random.Random(1))
    deal = game.deal()
    assert [(e.seat, e.points, e.reason) for e in game.events] == [(1, 3, Reason.BONUS)]
    assert all(len(hand) == 5 for hand in deal.hands)
    for seat in (0, 1):
        deal.discard(seat, deal.hands[seat][:2])
    assert all(len(hand) == 3 for hand in deal.hands) and len(deal.crib) == 4
    deal.cut()
    while deal.phase is Phase.PLAY:
        assert deal.pegging is not None
        deal.play(deal.pegging.playable()[0])
    assert deal.pegging is not None and len(deal.pegging.results) <= 6
    assert sum(r.series_over for r in deal.pegging.results) == 1  # to 31 once only
    if not game.over:
        deal.show()
        if not game.over:
            game.deal()
            bonuses = [e for e in game.events if e.reason is Reason.BONUS]
            assert len(bonuses) == 1  # once, at the start of the game


def test_three_players() -> None:
    game = Game(THREE_PLAYER, dealer=2, rng=random.Random(2))
    deal = game.deal()
    assert [len(hand) for hand in deal.hands] == [5, 5, 5] and len(deal.crib) == 1
    assert len(deal.stock) == 52 - 16
    for seat in (0, 1, 2):
        with pytest.raises(IllegalMove, match="lay away 1"):
            deal.discard(seat, deal.hands[seat][:2])
        deal.discard(seat, deal.hands[seat][:1])
    assert len(deal.crib) == 4 and all(len(hand) == 4 for hand in deal.hands)
    assert deal.show_order() == [(0, False), (1, False), (2, False), (2, True)]
    deal.cut()
    assert deal.to_play == 0  # the seat after the dealer leads


def test_four_players_score_as_partnerships() -> None:
    game = Game(FOUR_PLAYER, dealer=3, rng=random.Random(4))
    deal = game.deal()
    assert [len(hand) for hand in deal.hands] == [5] * 4 and deal.crib == []
    for seat in range(4):
        deal.discard(seat, deal.hands[seat][:1])
    assert len(deal.crib) == 4
    assert deal.show_order() == [(0, False), (1, False), (2, False), (3, False), (3, True)]
    assert len(game.scores) == 2
    event = game.score(2, 5, Reason.PLAY)
    assert (event.seat, event.side, game.scores) == (2, 0, [5, 0])
    event = game.score(3, 4, Reason.PLAY)
    assert (event.side, game.scores) == (1, [5, 4])


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_random_games_run_to_the_end(name: str) -> None:
    variant = VARIANTS[name]
    for seed in range(25):
        rng = random.Random(seed)
        game = Game(variant, dealer=seed % variant.players, rng=rng)
        while not game.over:
            deal = game.deal()
            for seat in range(variant.players):
                deal.discard(seat, rng.sample(deal.hands[seat], variant.discards))
            deal.cut()
            while deal.phase is Phase.PLAY:
                assert deal.pegging is not None and deal.to_play is not None
                result, event = deal.play(rng.choice(deal.pegging.playable()))
                assert 0 < result.count <= 31
                assert (event is None) == (result.points == 0)
            if deal.phase is Phase.SHOW:
                deal.show()
            assert deal.phase is Phase.DONE
            if not game.over and not variant.play_once:
                assert deal.pegging is not None and deal.pegging.done
                assert len(deal.pegging.laid) == variant.players * variant.kept
        assert game.winner is not None
        assert max(game.scores) == game.scores[game.winner] == variant.target
        assert sum(1 for s in game.scores if s >= variant.target) == 1
        assert [e for e in game.events if e.won] == [game.events[-1]]
        for event in game.events:  # every point counts, the last one's up to the target
            assert event.after == min(event.before + event.points, variant.target)
        assert sum(e.after - e.before for e in game.events) == sum(game.scores)


def test_a_score_stops_at_the_target_as_the_board_peg_does() -> None:
    game = Game(STANDARD, dealer=0)
    game.score(0, 116, Reason.PLAY)
    event = game.score(0, 14, Reason.HAND)
    assert (event.points, event.before, event.after, event.won) == (14, 116, 121, True)
    assert game.scores == [121, 0] and game.winner == 0
