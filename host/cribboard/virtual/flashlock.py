"""A simulated board's flash file, used by one board at a time (the unix-port virtual board and
the emulated RP2040 alike), and the temporary directory a board keeps its files in."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

from .errors import FlashInUse


def lock_flash(path: Path, what: str, holder: str) -> int:
    """Open `path` (created empty if missing) and lock it for this board alone; return the file
    descriptor holding the lock. Another board holding it is a FlashInUse: "`what` PATH is in
    use by another `holder`"."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise FlashInUse(f"{what} {path} is in use by another {holder}") from None
    return fd


def release(flash_lock: int | None, directory: Path | None) -> None:
    """Let the flash file go and remove the board's temporary directory (either may be None)."""
    if flash_lock is not None:
        os.close(flash_lock)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
