"""cribboard: the host side of the LED cribbage board."""

__version__ = "0.1.0"
