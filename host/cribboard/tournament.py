"""A club night's tournament as pure logic: players, pairings, results, corrections, standings.

Scoring (the clubs' paper sheet): a win is 2 game points, a win with a skunk (the loser below
91 in a 121 game, below 31 in a 61 game) 3, a loss 0. Standings are ordered by game points,
then games won, then skunks, then spread (the sum of winning margins minus losing margins; a
margin is the target minus the loser's score). Everything adjustable is in :class:`Scoring`.

Pairings come from a movement (:func:`pair_round`); no two players meet twice within
:func:`max_rounds` rounds. Nothing here does I/O: :mod:`cribboard.hall.store` keeps it on disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from cribboard.errors import HallError
from cribboard.plaintext import unsafe_character
from cribcore.layout import skunk_lines
from cribcore.limits import TARGETS

WIN = "win"
SKUNK = "skunk"
DOUBLE_SKUNK = "double_skunk"

CIRCLE = "circle"
ROTATION = "rotation"
MOVEMENTS = (CIRCLE, ROTATION)
MAX_NAME = 40


class TournamentError(HallError):
    """A request the tournament refuses (a bad result, a rematch, an unknown player)."""


@dataclass(frozen=True)
class Scoring:
    """How the club scores. Defaults follow the clubs' paper sheet and the rules digest.

    `double_skunk`: recognise a double skunk (the loser below 61 in a 121 game); off, such a
    game is a skunk. `double_skunk_points` defaults to the skunk's 3: the sources make a skunk
    "a double win in tournaments" and call winning by more than 60 a "lurch", "a double game"
    (the rules digest, "End of the game", from sources 001, 002, 003): the same double credit,
    nothing beyond it; a club that
    rewards it more sets 4. A bye scores `bye_points` and `bye_spread` and counts as no game
    played, won or lost. `movement`: :data:`CIRCLE` (default) or :data:`ROTATION`, see
    :func:`pair_round`."""

    win_points: int = 2
    skunk_points: int = 3
    double_skunk: bool = False
    double_skunk_points: int = 3
    bye_points: int = 2
    bye_spread: int = 0
    movement: str = CIRCLE

    def __post_init__(self) -> None:
        if self.movement not in MOVEMENTS:
            raise TournamentError(f"movement must be one of {', '.join(MOVEMENTS)}")

    def outcome(self, loser_score: int, target: int) -> str:
        """WIN, SKUNK or DOUBLE_SKUNK for a game the loser finished on `loser_score`."""
        double_line, skunk_line = skunk_lines(target)
        if self.double_skunk and loser_score < double_line:
            return DOUBLE_SKUNK
        return SKUNK if loser_score < skunk_line else WIN

    def points(self, outcome: str) -> int:
        """The winner's game points for an outcome (the loser gets 0)."""
        return {
            WIN: self.win_points,
            SKUNK: self.skunk_points,
            DOUBLE_SKUNK: self.double_skunk_points,
        }[outcome]


@dataclass(frozen=True)
class Player:
    id: int
    name: str


@dataclass(frozen=True)
class Table:
    """One game of a round: `players` are (seat 0 = blue, seat 1 = orange) player ids."""

    number: int
    players: tuple[int, int]


@dataclass(frozen=True)
class Round:
    """A round's tables; `bye` is the player sitting out (odd player counts), or None."""

    number: int
    tables: tuple[Table, ...]
    bye: int | None

    def table(self, number: int) -> Table:
        """The table with this number; TournamentError if the round has none."""
        for table in self.tables:
            if table.number == number:
                return table
        raise TournamentError(f"round {self.number} has no table {number}")


@dataclass(frozen=True)
class Result:
    """A finished game: the winner reached `target`; the loser stopped on `loser_score`."""

    round: int
    table: int
    winner: int
    loser: int
    loser_score: int
    target: int

    @property
    def margin(self) -> int:
        return self.target - self.loser_score


@dataclass(frozen=True)
class Correction:
    """An entry of the audit trail: who replaced which result (None: none) by what, and why.
    `when` is an ISO 8601 UTC time."""

    round: int
    table: int
    old: Result | None
    new: Result | None
    who: str
    when: str
    why: str


@dataclass(frozen=True)
class Standing:
    """One line of the standings. `rank` is shared by players equal on every key."""

    rank: int
    player: Player
    points: int = 0
    played: int = 0
    won: int = 0
    lost: int = 0
    skunks: int = 0  # games won with a skunk or double skunk
    double_skunks: int = 0
    byes: int = 0
    spread: int = 0

    def key(self) -> tuple[int, int, int, int]:
        """The order: game points, games won, skunks, spread (all higher first)."""
        return (self.points, self.won, self.skunks, self.spread)


def max_rounds(players: int, movement: str = CIRCLE) -> int:
    """How many rounds `movement` pairs `players` without a rematch.

    CIRCLE: n - 1 for an even n, n for an odd n (a round robin: everyone meets everyone, one
    bye each). ROTATION: ceil(n / 2): one side never moves, so its players never meet each
    other, and each meets the other side once."""
    if players < 2:
        return 0
    padded = players + players % 2
    return padded - 1 if movement == CIRCLE else padded // 2


def pair_round(
    player_ids: Sequence[int], round_no: int, movement: str = CIRCLE
) -> tuple[tuple[Table, ...], int | None]:
    """The tables and the bye of round `round_no` (1-based) for the players in their order.

    With an odd count a ghost joins; whoever meets it has the bye. The slots are the seats of
    n/2 tables: seat 0 of table i is slot i, seat 1 is slot n-1-i.

    - CIRCLE (the round robin's circle method): table 1's seat 0 never moves; everyone else
      moves one slot along the loop each round (one table along the seat-0 side, across at
      the end, back along the seat-1 side).
    - ROTATION (the clubs' one-side move): seat 0 stays at its table; the seat-1 side moves one
      table each round.

    Raises TournamentError past :func:`max_rounds` (a rematch would follow)."""
    n = len(player_ids)
    if n < 2:
        raise TournamentError("a round needs at least two players")
    if not 1 <= round_no <= max_rounds(n, movement):
        raise TournamentError(
            f"{n} players have {max_rounds(n, movement)} rounds without a rematch "
            f"({movement} movement); round {round_no} is past that"
        )
    slots: list[int | None] = list(player_ids) + ([None] if n % 2 else [])
    half = len(slots) // 2
    shift = round_no - 1
    if movement == CIRCLE:
        moving = slots[1:]
        k = shift % len(moving)
        slots = [slots[0]] + moving[len(moving) - k :] + moving[: len(moving) - k]
        pairs = [(slots[i], slots[len(slots) - 1 - i]) for i in range(half)]
    else:
        fixed, movers = slots[:half], slots[half:]
        pairs = [(fixed[i], movers[(i + shift) % half]) for i in range(half)]
    tables: list[Table] = []
    bye: int | None = None
    for i, (a, b) in enumerate(pairs):
        if a is None or b is None:
            bye = b if a is None else a
            continue
        # Alternate the colours so nobody is always blue.
        seats = (a, b) if (i + shift) % 2 == 0 else (b, a)
        tables.append(Table(len(tables) + 1, seats))
    return tuple(tables), bye


@dataclass
class Tournament:
    """One tournament in memory. Mutating methods validate first and change nothing when they
    raise TournamentError."""

    scoring: Scoring = field(default_factory=Scoring)
    players: dict[int, Player] = field(default_factory=dict)
    rounds: list[Round] = field(default_factory=list)
    results: dict[tuple[int, int], Result] = field(default_factory=dict)
    corrections: list[Correction] = field(default_factory=list)

    # --- players and rounds ------------------------------------------------------------------

    def check_new_player(self, name: str) -> str:
        """The cleaned name of a player who may register now; TournamentError otherwise."""
        name = " ".join(name.split())
        if not name or len(name) > MAX_NAME:
            raise TournamentError(f"a player's name is 1 to {MAX_NAME} characters")
        unsafe = unsafe_character(name)
        if unsafe is not None:
            # A direction override shows one name as another, an escape colours a terminal.
            raise TournamentError(
                f"a player's name may not hold {unsafe} (a control or formatting character)"
            )
        if any(p.name.casefold() == name.casefold() for p in self.players.values()):
            raise TournamentError(f"{name} is already registered")
        if self.rounds:
            raise TournamentError("the field is fixed once round 1 is paired")
        return name

    def register(self, name: str) -> Player:
        """Add a player (before round 1); ids are 1, 2, ... in registration order."""
        player = Player(max(self.players, default=0) + 1, self.check_new_player(name))
        self.players[player.id] = player
        return player

    def player(self, player_id: int) -> Player:
        """The player with this id; TournamentError if there is none."""
        try:
            return self.players[player_id]
        except KeyError:
            raise TournamentError(f"no player {player_id}") from None

    def next_round_pairing(self) -> Round:
        """The next round's pairing, without adding it (see :meth:`add_round`)."""
        tables, bye = pair_round(sorted(self.players), len(self.rounds) + 1, self.scoring.movement)
        return Round(len(self.rounds) + 1, tables, bye)

    def add_round(self, round_: Round) -> None:
        """Add a paired round (the next one in number)."""
        if round_.number != len(self.rounds) + 1:
            raise TournamentError(f"the next round is {len(self.rounds) + 1}")
        self.rounds.append(round_)

    def next_round(self) -> Round:
        """Pair the next round and add it."""
        round_ = self.next_round_pairing()
        self.add_round(round_)
        return round_

    def round(self, number: int) -> Round:
        """A paired round by number (from 1); TournamentError if it is not paired yet."""
        if not 1 <= number <= len(self.rounds):
            raise TournamentError(f"no round {number} (rounds paired: {len(self.rounds)})")
        return self.rounds[number - 1]

    # --- results -----------------------------------------------------------------------------

    def make_result(
        self, round_no: int, table_no: int, winner_seat: int, loser_score: int, target: int
    ) -> Result:
        """A checked result from a table's view: the seat that won, the loser's score."""
        table = self.round(round_no).table(table_no)
        if winner_seat not in (0, 1):
            raise TournamentError("the winner's seat is 0 (blue) or 1 (orange)")
        return self.check_result(
            Result(
                round_no,
                table_no,
                table.players[winner_seat],
                table.players[1 - winner_seat],
                loser_score,
                target,
            )
        )

    def check_result(self, result: Result) -> Result:
        """`result` if it fits its round and table; TournamentError otherwise."""
        table = self.round(result.round).table(result.table)
        if {result.winner, result.loser} != set(table.players) or result.winner == result.loser:
            raise TournamentError(
                f"round {result.round} table {result.table} is "
                f"{self.player(table.players[0]).name} against "
                f"{self.player(table.players[1]).name}"
            )
        if result.target not in TARGETS:
            raise TournamentError(f"the target is one of {TARGETS}, not {result.target}")
        if not 0 <= result.loser_score < result.target:
            raise TournamentError(f"the loser's score is 0..{result.target - 1}")
        return result

    def record(self, result: Result) -> None:
        """Store the result of a table that has none (a correction replaces one)."""
        self.check_result(result)
        key = (result.round, result.table)
        if key in self.results:
            raise TournamentError(
                f"round {result.round} table {result.table} already has a result: correct it"
            )
        self.results[key] = result

    def correct(
        self,
        round_no: int,
        table_no: int,
        new: Result | None,
        *,
        who: str,
        why: str,
        when: str,
    ) -> Correction:
        """Replace a table's result by `new` (None: strike it), keeping an audit entry."""
        self.round(round_no).table(table_no)
        if new is not None:
            self.check_result(new)
            if (new.round, new.table) != (round_no, table_no):
                raise TournamentError("a correction keeps the result's round and table")
        if not who.strip() or not why.strip():
            raise TournamentError("a correction says who made it and why")
        key = (round_no, table_no)
        correction = Correction(round_no, table_no, self.results.get(key), new, who, when, why)
        if new is None:
            self.results.pop(key, None)
        else:
            self.results[key] = new
        self.corrections.append(correction)
        return correction

    # --- standings ---------------------------------------------------------------------------

    def standings(self) -> list[Standing]:
        """Everyone, best first; equal keys share a rank (then by name, for reading)."""
        lines = {pid: Standing(0, player) for pid, player in self.players.items()}
        for result in self.results.values():
            outcome = self.scoring.outcome(result.loser_score, result.target)
            win, loss = lines[result.winner], lines[result.loser]
            lines[result.winner] = replace(
                win,
                points=win.points + self.scoring.points(outcome),
                played=win.played + 1,
                won=win.won + 1,
                skunks=win.skunks + (outcome != WIN),
                double_skunks=win.double_skunks + (outcome == DOUBLE_SKUNK),
                spread=win.spread + result.margin,
            )
            lines[result.loser] = replace(
                loss, played=loss.played + 1, lost=loss.lost + 1, spread=loss.spread - result.margin
            )
        for round_ in self.rounds:
            if round_.bye is not None:
                line = lines[round_.bye]
                lines[round_.bye] = replace(
                    line,
                    points=line.points + self.scoring.bye_points,
                    byes=line.byes + 1,
                    spread=line.spread + self.scoring.bye_spread,
                )
        ordered = sorted(
            lines.values(),
            key=lambda s: (tuple(-k for k in s.key()), s.player.name.casefold(), s.player.id),
        )
        ranked: list[Standing] = []
        for i, line in enumerate(ordered):
            tied = ranked and ranked[-1].key() == line.key()
            ranked.append(replace(line, rank=ranked[-1].rank if tied else i + 1))
        return ranked
