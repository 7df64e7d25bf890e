# The board's shared core, run unchanged on MicroPython (the firmware) and CPython (the host
# package imports it as `cribcore`): the hole layout (layout.py), the board state (state.py), the
# renderer (render.py), the line protocol (protocol.py), the limits the board enforces
# (limits.py), the board profiles (profiles.py), the hall's topic scheme (hall.py) and the names
# of the files a board keeps (files.py).
