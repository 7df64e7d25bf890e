"""Two boards, one game: ``cribboard remote`` joins two boards far apart through an MQTT broker.

- :mod:`cribboard.link.topics`: the linked games' topic scheme (docs/mqtt.md, "Linked boards").
- :mod:`cribboard.link.moves`: moves, their payloads, and the merged game (one deterministic
  order over every side's moves).
- :mod:`cribboard.link.boardsync`: a board's changes as moves, and the requests that bring a
  board to the merged game.
- :mod:`cribboard.link.side`: one end of a linked game: its board, its log, the broker.
- :mod:`cribboard.link.cli`: ``cribboard remote``.
"""

from __future__ import annotations

from cribboard.errors import CribboardError


class LinkedGameError(CribboardError):
    """A linked game that cannot run as asked (a bad game name, a refused login, a bad state
    file). Not :class:`cribboard.errors.LinkError`, a board's connection lost."""
