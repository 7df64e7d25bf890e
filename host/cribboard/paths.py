"""Where the package finds the files it ships beside its Python code, and where it keeps the
user's own (the state directory)."""

from __future__ import annotations

import os
from pathlib import Path

import cribcore

_PACKAGE_DIR = Path(__file__).resolve().parent

CORE_PACKAGE = "cribcore"
"""The shared core's package: in the firmware tree, and imported by the host."""


def firmware_dir() -> Path:
    """The firmware source tree (``firmware/``).

    In an installed wheel it is bundled as ``cribboard/firmware``, without the shared core (the
    wheel holds that once, as the top-level ``cribcore`` package: see :func:`firmware_sources`);
    in a source checkout it is the repository's ``firmware/`` beside ``host/``, core included.
    """
    bundled = _PACKAGE_DIR / "firmware"
    if bundled.is_dir():
        return bundled
    return _PACKAGE_DIR.parents[1] / "firmware"


def core_dir() -> Path:
    """The shared core the host imports (``firmware/cribcore`` in a checkout)."""
    return Path(cribcore.__file__).resolve().parent


def firmware_sources(root: Path | None = None) -> dict[str, Path]:
    """Every Python file of the firmware tree `root` (default: :func:`firmware_dir`) by its path
    in the tree (``cribfw/app.py``), sorted; caches left out. A tree without ``cribcore/`` (an
    installed wheel's) takes the shared core's files from the package the host imports."""
    root = root or firmware_dir()
    files = {
        path.relative_to(root).as_posix(): path
        for path in root.rglob("*.py")
        if "__pycache__" not in path.relative_to(root).parts
    }
    if not (root / CORE_PACKAGE).is_dir():
        core = core_dir()
        for path in core.rglob("*.py"):
            relative = path.relative_to(core)
            if "__pycache__" not in relative.parts:
                files[f"{CORE_PACKAGE}/{relative.as_posix()}"] = path
    return dict(sorted(files.items()))


STATE_ENV = "XDG_STATE_HOME"
"""The XDG base directory variable for data that should outlive the program (its state)."""


def state_dir() -> Path:
    """Where cribboard keeps what must outlive a program, such as the virtual board's flash
    (the game on it): ``$XDG_STATE_HOME/cribboard``, by default ``~/.local/state/cribboard``
    (the XDG base directory rules: a relative $XDG_STATE_HOME is ignored). Made, for this user
    only, when missing."""
    base = os.environ.get(STATE_ENV, "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    path = root / "cribboard"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


DATA_ENV = "XDG_DATA_HOME"
"""The XDG base directory variable for the user's own data: what a person would back up."""


def data_dir() -> Path:
    """Where cribboard keeps the user's own data, such as the record of the games played
    (cribboard.record): ``$XDG_DATA_HOME/cribboard``, by default ``~/.local/share/cribboard``
    (a relative $XDG_DATA_HOME is ignored, as the XDG rules say). Made, for this user only, when
    missing."""
    base = os.environ.get(DATA_ENV, "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    path = root / "cribboard"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


PAGE_DIR = "web"
"""The table page as a board serves it, gzip-compressed, in the firmware tree (written by
``make mip``: cribboard.bridge.boardpage)."""


def page_files(root: Path | None = None) -> dict[str, Path]:
    """The board's page files in the firmware tree `root` by their path there
    (``web/static/app.js.gz``, ``web/files.txt``), sorted; empty when it has none."""
    folder = (root or firmware_dir()) / PAGE_DIR
    if not folder.is_dir():
        return {}
    return {
        path.relative_to(folder.parent).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
