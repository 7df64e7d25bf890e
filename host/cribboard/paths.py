"""Where the package finds the files it ships beside its Python code."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def firmware_dir() -> Path:
    """The firmware source tree (``firmware/``).

    In an installed wheel it is bundled as ``cribboard/firmware``; in a source checkout it is
    the repository's ``firmware/`` beside ``host/``.
    """
    bundled = _PACKAGE_DIR / "firmware"
    if bundled.is_dir():
        return bundled
    return _PACKAGE_DIR.parents[1] / "firmware"
