# The board's shared core: layout, board state, renderer and protocol. Runs unchanged on
# MicroPython (the firmware) and CPython (the host package imports it as `cribcore`).
