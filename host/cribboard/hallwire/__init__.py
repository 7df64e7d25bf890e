"""The club hall's wire: what crosses its broker, shared by the director (:mod:`cribboard.hall`)
and every table (the bridge's, :mod:`cribdev.simtable`'s), below them both. A board's own table
client speaks the same (firmware/cribfw/hall.py, on :mod:`cribcore.hall`).

- :mod:`cribboard.hallwire.topics`: the versioned topic scheme (docs/mqtt.md), every name once.
- :mod:`cribboard.hallwire.messages`: the payloads on those topics, encoded and decoded.
- :mod:`cribboard.hallwire.tableclient`: the MQTT side of a table.
"""
