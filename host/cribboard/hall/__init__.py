"""The club hall: many boards, one MQTT broker, a tournament director.

What the director and every table share (the topics, the payloads, a table's client) is
:mod:`cribboard.hallwire`; the tournament's pure logic is :mod:`cribboard.tournament`; a hall's
errors are :class:`cribboard.errors.HallError`.

- :mod:`cribboard.hall.wins`: what a table's board state says about its game's result.
- :mod:`cribboard.hall.broker`: a private Eclipse Mosquitto with per-table credentials and an ACL.
- :mod:`cribboard.hall.certs`: the hall's own CA and its broker's certificate.
- :mod:`cribboard.hall.store`: the tournament in one SQLite file, and its CSV export.
- :mod:`cribboard.hall.director`: the tournament director: results, rounds, commands, standings.
- :mod:`cribboard.hall.view`, :mod:`cribboard.hall.page`: the projector page and what it shows.
- :mod:`cribboard.hall.control`: how the command line reaches a running director.
- :mod:`cribboard.hall.lifecycle`: one director a hall (a lock), its broker watched and restarted.
- :mod:`cribboard.hall.tablesetup`: a board's configuration as a table (``cribboard deploy
  --hall``), checked before anything is copied.
- :mod:`cribboard.hall.cli`: ``cribboard hall ...``, the command rows alone (read for every
  command line); :mod:`cribboard.hall.home`: the hall's directory, its files and settings.
- :mod:`cribboard.hall.supervisor`: the process ``hall start`` runs (signals, the broker started
  or taken up, restarts, the stop); :mod:`cribboard.hall.brokersetup`: its private broker made
  ready and the tables told how to connect.
- :mod:`cribboard.hall.pageonly`: ``hall page``, the projector page alone;
  :mod:`cribboard.hall.options`: what the options of ``start`` and ``page`` share mean.
- :mod:`cribboard.hall.actions`: the commands a running director answers (without one, the
  store); :mod:`cribboard.hall.readout`: ``players list`` and ``export``, the store read out;
  :mod:`cribboard.hall.reports`: their answers as text for the terminal.
- (beside the package, never shipped) :mod:`cribdev.simtable`: simulated tables for tests and
  benchmarks.
"""
