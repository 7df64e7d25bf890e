"""Errors raised by the virtual board."""

from __future__ import annotations

from ..errors import CribboardError


class VirtualBoardError(CribboardError):
    """Root of the virtual board's errors: the board could not start or went away."""


class FlashInUse(VirtualBoardError):
    """Another board runs on the flash image (its lock is held)."""


class MicroPythonNotFoundError(VirtualBoardError):
    """No MicroPython unix-port interpreter could be found or run."""


class VirtualControlError(VirtualBoardError):
    """The side channel refused a request or could not be reached."""


class NoFrameError(VirtualControlError):
    """The board has not written any LED frame yet."""
