"""A tiny board for tests of the client and the API, played through cribboard.testing's
FakeTransport: pegs, pending counts, the dealer, new games, the brightness, the revision, and the
replies it remembers by id (docs/protocol.md, section 2), with a state event after each change.
Enough protocol for what sits on a transport; the board itself (its rules, its checks, its
memory across a power cut) is tested on the virtual board, the real firmware.

    tiny = TinyBoard()
    board = await Board.open_transport(tiny.transport)   # a new link on each (re)connect
    tiny.links[-1].drop()                                # the newest link lost
"""

from __future__ import annotations

from cribboard.testing import FakeTransport, Request

HELLO = {"proto": "1.4", "fw": "tiny", "board": "fake", "layout": "crib121"}


class TinyBoard:
    """A board's state and memory, kept across links; `links` are the transports made so far,
    `applied` the changes applied, in order (a change counts once however often it is sent)."""

    def __init__(self, *, proto: str = "1.4", chunk: int | None = None) -> None:
        self.proto = proto
        self.chunk = chunk
        self.links: list[FakeTransport] = []
        self.applied: list[bytes] = []
        self.remembered: dict[str, bytes] = {}
        self.rev = 0
        self.players = 2
        self.target = 121
        self.front = [0, 0, 0]
        self.back = [0, 0, 0]
        self.pending = [0, 0, 0]
        self.dealer = 0
        self.bright = 128

    def transport(self) -> FakeTransport:
        """A new link to this board (a client's transport factory)."""
        self.links.append(FakeTransport(self, name=f"fake{len(self.links)}", chunk=self.chunk))
        return self.links[-1]

    def state_fields(self) -> str:
        def each(values: list[int]) -> str:
            return ",".join(map(str, values[: self.players]))

        return (
            f"r={self.rev} t={self.target} n={self.players} d={self.dealer} w=-1 x=0 "
            f"f={each(self.front)} b={each(self.back)} g={each([0, 0, 0])} "
            f"q={each(self.pending)} u=0 x2=0"
        )

    def __call__(self, request: Request) -> list[bytes]:
        if request.id is not None and request.id in self.remembered:
            return [self.remembered[request.id]]  # answered again, applied once
        said = self.answer(request)
        if request.id is not None and said and request.verb not in ("hello", "ping", "st"):
            self.remembered[request.id] = said[0]
        return said

    def answer(self, request: Request) -> list[bytes]:
        verb, args = request.verb, [int(a) for a in request.args if a.lstrip("-").isdigit()]
        if verb == "hello":
            return [request.ok(**{**HELLO, "proto": self.proto, "caps": ""})]
        if verb == "ping":
            return [request.ok()]
        if verb == "st":
            return [request.ok(self.state_fields())]
        if verb == "bright":
            if args:
                self.bright = args[0]
                settings = f"bright={self.bright} budget=1500"
                return [request.ok(settings), f"! cfg {settings}".encode()]
            return [request.ok(bright=self.bright, budget=1500)]
        if verb in ("peg", "pend", "set", "deal") and args and args[0] >= self.players:
            return [request.err("bad_player", "no such player")]
        if verb == "peg":
            player, points = args[:2]
            self.back[player], self.front[player] = self.front[player], self.front[player] + points
            self.pending[player] = 0
        elif verb == "pend":
            self.pending[args[0]] = args[1]
        elif verb == "set":
            self.front[args[0]] = args[1]
        elif verb == "deal":
            self.dealer = args[0] if args else (self.dealer + 1) % self.players
        elif verb == "new":
            self.target, self.players = (args + [self.target, self.players][len(args) :])[:2]
            self.front, self.back, self.pending = [0, 0, 0], [0, 0, 0], [0, 0, 0]
        else:
            return [request.err("unknown", "not on this tiny board")]
        self.rev += 1
        self.applied.append(request.line)
        return [request.ok(r=self.rev, d=self.dealer), f"! st {self.state_fields()}".encode()]
