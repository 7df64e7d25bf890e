# What every cribboard board freezes: the port's own boards/manifest.py (MicroPython v1.28.0),
# except the port's `_boot.py`, then the cribboard firmware (../manifest.py), whose `_boot.py`
# takes its place. Included by each board's manifest.py in this folder.
freeze("$(PORT_DIR)/modules", ("_boot_fat.py", "rp2.py"))  # noqa: F821  (not _boot.py)
include("$(MPY_DIR)/extmod/asyncio")  # noqa: F821
require("onewire")  # noqa: F821
require("ds18x20")  # noqa: F821
require("dht")  # noqa: F821
require("neopixel")  # noqa: F821
include("../manifest.py")  # noqa: F821  (the firmware, relative to this file)
