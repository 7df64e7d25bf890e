"""The firmware files the rp2 images freeze in, and their digest.

`firmware/ports/rp2/manifest.py` (included by each board folder of `firmware/ports/rp2/boards/`)
freezes the `cribcore` and `cribfw` packages, `main.py` (the app's start-up), `cribboot.py` (the
boot guard), `umqtt/simple.py` (micropython-lib's MQTT client) and the project's `_boot.py` into
MicroPython's rp2 port; the Wi-Fi boards' manifests add the table page (`firmware/web/`, as the
module `cribpage`, :func:`page_module`). The build records the
digest of exactly those files next to each image; the tests compare it with the digest of the
tree as it is now, so an image built from older firmware is caught.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from cribboard.paths import PAGE_DIR, firmware_dir, firmware_sources, page_files

FROZEN_PACKAGES = ("cribcore", "cribfw")  # frozen whole: every .py file under them
# main.py runs at boot, frozen: the board starts straight into the app; cribboot.py is the boot
# guard that _boot.py starts; umqtt/simple.py is the Wi-Fi boards' MQTT client (vendored).
FROZEN_MODULES = ("main.py", "cribboot.py", "umqtt/simple.py")
BOOT_SCRIPT = "ports/rp2/_boot.py"  # frozen as `_boot.py`, in place of the port's own


def frozen_sources(root: Path | None = None) -> dict[str, Path]:
    """The frozen files by their path relative to `root` (the firmware tree), sorted."""
    return {
        relative: path
        for relative, path in firmware_sources(root).items()
        if relative.split("/")[0] in FROZEN_PACKAGES or relative in (*FROZEN_MODULES, BOOT_SCRIPT)
    }


def frozen_name(relative: str) -> str:
    """The name a frozen file has in the image: `ports/rp2/_boot.py` -> `_boot.py`."""
    return "_boot.py" if relative == BOOT_SCRIPT else relative


def frozen_digest(root: Path | None = None) -> str:
    """SHA-256 (hex) over the frozen files' relative paths and contents, in sorted order.

    Each file adds its path, a NUL byte, its length as decimal text, a NUL byte and its bytes,
    so no two different trees give the same stream.
    """
    digest = hashlib.sha256()
    for relative, path in (*frozen_sources(root).items(), *page_files(root).items()):
        content = path.read_bytes()
        digest.update(b"%s\0%d\0" % (relative.encode(), len(content)) + content)
    return digest.hexdigest()


PAGE_MODULE = "cribpage.py"
"""The module the Wi-Fi boards' images freeze the table page into (firmware/cribfw/pagefiles.py
reads it): written by the build from ``firmware/web/`` (:func:`page_module`), frozen by the
boards' manifests from the folder ``$CRIBBOARD_PAGE_DIR`` names."""


def page_module(root: Path | None = None) -> str:
    """The source of ``cribpage``: FILES, a tuple of (URL path, ETag, gzip bytes) as bytes
    literals, which stay in the image's flash (none of it in the heap)."""
    folder = (root or firmware_dir()) / PAGE_DIR
    lines = [
        "# The table page's files, frozen into a cribboard image (firmware/cribfw/pagefiles.py);",
        "# written by firmware/ports/rp2/build.py from firmware/web/.",
        "FILES = (",
    ]
    for line in (folder / "files.txt").read_text().splitlines():
        path, tag = line.split()
        data = (folder / (path[1:] + ".gz")).read_bytes()
        lines.append(f"    ({path.encode()!r}, {tag.encode()!r}, {data!r}),")
    lines.append(")")
    return "\n".join(lines) + "\n"


BOARDS = "ports/rp2/boards"  # the cribboard board definitions (relative to the firmware tree)
C_MODULES = "ports/rp2/cmodules"  # the C modules every cribboard image builds in


def board_files(board: str, root: Path | None = None) -> dict[str, Path]:
    """The files that define the cribboard build of `board` (e.g. `RPI_PICO`): its folder's
    and those every board shares (the configuration header and cmake, the manifest, the C
    modules), by their path relative to `root` (the firmware tree), sorted."""
    tree = root if root is not None else firmware_dir()
    shared = tree / BOARDS
    paths = [path for path in shared.iterdir() if path.is_file()]
    paths += [path for path in (shared / board).iterdir() if path.is_file()]
    paths += [path for path in (tree / C_MODULES).rglob("*") if path.is_file()]
    return {path.relative_to(tree).as_posix(): path for path in sorted(paths)}


def board_digest(board: str, root: Path | None = None) -> str:
    """SHA-256 (hex) over `board`'s definition files, as frozen_digest over the frozen files: a
    change in the build's configuration makes the image stale as a change in the firmware does."""
    digest = hashlib.sha256()
    for relative, path in board_files(board, root).items():
        content = path.read_bytes()
        digest.update(b"%s\0%d\0" % (relative.encode(), len(content)) + content)
    return digest.hexdigest()
