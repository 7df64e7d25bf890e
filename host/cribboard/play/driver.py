"""The game driver: plays a game of the rules engine with `Player`s and pegs every score on a
board through the library, over whatever transport the `Board` was opened on.

    async with await Board.open(port) as board:
        driver = GameDriver(board, [Computer("blue"), HumanTerminal("you")], rng=random.Random())
        game = await driver.play_game()

Seat n pegs on the board as player n (in the four-player game, the partnerships are the board's
two players). Before each score the board shows it as a pending count (the blinking hole where
the peg will land) when the driver runs at a watchable pace (`delay` > 0; `show_pending` says
otherwise). The driver narrates the game through
`say` (one line of text per thing that happened) and calls `on_board` after each change to the
board, so a screen can redraw it.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TypeVar

from cribboard.api import Board, BoardState
from cribboard.i18n import _
from cribboard.names import player_name
from cribboard.play.outside import Outside, OutsideChanges
from cribboard.play.players import DiscardView, Player, PlayView
from cribboard.play.screen import reprompt
from cribboard.record.store import Note
from cribboard.recorder import Recording
from cribboard.rules.cards import Card, format_cards, shuffled_deck
from cribboard.rules.errors import IllegalMove
from cribboard.rules.game import Deal, Game, Phase, Reason, ScoreEvent, ShowResult, cut_for_deal
from cribboard.rules.variants import STANDARD, Variant
from cribboard.watchwords import tell_restored
from cribboard.words import combo_summary

T = TypeVar("T")


async def off_loop(function: Callable[[], T]) -> T:
    """Run a blocking call (a person typing) on a daemon thread and wait for it without
    blocking the event loop; unlike `asyncio.to_thread`, a thread left waiting for input does
    not keep the program from exiting on Ctrl-C."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result = function()
        except BaseException as err:  # handed to the awaiting task
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(settle, None, err)
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=run, name="cribboard-input", daemon=True).start()
    return await future


def describe_event(event: ScoreEvent, names: Sequence[str]) -> str:
    """`orange pegs 4 in the play (fifteen 2, pair 2): 37`."""
    what = combo_summary(event.combos)
    values = {"player": names[event.seat], "points": event.points, "score": event.after}
    if event.reason is Reason.PLAY:
        if what:
            return _(
                "%(player)s pegs %(points)d in the play (%(what)s): %(score)d", what=what, **values
            )
        return _("%(player)s pegs %(points)d in the play: %(score)d", **values)
    if event.reason is Reason.HAND:
        if what:
            return _(
                "%(player)s pegs %(points)d for the hand (%(what)s): %(score)d", what=what, **values
            )
        return _("%(player)s pegs %(points)d for the hand: %(score)d", **values)
    if event.reason is Reason.CRIB:
        if what:
            return _(
                "%(player)s pegs %(points)d for the crib (%(what)s): %(score)d", what=what, **values
            )
        return _("%(player)s pegs %(points)d for the crib: %(score)d", **values)
    if event.reason is Reason.HEELS:
        # Translators: his heels (his nibs): the starter is a jack, the dealer pegs 2.
        return _("%(player)s pegs %(points)d for his heels: %(score)d", **values)
    # Translators: the five-card game: the pone pegs 3 at the start of the game, once.
    return _("%(player)s pegs %(points)d for pone's three: %(score)d", **values)


class GameDriver:
    """Plays one game on `board`. `players` sit in seats 0, 1, ... (as many as the variant has);
    `dealer` deals first (None: the players cut for it). `reveal` tells the kept hands in the
    narration (for a game nobody at the table plays)."""

    def __init__(
        self,
        board: Board,
        players: Sequence[Player],
        *,
        variant: Variant = STANDARD,
        rng: random.Random | None = None,
        dealer: int | None = None,
        delay: float = 0.0,
        show_pending: bool | None = None,
        reveal: bool = False,
        say: Callable[[str], None] = print,
        on_board: Callable[[], Awaitable[None]] | None = None,
        recording: Recording | None = None,
        seat_names: list[str | None] | None = None,
    ) -> None:
        if len(players) != variant.players:
            raise IllegalMove(f"{variant.name} needs {variant.players} players, not {len(players)}")
        self.board = board
        self.players = list(players)
        self.variant = variant
        self.rng = rng or random.Random()
        self.first_dealer = dealer
        self.delay = delay
        self.show_pending = delay > 0 if show_pending is None else show_pending
        self.reveal = reveal
        self.say = say
        self.on_board = on_board
        self.names = [player.name for player in players]
        tell_restored(board, lambda line: self.say(line))
        self.recording = recording
        """Where the games are recorded (cribboard.recorder), with what each peg was."""
        self.seat_names = seat_names
        """The players' names in the record, one a seat (None: none), when given."""
        self.game: Game | None = None
        self._laid_away: list[tuple[Card, ...]] = [() for _ in players]

    # --- the board -------------------------------------------------------------------------------

    async def _pause(self, factor: float = 1.0) -> None:
        if self.delay > 0:
            await asyncio.sleep(self.delay * factor)

    async def _changed(self) -> None:
        if self.on_board is not None:
            await self.on_board()

    async def peg(
        self, event: ScoreEvent | None, *, told: bool = False, cards: str | None = None
    ) -> None:
        """Narrate a score and peg it on the board (a pending count first at a watchable pace);
        `told`: the combinations were just described; `cards`: a hand's, for the record."""
        if event is None:
            return
        if self.show_pending:
            await self.board.set_pending(event.side, event.points)
            await self._changed()
            await self._pause(0.5)
        rev = await self.board.peg(event.side, event.points)
        if self.recording is not None:
            note = Note(_KINDS[event.reason], event.side, event.points, event.seat, cards)
            await self.recording.note(note, rev)
        if told:
            self.say(
                _(
                    "%(player)s pegs %(points)d: %(score)d",
                    player=self.names[event.seat],
                    points=event.points,
                    score=event.after,
                )
            )
        else:
            self.say(describe_event(event, self.names))
        await self._changed()
        await self._pause()

    # --- the game --------------------------------------------------------------------------------

    def _can_go_on(self, state: BoardState) -> bool:
        """Whether the board shows a game of this form in progress (two players or three, one
        a seat; the five-card game's bonus is for a game's start)."""
        variant = self.variant
        return (
            not variant.partnerships
            and not variant.pone_bonus
            and (state.players, state.target) == (variant.sides, variant.target)
            and state.winner is None
            and any(state.front)
        )

    def cut_for_deal(self) -> int:
        """The players cut: lowest card deals, ties cut again."""
        while True:
            cards = shuffled_deck(self.rng)[: self.variant.players]
            dealer = cut_for_deal(cards)
            cuts = ", ".join(f"{name} {card}" for name, card in zip(self.names, cards))
            if dealer is not None:
                self.say(
                    _(
                        "cut for deal: %(cuts)s: %(dealer)s deals",
                        cuts=cuts,
                        dealer=self.names[dealer],
                    )
                )
                return dealer
            self.say(_("cut for deal: %(cuts)s: a tie, cut again", cuts=cuts))

    async def play_game(self, go_on: bool = False) -> Game:
        """Play a whole game, pegging every score; returns the finished game. `go_on`: a game
        of this form in progress on the board goes on from its scores, with a new deal by its
        dealer (the cards of a deal left unfinished are gone)."""
        variant = self.variant
        state = await self.board.state() if go_on else None
        if state is not None and self._can_go_on(state):
            game = self.game = Game(variant, dealer=state.dealer, rng=self.rng)
            game.scores = list(state.front[: variant.sides])
            scores = ", ".join(
                f"{self.names[seat]} {game.scores[seat]}" for seat in range(variant.players)
            )
            self.say(
                _(
                    "going on with the game on the board: %(scores)s; %(dealer)s deals (--new "
                    "starts a fresh one)",
                    scores=scores,
                    dealer=self.names[state.dealer],
                )
            )
        else:
            dealer = self.cut_for_deal() if self.first_dealer is None else self.first_dealer
            game = self.game = Game(variant, dealer=dealer, rng=self.rng)
            await self.board.new_game(variant.target, variant.sides)
            await self.board.set_dealer(variant.side_of(dealer))
        await self._changed()
        if self.recording is not None and self.seat_names is not None:
            await self.recording.name_seats(self.seat_names)
        try:
            while not game.over:
                await self.play_deal(game)
        except WonElsewhere:
            pass
        assert game.winner is not None
        winner = self._side_name(game.winner)
        others = ", ".join(
            f"{self._side_name(side)} {score}"
            for side, score in enumerate(game.scores)
            if side != game.winner
        )
        values = {"winner": winner, "score": game.scores[game.winner], "others": others}
        result = game.result().value
        if result == "skunk":
            self.say(_("%(winner)s wins with %(score)d; %(others)s (a skunk)", **values))
        elif result == "double_skunk":
            self.say(_("%(winner)s wins with %(score)d; %(others)s (a double skunk)", **values))
        else:
            self.say(_("%(winner)s wins with %(score)d; %(others)s", **values))
        return game

    def situation(self) -> list[str]:
        """The table now: the starter, the count and the cards in it; with `reveal`, the cards
        each player holds."""
        deal = self.game.current if self.game is not None else None
        if deal is None or deal.phase is Phase.DISCARD or deal.starter is None:
            return []
        line = _("starter %(card)s", card=deal.starter)
        pegging = deal.pegging
        if pegging is not None and deal.phase is Phase.PLAY:
            series = format_cards(laid.card for laid in pegging.series)
            if series:
                line += " · " + _("count %(count)d: %(cards)s", count=pegging.count, cards=series)
            else:
                line += " · " + _("count %(count)d", count=pegging.count)
        lines = [line]
        if self.reveal and pegging is not None and deal.phase is Phase.PLAY:
            width = max(len(name) for name in self.names)
            for seat, name in enumerate(self.names):
                lines.append(f"  {name:<{width}}  {format_cards(sorted(pegging.hand(seat)))}")
        return lines

    def _side_name(self, side: int) -> str:
        if self.variant.partnerships:
            return " & ".join(
                self.names[seat]
                for seat in range(self.variant.players)
                if self.variant.side_of(seat) == side
            )
        return self.names[side]

    async def play_deal(self, game: Game) -> Deal:
        """One deal: lay away, cut, the play, the show (each stops the moment the game is won)."""
        first = not game.deals
        deal = game.deal()
        if not first:
            await self.board.set_dealer(self.variant.side_of(deal.dealer))
            await self._changed()
        if self.recording is not None:
            await self.recording.deal(dealer_seat=deal.dealer)
        self.say(
            _(
                "deal %(deal)d: %(dealer)s deals, %(pone)s to lead",
                deal=len(game.deals),
                dealer=self.names[deal.dealer],
                pone=self.names[deal.pone],
            )
        )
        for bonus in deal.events:  # the five-card game's three for the pone
            await self.peg(bonus)
        if game.over:
            return deal
        await self._discards(deal)
        heels = deal.cut()
        assert deal.starter is not None
        self.say(_("starter: %(card)s", card=deal.starter))
        if self.recording is not None:
            await self.recording.deal(starter=str(deal.starter))
        await self._pause()
        await self.peg(heels)
        while deal.phase is Phase.PLAY:
            await self._play_one(deal)
        if deal.phase is Phase.SHOW:
            self.say(_("the show"))
        while deal.phase is Phase.SHOW:
            shown = deal.count_next()
            player = self.names[shown.seat]
            whose = (
                _("%(player)s's crib", player=player)
                if shown.crib
                else _("%(player)s's hand", player=player)
            )
            what = combo_summary(shown.count.combos)
            values = {
                "whose": whose,
                "cards": format_cards(sorted(shown.count.hand)),
                "starter": deal.starter,
                "total": shown.count.total,
            }
            if what:
                self.say(
                    _(
                        "%(whose)s: %(cards)s + %(starter)s: %(total)d (%(what)s)",
                        what=what,
                        **values,
                    )
                )
            else:
                self.say(_("%(whose)s: %(cards)s + %(starter)s: %(total)d", **values))
            cards = f"{format_cards(shown.count.hand)} {deal.starter}"
            if shown.event is None:
                await self._note_nothing(shown, cards)
                await self._pause()
            await self.peg(shown.event, told=True, cards=cards)
        return deal

    async def _note_nothing(self, shown: ShowResult, cards: str) -> None:
        """A hand or crib that counted nothing, for the record."""
        if self.recording is not None:
            side = self.variant.side_of(shown.seat)
            kind = "crib" if shown.crib else "hand"
            await self.recording.note(Note(kind, side, 0, shown.seat, cards))

    async def _ask(self, player: Player, call: Callable[[], T]) -> T:
        """A player's answer: a person's is asked off the event loop, and meanwhile a change
        made on the board elsewhere (its buttons, another program, a phone) is said and drawn
        at once, and the game's scores follow the board."""
        if not player.interactive:
            return call()
        follow = OutsideChanges(self.board, await self.board.state())
        asking = asyncio.ensure_future(off_loop(call))
        try:
            while True:
                change = asyncio.ensure_future(follow.wait())
                await asyncio.wait((asking, change), return_when=asyncio.FIRST_COMPLETED)
                if not change.done():
                    change.cancel()
                    return asking.result()
                await self._outside(change.result())
                if player.prompt:
                    reprompt(player.prompt)
        finally:
            follow.close()

    async def _outside(self, change: Outside) -> None:
        """A change made on the board elsewhere: said, drawn, and the game's scores follow the
        board's; a win there ends the game (WonElsewhere)."""
        self.say(change.describe())
        await self._changed()
        game = self.game
        after = change.after
        if game is None or after.players != self.variant.sides:
            return
        game.scores = list(after.front[: self.variant.sides])
        if after.winner is not None:
            game.winner = after.winner
            raise WonElsewhere

    async def _discards(self, deal: Deal) -> None:
        game = deal.game
        for seat in [(deal.pone + i) % self.variant.players for i in range(self.variant.players)]:
            player = self.players[seat]
            view = DiscardView(
                seat=seat,
                hand=deal.hands[seat],
                discards=self.variant.discards,
                dealer=deal.dealer,
                my_crib=self.variant.side_of(seat) == self.variant.side_of(deal.dealer),
                variant=self.variant,
                scores=tuple(game.scores),
                side=self.variant.side_of(seat),
            )
            while True:
                cards = tuple(await self._ask(player, partial(player.discard, view)))
                try:
                    deal.discard(seat, cards)
                    break
                except IllegalMove as err:
                    if not player.interactive:
                        raise
                    self.say(f"{self.names[seat]}: {err}")
            self._laid_away[seat] = cards
            if self.reveal:
                self.say(
                    _(
                        "%(player)s keeps %(kept)s, lays away %(laid)s",
                        player=self.names[seat],
                        kept=format_cards(sorted(deal.hands[seat])),
                        laid=format_cards(cards),
                    )
                )
        await self._pause()

    def _play_view(self, deal: Deal, seat: int) -> PlayView:
        pegging = deal.pegging
        assert pegging is not None and deal.starter is not None
        return PlayView(
            seat=seat,
            hand=pegging.hand(seat),
            playable=pegging.playable(seat),
            count=pegging.count,
            series=tuple(laid.card for laid in pegging.series),
            laid=tuple(pegging.laid),
            starter=deal.starter,
            laid_away=self._laid_away[seat],
            cards_left=tuple(len(pegging.hand(s)) for s in range(self.variant.players)),
            dealer=deal.dealer,
            variant=self.variant,
            scores=tuple(deal.game.scores),
            side=self.variant.side_of(seat),
        )

    async def _play_one(self, deal: Deal) -> None:
        seat = deal.to_play
        assert seat is not None
        player = self.players[seat]
        view = self._play_view(deal, seat)
        while True:
            card = await self._ask(player, partial(player.choose_card, view))
            try:
                result, event = deal.play(card, seat)
                break
            except IllegalMove as err:
                if not player.interactive:
                    raise
                self.say(f"{self.names[seat]}: {err}")
        line = _(
            "%(player)s lays %(card)s: %(count)d",
            player=self.names[seat],
            card=card,
            count=result.count,
        )
        if result.go_said:
            # Translators: "go": a player who cannot lay a card without passing 31 says go.
            line += "; " + _(
                "go from %(players)s", players=", ".join(self.names[s] for s in result.go_said)
            )
        self.say(line)
        if event is None:
            await self._pause(0.6)
        await self.peg(event)
        if result.series_over and deal.phase is Phase.PLAY:
            self.say(_("the count starts again"))


_KINDS = {
    Reason.PLAY: "play",
    Reason.HAND: "hand",
    Reason.CRIB: "crib",
    Reason.HEELS: "heels",
    Reason.BONUS: "bonus",
}
"""What the record calls each reason for a score (cribboard.record.store.KINDS)."""


class WonElsewhere(Exception):
    """The game was won by a change made on the board elsewhere, in the middle of a deal."""


COMPUTER_NAME = "computer"
"""The computer's name in the record of games (`cribboard play`): its games count as a
player's, so that yours against it can be told."""


def run_play(
    *,
    port: str | None = None,
    virtual: bool = False,
    target: int | None = None,
    seed: int | None = None,
    color: bool = False,
    timeout: float = 2.0,
    delay: float = 0.8,
    new: bool = False,
    names: list[str | None] | None = None,
) -> int:
    """`cribboard play`: you (blue) against the computer (orange), scored on the board found on
    USB, else on the virtual board (whose game outlives the app); to `target` (61 or 121; None:
    121). A game in progress on the board goes on, unless `new`; at the end, says where the
    game is kept. The game is recorded, its players named by `names` (yours, the computer's;
    by default you have none and the computer is `COMPUTER_NAME`)."""
    from cribboard import portshare
    from cribboard.boardid import board_identity
    from cribboard.play.boards import ChosenBoard, choose_board, ending_on_signals
    from cribboard.play.players import Computer, HumanTerminal, LeaveGame
    from cribboard.play.screen import TableScreen, terminal_kept
    from cribboard.rules.variants import SHORT

    chosen: list[ChosenBoard] = []

    async def main() -> None:
        with contextlib.ExitStack() as stack:
            chosen.append(await choose_board(port, virtual, stack, portshare.owner_label))
            where = chosen[0]
            print(_("playing on %(board)s", board=where.description), flush=True)
            you, computer = player_name(0), player_name(1)
            async with await Board.open(where.port, timeout=timeout) as board:
                screen = TableScreen(
                    board,
                    color=color,
                    title=_(
                        "you are %(you)s, the computer %(computer)s · on %(board)s",
                        you=you,
                        computer=computer,
                        board=where.description,
                    ),
                )
                driver = GameDriver(
                    board,
                    [HumanTerminal(you), Computer(computer)],
                    variant=SHORT if target == SHORT.target else STANDARD,
                    rng=random.Random(seed),
                    delay=delay,
                    say=screen.say,
                    on_board=screen.refresh,
                )
                screen.status = driver.situation
                recording = Recording.open(
                    board_identity(where.port, board.hello, where.flash),
                    "play",
                    seats=driver.variant.players,
                    variant=driver.variant.name,
                    say=screen.say,
                )
                driver.recording = recording
                try:
                    if recording is not None:
                        await recording.follow(board)
                        driver.seat_names = names or [None, COMPUTER_NAME]
                    await driver.play_game(go_on=not new)
                finally:
                    if recording is not None:
                        await recording.close()

    status = 0
    with ending_on_signals(), terminal_kept():
        try:
            asyncio.run(main())
        except LeaveGame:
            print(_("you left the game"))
        except EOFError:  # the end of the input: the person is gone
            print()
        except KeyboardInterrupt:
            print()
            status = 130
    if chosen:
        print(chosen[0].kept("`cribboard play`"), flush=True)
    return status
