"""Two boards, one game: ``cribboard remote`` joins two boards far apart through an MQTT broker.

- :mod:`cribboard.remote.topics`: the remote games' topic scheme (docs/mqtt.md, "Remote games").
- :mod:`cribboard.remote.moves`: moves, their payloads, and the merged game (one deterministic
  order over every side's moves).
- :mod:`cribboard.remote.boardsync`: a board's changes as moves, and the requests that bring a
  board to the merged game.
- :mod:`cribboard.remote.end`: one end of a remote game: its board, its log, the broker.
- :mod:`cribboard.remote.cli`: ``cribboard remote``.
"""

from __future__ import annotations

from cribboard.errors import CribboardError


class RemoteGameError(CribboardError):
    """A remote game that cannot run as asked (a bad game name, a refused login, a bad state
    file). Not :class:`cribboard.errors.LinkError`, a board's connection lost."""
