"""What a host saw its board acknowledge, so that it can put back what a power cut took
(docs/protocol.md, section 7).

A board saves its game about a second after a change (at most five after the first unsaved
one); a power cut loses the changes since its last save. A host knows, in the order its board
told it, each state the board pushed and each of its own changes the board acknowledged: the
lines of one link arrive in the board's order, a reply before the event of its change, so a
change acknowledged before a state is in that state. After a restart the board shows the last
save that completed, one of the states this host saw; the changes this host made and saw
acknowledged after the last such state are what the cut took. The client sends them again, in
order, with their own ids: the board applies each one once (an id it brought back with the game
is answered without being applied again). Never a guess: when the board comes back at a state
this host never saw, nothing is put back.

The states are compared on what the board saves: the state fields but the revision and the
pending counts, and the LED settings when both sides know them.
"""

from __future__ import annotations

SAVED_FIELDS = ("t", "n", "d", "w", "x", "f", "b", "g", "u", "x2")
"""The state fields the board keeps through a power cut (not `r`, not the pending `q`)."""
MATCH_FIELDS = ("gn", "m", "mk", "mg", "mn")
"""The saved fields a board of protocol 1.4 adds (its game number and the match); an older
board has none of them."""

CHANGING_VERBS = frozenset(
    {"peg", "set", "undo", "new", "deal", "games", "bright", "budget", "match"}
)
"""Verbs whose change the board saves: a host puts these back (with arguments: `games`,
`bright`, `budget` and `match` without them only read)."""
_READ_WITHOUT_ARGS = ("games", "bright", "budget", "match")

Settings = tuple[str, str]  # brightness, budget, as the board writes them


class Change:
    """A change this host made and saw acknowledged: its request id, verb and arguments (a
    condition it carried left out: it held when the board applied it)."""

    __slots__ = ("request_id", "verb", "args")

    def __init__(self, request_id: str, verb: str, args: tuple[int | str, ...]) -> None:
        self.request_id = request_id
        self.verb = verb
        self.args = args

    def __repr__(self) -> str:
        return f"Change({self.request_id!r}, {self.verb!r}, {self.args!r})"


class _State:
    __slots__ = ("game", "settings")

    def __init__(self, game: tuple[str, ...], settings: Settings | None) -> None:
        self.game = game
        self.settings = settings


def saved_part(fields: dict[str, str]) -> tuple[str, ...] | None:
    """The saved fields of a whole state (an `st` reply or event), None when some are missing."""
    try:
        base = tuple(fields[key] for key in SAVED_FIELDS)
    except KeyError:
        return None
    return base + tuple(fields.get(key, "") for key in MATCH_FIELDS)


def is_change(verb: str, args: tuple[int | str, ...]) -> bool:
    """Whether a request (acknowledged `ok`) changed what the board saves, or may have."""
    return verb in CHANGING_VERBS and (bool(args) or verb not in _READ_WITHOUT_ARGS)


class Journal:
    """The states a board pushed and this host's acknowledged changes, in the board's order;
    at most `size` entries (the oldest go: then a state before them is never matched)."""

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._entries: list[_State | Change] = []
        self._settings: Settings | None = None
        self._game: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def state(self, fields: dict[str, str]) -> None:
        """The board showed this whole state (an `st` event or reply)."""
        game = saved_part(fields)
        if game is not None and game != self._game:
            self._game = game
            self._add(_State(game, self._settings))

    def settings(self, fields: dict[str, str]) -> None:
        """The board's LED settings (a `! cfg` event, a `bright` reply)."""
        if "bright" in fields and "budget" in fields:
            settings = (fields["bright"], fields["budget"])
            if settings != self._settings:
                self._settings = settings
                if self._game is not None:
                    self._add(_State(self._game, settings))

    def acknowledged(self, change: Change) -> None:
        """The board answered `ok` to this host's change."""
        self._add(change)

    def _add(self, entry: _State | Change) -> None:
        self._entries.append(entry)
        if len(self._entries) > self._size:
            del self._entries[: len(self._entries) - self._size]

    def lost(self, fields: dict[str, str], settings: dict[str, str]) -> list[Change] | None:
        """The board restarted and shows this state and these settings: this host's acknowledged
        changes after the last state it saw equal to them, oldest first (the journal forgets
        them: put back, they are acknowledged again). None when it never saw that state."""
        game = saved_part(fields)
        shown = (settings["bright"], settings["budget"]) if "bright" in settings else None
        at = len(self._entries) - 1
        while at >= 0:
            entry = self._entries[at]
            if (
                isinstance(entry, _State)
                and entry.game == game
                and (entry.settings is None or shown is None or entry.settings == shown)
            ):
                break
            at -= 1
        if at < 0:
            return None
        lost = [e for e in self._entries[at + 1 :] if isinstance(e, Change)]
        del self._entries[at + 1 :]
        self._game = game
        self._settings = shown if shown is not None else self._settings
        return lost

    def restart(self, fields: dict[str, str], settings: dict[str, str]) -> None:
        """Start again from this state (a board whose state this host could not place)."""
        self._entries.clear()
        self._game = None
        self._settings = None
        self.settings(settings)
        self.state(fields)
