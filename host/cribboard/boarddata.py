"""What a board says, as Python values: the game it shows (`BoardState`), who may change it
(`Admission`), how it is doing (`Health`), its LED settings (`Settings`) and picture (`Frame`).
Each is read from the protocol's fields; `to_json()` gives the shape the bridge and `--json`
print. The library's face is `cribboard.api`, which offers them all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cribboard import wire
from cribboard.errors import CribboardError


@dataclass(frozen=True)
class BoardState:
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
            )
        except (KeyError, IndexError) as err:
            raise CribboardError(f"incomplete state from the board: {fields}") from err

    def _values(self) -> dict[str, Any]:
        """As `wire.decode_state` gives them (the inverse of _from_values)."""
        return {
            **self.to_json(),
            "winner": -1 if self.winner is None else self.winner,
            "result": wire.RESULT_NAMES.index(self.result),
            "skunk_double": int(self.skunk_double),
        }

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
        }


@dataclass(frozen=True)
class Admission:
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


@dataclass(frozen=True)
class Health:
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


@dataclass(frozen=True)
class Settings:
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


@dataclass(frozen=True)
class Frame:
    """The LEDs as the board drew them: `rgb` has 3 bytes per hole in hole order (see
    cribcore.layout), before brightness; `scale` (of 256) is the brightness and current limiter
    applied on the strip, `milliamps` the estimated draw."""

    rgb: bytes
    scale: int
    milliamps: int

    def hole(self, hole: int) -> tuple[int, int, int]:
        i = 3 * hole
        return (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])
