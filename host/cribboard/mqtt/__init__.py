"""The MQTT plumbing the hall, its tables and the remote games share, below them all.

- :mod:`cribboard.mqtt.address`: a broker's URL and user, made into an aiomqtt client; why a
  broker refused one.
- :mod:`cribboard.mqtt.names`: what may name a hall or a remote game in a topic.
- :mod:`cribboard.mqtt.roots`: where the remote games' topics start on a broker, and their user,
  which a hall's private broker lets in.
"""

from __future__ import annotations

from cribboard.errors import CribboardError


class AddressError(CribboardError):
    """A broker's address, password or CA file that cannot be used: one line, nothing tried."""
