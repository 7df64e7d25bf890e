"""What the processes a virtual board runs (its interpreter, its emulator) share."""

from __future__ import annotations

import ctypes
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child before exec: the kernel kills it when its parent dies.

    A board has no power without its launcher: if the launcher dies without stopping it
    (killed, crashed), the board process ends too (Linux; elsewhere the launcher's stop() does).
    """
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
