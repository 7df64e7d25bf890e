# The Raspberry Pi Pico with the cribboard firmware frozen in (see ../manifest.py).
include("../manifest.py")  # noqa: F821
