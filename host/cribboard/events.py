"""What a board pushes, as typed events: the shape `Board.events()`, `Board.subscribe()`,
`cribboard watch --json` and the bridge's WebSocket share (docs/bridge.md, "The WebSocket").

Each event has a `type` (the bridge's word) and `to_json()`, its message as the bridge sends it
without the board's id. The protocol's own lines (`! st r=4 f=12,7 ...`, docs/protocol.md
section 5) are read here once, by `EventReader`; nothing above this module sees them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from cribboard import wire
from cribboard.boarddata import Admission, BoardState, Settings
from cribboard.client import RESTORED
from cribboard.errors import CribboardError


@dataclass(frozen=True)
class StateEvent:
    """The game on the board changed, whatever changed it (any program, a button, a restart), or
    was read again after a reconnect: the whole state. ``{"type": "state", "state": {...}}``"""

    state: BoardState
    line: wire.Line | None = field(default=None, compare=False, repr=False)
    """The protocol line it was read from (as the client rebuilt it: a brief peg is a whole
    ``st``), for a program that prints the protocol."""
    type: ClassVar[str] = "state"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "state": self.state.to_json()}


@dataclass(frozen=True)
class SettingsEvent:
    """The LED brightness or current budget was set. ``{"type": "cfg", "bright", "budget"}``"""

    settings: Settings
    line: wire.Line | None = field(default=None, compare=False, repr=False)
    type: ClassVar[str] = "cfg"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "bright": self.settings.brightness,
            "budget": self.settings.budget,
        }


@dataclass(frozen=True)
class ButtonEvent:
    """A button on the board was pressed: `name` ``A+ A- B+ B- C+ C- deal``, `action` ``tap``
    or ``hold``; what it did comes as a StateEvent. ``{"type": "button", "name", "action"}``"""

    name: str
    action: str
    line: wire.Line | None = field(default=None, compare=False, repr=False)
    type: ClassVar[str] = "button"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "action": self.action}


@dataclass(frozen=True)
class HelloEvent:
    """The board (re)started; `fields` are its hello's (``fw``, ``board``, ``proto``, ...). Its
    state follows as a StateEvent. ``{"type": "hello", "fields": {...}}``"""

    fields: dict[str, str]
    line: wire.Line | None = field(default=None, compare=False, repr=False)
    type: ClassVar[str] = "hello"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "fields": dict(self.fields)}


@dataclass(frozen=True)
class AdmitEvent:
    """Who may change the board over Bluetooth changed (a device admitted, open mode switched,
    the admitted forgotten). ``{"type": "admit", "open", "you", "admitted"}``"""

    admission: Admission
    line: wire.Line | None = field(default=None, compare=False, repr=False)
    type: ClassVar[str] = "admit"

    def to_json(self) -> dict[str, Any]:
        admission = self.admission
        return {
            "type": self.type,
            "open": admission.open,
            "you": admission.you,
            "admitted": admission.admitted,
        }


LINK_STATES = ("lost", "back", "gone")
"""A LinkEvent's states: the link dropped (reconnecting), came back, or was given up."""


@dataclass(frozen=True)
class LinkEvent:
    """The link to the board (not the board) changed: `state` ``lost`` (reconnecting), ``back``
    (a StateEvent follows), ``gone`` (given up: no more events). ``{"type": "link", "state"}``"""

    state: str
    line: wire.Line | None = field(default=None, compare=False, repr=False)
    type: ClassVar[str] = "link"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "state": self.state}


@dataclass(frozen=True)
class RestoredEvent:
    """The board came back from a power cut older than this program saw it, and the library put
    back the changes this program had made and seen acknowledged (cribboard.journal). `fields`:
    ``lost`` (changes the board came back without), ``back`` (put back), ``refused``; or
    ``unknown`` when it came back at a game this program never saw (nothing put back).
    ``{"type": "restored", "fields": {...}}``"""

    fields: dict[str, str]
    line: wire.Line | None = field(default=None, compare=False, repr=False)
    type: ClassVar[str] = "restored"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "fields": dict(self.fields)}


@dataclass(frozen=True)
class OtherEvent:
    """An event this host does not know (a newer board): its protocol name and fields.
    ``{"type": "event", "name", "fields"}``"""

    name: str
    fields: dict[str, str]
    line: wire.Line | None = field(default=None, compare=False, repr=False)
    type: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "fields": dict(self.fields)}


BoardEvent = (
    StateEvent
    | SettingsEvent
    | ButtonEvent
    | HelloEvent
    | AdmitEvent
    | LinkEvent
    | RestoredEvent
    | OtherEvent
)
"""Any event a board pushes; tell them apart with isinstance() or by `type`."""


class EventReader:
    """Reads the protocol's event lines into typed events, one subscriber's worth: it keeps the
    last whole state, so that a partial ``st`` is merged over it (an ``st`` before the first
    whole one, or a line that does not read, gives no event)."""

    def __init__(self) -> None:
        self.last: BoardState | None = None

    def read(self, line: wire.Line) -> BoardEvent | None:
        name, fields = line.name, line.fields
        try:
            if name == "st":
                self.last = (
                    BoardState.from_fields(fields)
                    if self.last is None
                    else self.last.updated(fields)
                )
                return StateEvent(self.last, line)
            if name == "cfg":
                return SettingsEvent(Settings.from_fields(fields), line)
            if name == "btn":
                return ButtonEvent(fields.get("n", ""), fields.get("a", ""), line)
            if name == "hello":
                self.last = None  # a restarted board counts its revisions from 0 again
                return HelloEvent(dict(fields), line)
            if name == "admit":
                return AdmitEvent(Admission.from_fields(fields), line)
            if name == "link":
                return LinkEvent(fields.get("state", ""), line)
            if name == RESTORED:
                return RestoredEvent(dict(fields), line)
        except (CribboardError, ValueError):
            return None
        return OtherEvent(name, dict(fields), line)
