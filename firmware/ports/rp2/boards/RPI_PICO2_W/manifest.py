# The port's manifest for this board (Wi-Fi and Bluetooth) with the cribboard firmware frozen
# in (see ../manifest.py).
include("../manifest.py")  # noqa: F821
require("bundle-networking")  # noqa: F821
require("aioble")  # noqa: F821  (Bluetooth)
# The table page the board serves over Wi-Fi (firmware/web/, gzip-compressed) as the module
# cribpage, which firmware/ports/rp2/build.py writes into $CRIBBOARD_PAGE_DIR: its bytes stay in
# the flash (firmware/cribfw/pagefiles.py).
import os  # noqa: E402

freeze(os.environ["CRIBBOARD_PAGE_DIR"], "cribpage.py")  # noqa: F821
