# The cribboard firmware frozen into MicroPython's rp2 port: build with
#   make -C ports/rp2 BOARD=RPI_PICO FROZEN_MANIFEST=/path/to/firmware/ports/rp2/manifest.py
# (firmware/ports/rp2/build.py does, for every image). MicroPython's tools/manifestfile.py runs
# this file with its manifest functions (include, freeze) as globals and this folder as the
# current directory.
#
# What it freezes: what the board would freeze without it (its own manifest, else the port's),
# then the `cribcore` and `cribfw` packages, micropython-lib's `umqtt/simple.py` (vendored), `main.py` (so the board boots straight into the
# app) and `cribboot.py` (the boot guard); and this folder's `_boot.py` in place of the port's
# `_boot.py` (the script MicroPython runs first at every start: it starts the boot guard and
# mounts the file system). host/cribboard/frozen.py lists the
# same files for the digest the build records.
import os

manifest = include.__self__  # noqa: F821  (the ManifestFile running this script)

board_manifest = manifest._resolve_path("$(BOARD_DIR)/manifest.py")
if os.path.isfile(board_manifest):
    include(board_manifest)  # noqa: F821
else:
    include("$(PORT_DIR)/boards/manifest.py")  # noqa: F821

firmware = os.path.normpath(os.path.join(os.getcwd(), "..", ".."))
freeze(firmware, "cribcore")  # noqa: F821
freeze(firmware, "cribfw")  # noqa: F821
# micropython-lib's umqtt.simple, vendored (firmware/umqtt/README.md): the Wi-Fi boards' table
# client (cribfw/hall.py). The port's and boards' own manifests do not freeze umqtt. Frozen on
# the Pico without wireless too: importing it there fails (no socket), so the board plays alone.
freeze(firmware, "umqtt/simple.py")  # noqa: F821
freeze(firmware, "main.py")  # noqa: F821
freeze(firmware, "cribboot.py")  # noqa: F821  (the boot guard, imported by _boot.py)

if os.path.isfile("_boot.py"):
    # The port freezes its own `_boot.py`; two frozen files of one name cannot be built, so the
    # port's entry leaves the manifest's list before ours goes in. The list is the pinned
    # MicroPython's (v1.28.0) own attribute: fail loudly if it ever reads differently.
    ports_boot = [f for f in manifest._manifest_files if f.target_path == "_boot.py"]
    if len(ports_boot) != 1:
        raise RuntimeError("expected the port's manifest to freeze one _boot.py: %r" % ports_boot)
    manifest._manifest_files.remove(ports_boot[0])
    freeze(os.getcwd(), "_boot.py")  # noqa: F821
