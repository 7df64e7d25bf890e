"""cribboard: the host side of the LED cribbage board."""

import sys

# The host's codec (cribboard.wire) also runs on MicroPython in the core tests, which have no
# use for the version and no means to read it (cribboard.version reads the firmware's file).
if sys.implementation.name != "micropython":
    from cribboard.version import VERSION as __version__

    __all__ = ["__version__"]
