"""The protocol client's parts that do no I/O, shared by the asyncio client (cribboard.client)
and the command line's one-shot path (cribboard.oneshot): the board's hello, request ids, the lines a link delivers, what
an acknowledged change leaves in the journal, and the words of a refused player. Importing it
loads no asyncio."""

from __future__ import annotations

import os

from cribboard import wire
from cribboard.errors import BoardRejected, ProtocolMismatch
from cribboard.journal import Change, Journal, is_change
from cribboard.logsetup import QuietLog
from cribboard.names import game_players
from cribcore import protocol

log = QuietLog("cribboard.client")  # (its lines are the client's, on either path)

SUPPORTED_MAJOR = protocol.PROTOCOL_MAJOR
ID_SPACE = 36**6  # ids are base-36, at most 6 characters: short enough for 20-byte packets
HELLO_ATTEMPT = 0.5
"""Seconds one `hello` waits before it is asked again (a board just reset may swallow one)."""


class LineReader:
    """What a link delivers, in pieces of any size (a Bluetooth write is 20 bytes), as the
    board's lines: each whole line decoded, anything that is not protocol (REPL output, a
    traceback, a boot banner) dropped."""

    __slots__ = ("_buffer", "_name")

    def __init__(self, name: str) -> None:
        self._buffer = bytearray()
        self._name = name

    def feed(self, data: bytes) -> list[wire.Line]:
        """The lines `data` completes, in order."""
        self._buffer += data
        lines = []
        while (end := self._buffer.find(b"\n")) >= 0:
            raw = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            try:
                lines.append(wire.decode_line(raw))
            except (ValueError, UnicodeDecodeError):
                log.debug("ignored line from %s: %r", self._name, raw)
                continue
            log.debug("%s: received %r", self._name, raw)
        return lines


class Hello:
    """What a board says about itself in reply to `hello`: its protocol version, firmware
    version, board and layout names, capabilities, and the reply's fields. Compared and shown
    by these. (A plain class, not a dataclass: a one-shot command does not import
    `dataclasses`, docs/architecture.md.)"""

    __slots__ = ("protocol", "firmware", "board", "layout", "capabilities", "fields")

    def __init__(
        self,
        protocol: tuple[int, int],
        firmware: str,
        board: str,
        layout: str,
        capabilities: list[str],
        fields: dict[str, str] | None = None,
    ) -> None:
        self.protocol = protocol
        self.firmware = firmware
        self.board = board
        self.layout = layout
        self.capabilities = capabilities
        self.fields: dict[str, str] = {} if fields is None else fields

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hello):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # (mutable, as the dataclass it was)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Hello({shown})"

    @property
    def uid(self) -> str | None:
        """The board's own identity (protocol 1.4): the hex of its `machine.unique_id()`, the
        same on every link; None from an older board, or one that cannot read it."""
        return self.fields.get("uid") or None

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> Hello:
        try:
            major, _, minor = fields["proto"].partition(".")
            version = (int(major), int(minor or 0))
        except (KeyError, ValueError) as err:
            raise ProtocolMismatch("the board's hello has no protocol version") from err
        return cls(
            version,
            fields.get("fw", "?"),
            fields.get("board", "?"),
            fields.get("layout", "?"),
            fields.get("caps", "").split(","),
            fields,
        )


def greeted(fields: dict[str, str]) -> Hello:
    """The board's hello reply, checked: ProtocolMismatch when it speaks another major version."""
    hello = Hello.from_fields(fields)
    if hello.protocol[0] != SUPPORTED_MAJOR:
        raise ProtocolMismatch(
            f"board speaks protocol {hello.protocol[0]}.{hello.protocol[1]}, this host "
            f"speaks {SUPPORTED_MAJOR}.x: update the firmware or the host package"
        )
    return hello


def base36(n: int) -> str:
    """`n` in base 36 (lower case): how request ids are written."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


class RequestIds:
    """A client's request ids: from a random start, so that two processes (or one run again)
    never reuse each other's recent ids, which the board would answer without applying."""

    def __init__(self) -> None:
        self._next = int.from_bytes(os.urandom(8), "big") % ID_SPACE  # (no `random`: 1 ms)

    def new(self) -> str:
        self._next = (self._next + 1) % ID_SPACE
        return base36(self._next)


def acknowledged_change(request_id: str, verb: str, args: tuple[int | str, ...]) -> Change | None:
    """What the journal keeps of a request the board answered `ok`: the change, or None for a
    request that changed nothing the board saves (a peg's condition is left out: it held)."""
    if not is_change(verb, args):
        return None
    return Change(request_id, verb, args[:2] if verb == "peg" else args)


def player_refused(err: BoardRejected, players: int) -> BoardRejected:
    """A `bad_player` refusal, saying the players the game has."""
    return BoardRejected(err.code, f"{err.text}: this game has players {game_players(players)}")


def new_game_args(target: int | None, players: int | None) -> tuple[int, ...]:
    """The arguments of `new`: none keeps both settings; a target of 0 keeps the target."""
    if target is None and players is None:
        return ()
    return (target or 0,) if players is None else (target or 0, players)


class PutBack:
    """Putting back what a board's power cut took (docs/protocol.md, section 7), the I/O left
    to the client: the board restarted and shows `fields` and `settings` (its `bright`
    reply); `changes` are this host's acknowledged changes it lost (`unrestored`: those a
    put-back cut short, else the journal's), to send again in order with their ids, each reply
    told to `answered`. `unknown`: the board came back at a game this host never saw (the
    journal starts again from it; nothing is put back)."""

    def __init__(
        self,
        name: str,
        journal: Journal,
        fields: dict[str, str],
        settings: dict[str, str],
        unrestored: list[Change],
    ) -> None:
        self._name = name
        lost = unrestored or journal.lost(fields, settings)
        self.unknown = lost is None and len(journal) > 0
        if lost is None:
            if self.unknown:
                log.info("%s: the board restarted at a game this host never saw", name)
            journal.restart(fields, settings)
        self.changes = list(lost or ())
        self.back = self.refused = 0

    def answered(self, change: Change, reply: wire.Line) -> None:
        """The board's reply to a change sent again."""
        if reply.kind == "ok":
            self.back += 1
        else:
            self.refused += 1
            log.info("%s: %s %s not put back: %s", self._name, change.verb, change.args, reply.text)

    def done(self) -> dict[str, str]:
        """Every change sent again: the counts, as the client's `restored` event says them."""
        lost = len(self.changes)
        log.info("%s: a power cut took %d changes; %d put back", self._name, lost, self.back)
        return {"lost": str(lost), "back": str(self.back), "refused": str(self.refused)}
