"""Running virtual boards, told to the user's other processes: `cribboard virtual` (and `keep` or
`play` when they start the virtual board) leaves a small file in the private runtime directory
(cribboard.rundir) with its pty's path, its pid, the program's name and the flash image it keeps
the game in while it runs, and removes it when it stops, so that `cribboard list` shows it
beside the USB boards and the commands use it when no USB board is found.
A file whose process is gone (a virtual board killed outright) is stale: ignored and removed. The files
are read as hostile (size, types), like anything another process could have written."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cribboard.rundir import runtime_dir

_MAX_BYTES = 1024
_MAX_LABEL = 80


@dataclass(frozen=True)
class RunningSim:
    """A virtual board that runs now: its serial port, its pid, `rp2` for the emulated Pico,
    the program that runs it (`cribboard virtual`, `cribboard keep`) and its flash image (empty
    when it keeps none)."""

    port: str
    pid: int
    kind: str
    label: str = "cribboard virtual"
    flash: str = ""


def register(port: str, kind: str, label: str = "cribboard virtual", flash: str = "") -> Path:
    """Say that this process (the program `label`) runs a virtual board on `port`, keeping its
    game in the image `flash`; returns the file to unregister."""
    path = runtime_dir() / f"sim-{os.getpid()}.json"
    text = json.dumps(
        {"port": port, "pid": os.getpid(), "kind": kind, "label": label, "flash": flash}
    )
    partial = path.with_suffix(".part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(partial, path)
    return path


def unregister(path: Path) -> None:
    """The virtual board stopped."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def running_sims() -> list[RunningSim]:
    """The virtual boards running now, by port."""
    found = []
    for path in sorted(runtime_dir().glob("sim-*.json")):
        sim = _read(path)
        if sim is None:
            continue
        if not _alive(sim.pid) or not os.path.exists(sim.port):
            unregister(path)  # its sim was killed: nothing will remove it else
            continue
        found.append(sim)
    return sorted(found, key=lambda sim: sim.port)


def _read(path: Path) -> RunningSim | None:
    try:
        with path.open("rb") as data:
            raw = data.read(_MAX_BYTES + 1)
        fields = json.loads(raw) if len(raw) <= _MAX_BYTES else None
    except (OSError, ValueError):
        return None
    if not isinstance(fields, dict):
        return None
    port, pid, kind = fields.get("port"), fields.get("pid"), fields.get("kind", "")
    label, flash = fields.get("label", "cribboard virtual"), fields.get("flash", "")
    if not isinstance(port, str) or not port.startswith("/") or not isinstance(pid, int):
        return None
    if pid <= 0 or not isinstance(kind, str) or not port.isprintable():
        return None
    if not isinstance(label, str) or not isinstance(flash, str):
        return None
    if not label.isprintable() or not flash.isprintable() or flash[:1] not in ("", "/"):
        return None
    return RunningSim(port, pid, kind[:20], label[:_MAX_LABEL] or "?", flash)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process now has the pid: not our sim
    return True
