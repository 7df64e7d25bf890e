# What the board's Bluetooth stack allows, which the firmware cannot ask the stack itself.
#
# MicroPython's `bluetooth` module hides which stack it runs on, and the stacks differ where the
# link depends on it (checked on the real stacks, tests/ble/test_ble_real.py):
# - btstack (Pico W, Pico 2 W): one central at a time as MicroPython builds it. While one is
#   connected it holds advertising back, and gap_advertise() still returns as if it advertised;
#   it never refuses a notification but copies each one it cannot send now onto the heap.
# - NimBLE (ESP32): up to four centrals, advertising again only when the app asks after each
#   connect; a notification it cannot queue raises OSError(12) and is not sent.
# The project's unix interpreters with a real stack freeze a module `blestack` naming theirs; on
# a board the port tells (rp2 builds use btstack). The simulated radio (firmware/sim/bluetooth.py)
# behaves as NimBLE does.

BTSTACK = "btstack"
NIMBLE = "nimble"
_CENTRALS = {BTSTACK: 1, NIMBLE: 4}


def stack_name():
    try:
        import blestack  # pyright: ignore[reportMissingImports] (frozen into the unix builds)

        return blestack.NAME
    except ImportError:
        import sys

        return BTSTACK if sys.platform == "rp2" else NIMBLE


def max_centrals(name):
    """How many centrals the stack `name` takes at once."""
    return _CENTRALS.get(name, 1)
