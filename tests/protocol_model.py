"""A model of the board's line protocol, written from docs/protocol.md (protocol 1.4), not from the
firmware: given the board's state, it says what each request line must get back on every link.

The tests (tests/firmware/test_protocol_model.py) and the soak (bench/soak.py) feed it the bytes they send
and compare what the board writes with what the model expects, line by line, in order:

    model = ProtocolModel()
    model.connect("usb", usb=True)
    for line in model.lines("usb", data):           # the complete lines in data, in order
        step = model.expect("usb", line)            # what each link must receive for this line
        ...read step.outputs[link] from each link, check each with Out.matches()...
        model.settle(step, actual_reply)            # the reply the board chose, where it may choose

What the model holds, each from the document's section:
- framing (1): lines end in "\\n" (a "\\r" before it dropped); a request is at most 64 bytes with
  its line end, else one `too_long` carrying the id read whole wherever it starts; printable ASCII
  only (else `bad_line`, with the id when it was read); blank lines get nothing;
- requests (2): the id (1..8 of [0-9A-Za-z], then a space or the end: else `bad_line` without
  it); numbers of at most 6 digits with an optional minus; the words `clear`, `x2`, `open`; at
  most 3 arguments; unknown verbs; the number of arguments of each verb (the verb table, 4);
- remembered replies (2): per sender (the USB host, a central by its address, whichever link it
  comes on), the last 8 replies to lines with an id, errors included, except reading requests
  and `denied`; a line whose id is remembered gets that reply again and nothing else happens;
  requests without an id are never deduplicated (across a restart: tests/firmware/test_power_cut.py);
- conditions (2, 4; since 1.3): `@REV` before the verb, `stale` unless the revision is REV; a
  peg's third argument, `stale` unless the player's front is that;
- who may send what (4, 11): a Bluetooth central that is not admitted (and the board not open)
  gets `denied` for every change, and the latest refused central is admitted by a tap of deal;
- "setting what is already so changes nothing" (4): no revision, no undo step, no event;
- events (5): every change goes to every link, after the reply on the asking link; a link that
  asked for brief events gets a peg as `! p` and a preview as `! q`; settings as `! cfg`;
  admission as `! admit` with each link's own `you`. The model follows a board where a link
  asked for an event after every request (`every 1`, which the Checker sends on each link it
  attaches): requests read together then get theirs one by one, as one at a time. Without it
  the board pushes once after what it read together, which depends on how the bytes arrived;
  expect_together() gives that push for lines read together (the vectors' steps that send
  several), and tests/core/test_protocol.py and tests/core/test_blelink.py check the board;
- the tally (games): never below zero; a win adds 1 (2 for a skunk with x2=1); taking a win back
  takes back what it added and the tally still holds; a correction that keeps the winner settles
  the game again only when the result changed and the win's games are in the tally (none after
  `games clear`). Tracked here independently of the board's code (`award`, with its own undo
  history; results from the skunk lines), and checked against the oracle on every change;
- between games (4, `match` and `hist`; since 1.4): the game's number, +1 a new game (a match
  started), back by its undo; the match (`m mk mg mn`): started with a new game and the tally at
  0, its next game or, once a player's tally reached what it needs (or the player count
  changed), the next match with the tally at 0; ended by `match clear`; undone as any step;
  the history: a won game goes in when a new game leaves it, with its pegs, tally, match and
  place as they were, its undo takes it out, 32 kept; `hist` pages oldest first from a game
  number, `next` the next page's first. Tracked here with the tally's own undo history and
  checked against the board's state on every change;
- revisions (5): every change moves `r` by exactly one;
- health (4): its fields; `bad` counts the lines answered bad_line, unknown or too_long.

The game's own rules (leapfrog, the win, skunks, undo, previews, which rule error a bad request
gets) come from cribcore.state.GameState: they are the board's rules by definition; what the
model checks is the protocol around them.

Where the document leaves a choice open, the model accepts every reply the document allows (for
example which of two errors a request that breaks two rules gets: `Step.alternatives`). Where the
document contradicted itself or was silent (which replies are remembered, the order of checks, a
replay's place among the remembered, what `bad` counts), the first soak listed the points and the
document now says what the board does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from cribcore.state import NO_WINNER, UNDO_DEPTH, GameError, GameState
from cribfw.version import FIRMWARE_VERSION

MAX_LINE = 64
MAX_ID = 8
REMEMBERED = 8
MAX_DIGITS = 6
REV_DIGITS = 9
STALE_REV = b"the board has changed since that revision"
CAPS = (
    "hello,ping,st,peg,set,undo,new,deal,pend,games,bright,budget,frame,test,admit,brief,health,"
    "every,match,hist"
)
DENIED_TEXT = b"tap the deal button on the board to admit this device"
WORDS = (b"clear", b"x2", b"open", b"best", b"first")
HISTORY_KEPT = 32
HIST_REPLY_MOST = 700  # shorter than frame's reply
MATCH_TEXT = b"best of 3..15 (odd) or first to 2..15"
ID_CHARS = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

# The verb table of section 4: fewest and most arguments, and what the verb does, which decides
# who may send it and whether its reply is remembered:
#   read: reads (anyone; never remembered); change: changes the board (a link that may change
#   it; remembered); setting: reads without arguments, changes with them; link: reads without
#   arguments, with them sets the asking link's own view (anyone; remembered).
VERBS: dict[bytes, tuple[int, int, str]] = {
    b"hello": (0, 0, "read"),
    b"ping": (0, 0, "read"),
    b"st": (0, 0, "read"),
    b"peg": (2, 3, "change"),
    b"set": (2, 3, "change"),
    b"undo": (0, 0, "change"),
    b"new": (0, 2, "change"),
    b"deal": (0, 1, "change"),
    b"pend": (2, 2, "change"),
    b"games": (0, 2, "setting"),
    b"bright": (0, 1, "setting"),
    b"budget": (0, 1, "setting"),
    b"frame": (0, 0, "read"),
    b"test": (0, 0, "change"),
    b"admit": (0, 2, "setting"),
    b"brief": (0, 1, "link"),
    b"health": (0, 0, "read"),
    b"every": (0, 1, "link"),
    b"match": (0, 2, "setting"),
    b"hist": (0, 1, "read"),
}


@dataclass(frozen=True)
class Out:
    """One line a link must receive: exactly `exact`, or one of `options`, or a line matching
    `pattern` (and `check`, a named check the harness runs on it)."""

    exact: bytes | None = None
    options: tuple[bytes, ...] = ()
    pattern: re.Pattern[bytes] | None = None
    check: str = ""
    why: str = ""

    def matches(self, line: bytes) -> bool:
        if self.exact is not None:
            return line == self.exact
        if self.options:
            return line in self.options
        assert self.pattern is not None
        return self.pattern.fullmatch(line) is not None

    def __str__(self) -> str:
        if self.exact is not None:
            return repr(self.exact)
        if self.options:
            return " or ".join(repr(o) for o in self.options)
        assert self.pattern is not None
        return f"a line like {self.pattern.pattern!r}"


@dataclass
class Step:
    """What one request line must produce: `outputs[link]` in order on each link (the asking
    link's reply first, then the events). `remember` is the (link, id) its reply is kept under
    (set by settle() with the reply the board chose)."""

    link: str
    line: bytes
    outputs: dict[str, list[Out]]
    rid: bytes = b""  # the request's id as the document reads it (b"": none)
    remember: tuple[str, bytes] | None = None
    bad: tuple[int, int] = (0, 0)  # what it adds to health's bad: (at least, at most)


@dataclass
class LinkState:
    usb: bool
    address: bytes | None = None
    trusted: bool = False
    brief: bool = False
    every: bool = False
    partial: bytearray = field(default_factory=bytearray)

    @property
    def sender(self) -> bytes:
        """Whose remembered replies it uses: the USB host's, or its address's."""
        return b"usb" if self.usb or self.address is None else self.address


class NotModelled(Exception):
    """Input the model does not cover (a Bluefruit control pad packet on Bluetooth)."""


class ProtocolModel:
    """The document's board, fresh: the 121 game, two players, brightness 128, the profile's
    budget (given), nobody admitted, open mode off."""

    def __init__(self, budget: int = 400) -> None:
        self.game = GameState()
        self.bright = 128
        self.budget = budget
        self.open = False
        self.admitted: list[bytes] = []  # remembered addresses, oldest first (at most 8)
        self.candidate: str | None = None  # the central a tap of deal would admit
        self.links: dict[str, LinkState] = {}
        # Each sender's remembered replies: (id, reply), oldest first.
        self.recent: dict[bytes, list[tuple[bytes, bytes]]] = {}
        # This boot's hello fields (" proto=... caps=... store=..."): checked against the
        # document once (modelcheck.HELLO), then the same on every hello.
        self.hello = b""
        self.bad = [0, 0]  # health's bad: at least, at most
        # The tally, independently of the board's code: what the current win added and the tally
        # still holds, and before each undoable change its value, the award and what happens
        # between games (undo takes them back): Between.
        self.award = 0
        self.tally_history: list[tuple[tuple[int, ...], int, Between]] = []
        self.between = Between()
        self.asked_form = (0, 0)  # the match the last `match best|first` asked for
        # The board's finished games: their numbers and `hist` words after `ended`.
        self.history: list[tuple[int, bytes]] = []

    # --- links ---------------------------------------------------------------------------------

    def connect(self, name: str, usb: bool, address: bytes | None = None) -> None:
        """A link comes up: USB (trusted), or a central (trusted when it was admitted before)."""
        trusted = usb or (address is not None and address in self.admitted)
        self.links[name] = LinkState(usb=usb, address=address, trusted=trusted)

    def disconnect(self, name: str) -> None:
        del self.links[name]
        if self.candidate == name:
            self.candidate = None

    def lines(self, name: str, data: bytes) -> Iterator[bytes]:
        """The complete lines (without their "\\n") that `data` ends, on link `name`; the bytes
        after the last "\\n" wait for the next call."""
        link = self.links[name]
        link.partial += data
        while True:
            at = link.partial.find(b"\n")
            if at < 0:
                return
            line = bytes(link.partial[:at])
            del link.partial[: at + 1]
            if not link.usb and line[:1] == b"!":
                raise NotModelled("a Bluefruit packet on a Bluetooth link")
            yield line

    # --- one request ---------------------------------------------------------------------------

    def expect(self, name: str, line: bytes) -> Step:
        """What the board must send for request `line` (without its "\\n") from link `name`,
        and the model's state after it. Call settle() with the board's reply before the next."""
        link = self.links[name]
        step = Step(name, line, {n: [] for n in self.links})
        if len(line) + 1 > MAX_LINE:
            rid = step.rid = too_long_id(line)
            step.bad = (1, 1)
            self._reply(step, rid, [err(rid, b"too_long", b"line too long")], remembered=True)
            return step
        text = line[:-1] if line.endswith(b"\r") else line
        rid, rest = read_id(text)
        step.rid = rid or b""
        if rid is None:
            step.bad = (1, 1)
            self._reply(step, b"", [err(b"", b"bad_line", b"not a request line")], False)
            return step
        if any(c < 0x20 or c > 0x7E for c in text):
            step.bad = (1, 1)
            self._reply(step, rid, [err(rid, b"bad_line", b"not a request line")], True)
            return step
        words = rest.split()
        if_rev = None
        if words and words[0][:1] == b"@":  # the revision the request is conditional on
            digits = words.pop(0)[1:]
            if not digits.isdigit() or len(digits) > REV_DIGITS:
                self._reply(step, rid, [err(rid, b"bad_arg", b"bad argument")], True)
                return step
            if_rev = int(digits)
            if not words:
                step.bad = (1, 1)
                self._reply(step, rid, [err(rid, b"bad_line", b"not a request line")], True)
                return step
        if not words:
            if rid:  # an id with nothing after it
                step.bad = (1, 1)
                self._reply(step, rid, [err(rid, b"bad_line", b"not a request line")], True)
            return step  # a blank line: not a request, no reply
        verb, args = words[0], words[1:]
        spec = VERBS.get(verb)
        if spec is None:
            step.bad = (1, 1)
            self._reply(step, rid, [err(rid, b"unknown", b"unknown command")], True)
            return step
        least, most, kind = spec
        reading = kind == "read" or (kind in ("setting", "link") and not args)
        parsed = parse_args(args)
        if parsed is None:
            reading = kind == "read"
            self._reply(step, rid, [err(rid, b"bad_arg", b"bad argument")], not reading)
            return step
        if not least <= len(parsed) <= most:
            reading = kind == "read"
            text_ = b"wrong number of arguments"
            self._reply(step, rid, [err(rid, b"bad_arg", text_)], not reading)
            return step
        may_change = link.trusted or self.open or kind in ("read", "link") or reading
        if not reading and self._replay(step, rid):
            return step
        if not may_change:
            # Not remembered: nothing was applied (once admitted, the same line is).
            step.outputs[name].append(Out(exact=err(rid, b"denied", DENIED_TEXT)))
            self.candidate = name
            return step
        if if_rev is not None and if_rev != self.game.rev:
            step.outputs[name].append(Out(exact=err(rid, b"stale", STALE_REV)))
        else:
            self._run(step, link, rid, verb, parsed)
        if rid and not reading:
            step.remember = (name, rid)
        return step

    def expect_together(
        self, name: str, lines: list[bytes]
    ) -> tuple[list[Step], dict[str, list[Out]]]:
        """Requests read together on link `name` while no link asked for an event after every
        request (section 5): each request's reply as expect() gives it, then one push after
        the last, with the values then: the state once when any changed it (a brief event to a
        link that asked only when there was one change, a peg or a preview), the settings once,
        the admission once, each even when the requests left it where it began. Returns the
        steps, their outputs the replies alone (settle() each in order), and the push."""
        assert not any(link.every for link in self.links.values()), "every: one at a time"
        rev = self.game.rev
        changed: set[bytes] = set()
        last = b""  # the verb of the last request that changed the state
        steps = []
        for line in lines:
            step = self.expect(name, line)
            for outs in step.outputs.values():
                for out in [o for o in outs if (o.exact or b"").startswith(b"! ")]:
                    kind = out.exact.split(b" ")[1]  # type: ignore[union-attr]
                    changed.add(b"st" if kind in (b"st", b"p", b"q") else kind)
                    if kind in (b"st", b"p", b"q"):
                        last = step.line.split()[1 if step.rid else 0]
                    outs.remove(out)
            steps.append(step)
        push: dict[str, list[Out]] = {n: [] for n in self.links}
        one = self.game.rev == rev + 1
        for n, link in self.links.items():
            if b"st" in changed:
                push[n].append(Out(exact=self._state_event(link, last if one else b"")))
            if b"cfg" in changed:
                fields = b" bright=%d budget=%d" % (self.bright, self.budget)
                push[n].append(Out(exact=b"! cfg" + fields + b"\n"))
            if b"admit" in changed:
                push[n].append(Out(exact=b"! admit" + self.admission_fields(n) + b"\n"))
        return steps, push

    def settle(self, step: Step, reply: bytes) -> None:
        """The board answered `step` with `reply` (one of the lines the model allowed): keep it
        for resends when the document says it is remembered, and count health's bad lines."""
        if step.remember is not None:
            sender = self.links[step.remember[0]].sender
            recent = self.recent.setdefault(sender, [])
            recent.append((step.remember[1], reply))
            del recent[:-REMEMBERED]
        self.bad[0] += step.bad[0]
        self.bad[1] += step.bad[1]

    def _replay(self, step: Step, rid: bytes) -> bool:
        if not rid:
            return False
        for known, reply in self.recent.get(self.links[step.link].sender, []):
            if known == rid:
                step.outputs[step.link].append(Out(exact=reply, why="a resend: the same reply"))
                return True
        return False

    def _reply(self, step: Step, rid: bytes, options: list[bytes], remembered: bool) -> None:
        """An error reply to a line that was not run (nothing changes)."""
        if remembered and self._replay(step, rid):
            step.bad = (0, 0)  # a resend answered from memory is not counted again
            return
        step.outputs[step.link].append(
            Out(exact=options[0]) if len(options) == 1 else Out(options=tuple(options))
        )
        if rid and remembered:
            step.remember = (step.link, rid)

    # --- the verbs -----------------------------------------------------------------------------

    def _run(self, step: Step, link: LinkState, rid: bytes, verb: bytes, args: list[Arg]) -> None:
        out = step.outputs[step.link]
        game = self.game
        if verb == b"hello":
            out.append(Out(exact=ok(rid, self.hello)))
        elif verb == b"ping":
            out.append(Out(exact=ok(rid, b"")))
        elif verb == b"st":
            out.append(Out(exact=ok(rid, state_fields(game))))
        elif verb == b"frame":
            out.append(Out(pattern=frame_reply(rid)))
        elif verb == b"hist":
            self._hist(step, rid, args)
        elif verb == b"health":
            out.append(Out(pattern=health_reply(rid), check="health"))
        elif verb == b"test":
            out.append(Out(exact=ok(rid, b"")))  # the LEDs walk the chain; the state stays
        elif verb in (b"bright", b"budget"):
            self._setting(step, rid, verb, args)
        elif verb == b"admit":
            self._admit(step, rid, args)
        elif verb == b"brief":
            self._link_flag(step, link, rid, args, "brief")
        elif verb == b"every":
            self._link_flag(step, link, rid, args, "every")
        else:
            self._game(step, rid, verb, args)

    def _game(self, step: Step, rid: bytes, verb: bytes, args: list[Arg]) -> None:
        game = self.game
        out = step.outputs[step.link]
        numbers = [a for a in args if isinstance(a, int)]
        words = len(numbers) < len(args)
        if verb == b"games":
            return self._games(step, rid, args)
        if verb == b"match":
            return self._match(step, rid, args)
        errors: list[bytes] = []
        if words:
            errors.append(err(rid, b"bad_arg", b"expected a number"))
            # A word where a number belongs and a player that does not exist: the document
            # leaves which error open (section 2); both are errors, nothing changes.
            if verb == b"set" and isinstance(args[0], int) and not self._player_ok(args[0]):
                errors.append(err(rid, b"bad_player", b"no such player"))
            out.append(Out(options=tuple(errors)) if len(errors) > 1 else Out(exact=errors[0]))
            return None
        before = snapshot(game)
        rev = game.rev
        try:
            if verb == b"peg":
                player = numbers[0]
                if (
                    len(numbers) > 2
                    and self._player_ok(player)
                    and game.front[player] != numbers[2]
                ):
                    raise GameError("stale", "the front is not that")
                game.peg(player, numbers[1])
            elif verb == b"set":
                player = numbers[0]
                if not self._player_ok(player):
                    raise GameError("bad_player", "no such player")
                back = numbers[2] if len(numbers) > 2 else game.back[player]
                game.set_pegs(player, numbers[1], back)
            elif verb == b"undo":
                game.undo()
            elif verb == b"new":
                game.new_game(*numbers)
            elif verb == b"deal":
                if numbers:
                    game.set_dealer(numbers[0])
                else:
                    game.next_dealer()
            elif verb == b"pend":
                game.set_pending(numbers[0], numbers[1])
        except GameError as error:
            assert snapshot(game) == before and game.rev == rev, "a refused request changed"
            out.append(Out(exact=err(rid, error.code.encode(), error.text.encode())))
            return None
        if verb == b"deal":
            out.append(Out(exact=ok(rid, b" d=%d" % game.dealer)))
        else:
            out.append(Out(exact=ok(rid, b" r=%d" % game.rev)))
        self._changed(step, verb, before, rev)
        return None

    def _games(self, step: Step, rid: bytes, args: list[Arg]) -> None:
        game = self.game
        out = step.outputs[step.link]
        before = snapshot(game)
        rev = game.rev
        change = b"games"
        if not args:
            pass
        elif args == [Word(b"clear")]:
            change = b"games clear"
            game.reset_games()
        elif len(args) == 2 and args[0] == Word(b"x2"):
            if not isinstance(args[1], int):
                out.append(Out(exact=err(rid, b"bad_arg", b"expected a number")))
                return
            if args[1] not in (0, 1):
                out.append(Out(exact=err(rid, b"bad_value", b"x2 takes 0 or 1")))
                return
            change = b"games x2"
            game.set_skunk_double(args[1])
        else:
            out.append(Out(exact=err(rid, b"bad_arg", b"games [clear | x2 0|1]")))
            return
        out.append(Out(exact=ok(rid, games_fields(game))))
        self._changed(step, change, before, rev)

    def _match(self, step: Step, rid: bytes, args: list[Arg]) -> None:
        game = self.game
        out = step.outputs[step.link]
        before = snapshot(game)
        rev = game.rev
        change = b"match"
        if not args:
            pass
        elif args == [Word(b"clear")]:
            change = b"match clear"
            game.end_match()
        elif len(args) == 2 and args[0] in (Word(b"best"), Word(b"first")):
            if not isinstance(args[1], int):
                out.append(Out(exact=err(rid, b"bad_arg", b"expected a number")))
                return
            kind = 1 if args[0] == Word(b"first") else 0
            if not form_ok(kind, args[1]):
                out.append(Out(exact=err(rid, b"bad_value", MATCH_TEXT)))
                return
            change = b"match start"
            self.asked_form = (kind, args[1])
            game.start_match(kind, args[1])
        else:
            out.append(Out(exact=err(rid, b"bad_arg", b"match [best N | first N | clear]")))
            return
        out.append(Out(exact=ok(rid, match_fields(game))))
        self._changed(step, change, before, rev)

    def _hist(self, step: Step, rid: bytes, args: list[Arg]) -> None:
        """A page of the history from a game number: as many entries as the board's page holds
        (within HIST_REPLY_MOST bytes: at least 6, or all that are left), the first from that
        number on, in order; `next` the first of the next page (0: none). When each game ended
        is the board's clock's: any number."""
        out = step.outputs[step.link]
        start = args[0] if args else 0
        if not isinstance(start, int):
            out.append(Out(exact=err(rid, b"bad_arg", b"expected a number")))
            return
        if start < 0:
            out.append(Out(exact=err(rid, b"bad_value", b"hist takes a game number")))
            return
        entries = [e for e in self.history if e[0] >= start]
        words = [re.escape(b" %d/" % e[0]) + rb"\d+" + re.escape(e[1]) for e in entries]
        pages = []
        for count in range(min(6, len(entries)), len(entries) + 1):
            after = b"%d" % entries[count][0] if count < len(entries) else b"0"
            pages.append(b"".join(words[:count]) + b" next=" + after)
        head = _id_prefix(rid) + b"ok kept=%d most=%d at=" % (len(self.history), HISTORY_KEPT)
        pattern = head + rb"\d+(?:" + b"|".join(pages) + rb")\n"
        out.append(Out(pattern=re.compile(pattern), check="hist"))

    def _player_ok(self, player: int) -> bool:
        return 0 <= player < self.game.players

    def _changed(self, step: Step, verb: bytes, before: tuple[object, ...], rev: int) -> None:
        """After a change to the game (or none): the tally's own check, then the events."""
        game = self.game
        if game.rev == rev:
            # Setting what is already so: nothing moved, not even an undo step.
            assert snapshot(game) == before, f"{verb!r} changed the game without a revision"
            return
        assert game.rev == rev + 1, f"{verb!r} moved r by {game.rev - rev}, not one"
        self._check_tally(verb, before)
        for name, link in self.links.items():
            step.outputs[name].append(Out(exact=self._state_event(link, verb)))

    def _state_event(self, link: LinkState, verb: bytes) -> bytes:
        game = self.game
        if link.brief and verb == b"peg":
            p = game.last_player
            return b"! p %d %d %d %d\n" % (game.rev, p, game.front[p], game.back[p])
        if link.brief and verb == b"pend":
            p = game.last_player
            return b"! q %d %d %d\n" % (game.rev, p, game.pending[p])
        return b"! st" + state_fields(game) + b"\n"

    def _check_tally(self, change: bytes, before: tuple[object, ...]) -> None:
        """The document's tally rule, kept independently of cribcore.state: the games column of
        the state after a change must be what the rule gives, and never below zero."""
        game = self.game
        n = game.players
        old_games: tuple[int, ...] = before[6]  # type: ignore[assignment]
        old_winner: int = before[3]  # type: ignore[assignment]
        between = self.between
        if change == b"undo":  # back to the tally (and the win's award) before the last change
            expect, self.award, self.between, added = self.tally_history.pop()
            if added and self.history and self.history[-1][0] == self.between.game:
                self.history.pop()  # the won game it left is on the board again
        elif change in (b"pend", b"games x2"):  # not undoable: the tally stays
            expect = old_games
        else:
            added = False
            if change in (b"new", b"match start") and old_winner != NO_WINNER:
                self.history = (self.history + [self._entry(before)])[-HISTORY_KEPT:]
                added = True
            self.tally_history.append((old_games, self.award, between, added))
            del self.tally_history[:-UNDO_DEPTH]
            if change == b"games clear":
                expect, self.award = (0,) * n, 0
            elif change in (b"new", b"match start"):
                # Games carry over unless the player count changes, or a match starts: the
                # one asked for, or the next one after a match won
                need = wins_needed(between.kind, between.length)
                new_match = change == b"match start" or (
                    between.length > 0 and (n != before[0] or max(old_games) >= need)
                )
                expect = old_games if n == before[0] and not new_match else (0,) * n
                self.award = 0
                form = self.asked_form if change == b"match start" else between.form
                self.between = between.next_game(new_match, *form)
            elif change == b"match clear":
                expect = old_games
                self.between = Between(between.game, 0, 0, 0, between.number)
            elif change == b"deal":
                expect = old_games
            else:  # peg, set: the game is settled again
                games = list(old_games)
                if old_winner != NO_WINNER and old_winner == game.winner:
                    # The same winner: again only for another result, and only while the
                    # win's games are in the tally (none after `games clear`).
                    if self.award and result_of(snapshot(game)) != result_of(before):
                        games[old_winner] -= self.award
                        self.award = worth(result_of(snapshot(game)), game.skunk_double)
                        games[old_winner] += self.award
                else:
                    if old_winner != NO_WINNER:
                        games[old_winner] -= self.award  # what the win added and the tally holds
                    self.award = 0
                    if game.winner != NO_WINNER:
                        self.award = worth(result_of(snapshot(game)), game.skunk_double)
                        games[game.winner] += self.award
                expect = tuple(games)
        got = tuple(game.games[:n])
        assert got == expect, f"tally after {change!r}: the document gives {expect}, got {got}"
        now = (game.game_no, game.match_kind, game.match_len, game.match_game, game.match_no)
        assert now == self.between.fields(), (
            f"game and match after {change!r}: the document gives {self.between}, got {now}"
        )
        assert min(got) >= 0, "the tally went below zero"
        assert len(self.tally_history) == game.undo_count, "undo steps out of step"

    def _entry(self, before: tuple[object, ...]) -> tuple[int, bytes]:
        """The history's entry of the won game a new game leaves (`before`: its snapshot), by
        the document: (its number, its `hist` word after `ended`)."""
        players, target, _, winner, fronts, backs, games = before[:7]
        b = self.between
        match = (
            b"%d/%d/%d/%d" % (b.number, min(b.place, 255), b.length, b.kind)
            if b.length
            else b"0/0/0/0"
        )
        return b.game, b"/%d/%d/%d/%d/%d/%s/%s/%s/%s" % (
            target,
            players,
            winner,
            result_of(before),
            before[8],
            b",".join(b"%d" % v for v in fronts),  # type: ignore[attr-defined]
            b",".join(b"%d" % v for v in backs),  # type: ignore[attr-defined]
            b",".join(b"%d" % v for v in games),  # type: ignore[attr-defined]
            match,
        )

    def _setting(self, step: Step, rid: bytes, verb: bytes, args: list[Arg]) -> None:
        out = step.outputs[step.link]
        if args:
            value = args[0]
            if not isinstance(value, int):
                out.append(Out(exact=err(rid, b"bad_arg", b"expected a number")))
                return
            if verb == b"bright" and not 0 <= value <= 255:
                out.append(Out(exact=err(rid, b"bad_value", b"brightness must be 0..255")))
                return
            if verb == b"budget" and not 150 <= value <= 10000:
                out.append(Out(exact=err(rid, b"bad_value", b"budget must be 150..10000 mA")))
                return
            old = (self.bright, self.budget)
            if verb == b"bright":
                self.bright = value
            else:
                self.budget = value
            changed = old != (self.bright, self.budget)
        else:
            changed = False
        fields = b" bright=%d budget=%d" % (self.bright, self.budget)
        out.append(Out(exact=ok(rid, fields)))
        if changed:
            for name in self.links:
                step.outputs[name].append(Out(exact=b"! cfg" + fields + b"\n"))

    def _admit(self, step: Step, rid: bytes, args: list[Arg]) -> None:
        out = step.outputs[step.link]
        changed = False
        if not args:
            pass
        elif len(args) == 2 and args[0] == Word(b"open"):
            if not isinstance(args[1], int):
                out.append(Out(exact=err(rid, b"bad_arg", b"expected a number")))
                return
            if args[1] not in (0, 1):
                out.append(Out(exact=err(rid, b"bad_value", b"open takes 0 or 1")))
                return
            changed = self.open != bool(args[1])
            self.open = bool(args[1])
            self.candidate = None
        elif args == [Word(b"clear")]:
            centrals = [k for k in self.links.values() if not k.usb and k.trusted]
            changed = bool(self.admitted or centrals)
            self.admitted = []
            for k in centrals:
                k.trusted = False
            self.candidate = None
        else:
            out.append(Out(exact=err(rid, b"bad_arg", b"admit [open 0|1 | clear]")))
            return
        out.append(Out(exact=ok(rid, self.admission_fields(step.link))))
        if changed:
            self._admission_events(step)

    def _admission_events(self, step: Step) -> None:
        for name in self.links:
            step.outputs[name].append(Out(exact=b"! admit" + self.admission_fields(name) + b"\n"))

    def admission_fields(self, name: str) -> bytes:
        you = self.links[name].trusted
        return b" open=%d you=%d admitted=%d" % (self.open, you, len(self.admitted))

    def _link_flag(
        self, step: Step, link: LinkState, rid: bytes, args: list[Arg], name: str
    ) -> None:
        """`brief` or `every`: this link's own setting, 0 or 1, read or set."""
        out = step.outputs[step.link]
        word = name.encode()
        if args:
            if not isinstance(args[0], int):
                out.append(Out(exact=err(rid, b"bad_arg", b"expected a number")))
                return
            if args[0] not in (0, 1):
                out.append(Out(exact=err(rid, b"bad_value", word + b" takes 0 or 1")))
                return
            setattr(link, name, args[0] == 1)
        out.append(Out(exact=ok(rid, b" %s=%d" % (word, getattr(link, name)))))

    # --- the board's buttons ------------------------------------------------------------------

    def tap_deal_admits(self, button_event: bool = True) -> dict[str, list[Out]]:
        """A tap of the deal button while a refused central waits (within 30 s): it is admitted
        and every link hears `! admit` (after the button's own `! btn`). Returns the outputs."""
        assert self.candidate is not None
        link = self.links[self.candidate]
        self.candidate = None
        link.trusted = True
        if link.address is not None and link.address not in self.admitted:
            self.admitted = (self.admitted + [link.address])[-8:]
        step = Step("", b"", {n: [] for n in self.links})
        if button_event:
            for name in self.links:
                step.outputs[name].append(Out(exact=b"! btn n=deal a=tap\n"))
        self._admission_events(step)
        return step.outputs

    def board_peg(self, player: int, points: int) -> dict[str, list[Out]]:
        """The board's own buttons scored `points` for `player`: every link hears the change."""
        step = Step("", b"", {n: [] for n in self.links})
        before, rev = snapshot(self.game), self.game.rev
        self.game.peg(player, points)
        self._changed(step, b"peg", before, rev)
        return step.outputs

    # --- what the board shows ------------------------------------------------------------------

    def st_fields(self) -> bytes:
        return state_fields(self.game)


FIRMWARE = FIRMWARE_VERSION


class Word(bytes):
    """An argument that is one of the protocol's words."""


Arg = int | Word


def parse_args(args: list[bytes]) -> list[Arg] | None:
    """The arguments as numbers and words; None when one is malformed or there are more than 3."""
    if len(args) > 3:
        return None
    parsed: list[Arg] = []
    for a in args:
        digits = a[1:] if a[:1] == b"-" else a
        if digits and digits.isdigit():
            if len(digits) > MAX_DIGITS:
                return None
            parsed.append(int(a))
        elif a in WORDS:
            parsed.append(Word(a))
        else:
            return None
    return parsed


def read_id(text: bytes) -> tuple[bytes | None, bytes]:
    """(the id, the rest) of a request line: b"" when it has none; None when it starts with a
    malformed one (too long, other characters, or nothing: a bad_line without an id)."""
    stripped = text.lstrip(b" ")
    if not stripped.startswith(b"#"):
        return b"", text
    end = 1
    while end < len(stripped) and stripped[end] in ID_CHARS:
        end += 1
    rid = stripped[1:end]
    if not 1 <= len(rid) <= MAX_ID or (end < len(stripped) and stripped[end] != 0x20):
        return None, text
    return rid, stripped[end:]


def too_long_id(line: bytes) -> bytes:
    """The id of an over-long line (without its "\\n"): read whole wherever it starts, or none
    (a "\\r" before the "\\n" is part of the line end, not of the id)."""
    text = line[:-1] if line.endswith(b"\r") else line
    rid, _ = read_id(text)
    return rid or b""


def ok(rid: bytes, fields: bytes) -> bytes:
    return (b"#" + rid + b" " if rid else b"") + b"ok" + fields + b"\n"


def err(rid: bytes, code: bytes, text: bytes) -> bytes:
    return (b"#" + rid + b" " if rid else b"") + b"err " + code + b" " + text + b"\n"


def numbers(values: list[int], n: int) -> bytes:
    return b",".join(b"%d" % v for v in values[:n])


def state_fields(game: GameState) -> bytes:
    n = game.players
    return b" r=%d t=%d n=%d d=%d w=%d x=%d f=%s b=%s g=%s q=%s u=%d x2=%d gn=%d m=%d mk=%d" % (
        game.rev,
        game.target,
        n,
        game.dealer,
        game.winner,
        game.result(),
        numbers(game.front, n),
        numbers(game.back, n),
        numbers(game.games, n),
        numbers(game.pending, n),
        game.undo_count,
        game.skunk_double,
        game.game_no,
        game.match_len,
        game.match_kind,
    ) + b" mg=%d mn=%d" % (game.match_game, game.match_no)


def match_fields(game: GameState) -> bytes:
    return b" r=%d m=%d mk=%d mg=%d mn=%d" % (
        game.rev,
        game.match_len,
        game.match_kind,
        game.match_game,
        game.match_no,
    )


@dataclass(frozen=True)
class Between:
    """What the document says goes on between games (section 4, `match`): the game's number,
    the match's kind (0 best of, 1 first to) and length (0: none), which game of it is on
    (`place`), its number."""

    game: int = 1
    kind: int = 0
    length: int = 0
    place: int = 0
    number: int = 0

    def next_game(self, new_match: bool, kind: int, length: int) -> Between:
        """After a new game: the next match of `kind` and `length` when `new_match`."""
        if new_match:
            return Between(self.game + 1, kind, length, 1, self.number + 1)
        place = self.place + 1 if self.length else 0
        return Between(self.game + 1, self.kind, self.length, place, self.number)

    @property
    def form(self) -> tuple[int, int]:
        return (self.kind, self.length)

    def fields(self) -> tuple[int, int, int, int, int]:
        return (self.game, self.kind, self.length, self.place, self.number)


def form_ok(kind: int, length: int) -> bool:
    """A match a board plays: best of an odd number 3..15, first to 2..15."""
    if kind == 0:
        return 3 <= length <= 15 and length % 2 == 1
    return 2 <= length <= 15


def wins_needed(kind: int, length: int) -> int:
    """Games a player must win to take the match: best of N, N / 2 + 1; first to N, N."""
    return length if kind == 1 else length // 2 + 1


def games_fields(game: GameState) -> bytes:
    return b" g=%s x2=%d" % (numbers(game.games, game.players), game.skunk_double)


def result_of(state: tuple[object, ...]) -> int:
    """The result of a snapshot() by the document's rule (section 5), not the board's code:
    judged on the lowest losing score; 0 playing, 1 won, 2 skunk, 3 double skunk."""
    target, winner, fronts = state[1], state[3], state[4]
    if winner == NO_WINNER:
        return 0
    lowest = min(f for p, f in enumerate(fronts) if p != winner)  # type: ignore[arg-type]
    double_line, skunk_line = (61, 91) if target == 121 else (0, 31)
    return 3 if lowest < double_line else 2 if lowest < skunk_line else 1


def worth(result: int, skunk_double: bool) -> int:
    """Games a win adds to the tally: 1, or 2 for a skunk or double skunk while x2 is on."""
    return 2 if skunk_double and result >= 2 else 1


def snapshot(game: GameState) -> tuple[object, ...]:
    n = game.players
    return (
        game.players,
        game.target,
        game.dealer,
        game.winner,
        tuple(game.front[:n]),
        tuple(game.back[:n]),
        tuple(game.games[:n]),
        tuple(game.pending[:n]),
        game.skunk_double,
        game.undo_count,
    )


def _id_prefix(rid: bytes) -> bytes:
    return re.escape(b"#" + rid + b" ") if rid else b""


def frame_reply(rid: bytes) -> re.Pattern[bytes]:
    """The frame reply: scale and current, then 3 bytes per hole in lower-case hex."""
    return re.compile(_id_prefix(rid) + rb"ok scale=(\d+) ma=(\d+) rgb=([0-9a-f]{726})\n")


HEALTH_KEYS = rb"ok up=(\d+) heap=(\d+) saves=(\d+) serr=(\d+)(?: slast=\S+)? aerr=(\d+) "
# (bconn ... bkept: Bluetooth)
HEALTH_KEYS += rb"lost=(\d+)(?: bconn=\d+ badv=[01] bheld=\d+ bheap=\d+ bkept=\d+)? bad=(\d+)\n"


def health_reply(rid: bytes) -> re.Pattern[bytes]:
    return re.compile(_id_prefix(rid) + HEALTH_KEYS)
