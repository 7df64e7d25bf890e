# The port's manifest for this board (Wi-Fi and Bluetooth) with the cribboard firmware frozen
# in (see ../manifest.py).
include("../manifest.py")  # noqa: F821
require("bundle-networking")  # noqa: F821
require("aioble")  # noqa: F821  (Bluetooth)
