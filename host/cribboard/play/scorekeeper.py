"""The scorekeeper: people play with real cards at the table, and the board keeps the score.

Each count is a keystroke or two and Enter. The app knows who deals and the order of the show
(the pone's hand, the dealer's hand, the dealer's crib), so a bare number is the count of the
next hand in the show; after the crib the deal passes on by itself. Pegging points during the
play are a colour letter and the points. Cards can be typed in to be counted, and a count
claimed with its cards is checked: points overlooked can be taken by the opponent (muggins).
After each change the board is drawn again, as its LEDs show it.

Two or three players, four in two partnerships (blue 1 and blue 2 against orange 1 and orange 2,
partners opposite: the board shows the two sides), and the five-card game (three-card hands, the
pone's 3 once at the start, to 61).

    12          the next hand in the show counts 12 (0 for nothing; 19 means nothing too)
    b5  o7      blue / orange pegs 5 / 7 in the play (b alone: 1, for a go or the last card)
    j           his heels: the dealer pegs 2
    s 5D        the starter (a jack pegs his heels)
    c 5H 5S 5C JD [5D]      count these cards for the next hand in the show
    12 5H 5S 5C JD [5D]     a claimed count with its cards: checked
    m           muggins: the opponent takes the points just overlooked
    d   d o     pass the deal on / orange deals (four players: d o2, the seat)
    u           undo the last entry
    n   n 61    a new game (to 121 or 61)
    ?           help
    q           quit
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from cribboard.api import Board, BoardState
from cribboard.errors import BoardRejected
from cribboard.names import PLAYER_NAMES, initial
from cribboard.play.boards import choose_board
from cribboard.play.driver import describe_combos, off_loop
from cribboard.play.screen import CLEAR, terminal_input, terminal_output
from cribboard.rules.cards import Card, format_cards, parse_card, parse_cards
from cribboard.rules.errors import CardError
from cribboard.rules.show import HandCount, count_hand
from cribboard.rules.variants import FIVE_CARD, FOUR_PLAYER, STANDARD, THREE_PLAYER, Variant
from cribboard.terminal import describe_state, draw_frame, fit_lines
from cribcore.limits import MAX_POINTS, TARGETS

KEYS = """\
  12            the next hand in the show counts 12 (0: nothing)
  b5  o7        blue / orange pegs 5 / 7 in the play (b alone: 1, a go)
  j             his heels: 2 for the dealer
  s 5D          the starter (a jack pegs his heels)
  c 5H 5S 5C JD [5D]    count these cards for the next hand
                        (the starter last, or the one set with s)
  12 5H 5S 5C JD [5D]   a claimed count with its cards: checked, muggins if short
  m             muggins: the opponent takes the points just overlooked
  d   d o       pass the deal on / orange deals (four players: d o2)
  u             undo the last entry
  n   n 61      new game (to 121, or 61)
  ?  help       q  quit"""

IMPOSSIBLE = (19, 25, 26, 27)
"""Counts no four-card hand or crib can make (19 is the table's word for nothing)."""
IMPOSSIBLE_THREE = (16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 27, 28, 29)
"""Counts no three-card hand (five-card game) can make with its starter: 0-15 and 20 can."""
_PEG = re.compile(r"^(?P<who>[a-z]+)\s*(?P<points>\d*)$")
_ALIASES = {
    "count": "c",
    "starter": "s",
    "heels": "j",
    "nibs": "j",
    "muggins": "m",
    "deal": "d",
    "new": "n",
}


class Problem(Exception):
    """An entry the keeper cannot take; the message says why and what to type."""


@dataclass(frozen=True)
class Turn:
    """Where the table is in the current deal."""

    dealer: int
    deal_no: int = 1
    step: int = 0
    """How many hands of the show have been counted (the crib is the last)."""
    starter: Card | None = None
    seen: tuple[tuple[Card, str], ...] = ()
    """Cards typed in this deal, and whose they were (to catch a card typed twice)."""
    overlooked: tuple[int, int] | None = None
    """After a short claim: (the side that may take the points, how many)."""
    bonus_due: bool = False
    """Five-card game: the pone's 3 not pegged yet (it goes on once the deal is settled)."""


@dataclass(frozen=True)
class _Entry:
    """One entry that can be undone: the turn before it, how many board changes it made."""

    turn: Turn
    changes: int
    what: str


class Scorekeeper:
    """The table app on an open board. `input` and `output` default to the terminal; tests pass
    their own. `where` says which board this is. `game` is the form of cribbage at the table
    (see `table_game`); `target` None keeps the board's target (the five-card game: 61)."""

    def __init__(
        self,
        board: Board,
        *,
        input: Callable[[str], str] | None = None,
        output: Callable[[str], None] | None = None,
        color: bool = False,
        where: str = "",
        target: int | None = None,
        game: Variant = STANDARD,
    ) -> None:
        self.board = board
        self._input = input or terminal_input
        self._output = output or terminal_output
        self.color = color
        self.where = where
        self.game = game
        # A form with a target of its own (five-card: 61) plays to it; else the board's game.
        self.target = target or (game.target if game.target != STANDARD.target else None)
        self.players = game.sides
        """How many pegs the board moves: the players, or the two partnerships."""
        self.turn = Turn(dealer=0)
        self.state: BoardState | None = None
        self.history: list[_Entry] = []
        self.messages: list[str] = []
        self._changes = 0
        self._rev = -1

    # --- names and order ---------------------------------------------------------------------

    @property
    def seats(self) -> int:
        """How many people play (the turn's dealer and the show order count seats)."""
        return self.game.players

    def side(self, seat: int) -> int:
        """The board's player a seat pegs for: itself, or its partnership."""
        return self.game.side_of(seat)

    def name(self, seat: int) -> str:
        if self.game.partnerships:
            return f"{PLAYER_NAMES[self.side(seat)]} {seat // 2 + 1}"
        return PLAYER_NAMES[seat]

    def show_order(self, dealer: int | None = None) -> list[tuple[int, bool]]:
        """(seat, is the crib) in counting order: from the pone round to the dealer, then the
        dealer's crib."""
        dealer = self.turn.dealer if dealer is None else dealer
        n = self.seats
        return [((dealer + 1 + i) % n, False) for i in range(n)] + [(dealer, True)]

    def whose(self, step: int | None = None) -> str:
        player, crib = self.show_order()[self.turn.step if step is None else step]
        return f"{self.name(player)}'s {'crib' if crib else 'hand'}"

    @property
    def pone(self) -> int:
        return (self.turn.dealer + 1) % self.seats

    def _seat_dealing(self, side: int, after: int) -> int:
        """The first seat from `after` on (round the table) that pegs for `side`."""
        for step in range(self.seats):
            seat = (after + step) % self.seats
            if self.side(seat) == side:
                return seat
        raise Problem(f"no seat plays for {PLAYER_NAMES[side]}")

    # --- the board -----------------------------------------------------------------------------

    async def _read(self) -> BoardState:
        self.state = await self.board.state()
        return self.state

    async def _peg(self, player: int, points: int) -> None:
        await self.board.peg(player, points)
        self._changes += 1

    async def _deal_to(self, seat: int) -> int:
        """The deal goes to `seat`; the board's dealer lamp shows its side."""
        before = self.state.dealer if self.state else -1
        dealer = await self.board.set_dealer(self.side(seat))
        if dealer != before:
            self._changes += 1
        return seat

    def _fresh_turn(self, dealer_side: int) -> Turn:
        """Deal 1 of a new game: the side the board says deals, its first seat."""
        return Turn(dealer=self._seat_dealing(dealer_side, 0), bonus_due=self.game.pone_bonus > 0)

    async def start(self, new: bool = False) -> None:
        """Read the board: go on with a game in progress (unless `new`, or another target or
        number of players is wanted), else start one."""
        state = await self._read()
        target = self.target or state.target
        fresh = not any(state.front[: state.players]) and not any(state.back[: state.players])
        if (
            new
            or state.winner is not None
            or state.target != target
            or state.players != self.players
        ):
            await self.board.new_game(target, self.players)
            state = await self._read()
            fresh = True
        if fresh:
            self.turn = self._fresh_turn(state.dealer)
            self.messages = [f"new {self._game_words()}to {state.target}. " + self._cut_text()]
        else:
            self.turn = Turn(dealer=self._seat_dealing(state.dealer, 0))
            scores = ", ".join(f"{PLAYER_NAMES[p]} {state.front[p]}" for p in range(state.players))
            self.messages = [
                f"going on with the game on the board: {scores}; "
                f"{self.name(self.turn.dealer)} deals (u takes back the board's "
                "last change)"
            ]
        self._rev = state.rev

    def _game_words(self) -> str:
        if self.game.pone_bonus:
            return "five-card game "
        return "game of four, in partnerships, " if self.game.partnerships else "game "

    def _cut_text(self) -> str:
        dealer = self.turn.dealer
        other = (dealer + 1) % self.seats
        text = (
            f"Cut for the deal: {self.name(dealer)} deals (d {self._letter(other)} if "
            f"{self.name(other)} does)."
        )
        if self.turn.bonus_due:
            text += f" The pone pegs {self.game.pone_bonus} once the deal is settled."
        return text

    def _letter(self, seat: int) -> str:
        letter = initial(self.side(seat))
        return f"{letter}{seat // 2 + 1}" if self.game.partnerships else letter

    # --- one line of input ---------------------------------------------------------------------

    async def handle(self, line: str) -> bool:
        """Act on one line; False to quit. Messages for the person go to `self.messages`."""
        self.messages = []
        text = line.strip()
        word = text.lower()
        if word in ("q", "quit", "exit"):
            return False
        if word in ("", "r"):
            return True
        if word in ("?", "h", "help"):
            self.messages = ["keys (then Enter):", KEYS]
            return True
        await self._sync()
        if word in ("u", "undo"):
            await self._undo()
            return True
        before = self.turn
        self._changes = 0
        what = text
        try:
            what = await self._command(text)
        except Problem as err:
            self.messages.append(str(err))
        except BoardRejected as err:
            self.messages.append(self._board_problem(err))
        except CardError as err:
            self.messages.append(f"{err}")
        finally:
            if self._changes or self.turn != before:
                self.history.append(_Entry(before, self._changes, what))
            if self._changes:
                self._rev = (await self._read()).rev
        return True

    def _board_problem(self, err: BoardRejected) -> str:
        if err.code == "game_over":
            return "the game is over: n starts a new one, u takes back the last entry"
        return f"the board refused: {err.text}"

    def _won_text(self, state: BoardState) -> str:
        assert state.winner is not None
        how = {"skunk": " with a skunk", "double_skunk": " with a double skunk"}.get(
            state.result, ""
        )
        return f"{self.name(state.winner).upper()} WINS{how}! n: new game  u: undo  q: quit"

    async def _sync(self) -> None:
        """Notice changes made on the board itself (its buttons, another program)."""
        state = await self._read()
        if self._rev >= 0 and state.rev != self._rev:
            self.history.clear()  # our undo steps no longer line up with the board's
            if state.dealer != self.side(self.turn.dealer):
                self.turn = Turn(
                    dealer=self._seat_dealing(state.dealer, self.turn.dealer + 1),
                    deal_no=self.turn.deal_no + 1,
                )
            self.messages.append("the board was changed on the board itself")
        self._rev = state.rev

    async def _command(self, text: str) -> str:
        word = text.lower()
        words = word.split()
        head = _ALIASES.get(words[0], words[0])
        if self.turn.bonus_due and head not in ("d", "n"):
            await self._pone_bonus()
        if head.isdigit():
            return await self._count(int(head), words[1:])
        if head == "c":
            return await self._count(None, words[1:])
        if head == "s":
            return await self._starter(words[1:])
        if head == "j":
            return await self._heels()
        if head == "m":
            return await self._muggins(words[1:])
        if head == "d":
            return await self._deal(words[1:])
        if head == "n":
            return await self._new(words[1:])
        peg = _PEG.match(word)
        if peg:
            return await self._pegging(peg["who"], peg["points"])
        try:
            cards = parse_cards(words)
        except CardError:
            raise Problem(f"{text!r}? type ? for the keys") from None
        return await self._count(None, [str(card) for card in cards])

    def _player(self, word: str) -> int:
        """The board's player (a side) named by a colour or its first letter."""
        for i in range(self.players):
            if word in (PLAYER_NAMES[i], initial(i)):
                return i
        letters = "/".join(initial(i) for i in range(self.players))
        raise Problem(f"{word!r}? the players are {letters}; ? shows the keys")

    def _dealer_seat(self, word: str) -> int:
        """The seat named after d: a colour (the next seat of that side), or with four
        players also the seat's number (o2)."""
        if self.game.partnerships and word[-1:] in ("1", "2"):
            side, number = self._player(word[:-1]), int(word[-1])
            return side + 2 * (number - 1)
        return self._seat_dealing(self._player(word), self.turn.dealer + 1)

    async def _pone_bonus(self) -> None:
        """Five-card game: the pone pegs 3 at the start of the game's first deal, once."""
        self._game_over()
        pone, points = self.pone, self.game.pone_bonus
        await self._peg(self.side(pone), points)
        self.turn = dataclasses.replace(self.turn, bonus_due=False)
        self.messages.append(f"{self.name(pone)}, the pone, pegs {points} for the first deal")

    async def _pegging(self, who: str, points_text: str) -> str:
        player = self._player(who)
        points = int(points_text) if points_text else 1
        if not 1 <= points <= MAX_POINTS:
            raise Problem(f"pegging points are 1..{MAX_POINTS}")
        await self._peg(player, points)
        self.messages.append(f"{PLAYER_NAMES[player]} pegs {points}")
        return f"{PLAYER_NAMES[player]} {points}"

    def _game_over(self) -> None:
        if self.state is not None and self.state.winner is not None:
            raise Problem("the game is over: n starts a new one, u takes back the last entry")

    async def _count(self, claim: int | None, card_words: list[str]) -> str:
        """A hand of the show: a claimed count, the cards, or both."""
        self._game_over()
        if claim is not None and not 0 <= claim <= MAX_POINTS:
            raise Problem(f"a hand counts 0..{MAX_POINTS}")
        player, crib = self.show_order()[self.turn.step]
        whose = self.whose()
        counted: HandCount | None = None
        if card_words:
            counted = self._count_cards(card_words, crib, whose)
        elif claim is None:
            raise Problem(f"c needs the cards: c {self._example()} (the starter last)")
        impossible = IMPOSSIBLE if crib or self.game.kept == 4 else IMPOSSIBLE_THREE
        if claim in impossible and counted is None:
            if claim != 19:
                raise Problem(f"no hand counts {claim}")
            self.messages.append("nineteen: nothing, then")
            claim = 0
        points = claim if claim is not None else 0
        overlooked = None
        if counted is not None:
            actual = counted.total
            self.messages.append(_breakdown(counted, whose))
            if claim is None or claim == actual:
                points = actual
                if claim is not None:
                    self.messages.append(f"{whose}: {claim} is right")
            elif claim > actual:
                points = actual
                self.messages.append(f"{whose} has {actual}, not {claim}: pegged {actual}")
            else:
                taker = (self.side(player) + 1) % self.players
                overlooked = (taker, actual - claim)
                self.messages.append(
                    f"MUGGINS! {whose} has {actual}, not {claim}: {actual - claim} overlooked. "
                    f"m: {PLAYER_NAMES[taker]} takes them; or u, then type the count again"
                )
        if points:
            await self._peg(self.side(player), points)
        if counted is None or points != counted.total:
            self.messages.append(f"{whose}: {points}" if points else f"{whose}: nothing")
        await self._next_step(overlooked)
        return f"{whose} {points}"

    def _example(self) -> str:
        return "5H 5S JD 5D" if self.game.kept == 3 else "5H 5S 5C JD 5D"

    def _count_cards(self, words: list[str], crib: bool, whose: str) -> HandCount:
        cards = parse_cards(words)
        size = 4 if crib else self.game.kept
        if len(cards) == size + 1:
            hand, starter = cards[:size], cards[size]
            if self.turn.starter is not None and starter != self.turn.starter:
                self.messages.append(
                    f"(the starter was {self.turn.starter}; counted with {starter})"
                )
        elif len(cards) == size:
            if self.turn.starter is None:
                raise Problem(f"and the starter? type it last (c {self._example()}), or s 5D first")
            hand, starter = cards, self.turn.starter
        else:
            words_for = {3: "three", 4: "four"}
            raise Problem(
                f"{whose}: {words_for[size]} cards, then the starter, not {len(cards)} cards"
            )
        for card in hand:
            if card == starter:
                raise Problem(f"{card} is the starter, it cannot be in {whose} too")
            for seen, where in self.turn.seen:
                if seen == card and where != whose:
                    raise Problem(f"{card} was already in {where}: check the cards")
        count = count_hand(hand, starter, crib=crib)
        self.turn = dataclasses.replace(
            self.turn,
            starter=self.turn.starter or starter,
            seen=self.turn.seen + tuple((card, whose) for card in hand),
        )
        return count

    async def _next_step(self, overlooked: tuple[int, int] | None) -> None:
        step = self.turn.step + 1
        if step < len(self.show_order()):
            self.turn = dataclasses.replace(self.turn, step=step, overlooked=overlooked)
            return
        if self.state is not None and self._changes:
            await self._read()
        if self.state is not None and self.state.winner is not None:
            self.turn = dataclasses.replace(self.turn, step=step - 1, overlooked=overlooked)
            return
        dealer = await self._deal_to((self.turn.dealer + 1) % self.seats)
        self.turn = Turn(dealer=dealer, deal_no=self.turn.deal_no + 1, overlooked=overlooked)
        self.messages.append(f"the deal passes to {self.name(dealer)}")

    async def _starter(self, words: list[str]) -> str:
        if len(words) != 1:
            raise Problem("s and the starter card: s 5D")
        card = parse_card(words[0])
        for seen, where in self.turn.seen:
            if seen == card:
                raise Problem(f"{card} was already in {where}")
        self.turn = dataclasses.replace(self.turn, starter=card)
        self.messages.append(f"starter {card}")
        if card.rank == 11:
            self._game_over()
            await self._peg(self.side(self.turn.dealer), 2)
            self.messages.append(f"his heels: {self.name(self.turn.dealer)} pegs 2")
        return f"starter {card}"

    async def _heels(self) -> str:
        self._game_over()
        await self._peg(self.side(self.turn.dealer), 2)
        self.messages.append(f"his heels: {self.name(self.turn.dealer)} pegs 2")
        return "his heels"

    async def _muggins(self, words: list[str]) -> str:
        if self.turn.overlooked is None:
            raise Problem(
                "muggins: nothing overlooked to take (it follows a claimed count with its cards)"
            )
        taker, points = self.turn.overlooked
        if words:
            taker = self._player(words[0])
        self._game_over()
        await self._peg(taker, points)
        self.turn = dataclasses.replace(self.turn, overlooked=None)
        self.messages.append(f"muggins: {PLAYER_NAMES[taker]} takes {points}")
        return f"muggins {PLAYER_NAMES[taker]} {points}"

    async def _deal(self, words: list[str]) -> str:
        if len(words) > 1:
            raise Problem("d, or d and a player: d o")
        if words:
            dealer = await self._deal_to(self._dealer_seat(words[0]))
            self.turn = Turn(
                dealer=dealer, deal_no=self.turn.deal_no, bonus_due=self.turn.bonus_due
            )
        else:
            dealer = await self._deal_to((self.turn.dealer + 1) % self.seats)
            self.turn = Turn(
                dealer=dealer, deal_no=self.turn.deal_no + 1, bonus_due=self.turn.bonus_due
            )
        self.messages.append(f"{self.name(dealer)} deals, {self.name(self.pone)} counts first")
        return f"{self.name(dealer)} deals"

    async def _new(self, words: list[str]) -> str:
        target = None
        if words:
            if words[0] not in [str(t) for t in TARGETS] or len(words) > 1:
                raise Problem("n, or " + " / ".join(f"n {t}" for t in TARGETS))
            target = int(words[0])
        await self.board.new_game(target, self.players)
        self._changes += 1
        state = await self._read()
        self.turn = self._fresh_turn(state.dealer)
        self.messages.append(f"new {self._game_words()}to {state.target}. " + self._cut_text())
        return "new game"

    async def _undo(self) -> None:
        if not self.history:
            try:
                await self.board.undo()
            except BoardRejected:
                self.messages.append("nothing to undo")
                return
            state = await self._read()
            self.turn = Turn(
                dealer=self._seat_dealing(state.dealer, self.turn.dealer), deal_no=self.turn.deal_no
            )
            self._rev = state.rev
            self.messages.append("undone: the board's last change")
            return
        entry = self.history.pop()
        for _ in range(entry.changes):
            await self.board.undo()
        self.turn = entry.turn
        state = await self._read()
        self._rev = state.rev
        self.messages.append(f"undone: {entry.what}")

    # --- the screen ----------------------------------------------------------------------------

    def status(self) -> list[str]:
        """What the table is at, and what to type next."""
        state = self.state
        if state is not None and state.winner is not None:
            return [self._won_text(state)]
        turn = self.turn
        line = (
            f"deal {turn.deal_no} · {self.name(turn.dealer)} deals · {self.name(self.pone)} "
            "leads and counts first"
        )
        if turn.starter is not None:
            line += f" · starter {turn.starter}"
        rest = [self.whose(step) for step in range(turn.step, len(self.show_order()))]
        show = f"show: 12⏎ counts {rest[0]}" + (f", then {', '.join(rest[1:])}" if rest[1:] else "")
        if turn.step == 0:
            letters = " / ".join(f"{initial(p)}2" for p in range(self.players))
            show = f"play: {letters} pegs 2 (letter alone: 1) · {show}"
        if turn.bonus_due:
            show = (
                f"{self.name(self.pone)} pegs {self.game.pone_bonus} with the first entry "
                f"(d first if another deals) · {show}"
            )
        return [line, show, f"c {self._example()} counts cards · u undo · ? keys · q quit"]

    async def draw(self) -> None:
        """Show the board, the scores, the last messages and the status."""
        frame = await self.board.frame()
        state = await self._read()
        lines = []
        if self.where:
            lines.extend(fit_lines([f"cribboard scorekeeper on {self.where}"]))
        lines.append(draw_frame(frame.rgb, self.color, state.players))
        lines.append(describe_state(state, self.game.partnerships))
        lines.append("")
        lines.extend(fit_lines([*self.messages, *self.status()]))
        text = "\n".join(lines)
        self._output(CLEAR + text if self.color else text)

    async def run(self, new: bool = False) -> int:
        """Start, then take lines until q or the end of input."""
        await self.start(new)
        while True:
            await self.draw()
            try:
                line = await off_loop(partial(self._input, "> "))
            except EOFError:
                break
            if not await self.handle(line):
                break
        return 0


def _breakdown(count: HandCount, whose: str) -> str:
    what = describe_combos(count.combos) or "nothing"
    return f"{whose} {format_cards(count.hand)} + {count.starter}: {what} = {count.total}"


TABLE_GAMES = {2: STANDARD, 3: THREE_PLAYER, 4: FOUR_PLAYER}
"""The form of the game for each `cribboard keep --players N` (four: in partnerships)."""


def table_game(players: int = 2, five_card: bool = False) -> Variant:
    """The form of the game for `cribboard keep --players N [--five-card]`: two, three, or four
    players in partnerships; the five-card game is for two. Raises ValueError otherwise."""
    if five_card:
        if players != 2:
            raise ValueError("the five-card game is for two players")
        return FIVE_CARD
    if players not in TABLE_GAMES:
        raise ValueError(f"2, 3 or 4 players, not {players}")
    return TABLE_GAMES[players]


def run_scorekeeper(
    *,
    port: str | None = None,
    virtual: bool = False,
    target: int | None = None,
    game: Variant = STANDARD,
    new: bool = False,
    color: bool = False,
    timeout: float = 2.0,
) -> int:
    """`cribboard keep`: find a board (or start the virtual one), say which, keep the score."""

    async def main() -> int:
        with contextlib.ExitStack() as stack:
            chosen = await choose_board(port, virtual, stack)
            builtins.print(f"playing on {chosen.description}", flush=True)
            async with await Board.open(chosen.port, timeout=timeout) as board:
                keeper = Scorekeeper(
                    board, color=color, where=chosen.description, target=target, game=game
                )
                return await keeper.run(new)

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        builtins.print()
        return 130
