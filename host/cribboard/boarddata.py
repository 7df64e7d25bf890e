"""What a board says, as Python values: the game it shows (`BoardState`, its `Match`), who may
change it (`Admission`), how it is doing (`Health`), its LED settings (`Settings`) and picture
(`Frame`), the finished games it remembers (`HistoryEntry`). Each is read from the protocol's
fields; `to_json()` gives the shape the bridge and `--json` print. The library's face is
`cribboard.api`, which offers them all.

Each is a NamedTuple: immutable, compared, hashed and printed by its fields, listed in
`_fields`, copied with a change by `_replace`. Not dataclasses: importing `dataclasses` (with
`inspect` and `ast`) and setting the classes up cost a one-shot command such as `cribboard peg`
about a fifth of its time."""

from __future__ import annotations

from typing import Any, NamedTuple

from cribboard import wire
from cribboard.errors import CribboardError
from cribcore.games import wins_needed
from cribcore.layout import HOLES

MATCH_KINDS = ("best_of", "first_to")
"""A match's kind by its number on the wire (`mk`): best of N games, or first to N wins."""

MATCH_FIELDS = ("match_length", "match_kind", "match_game", "match_number")
"""BoardState's fields of its match: `match` (a Match) in its JSON."""


class Match(NamedTuple):
    """A match of games on a board (protocol 1.4): best of `length` games or first to `length`
    wins (`kind`, MATCH_KINDS), its `game` on the board now (1..), the board's `number` for it;
    `needed`: the games a player must win; `winner`: the player who has won it (None: not
    decided yet). A skunk counts two games towards it when the board's `skunk_double` is on."""

    kind: str
    length: int
    game: int
    number: int
    needed: int
    winner: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "length": self.length,
            "game": self.game,
            "number": self.number,
            "needed": self.needed,
            "winner": self.winner,
        }


class BoardState(NamedTuple):
    """The game a board shows. Lists have one entry per player (or partnership)."""

    rev: int
    target: int
    players: int
    dealer: int
    winner: int | None
    result: str  # playing, won, skunk, double_skunk
    front: list[int]
    back: list[int]
    games: list[int]
    pending: list[int]
    undo: int
    skunk_double: bool
    game: int | None = None
    """The board's number for the game (protocol 1.4; None from an older board)."""
    match_length: int = 0
    """Match play (protocol 1.4): the match's length, 0 without one (see `match`)."""
    match_kind: int = 0
    match_game: int = 0
    match_number: int = 0

    @property
    def match(self) -> Match | None:
        """The match the board plays, or None."""
        if not self.match_length:
            return None
        needed = wins_needed(self.match_kind, self.match_length)
        winner = next((p for p, g in enumerate(self.games) if g >= needed), None)
        return Match(
            MATCH_KINDS[self.match_kind] if 0 <= self.match_kind < len(MATCH_KINDS) else "?",
            self.match_length,
            self.match_game,
            self.match_number,
            needed,
            winner,
        )

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> BoardState:
        """Build from the protocol's state fields (raises CribboardError if some are missing)."""
        return cls._from_values(wire.decode_state(fields), fields)

    def updated(self, fields: dict[str, str]) -> BoardState:
        """This state with a state event's fields applied: the protocol's events may be partial,
        and a field they lack stays as it is."""
        return self._from_values({**self._values(), **wire.decode_state(fields)}, fields)

    @classmethod
    def _from_values(cls, s: dict[str, Any], fields: dict[str, str]) -> BoardState:
        try:
            return cls(
                rev=s["rev"],
                target=s["target"],
                players=s["players"],
                dealer=s["dealer"],
                winner=None if s["winner"] < 0 else s["winner"],
                result=wire.RESULT_NAMES[s["result"]],
                front=s["front"],
                back=s["back"],
                games=s["games"],
                pending=s["pending"],
                undo=s["undo"],
                skunk_double=bool(s["skunk_double"]),
                game=s.get("game"),
                match_length=s.get("match", 0),
                match_kind=s.get("match_kind", 0),
                match_game=s.get("match_game", 0),
                match_number=s.get("match_number", 0),
            )
        except (KeyError, IndexError) as err:
            raise CribboardError(f"incomplete state from the board: {fields}") from err

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BoardState:
        """The state `to_json()` gave (a program keeps one in its file): its match from the
        `match` object; one kept before protocol 1.4, without them, has no game number and no
        match. KeyError or ValueError when it is not such a state."""
        names = set(cls._fields) - set(MATCH_FIELDS)
        values = {name: value for name, value in obj.items() if name in names}
        match = obj.get("match")
        if match is not None:
            values.update(
                match_length=int(match["length"]),
                match_kind=MATCH_KINDS.index(match["kind"]),
                match_game=int(match["game"]),
                match_number=int(match["number"]),
            )
        return cls(**values)

    def _values(self) -> dict[str, Any]:
        """As `wire.decode_state` gives them (the inverse of _from_values)."""
        values = {
            **self.to_json(),
            "winner": -1 if self.winner is None else self.winner,
            "result": wire.RESULT_NAMES.index(self.result),
            "skunk_double": int(self.skunk_double),
            "match": self.match_length,
            "match_kind": self.match_kind,
            "match_game": self.match_game,
            "match_number": self.match_number,
        }
        if self.game is None:
            del values["game"]
        return values

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON output."""
        return {
            "rev": self.rev,
            "target": self.target,
            "players": self.players,
            "dealer": self.dealer,
            "winner": self.winner,
            "result": self.result,
            "front": self.front,
            "back": self.back,
            "games": self.games,
            "pending": self.pending,
            "undo": self.undo,
            "skunk_double": self.skunk_double,
            "game": self.game,
            "match": None if self.match is None else self.match.to_json(),
        }


class HistoryEntry(NamedTuple):
    """A finished game as the board's own history keeps it (protocol 1.4, `hist`): the board's
    `game` number, when it `ended` (seconds of the board's life: its time switched on), its
    target, players, winner, result, the skunk rule then, each player's final front and back
    pegs, the games-won tally as it was left, and its match (None: not a game of a match) and
    place in it (`match_game`)."""

    game: int
    ended: int
    target: int
    players: int
    winner: int
    result: str
    skunk_double: bool
    front: list[int]
    back: list[int]
    games: list[int]
    match: Match | None
    match_game: int

    @classmethod
    def from_word(cls, word: str) -> HistoryEntry:
        """From an entry of a `hist` reply (CribboardError for a malformed one)."""
        try:
            e = wire.decode_history_entry(word)
            n = e["players"]
            match = None
            if e["match"]:
                needed = wins_needed(e["match_kind"], e["match"])
                winner = next((p for p, g in enumerate(e["games"]) if g >= needed), None)
                match = Match(
                    MATCH_KINDS[e["match_kind"]],
                    e["match"],
                    e["match_game"],
                    e["match_number"],
                    needed,
                    winner,
                )
            return cls(
                e["game"],
                e["ended"],
                e["target"],
                n,
                e["winner"],
                wire.RESULT_NAMES[e["result"]],
                bool(e["skunk_double"]),
                e["front"][:n],
                e["back"][:n],
                e["games"][:n],
                match,
                e["match_game"],
            )
        except (ValueError, KeyError, IndexError) as err:
            raise CribboardError(f"a history entry the board sent is not one: {word!r}") from err

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON output."""
        return {
            "game": self.game,
            "ended": self.ended,
            "target": self.target,
            "players": self.players,
            "winner": self.winner,
            "result": self.result,
            "skunk_double": self.skunk_double,
            "front": self.front,
            "back": self.back,
            "games": self.games,
            "match": None if self.match is None else self.match.to_json(),
        }


class History(NamedTuple):
    """A page of the board's history, or all of it (Board.history): its `entries`, oldest
    first; how many it `kept` and keeps at `most`; the board's life `at` the reading (seconds
    switched on: with an entry's `ended`, how long ago it was won, power cuts aside)."""

    entries: list[HistoryEntry]
    kept: int
    most: int
    at: int


class Admission(NamedTuple):
    """Who may change the board (docs/protocol.md, section 11): `open` mode lets every link;
    `you`: this link is USB or an admitted Bluetooth device; `admitted`: devices remembered."""

    open: bool
    you: bool
    admitted: int

    @property
    def may_change(self) -> bool:
        return self.open or self.you

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> Admission:
        return cls(
            fields.get("open") == "1", fields.get("you") == "1", int(fields.get("admitted", "0"))
        )


class Health(NamedTuple):
    """How a board is doing (the `health` verb, protocol 1.2): seconds up, free heap, game saves
    written to its flash and saves that failed (with the last one's error: ``OSError:28``),
    failed saves of the admitted devices, lines lost on Bluetooth, lines that were not requests.
    A save that failed means the game is not being kept through a power cut."""

    uptime: int
    free_heap: int
    saves: int
    save_errors: int
    last_save_error: str | None
    admission_errors: int
    lost_lines: int
    bad_lines: int
    wifi: str | None = None
    """A board that serves its own page (protocol 1.3): ``sta`` on a network, ``ap`` its own
    access point, ``join`` joining, ``host`` the virtual board (the host's network)."""
    page: str | None = None
    """The page's address (``http://192.168.1.23/``), once the board has one."""
    page_name: str | None = None
    """The board's name on the network (``cribboard``: ``http://cribboard.local/``)."""
    page_sockets: int = 0
    """Pages connected now."""

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> Health:
        def number(key: str) -> int:
            return int(fields.get(key, "0"))

        return cls(
            number("up"),
            number("heap"),
            number("saves"),
            number("serr"),
            fields.get("slast"),
            number("aerr"),
            number("lost"),
            number("bad"),
            fields.get("wifi"),
            fields.get("web"),
            fields.get("name"),
            number("wconn"),
        )

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON output."""
        return {
            "uptime": self.uptime,
            "free_heap": self.free_heap,
            "saves": self.saves,
            "save_errors": self.save_errors,
            "last_save_error": self.last_save_error,
            "admission_errors": self.admission_errors,
            "lost_lines": self.lost_lines,
            "bad_lines": self.bad_lines,
        }


class Settings(NamedTuple):
    """The LED settings: `brightness` (0..255, before the current limiter) and `budget`, the
    most current (mA) the limiter lets the LEDs draw. A `! cfg` event carries them."""

    brightness: int
    budget: int

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> Settings:
        """From a `bright`/`budget` reply or a `cfg` event (raises CribboardError if some are
        missing)."""
        try:
            return cls(int(fields["bright"]), int(fields["budget"]))
        except (KeyError, ValueError) as err:
            raise CribboardError(f"incomplete settings from the board: {fields}") from err


class Frame(NamedTuple):
    """The LEDs as the board drew them: `rgb` has 3 bytes per hole in hole order (see
    cribcore.layout), before brightness; `scale` (of 256) is the brightness and current limiter
    applied on the strip, `milliamps` the estimated draw."""

    rgb: bytes
    scale: int
    milliamps: int

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> Frame:
        """A `frame` reply's fields; CribboardError when it is not one frame of every hole."""
        rgb = wire.decode_frame(fields.get("rgb", ""))
        if len(rgb) != 3 * HOLES:
            raise CribboardError(f"frame has {len(rgb) // 3} holes, expected {HOLES}")
        return cls(rgb, int(fields.get("scale", 0)), int(fields.get("ma", 0)))

    def hole(self, hole: int) -> tuple[int, int, int]:
        i = 3 * hole
        return (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])
