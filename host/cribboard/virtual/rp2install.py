"""Where the RP2040 emulator's npm packages are, and installing them for an installed package.

The package ships the emulator's own files (``virtual/rp2/``: harness.js, its modules, the
bootrom, package.json and package-lock.json) but not rp2040js itself. In a clone, ``make
emulator`` runs ``npm ci`` in that folder. An installed package cannot write beside itself, so
``cribboard virtual --rp2 --install-emulator`` copies those files into the user's cache
(``$XDG_CACHE_HOME/cribboard/rp2-emulator/<digest>``, by default under ``~/.cache``) and runs
``npm ci`` there: exactly the versions the lock file pins, nothing else. The folder is named by
a digest of the shipped files, so another version of the package gets its own copy and a copy
is never half made (it is built aside and renamed into place).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..i18n import _
from .errors import VirtualBoardError

PACKAGE_DIR = Path(__file__).resolve().parent / "rp2"
"""The emulator's files as the package ships them (and where `make emulator` installs)."""

SHIPPED = ("harness.js", "lib", "bootrom-b1.bin", "package.json", "package-lock.json")
"""What the emulator needs of them (documentation such as BOOTROM.md stays behind)."""

INSTALL_HINT = (
    "run `cribboard virtual --rp2 --install-emulator` (it needs Node.js 18 or later and npm, "
    "e.g. sudo apt-get install nodejs npm); in a clone of the repository, `make emulator`"
)

_NPM_TIMEOUT = 600.0  # npm ci fetches one small package; a slow network still ends


class EmulatorInstallError(VirtualBoardError):
    """npm is missing or `npm ci` failed."""


def _installed(folder: Path) -> bool:
    return (folder / "node_modules" / "rp2040js" / "package.json").is_file()


def _shipped_files() -> list[Path]:
    files: list[Path] = []
    for name in SHIPPED:
        path = PACKAGE_DIR / name
        files.extend(sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    return files


def shipped_digest() -> str:
    """12 hex digits of SHA-256 over the shipped files' paths and contents."""
    digest = hashlib.sha256()
    for path in _shipped_files():
        content = path.read_bytes()
        relative = path.relative_to(PACKAGE_DIR).as_posix()
        digest.update(b"%s\0%d\0" % (relative.encode(), len(content)) + content)
    return digest.hexdigest()[:12]


def cache_dir() -> Path:
    """Where --install-emulator puts the emulator for this version of the package."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cribboard" / "rp2-emulator" / shipped_digest()


def emulator_dir() -> Path | None:
    """The folder to run harness.js from: the package's own once `make emulator` ran there,
    else the user's cache once --install-emulator ran; None when neither has rp2040js."""
    if _installed(PACKAGE_DIR):
        return PACKAGE_DIR
    cached = cache_dir()
    return cached if _installed(cached) else None


def install_emulator(say: Callable[[str], None] = print) -> Path:
    """Install rp2040js from the shipped lock file into :func:`cache_dir` (nothing to do when it
    is there); returns the folder. EmulatorInstallError without npm or when npm ci fails."""
    target = cache_dir()
    if _installed(target):
        say(_("the RP2040 emulator is installed in %(folder)s", folder=target))
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise EmulatorInstallError(
            _(
                "npm is not installed: install Node.js 18 or later and npm "
                "(e.g. sudo apt-get install nodejs npm), then run this again"
            )
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for path in _shipped_files():
            copy = staging / path.relative_to(PACKAGE_DIR)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        say(
            _(
                "installing the RP2040 emulator (npm ci, from its lock file) into %(folder)s",
                folder=target,
            )
        )
        try:
            result = subprocess.run(
                [npm, "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=staging,
                capture_output=True,
                text=True,
                timeout=_NPM_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise EmulatorInstallError(
                _("npm ci did not finish within %(seconds)g s", seconds=_NPM_TIMEOUT)
            ) from None
        if result.returncode != 0:
            lines = (result.stderr or result.stdout).strip().splitlines()
            raise EmulatorInstallError(
                _(
                    "npm ci failed: %(why)s",
                    why=lines[-1]
                    if lines
                    else _("exit status %(status)d", status=result.returncode),
                )
            )
        try:
            staging.rename(target)  # atomic; another install of the same files may have won
        except OSError:
            if not _installed(target):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
