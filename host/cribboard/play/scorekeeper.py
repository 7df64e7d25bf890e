"""The scorekeeper: people play with real cards at the table, and the board keeps the score.

Each count is a keystroke or two and Enter. The app knows who deals and the order of the show
(the pone's hand, the dealer's hand, the dealer's crib), so a bare number is the count of the
next hand in the show; after the crib the deal passes on by itself. Pegging points during the
play are a colour letter and the points. Cards can be typed in to be counted, and a count
claimed with its cards is checked: points overlooked can be taken by the opponent (muggins).
After each change the board is drawn again, as its LEDs show it. What the app knows of the
rules (whose count, who deals, claims, muggins, undo) is `rules.scorekeeping.Scorekeeping`,
which has no board and no words; this module reads the keys, pegs the board and says it all.

One deal has one starter and his heels at most once, for a jack (`rules.scorekeeping` says how
each entry is held to that); an entry refused says in one line what to type instead. While it
waits for a line, the board is followed: a change made elsewhere (its buttons, another program,
a phone) is drawn at once and said with where it came from, and `u` takes it back like an entry.

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
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from cribboard import portshare
from cribboard.api import Board, BoardState
from cribboard.boardid import board_identity
from cribboard.errors import BoardRejected
from cribboard.i18n import _, n_
from cribboard.names import PLAYER_NAMES, initial, player_name
from cribboard.play.boards import ChosenBoard, choose_board, ending_on_signals
from cribboard.play.driver import off_loop
from cribboard.play.outside import Outside, OutsideChanges, Source, looks
from cribboard.play.screen import (
    CLEAR,
    reprompt,
    terminal_input,
    terminal_kept,
    terminal_output,
)
from cribboard.play.tablefile import load_table, save_table, table_path
from cribboard.playernames import SEPARATOR, BadName, parse_names
from cribboard.record.store import Note
from cribboard.recorder import Recording
from cribboard.rules.cards import format_cards, parse_card, parse_cards
from cribboard.rules.errors import CardError
from cribboard.rules.scorekeeping import (
    NOTHING,
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
    Refused,
    Scorekeeping,
    ShowOver,
    StarterInHand,
    StarterKnown,
    Turn,
    Verdict,
    WrongCards,
)
from cribboard.rules.show import HandCount, ShowHand
from cribboard.rules.variants import FIVE_CARD, FOUR_PLAYER, STANDARD, THREE_PLAYER, Variant
from cribboard.terminal import describe_state, draw_frame, fit_lines
from cribboard.watchwords import tell_restored
from cribboard.wifisetup import describe_page
from cribboard.words import combo_summary
from cribcore.limits import MAX_POINTS, TARGETS
from cribcore.state import UNDO_DEPTH

_PROMPT = "> "


def keys_help(hand: str = "5H 5S 5C JD") -> str:
    """The keys, each with what it does, in the language in use (the keys are the same in
    every language); `hand`: the example hand's cards (three in the five-card game)."""
    # Translators: the keys (12, b5, o7, j, s 5D, c, m, d, u, n, ?, q) and the cards (5H) are
    # typed as they are in every language: translate what they do, keep them and the columns
    # (%(cards)s is as wide in every game). Each line fits 80 columns with the board on 24.
    cards = (hand + " [5D]").ljust(17)
    return _(
        """\
  12        the next hand in the show counts 12 (0: nothing)
  b5  o7    blue / orange pegs 5 / 7 in the play (b alone: 1, a go)
  j         his heels: 2 for the dealer     s 5D   the starter (a jack: heels)
  c %(cards)s  count these cards (the starter last, or the one from s)
  12 %(cards)s a claimed count and cards: checked, muggins if short
  m         muggins: take the points the other side overlooked
  d   d o   pass the deal on / orange deals (four players: d o2)
  u undo the last entry · n  n 61 new game (to 121, or 61) · ? help · q quit""",
        cards=cards,
    )


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


class Scorekeeper:
    """The table app on an open board. `input` and `output` default to the terminal; tests pass
    their own. `where` says which board this is. `game` is the form of cribbage at the table
    (see `table_game`); `target` None keeps the board's target (the five-card game: 61).
    `keeping` is the game model it tells what the table does. `table_file`: where the deal is
    kept for the next run on the board `board_key` names (cribboard.play.tablefile)."""

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
        table_file: Path | None = None,
        board_key: str = "",
        recording: Recording | None = None,
        names: list[str | None] | None = None,
        ask_names: bool = False,
        match: tuple[str, int] | None = None,
        skunk_double: bool | None = None,
    ) -> None:
        self.board = board
        self.match = match
        """The match asked for (kind, length: cribboard.api's MATCH_KINDS), or None."""
        self.skunk_double = skunk_double
        """Whether a skunk wins two games of the match, as asked (None: as the board has it)."""
        self.recording = recording
        """Where the games are recorded (cribboard.recorder), if they are."""
        self.names = names
        """The players' names given (one a seat, None for none), for the record."""
        # Asked at the start when none are given and the game has none (a person types).
        self._ask_names = ask_names
        self._pegged = -1  # the board's revision after this app's last peg
        self.table_file = table_file
        self.board_key = board_key
        self._terminal = input is None  # typed at a terminal: the prompt is shown again
        self._input = input or terminal_input
        self._output = output or terminal_output
        self.color = color
        self.where = where
        self.game = game
        # A form with a target of its own (five-card: 61) plays to it; else the board's game.
        self.target = target or (game.target if game.target != STANDARD.target else None)
        self.players = game.sides
        """How many pegs the board moves: the players, or the two partnerships."""
        self.keeping = Scorekeeping(game)
        self.state: BoardState | None = None
        self.messages: list[str] = []
        self._helping = False  # the keys are shown
        # The entry being made, in parts (each a step on the board; see Entry.linked): where
        # the part began, the board changes made for it, whether a part came before it, and
        # what the last part is called when it is not the entry typed (the deal passing).
        self._part = self.keeping.turn
        self._changes = 0
        self._linked = False
        self._last_part: str | None = None
        self.outside: OutsideChanges | None = None
        """The board's changes made elsewhere, once started."""
        tell_restored(board, self._told)

    def _told(self, line: str) -> None:
        """A line the board's library says between two entries (a power cut put back)."""
        self.messages.append(line)
        self._output(line)

    @property
    def turn(self) -> Turn:
        """Where the table is in the current deal."""
        return self.keeping.turn

    # --- names ---------------------------------------------------------------------------------

    def name(self, seat: int) -> str:
        """A seat as people read it: its colour (with four players, and its number)."""
        if self.game.partnerships:
            side = player_name(self.keeping.side(seat))
            return f"{side} {self.keeping.number_of(seat)}"
        return player_name(seat)

    def whose(self, step: int | None = None) -> str:
        """The hand of the show at `step` (by default the next to count), as people read it."""
        return self._whose(self.keeping.hand(step))

    def _whose(self, hand: ShowHand) -> str:
        if hand.crib:
            return _("%(player)s's crib", player=self.name(hand.seat))
        return _("%(player)s's hand", player=self.name(hand.seat))

    def _letter(self, seat: int) -> str:
        letter = initial(self.keeping.side(seat))
        return f"{letter}{self.keeping.number_of(seat)}" if self.game.partnerships else letter

    # --- the board -----------------------------------------------------------------------------

    async def _read(self) -> BoardState:
        """The board after this app's own changes: what a change made elsewhere is told from."""
        self.state = await self.board.state()
        if self.outside is not None:
            self.outside.known = self.state
        return self.state

    async def _peg(self, player: int, points: int) -> None:
        self._pegged = await self.board.peg(player, points)
        self._changes += 1

    async def _deal_to(self, seat: int) -> None:
        """The deal goes to `seat`; the board's dealer lamp shows its side."""
        before = self.state.dealer if self.state else -1
        dealer = await self.board.set_dealer(self.keeping.side(seat))
        if dealer != before:
            self._changes += 1

    async def start(self, new: bool = False) -> None:
        """Read the board: go on with a game in progress (unless `new`, or another target or
        number of players is wanted), else start one. With a recording, the players are named
        (the names given, else asked for at a terminal, unless the game has them)."""
        if self.recording is not None and not self.recording.following:
            await self.recording.follow(self.board)
        state = await self._read()
        target = self.target or state.target
        fresh = not any(state.front[: state.players]) and not any(state.back[: state.players])
        other_game = state.target != target or state.players != self.players
        if new or state.winner is not None or other_game:
            if other_game or self._match_to_start(state) is None:
                await self.board.new_game(target, self.players)
            state = await self._read()
            fresh = True
        asked = self._match_to_start(state)
        if asked is not None:  # (a new game with it)
            await self.board.start_match(asked[1], asked[0])
            state = await self._read()
            fresh = True
        if self.skunk_double is not None and self.skunk_double != state.skunk_double:
            await self.board.set_skunk_double(self.skunk_double)
            state = await self._read()
        self.keeping.depth = state.undo
        if self.outside is None:
            self.outside = OutsideChanges(self.board, state)
        if fresh:
            self.keeping.new_game(state.dealer)
            self.messages = [self._new_game_text(state.target)]
        else:
            self.keeping.go_on(state.dealer)
            kept = None
            if self.table_file is not None:
                kept = load_table(self.table_file, self.board_key, self.game, state)
            if kept is not None:
                self.keeping.turn = kept
            scores = ", ".join(f"{player_name(p)} {state.front[p]}" for p in range(state.players))
            self.messages = [
                _(
                    "going on with the game on the board: %(scores)s; %(dealer)s deals (n "
                    "starts a new game; u takes back the board's last change)",
                    scores=scores,
                    dealer=self.name(self.turn.dealer),
                )
            ]
            if kept is not None:
                self.messages.append(
                    _("the deal goes on where it was: %(whose)s counts next", whose=self.whose())
                )
        self._keep_table()
        await self._name_players()
        await self._note_deal()
        health = await self.board.health()
        page = describe_page(health) if health is not None else None
        if page is not None:  # where the phones at the table find the board's own page
            self.messages.append(page)

    def _match_to_start(self, state: BoardState) -> tuple[str, int] | None:
        """The match asked for, unless the board plays it already (undecided)."""
        if self.match is None:
            return None
        playing = state.match
        if (
            playing is not None
            and (playing.kind, playing.length) == self.match
            and playing.winner is None
        ):
            return None
        return self.match

    def _keep_table(self) -> None:
        """Where the table is in its deal, kept for the next run (with a table file)."""
        if self.table_file is not None and self.state is not None:
            save_table(self.table_file, self.board_key, self.game, self.state, self.turn)

    async def _name_players(self) -> None:
        """The players' names in the record: those given, else (asked for) those typed, unless
        the game has names already; Enter alone goes on without."""
        recording = self.recording
        if recording is None:
            return
        names = self.names
        if names is None and self._ask_names and not any(await recording.seat_names()):
            names = self._asked_names()
        if names is None:
            return
        await recording.name_seats(names)
        named = [name for name in names if name]
        if named:
            self.messages.append(_("playing: %(names)s", names=", ".join(named)))

    def _asked_names(self) -> list[str | None] | None:
        """The names typed at the prompt (one a seat, separated by commas); None for none."""
        seats = ", ".join(self.name(seat) for seat in range(self.keeping.seats))
        example = SEPARATOR.join(["Ann", "Bob", "Cy", "Di"][: self.keeping.seats])
        prompt = _(
            "Who plays? Names for %(seats)s, separated by commas (%(example)s), for the "
            "record of games; Enter: no names: ",
            seats=seats,
            example=example,
        )
        while True:
            try:
                text = self._input(prompt).strip()
            except EOFError:
                return None
            if not text:
                return None
            try:
                return parse_names(text, self.keeping.seats)
            except BadName as err:
                self._output(str(err))

    async def _note(
        self,
        kind: str,
        side: int,
        points: int,
        seat: int | None = None,
        cards: str | None = None,
        claim: int | None = None,
    ) -> None:
        """What the step just pegged was, for the record (a seat: the partner, with four)."""
        if self.recording is not None:
            rev = self._pegged if points else None
            await self.recording.note(Note(kind, side, points, seat, cards, claim), rev)

    async def _note_deal(self) -> None:
        """Who deals (which partner, with four) and the starter, for the record."""
        if self.recording is None or self.state is None:
            return
        turn = self.turn
        if self.keeping.side(turn.dealer) != self.state.dealer:
            return  # the board's dealer is another's: the table will catch up
        starter = None if turn.starter is None else str(turn.starter)
        await self.recording.deal(dealer_seat=turn.dealer, starter=starter)

    def _new_game_text(self, target: int, after_win: bool = False) -> str:
        """A new game: which, to what, who deals (after the cut, or as the board chose after
        a won game) and how to give the deal to another seat, and the pone's bonus."""
        if self.game.pone_bonus:
            game = _("new five-card game to %(target)d.", target=target)
        elif self.game.partnerships:
            game = _("new game of four, in partnerships, to %(target)d.", target=target)
        else:
            game = _("new game to %(target)d.", target=target)
        dealer = self.turn.dealer
        seats = self.keeping.seats
        others = ", ".join(
            _("%(key)s if %(other)s does", key=f"d {self._letter(seat)}", other=self.name(seat))
            for seat in ((dealer + step) % seats for step in range(1, seats))
        )
        values = {"dealer": self.name(dealer), "others": others}
        if not after_win:
            deal = _("Cut for the deal: %(dealer)s deals (%(others)s).", **values)
        elif self.game.sides == 2:
            # The board gives the next game's first deal to the loser of a two-sided game.
            deal = _("%(dealer)s lost the last game and deals first (%(others)s).", **values)
        else:
            deal = _("The deal passes on: %(dealer)s deals (%(others)s).", **values)
        if not self.game.pone_bonus:
            return f"{game} {deal}"
        bonus = _("The pone pegs %(bonus)d once the deal is settled.", bonus=self.game.pone_bonus)
        return f"{game} {deal} {bonus}"

    # --- one line of input ---------------------------------------------------------------------

    async def handle(self, line: str) -> bool:
        """Act on one line; False to quit. Messages for the person go to `self.messages`."""
        self.messages = []
        self._helping = False
        text = line.strip()
        word = text.lower()
        if word in ("q", "quit", "exit"):
            return False
        if word in ("", "r"):
            await self._sync()
            return True
        if word in ("?", "h", "help"):
            # The keys stand in for the status lines: with the board, they fit 80x24.
            self.messages = [_("keys (then Enter):"), keys_help(self._example().rsplit(" ", 1)[0])]
            self._helping = True
            return True
        await self._sync()
        if word in ("u", "undo"):
            await self._undo()
            return True
        self._part = self.turn
        self._changes = 0
        self._linked = False
        self._last_part = None
        what = text
        try:
            what = await self._command(text)
        except (Problem, CardError) as err:
            self.messages.append(str(err))
        except Refused as err:
            self.messages.append(self._refused(err))
        except BoardRejected as err:
            self.messages.append(self._board_problem(err))
        finally:
            if self._last_part is None:
                await self._record_part(what)
            else:
                await self._record_part(self._last_part, auto=True)
            await self._note_deal()
        return True

    async def _record_part(self, what: str, *, auto: bool = False) -> None:
        """The entry so far, recorded as a step (linked to its part before, if any); the next
        part starts here."""
        state = await self._read() if self._changes else self.state
        assert state is not None
        steps = len(self.keeping.history)
        self.keeping.record(
            self._part,
            self._changes,
            what,
            state.undo,
            looks(state),
            linked=self._linked,
            auto=auto,
        )
        self._linked = self._linked or len(self.keeping.history) > steps
        self._part = self.turn
        self._changes = 0

    def _refused(self, err: Refused) -> str:
        """What the rules refused, in words, with what to type instead."""
        whose = self.whose()
        if isinstance(err, ImpossibleCount):
            return _("no hand counts %(points)d", points=err.points)
        if isinstance(err, NothingToCount):
            return _("c needs the cards: c %(cards)s (the starter last)", cards=self._example())
        if isinstance(err, NoStarter):
            return _(
                "and the starter? type it last (c %(cards)s), or s 5D first",
                cards=self._example(),
            )
        if isinstance(err, WrongCards) and err.size == 3:
            return n_(
                "%(whose)s: three cards, then the starter, not %(count)d card",
                "%(whose)s: three cards, then the starter, not %(count)d cards",
                err.given,
                whose=whose,
            )
        if isinstance(err, WrongCards):
            return n_(
                "%(whose)s: four cards, then the starter, not %(count)d card",
                "%(whose)s: four cards, then the starter, not %(count)d cards",
                err.given,
                whose=whose,
            )
        if isinstance(err, StarterInHand):
            return _(
                "%(card)s is the starter, it cannot be in %(whose)s too", card=err.card, whose=whose
            )
        if isinstance(err, CardSeen):
            return _(
                "%(card)s was already in %(whose)s: check the cards",
                card=err.card,
                whose=self._whose(err.hand),
            )
        if isinstance(err, StarterKnown) and err.given == err.starter:
            return _("the starter is %(starter)s already", starter=err.starter)
        if isinstance(err, StarterKnown):
            return _(
                "this deal's starter is %(starter)s already: to change it, u back to it, then "
                "s %(card)s",
                starter=err.starter,
                card=err.given,
            )
        if isinstance(err, ShowOver):
            return _("the show of this deal is over: d passes the deal on")
        if isinstance(err, HeelsPegged):
            return _("his heels were pegged in this deal already: once a deal (u takes them back)")
        if isinstance(err, NotAJack):
            return _(
                "the starter is %(starter)s, no jack: no heels (u back to the starter to change "
                "it)",
                starter=err.starter,
            )
        if isinstance(err, JackExpected):
            return _(
                "his heels were pegged, so the starter is a jack, not %(card)s (u takes the "
                "heels back)",
                card=err.given,
            )
        if isinstance(err, NothingOverlooked):
            return _(
                "muggins: nothing overlooked to take (it follows a claimed count with its cards)"
            )
        if isinstance(err, NoSeat):
            return _("no seat plays for %(player)s", player=player_name(err.side))
        raise err

    def _board_problem(self, err: BoardRejected) -> str:
        if err.code == "game_over":
            return _game_over_text()
        # the board's own words (the protocol's) stay as it sent them
        return _("the board refused: %(text)s", text=err.text)

    def _won_text(self, state: BoardState) -> str:
        assert state.winner is not None
        winner = self.name(state.winner).upper()
        match = state.match
        if match is not None and match.winner == state.winner:
            return _(
                "%(winner)s WINS THE MATCH! n: the next match  u: undo  q: quit", winner=winner
            )
        if state.result == "skunk":
            return _("%(winner)s WINS with a skunk! n: new game  u: undo  q: quit", winner=winner)
        if state.result == "double_skunk":
            return _(
                "%(winner)s WINS with a double skunk! n: new game  u: undo  q: quit",
                winner=winner,
            )
        return _("%(winner)s WINS! n: new game  u: undo  q: quit", winner=winner)

    async def _sync(self) -> None:
        """Take in the changes made on the board elsewhere (its buttons, another program, a
        phone) since it was last seen: the events that came, then the board read again (its
        events come before the reply, so one not seen yet is a change without its event)."""
        assert self.outside is not None, "start() first"
        for change in self.outside.pending():
            self._take(change)
        state = await self.board.state()
        for change in self.outside.pending():
            self._take(change)
        if state.rev != self.outside.known.rev:
            self._take(Outside(self.outside.known, state, Source.ELSEWHERE))
            self.outside.known = state
        self.state = self.outside.known

    def _take(self, change: Outside) -> None:
        """A change made elsewhere: said, and taken as a step of its own (u takes it back); the
        entries it undid are taken out; a new game or the deal passing goes on from there."""
        after = change.after
        what = change.describe()
        depth = after.undo if after.undo < UNDO_DEPTH else None
        undone = self.keeping.elsewhere(depth, looks(after), after.dealer, what)
        if change.new_game and after.players == self.players:
            self.keeping.new_game(after.dealer)
        self.state = after
        self.messages.append(what)
        for entry in undone:
            if not entry.elsewhere:
                self.messages.append(_("taken back there: %(what)s", what=entry.what))
        if after.players != self.players:
            self.messages.append(
                _(
                    "the board now plays a game of %(players)d: q, then cribboard keep --players "
                    "%(players)d",
                    players=after.players,
                )
            )

    async def _command(self, text: str) -> str:
        word = text.lower()
        words = word.split()
        head = _ALIASES.get(words[0], words[0])
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
            raise Problem(_("%(text)r? type ? for the keys", text=text)) from None
        return await self._count(None, [str(card) for card in cards])

    def _player(self, word: str) -> int:
        """The board's player (a side) named by a colour or its first letter."""
        for i in range(self.players):
            if word in (PLAYER_NAMES[i], initial(i)):
                return i
        letters = "/".join(initial(i) for i in range(self.players))
        raise Problem(
            _("%(word)r? the players are %(letters)s; ? shows the keys", word=word, letters=letters)
        )

    def _seat_of(self, side: int) -> int | None:
        """The seat that pegs for `side` when it is one person's (None: a partnership's)."""
        return None if self.game.partnerships else side

    def _dealer_seat(self, word: str) -> int:
        """The seat named after d: a colour (the next seat of that side), or with four
        players also the seat's number (o2)."""
        if self.game.partnerships and word[-1:] in ("1", "2"):
            return self.keeping.seat_of(self._player(word[:-1]), int(word[-1]))
        return self.keeping.seat_dealing(self._player(word), self.turn.dealer + 1)

    async def _pone_bonus(self) -> None:
        """Five-card game: the pone pegs 3 at the start of the game's first deal, once: with the
        first entry taken (not one refused, nor the cut for the deal)."""
        if not self.turn.bonus_due:
            return
        pone = self.keeping.pone
        part = self._part
        bonus = self.keeping.pone_bonus()
        await self._peg(*bonus)
        await self._note("bonus", bonus.side, bonus.points, pone)
        said = _(
            "%(player)s, the pone, pegs %(points)d for the first deal",
            player=self.name(pone),
            points=bonus.points,
        )
        self.messages.append(said)
        # A step of its own under the entry's: the board may undo one without the other.
        state = await self._read()
        self.keeping.record(part, 1, said, state.undo, looks(state), auto=True)
        self._linked = True
        self._part = dataclasses.replace(part, bonus_due=False)
        self._changes = 0

    async def _pegging(self, who: str, points_text: str) -> str:
        player = self._player(who)
        points = int(points_text) if points_text else 1
        if not 1 <= points <= MAX_POINTS:
            raise Problem(_("pegging points are 1..%(most)d", most=MAX_POINTS))
        self._game_over()
        await self._pone_bonus()
        await self._peg(player, points)
        await self._note("play", player, points, self._seat_of(player))
        self.messages.append(
            _("%(player)s pegs %(points)d", player=player_name(player), points=points)
        )
        return f"{player_name(player)} {points}"

    def _game_over(self) -> None:
        if self.state is not None and self.state.winner is not None:
            raise Problem(_game_over_text())

    async def _count(self, claim: int | None, card_words: list[str]) -> str:
        """A hand of the show: a claimed count, the cards, or both."""
        self._game_over()
        if claim is not None and not 0 <= claim <= MAX_POINTS:
            raise Problem(_("a hand counts 0..%(most)d", most=MAX_POINTS))
        cards = parse_cards(card_words)
        try:
            counted = self.keeping.count(claim, cards)
        except OtherStarter as err:
            typed = f"{'c' if claim is None else claim} {format_cards(cards[:-1])}"
            raise Problem(
                _(
                    "the starter is %(starter)s, not %(card)s: %(typed)s counts %(whose)s with it",
                    starter=err.starter,
                    card=err.given,
                    typed=typed,
                    whose=self.whose(),
                )
            ) from None
        await self._pone_bonus()
        whose = self._whose(counted.hand)
        verdict = counted.verdict
        if counted.nineteen:
            # Translators: players call a hand that scores nothing "nineteen" (no hand counts
            # 19), so 19 typed means 0.
            self.messages.append(_("nineteen: nothing, then"))
        if counted.count is not None:
            actual = counted.count.total
            self.messages.append(_breakdown(counted.count, whose))
            if verdict is Verdict.RIGHT:
                self.messages.append(
                    _("%(whose)s: %(points)d is right", whose=whose, points=counted.claim)
                )
            elif counted.claim == NOTHING:
                # 19 is the table's word for nothing, never a count the cards fall short of.
                self.messages.append(
                    _("%(whose)s: nineteen, nothing, is right", whose=whose)
                    if not actual
                    else _(
                        "%(whose)s has %(actual)d, not nothing: pegged %(actual)d",
                        whose=whose,
                        actual=actual,
                    )
                )
            elif verdict is Verdict.OVER:
                self.messages.append(
                    _(
                        "%(whose)s has %(actual)d, not %(claim)d: pegged %(actual)d",
                        whose=whose,
                        actual=actual,
                        claim=counted.claim,
                    )
                )
            elif counted.overlooked is not None:
                taker, missed = counted.overlooked
                self.messages.append(
                    _(
                        "MUGGINS! %(whose)s has %(actual)d, not %(claim)d: %(missed)d overlooked. "
                        "m: %(taker)s takes them; or u, then type the count again",
                        whose=whose,
                        actual=actual,
                        claim=counted.claim,
                        missed=missed,
                        taker=player_name(taker),
                    )
                )
        if counted.points:
            await self._peg(counted.side, counted.points)
        shown = None
        if counted.count is not None:
            shown = f"{format_cards(counted.count.hand)} {counted.count.starter}"
        claim = NOTHING if counted.nineteen else counted.claim
        kind = "crib" if counted.hand.crib else "hand"
        await self._note(kind, counted.side, counted.points, counted.hand.seat, shown, claim)
        if verdict in (Verdict.UNCHECKED, Verdict.SHORT):
            self.messages.append(
                _("%(whose)s: %(points)d", whose=whose, points=counted.points)
                if counted.points
                else _("%(whose)s: nothing", whose=whose)
            )
        what = f"{whose} {counted.points}"
        await self._next_step(counted, what)
        return what

    def _example(self) -> str:
        return "5H 5S JD 5D" if self.game.kept == 3 else "5H 5S 5C JD 5D"

    async def _next_step(self, counted: Counted, what: str) -> None:
        """After a hand of the show (`what`): the next hand, or after the crib the deal passes
        on (unless the game is won), a part of the entry of its own."""
        if self.keeping.next_hand(counted.overlooked):
            return
        if self.state is not None and self._changes:
            await self._read()
        if self.state is not None and self.state.winner is not None:
            return
        await self._record_part(what)
        await self._deal_to(self.keeping.next_dealer)
        dealer = self.keeping.pass_deal(counted.overlooked)
        self._last_part = _("the deal passes to %(player)s", player=self.name(dealer))
        self.messages.append(self._last_part)

    async def _starter(self, words: list[str]) -> str:
        if len(words) != 1:
            raise Problem(_("s and the starter card: s 5D"))
        card = parse_card(words[0])
        self._game_over()
        heels = self.keeping.starter(card)
        await self._pone_bonus()
        self.messages.append(_("starter %(card)s", card=card))
        if heels is not None:
            await self._peg(*heels)
            await self._note("heels", heels.side, heels.points, self.turn.dealer)
            self.messages.append(self._heels_text())
        return _("starter %(card)s", card=card)

    def _heels_text(self) -> str:
        # Translators: his heels (his nibs): the starter is a jack, the dealer pegs 2.
        return _("his heels: %(dealer)s pegs 2", dealer=self.name(self.turn.dealer))

    async def _heels(self) -> str:
        self._game_over()
        heels = self.keeping.heels()
        await self._pone_bonus()
        await self._peg(*heels)
        await self._note("heels", heels.side, heels.points, self.turn.dealer)
        self.messages.append(self._heels_text())
        return _("his heels")

    async def _muggins(self, words: list[str]) -> str:
        self.keeping.overlooked()  # nothing to take: said before anything else
        taker = self._player(words[0]) if words else None
        self._game_over()
        taken = self.keeping.muggins(taker)
        await self._pone_bonus()
        await self._peg(*taken)
        await self._note("muggins", taken.side, taken.points, self._seat_of(taken.side))
        player = player_name(taken.side)
        self.messages.append(
            _("muggins: %(player)s takes %(points)d", player=player, points=taken.points)
        )
        return _("muggins %(player)s %(points)d", player=player, points=taken.points)

    async def _deal(self, words: list[str]) -> str:
        if len(words) > 1:
            raise Problem(_("d, or d and a player: d o"))
        if words:
            seat = self._dealer_seat(words[0])
            await self._deal_to(seat)
            self.keeping.deal_to(seat)
        else:
            await self._deal_to(self.keeping.next_dealer)
            self.keeping.pass_deal()
        dealer = self.turn.dealer
        self.messages.append(
            _(
                "%(dealer)s deals, %(pone)s counts first",
                dealer=self.name(dealer),
                pone=self.name(self.keeping.pone),
            )
        )
        return _("%(dealer)s deals", dealer=self.name(dealer))

    async def _new(self, words: list[str]) -> str:
        target = None
        if words:
            if words[0] not in [str(t) for t in TARGETS] or len(words) > 1:
                raise Problem(_("n, or %(choices)s", choices=" / ".join(f"n {t}" for t in TARGETS)))
            target = int(words[0])
        won = self.state is not None and self.state.winner is not None
        await self.board.new_game(target, self.players)
        self._changes += 1
        state = await self._read()
        self.keeping.new_game(state.dealer)
        self.messages.append(self._new_game_text(state.target, after_win=won))
        return _("new game")

    async def _undo(self) -> None:
        entry = self.keeping.undo()
        if entry is None:
            try:
                await self.board.undo()
            except BoardRejected:
                self.messages.append(_("nothing to undo"))
                return
            state = await self._read()
            self.keeping.restart_deal(state.dealer, state.undo)
            self.messages.append(_("undone: the board's last change"))
            return
        parts = [entry]
        while parts[-1].linked and self.keeping.history:  # the whole entry, each of its parts
            step = self.keeping.undo()
            assert step is not None
            parts.append(step)
        try:
            for _change in range(sum(part.changes for part in parts)):
                await self.board.undo()
        except BoardRejected:  # its history is full: the oldest steps are gone
            self.messages.append(_("the board's history goes back no further"))
        state = await self._read()
        self.keeping.depth = state.undo
        typed = next((part.what for part in parts if not part.auto), entry.what)
        self.messages.append(_("undone: %(what)s", what=typed))

    # --- the screen ----------------------------------------------------------------------------

    def status(self) -> list[str]:
        """What the table is at, and what to type next."""
        state = self.state
        if state is not None and state.winner is not None:
            return [self._won_text(state)]
        turn = self.turn
        pone = self.name(self.keeping.pone)
        line = _(
            "deal %(deal)d · %(dealer)s deals · %(pone)s leads and counts first",
            deal=turn.deal_no,
            dealer=self.name(turn.dealer),
            pone=pone,
        )
        if turn.starter is not None:
            line += " · " + _("starter %(card)s", card=turn.starter)
        rest = [self._whose(hand) for hand in self.keeping.hands_left()]
        if rest[1:]:
            show = _(
                "show: 12⏎ counts %(whose)s, then %(rest)s", whose=rest[0], rest=", ".join(rest[1:])
            )
        else:
            show = _("show: 12⏎ counts %(whose)s", whose=rest[0])
        if turn.shown:
            show = _("the show of this deal is over: d passes the deal on")
        if turn.step == 0:
            letters = " / ".join(f"{initial(p)}2" for p in range(self.players))
            show = _("play: %(keys)s pegs 2 (letter alone: 1)", keys=letters) + " · " + show
        if turn.bonus_due:
            show = (
                _(
                    "%(pone)s pegs %(points)d with the first entry (d first if another deals)",
                    pone=pone,
                    points=self.game.pone_bonus,
                )
                + " · "
                + show
            )
        return [
            line,
            show,
            _("c %(cards)s counts cards · u undo · ? keys · q quit", cards=self._example()),
        ]

    async def draw(self) -> None:
        """Show the board, the scores, the last messages and the status."""
        frame = await self.board.frame()
        state = self.state = await self.board.state()
        lines = []
        if self.where:
            lines.extend(fit_lines([_("cribboard scorekeeper on %(board)s", board=self.where)]))
        lines.append(draw_frame(frame.rgb, self.color, state.players))
        # (The keys stand in for the match's line too: with the board, they fit 80x24.)
        lines.append(describe_state(state, self.game.partnerships, match=not self._helping))
        lines.append("")
        lines.extend(fit_lines([*self.messages, *([] if self._helping else self.status())]))
        text = "\n".join(lines)
        self._output(CLEAR + text if self.color else text)

    async def run(self, new: bool = False) -> int:
        """Start, then take lines until q or the end of input; meanwhile the board is followed
        and a change made elsewhere is drawn at once."""
        await self.start(new)
        try:
            while True:
                await self.draw()
                line = await self._next_line()
                if line is None or not await self.handle(line):
                    break
                self._keep_table()
        finally:
            if self.outside is not None:
                self.outside.close()
        return 0

    async def _next_line(self) -> str | None:
        """The next line typed (None at the end of the input). While it is typed, each change
        made on the board elsewhere is taken in and the screen drawn again."""
        assert self.outside is not None
        reading = asyncio.ensure_future(off_loop(partial(self._input, _PROMPT)))
        while True:
            change = asyncio.ensure_future(self.outside.wait())
            await asyncio.wait((reading, change), return_when=asyncio.FIRST_COMPLETED)
            if not change.done():
                change.cancel()
                break
            self.messages = []
            self._helping = False
            self._take(change.result())
            for more in self.outside.pending():
                self._take(more)
            self._keep_table()
            await self.draw()
            if self._terminal:
                reprompt(_PROMPT)
        try:
            return reading.result()
        except EOFError:
            return None


def _breakdown(count: HandCount, whose: str) -> str:
    return _(
        "%(whose)s %(cards)s + %(starter)s: %(what)s = %(total)d",
        whose=whose,
        cards=format_cards(count.hand),
        starter=count.starter,
        what=combo_summary(count.combos) or _("nothing"),
        total=count.total,
    )


def _game_over_text() -> str:
    return _("the game is over: n starts a new one, u takes back the last entry")


TABLE_GAMES = {2: STANDARD, 3: THREE_PLAYER, 4: FOUR_PLAYER}
"""The form of the game for each `cribboard keep --players N` (four: in partnerships)."""


def table_game(players: int = 2, five_card: bool = False) -> Variant:
    """The form of the game for `cribboard keep --players N [--five-card]`: two, three, or four
    players in partnerships; the five-card game is for two. Raises ValueError otherwise."""
    if five_card:
        if players != 2:
            raise ValueError(_("the five-card game is for two players"))
        return FIVE_CARD
    if players not in TABLE_GAMES:
        raise ValueError(_("2, 3 or 4 players, not %(players)d", players=players))
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
    names: list[str | None] | None = None,
    match: tuple[str, int] | None = None,
    skunk_double: bool | None = None,
) -> int:
    """`cribboard keep`: find a board (or start the virtual board, whose game outlives the app),
    say which, keep the score and the record of the games (the players named by `names`, one a
    seat, else asked for), in a `match` (kind, length) when asked, a skunk winning two of its
    games when `skunk_double`; at the end, say where the game is kept."""
    chosen: list[ChosenBoard] = []

    async def main() -> int:
        with contextlib.ExitStack() as stack:
            chosen.append(await choose_board(port, virtual, stack, portshare.owner_label))
            where = chosen[0]
            builtins.print(_("playing on %(board)s", board=where.description), flush=True)
            async with await Board.open(where.port, timeout=timeout) as board:
                recording = Recording.open(
                    board_identity(where.port, board.hello, where.flash),
                    "keep",
                    seats=game.players,
                    variant=game.name,
                    say=builtins.print,
                )
                keeper = Scorekeeper(
                    board,
                    color=color,
                    where=where.description,
                    target=target,
                    game=game,
                    table_file=table_path(),
                    board_key=str(where.flash) if where.flash else portshare.port_key(where.port),
                    recording=recording,
                    names=names,
                    ask_names=sys.stdin.isatty(),
                    match=match,
                    skunk_double=skunk_double,
                )
                try:
                    return await keeper.run(new)
                finally:
                    if recording is not None:
                        await recording.close()

    with ending_on_signals(), terminal_kept():
        try:
            status = asyncio.run(main())
        except KeyboardInterrupt:
            builtins.print()
            status = 130
    if chosen:
        builtins.print(chosen[0].kept("`cribboard keep`"), flush=True)
    return status
