"""`make bench`: how soon the command line answers, whole processes, beside their floors.

Each figure is the median of paired runs: the cribboard command and its floor one after the
other, round after round, so that whatever else the machine does hits both alike.

1. `cribboard --version` and `cribboard --help` against `mpremote --version` (a Python command
   line of the same kind, installed beside cribboard).
2. `cribboard --port P peg blue 1` against a bare pyserial script that opens the same port,
   writes `ping` and reads the reply, on an open virtual board (the real firmware on
   MicroPython's unix port, behind its pty). Beside them, the same bare script with asyncio
   imported first: what any client on asyncio (the library's is) pays before its first byte.
3. The modules each process imports (`python -X importtime`): the same on any machine, however
   loaded, where times are not.

Bytecode is cached for every run (a private PYTHONPYCACHEPREFIX, filled by a first run), as it
is for an installed package. Prints figures only: nothing here asserts speed.

    .venv/bin/python bench/cli_bench.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ROUNDS = 15
WARM_UP = 2
TIMEOUT = 60.0

# The floor of a command that reaches a board: open the port, ask, read the answer, close.
BARE_PING = """\
import sys
import serial
link = serial.Serial(sys.argv[1], timeout=5)
link.write(b"#z ping\\n")
while not link.readline().startswith(b"#z "):
    pass
link.close()
"""
ASYNCIO_PING = "import asyncio\n" + BARE_PING


def child_env(cache: Path) -> dict[str, str]:
    """The environment of every measured process: bytecode cached in `cache`."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    env.pop("CRIBBOARD_PORT", None)
    return env


def tool(name: str) -> str:
    """An executable beside this Python (the venv's), else on PATH."""
    beside = BIN / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        sys.exit(f"cli_bench: no {name} beside {sys.executable} or on PATH")
    return found


class Run:
    """One process: its wall time and the CPU time it used (user and system), in seconds."""

    def __init__(self, wall: float, cpu: float) -> None:
        self.wall = wall
        self.cpu = cpu


def cpu_of_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_once(argv: Sequence[str], env: dict[str, str]) -> Run:
    """One run to its exit; the command must succeed."""
    cpu = cpu_of_children()
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, timeout=TIMEOUT)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(
            f"cli_bench: {' '.join(argv)} failed (exit {done.returncode}):\n"
            f"{done.stdout.decode(errors='replace')}{done.stderr.decode(errors='replace')}"
        )
    return Run(elapsed, cpu_of_children() - cpu)


def paired(
    first: Sequence[str], floor: Sequence[str], env: dict[str, str], rounds: int
) -> tuple[list[Run], list[Run]]:
    """Both commands, alternately (which goes first alternates too), `rounds` times each."""
    for _ in range(WARM_UP):
        run_once(first, env)
        run_once(floor, env)
    ours: list[Run] = []
    theirs: list[Run] = []
    for i in range(rounds):
        if i % 2:
            theirs.append(run_once(floor, env))
            ours.append(run_once(first, env))
        else:
            ours.append(run_once(first, env))
            theirs.append(run_once(floor, env))
    return ours, theirs


def imports(argv: Sequence[str], env: dict[str, str]) -> int:
    """How many modules the process imports (its `-X importtime` lines)."""
    python, *rest = argv
    done = subprocess.run(
        [python, "-X", "importtime", *rest], env=env, capture_output=True, timeout=TIMEOUT
    )
    return sum(
        1
        for line in done.stderr.decode(errors="replace").splitlines()
        if line.startswith("import time:") and "self [us]" not in line
    )


def script(name: str) -> list[str]:
    """A console script run by this Python (so that -X options reach it)."""
    return [sys.executable, tool(name)]


def row(what: str, ours: list[Run], floor_what: str, theirs: list[Run], target: str) -> str:
    """The medians side by side: wall time, and the CPU time (less moved by other load)."""
    wall, base = (statistics.median(r.wall for r in runs) for runs in (ours, theirs))
    cpu, base_cpu = (statistics.median(r.cpu for r in runs) for runs in (ours, theirs))
    return (
        f"   {what:<30}{wall * 1000:>6.0f} ms  {floor_what:<19}{base * 1000:>5.0f} ms  "
        f"{wall / base:>5.2f}x  (cpu {cpu * 1000:.0f} / {base_cpu * 1000:.0f} ms: "
        f"{cpu / base_cpu:.2f}x)   target {target}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    options = argparse.ArgumentParser(description="the command line's start, against floors")
    options.add_argument("--rounds", type=int, default=ROUNDS, help="paired runs per figure")
    rounds = options.parse_args(argv).rounds

    from cribboard.virtual import VirtualBoard

    started = time.monotonic()
    print("cribboard command line benchmark")
    print(
        f"   whole processes, medians of {rounds} paired runs (bytecode cached); "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory(prefix="cribboard-pyc-") as cache:
        env = child_env(Path(cache))
        cribboard = script("cribboard")
        mpremote = script("mpremote")
        version = paired([*cribboard, "--version"], [*mpremote, "--version"], env, rounds)
        helped = paired([*cribboard, "--help"], [*mpremote, "--version"], env, rounds)
        with VirtualBoard() as board:
            peg = [*cribboard, "--port", board.port, "peg", "blue", "1"]
            bare = [sys.executable, "-c", BARE_PING, board.port]
            pegged = paired(peg, bare, env, rounds)
            with_asyncio = paired(
                [sys.executable, "-c", ASYNCIO_PING, board.port], bare, env, rounds
            )
            run_once([*cribboard, "--port", board.port, "new"], env)
            counts = {
                "cribboard --version": imports([*cribboard, "--version"], env),
                "cribboard --help": imports([*cribboard, "--help"], env),
                "cribboard peg": imports(peg, env),
                "mpremote --version": imports([*mpremote, "--version"], env),
                "bare pyserial ping": imports(bare, env),
            }
    print(f"   {'':<30}{'':>9}  {'floor':<19}{'':>8}  ratio")
    print(row("cribboard --version", version[0], "mpremote --version", version[1], "1x"))
    print(row("cribboard --help", helped[0], "mpremote --version", helped[1], "1x"))
    print(row("cribboard --port P peg blue 1", pegged[0], "pyserial ping", pegged[1], "3x"))
    print(
        row(
            "(pyserial ping + asyncio)",
            with_asyncio[0],
            "pyserial ping",
            with_asyncio[1],
            "-",
        )
    )
    print("   modules imported: " + ", ".join(f"{name} {n}" for name, n in counts.items()))
    print(f"(benchmark took {time.monotonic() - started:.1f} s)")


if __name__ == "__main__":
    main()
