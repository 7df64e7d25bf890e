"""The per-user runtime directory: where a process that owns a board's port offers it to the
user's other cribboard processes (cribboard.portshare), and where running virtual boards say
where they are (cribboard.virtual.registry).

It is ``$XDG_RUNTIME_DIR/cribboard`` when the session has one, else ``cribboard-UID`` in the
temporary directory. Either way it must be a directory (not a link) that this user owns and
nobody else may enter: what is in it decides which process another one talks to."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cribboard.errors import CribboardError
from cribboard.i18n import _


class UnsafeRuntimeDir(CribboardError):
    """The runtime directory exists but another user could reach into it."""


def temporary_dir() -> str:
    """The temporary directory, found as `tempfile.gettempdir()` looks for it: $TMPDIR, $TEMP,
    $TMP, then /tmp, /var/tmp, /usr/tmp, then the working directory; the first this user may
    write in. (Not `tempfile` itself: it brings shutil, random and the compression modules, which a
    one-shot command such as `cribboard peg` would import for this alone.)"""
    named = (os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP"))
    for candidate in (*named, "/tmp", "/var/tmp", "/usr/tmp"):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK):
            return os.path.abspath(candidate)
    return os.getcwd()


def runtime_dir() -> Path:
    """The private runtime directory, made (mode 0700) when missing; raises UnsafeRuntimeDir
    when it is a link, not a directory, someone else's, or open to others."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        path = Path(base) / "cribboard"
    else:
        path = Path(temporary_dir()) / f"cribboard-{os.getuid()}"
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if (
        not stat.S_ISDIR(info.st_mode)
        or info.st_uid != os.getuid()
        or stat.S_IMODE(info.st_mode) & 0o077
    ):
        raise UnsafeRuntimeDir(
            _(
                "%(path)s must be a directory only you may enter (mode 0700, yours): "
                "fix or remove it",
                path=path,
            )
        )
    return path
