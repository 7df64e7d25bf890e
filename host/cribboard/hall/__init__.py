"""The club hall: many boards, one MQTT broker, a tournament director.

- :mod:`cribboard.hall.topics`: the versioned topic scheme (docs/mqtt.md), every name once.
- :mod:`cribboard.hall.messages`: the payloads on those topics, encoded and decoded.
- :mod:`cribboard.hall.wins`: what a table's board state says about its game's result.
- :mod:`cribboard.hall.broker`: a private Eclipse Mosquitto with per-table credentials and an ACL.
- :mod:`cribboard.hall.tournament`: players, pairings, results, standings (pure logic).
- :mod:`cribboard.hall.store`: the tournament in one SQLite file, and its CSV export.
- :mod:`cribboard.hall.director`: the tournament director: results, rounds, commands, standings.
- :mod:`cribboard.hall.view`, :mod:`cribboard.hall.page`: the projector page and what it shows.
- :mod:`cribboard.hall.control`: how the command line reaches a running director.
- :mod:`cribboard.hall.lifecycle`: one director a hall (a lock), its broker watched and restarted.
- :mod:`cribboard.hall.cli`: ``cribboard hall ...``.
- :mod:`cribboard.hall.tableclient`: the MQTT side of a table, for the bridge and the simulated
  tables alike.
- (beside the package, never shipped) :mod:`cribdev.simtable`: simulated tables for tests and
  benchmarks.
"""

from __future__ import annotations

from cribboard.errors import CribboardError


class HallError(CribboardError):
    """Root of the club hall's errors: a clear message, nothing half done."""
