"""The package's version and the protocol version it speaks.

The package and the firmware it carries are released together under one number, kept once, in
the firmware's `cribfw/version.py` (a board reports it in `hello` as `fw=`); the package's
metadata takes it from there when it is built (pyproject.toml's [tool.hatch.version]), and the
host reads the same file here, so the three cannot disagree."""

from __future__ import annotations

import re

from cribboard.paths import firmware_dir
from cribcore.protocol import PROTOCOL_MAJOR, PROTOCOL_MINOR

_ASSIGNMENT = re.compile(r'^FIRMWARE_VERSION = "(?P<version>[^"]+)"$', re.MULTILINE)


def firmware_version() -> str:
    """The version in the firmware tree's `cribfw/version.py`."""
    path = firmware_dir() / "cribfw" / "version.py"
    match = _ASSIGNMENT.search(path.read_text(encoding="utf-8"))
    if match is None:
        raise RuntimeError(f'no FIRMWARE_VERSION = "..." line in {path}')
    return match["version"]


VERSION = firmware_version()
"""The package's (and its firmware's) version, e.g. ``0.1.0``."""

PROTOCOL_VERSION = f"{PROTOCOL_MAJOR}.{PROTOCOL_MINOR}"
"""The line protocol's version this package speaks (docs/protocol.md), e.g. ``1.2``."""
