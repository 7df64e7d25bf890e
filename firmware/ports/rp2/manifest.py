# The cribboard firmware frozen into MicroPython's rp2 port. Each board folder in boards/ is an
# out-of-tree board definition (MicroPython's BOARD_DIR) whose manifest includes boards/manifest.py:
# the port's own frozen modules but its `_boot.py`, then this file. Build with
#   make -C ports/rp2 BOARD_DIR=/path/to/firmware/ports/rp2/boards/RPI_PICO
# (firmware/ports/rp2/build.py does, for every image). Relative paths are relative to this file.
#
# What it freezes: the `cribcore` and `cribfw` packages, micropython-lib's `umqtt/simple.py`
# (vendored), `main.py` (so the board boots straight into the app), `cribboot.py` (the boot
# guard), and this folder's `_boot.py` in place of the port's (the script MicroPython runs first
# at every start: it starts the boot guard and mounts the file system).
# host/cribboard/frozen.py lists the same files for the digest the build records.
freeze("../..", "cribcore")  # noqa: F821
freeze("../..", "cribfw")  # noqa: F821
# micropython-lib's umqtt.simple, vendored (firmware/umqtt/README.md): the Wi-Fi boards' table
# client (cribfw/hall.py). The port's and boards' own manifests do not freeze umqtt. Frozen on
# the Pico without wireless too: importing it there fails (no socket), so the board plays alone.
freeze("../..", "umqtt/simple.py")  # noqa: F821
freeze("../..", "main.py")  # noqa: F821
freeze("../..", "cribboot.py")  # noqa: F821  (the boot guard, imported by _boot.py)
freeze(".", "_boot.py")  # noqa: F821
