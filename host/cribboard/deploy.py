"""Deploying the firmware to a board through mpremote: only files whose content differs are
copied, then the board is reset so the new firmware runs. The firmware is built for the board's
native architecture, which the board reports (`sys.implementation._mpy`) as it lists its files."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from cribboard.errors import CribboardError
from cribboard.firmware_build import built_files, native_arch

# Lists every file on the board's flash with its SHA-256, one "path hash" line each, after the
# board's .mpy version and features (its native architecture; none: it loads no .mpy).
_REMOTE_HASHES = """
import os, sys, hashlib, binascii
print('@@mpy', getattr(sys.implementation, '_mpy', 'none'))
def walk(d):
    for entry in os.ilistdir(d or '.'):
        name, kind = entry[0], entry[1]
        path = d + '/' + name if d else name
        if kind == 0x4000:
            walk(path)
        else:
            h = hashlib.sha256()
            with open(path, 'rb') as f:
                while True:
                    chunk = f.read(512)
                    if not chunk:
                        break
                    h.update(chunk)
            print('@@', path, binascii.hexlify(h.digest()).decode())
walk('')
"""


class DeployError(CribboardError):
    """mpremote could not talk to the board or copy a file."""


def _mpremote(port: str, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mpremote", "connect", port, *args]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        raise DeployError(f"mpremote did not finish within {timeout:g} s on {port}") from err
    if result.returncode != 0:
        message = (result.stderr or result.stdout).strip().splitlines()
        raise DeployError(f"mpremote failed on {port}: {message[-1] if message else '?'}")
    return result


def put_private_file(port: str, name: str, data: bytes, *, reset: bool, timeout: float) -> None:
    """Copy `data` to the file `name` on the board on `port` (over mpremote), then reset the
    board if `reset`. The local copy on its way is readable by this user only (it holds
    passwords). Raises DeployError when mpremote cannot do it."""
    with tempfile.TemporaryDirectory(prefix="cribboard-") as folder:
        local = Path(folder) / name
        fd = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        _mpremote(port, ["fs", "cp", str(local), ":" + name], timeout)
        if reset:
            _mpremote(port, ["reset"], timeout)


def board_files(port: str, timeout: float = 30.0) -> tuple[dict[str, str], int]:
    """SHA-256 (hex) of every file on the board's flash, and the board's native architecture
    (:func:`cribboard.firmware_build.native_arch`)."""
    result = _mpremote(port, ["exec", _REMOTE_HASHES], timeout)
    hashes = {}
    mpy = None
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "@@":
            hashes[parts[1]] = parts[2]
        elif len(parts) == 2 and parts[0] == "@@mpy" and parts[1].isdigit():
            mpy = int(parts[1])
    return hashes, native_arch(mpy)


class Plan:
    """What a deploy does: files to copy (board path, local file) and stale files to remove
    (a module's other form: a leftover `x.py` would shadow a new `x.mpy`)."""

    def __init__(self, copy: list[tuple[str, Path]], remove: list[str]) -> None:
        self.copy = copy
        self.remove = remove


def plan(port: str, root: Path | None = None, compiled: bool = True) -> Plan:
    """Compare the firmware, built for the board's architecture, with the board's flash."""
    remote, arch = board_files(port)
    local = built_files(root, compiled, arch)
    copy = []
    for board_path, path in local.items():
        if remote.get(board_path) != hashlib.sha256(path.read_bytes()).hexdigest():
            copy.append((board_path, path))
    remove = []
    for board_path in local:
        stem, dot, extension = board_path.rpartition(".")
        other = stem + (".py" if extension == "mpy" else ".mpy")
        if other in remote and other not in local:
            remove.append(other)
    return Plan(copy, remove)


def deploy(
    port: str,
    *,
    root: Path | None = None,
    compiled: bool = True,
    reset: bool = True,
    progress: Callable[[str], None] = print,
    timeout: float = 120.0,
    answer_timeout: float = 10.0,
) -> list[str]:
    """Copy changed firmware files to the board on `port` (compiled to .mpy unless `compiled`
    is False; the native functions as machine code for the board's architecture, or plain
    bytecode or source where it has no native emitter), remove stale counterparts, then reset the board (unless `reset` is False) so
    the new firmware runs, and wait up to `answer_timeout` seconds for it to answer. Returns
    the board paths copied."""
    todo = plan(port, root, compiled)
    changed = todo.copy
    if not changed and not todo.remove:
        progress("the board's firmware is up to date")
        return []
    total = len(changed)
    args: list[str] = []
    dirs = sorted({str(Path(p).parent) for p, _ in changed} - {"."})
    if dirs:
        # Make the folders the files go in (those that already exist are left alone).
        args += [
            "exec",
            "import os\nfor d in %r:\n try: os.mkdir(d)\n except OSError: pass" % (dirs,),
            "+",
        ]
    for board_path in todo.remove:
        args += ["fs", "rm", ":" + board_path, "+"]
    for board_path, local in changed:
        args += ["fs", "cp", str(local), ":" + board_path, "+"]
    done = 0
    for line in _mpremote_lines(port, args[:-1], timeout):
        # mpremote prints "cp LOCAL :REMOTE" as it copies each file.
        if line.startswith("cp ") and " :" in line:
            done += 1
            progress(f"[{done}/{total}] {line.rsplit(' :', 1)[1]}")
    for board_path in todo.remove:
        progress(f"removed {board_path}")
    progress(f"copied {total} file{'s' if total != 1 else ''}")
    if reset:
        # A hard reset runs main.py: the new firmware starts as it will at power-on.
        _mpremote(port, ["reset"], timeout=30.0)
        progress(f"board reset: firmware {_running_firmware(port, answer_timeout)} is running")
    return [p for p, _ in changed]


def _running_firmware(port: str, timeout: float) -> str:
    """The version the board reports after its reset (it answers hello once it is up)."""
    from cribboard.discovery import probe

    try:
        return asyncio.run(probe(port, timeout=timeout)).firmware
    except CribboardError as err:
        raise DeployError(f"the board did not come back after the reset: {err}") from err


def _mpremote_lines(port: str, args: list[str], timeout: float) -> Iterator[str]:
    """Run mpremote and yield its output lines as they come."""
    command = [sys.executable, "-m", "mpremote", "connect", port, *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timer = threading.Timer(timeout, process.kill)  # mpremote waits forever on a silent pty
    timer.start()
    try:
        assert process.stdout is not None and process.stderr is not None
        yield from (line.rstrip("\n") for line in process.stdout)
        error = process.stderr.read().strip().splitlines()
        process.wait()
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
    if process.returncode != 0:
        raise DeployError(f"mpremote failed on {port}: {error[-1] if error else 'killed'}")
