"""cribboard: the host side of the LED cribbage board."""

from cribboard.version import VERSION as __version__

__all__ = ["__version__"]
