"""The core's tests again, on the real MicroPython interpreter (the unix port)."""

import os
import subprocess
from pathlib import Path

import pytest

from cribboard import firmware_build
from cribboard.virtual.interpreter import find_micropython, interpreter_arch

ROOT = Path(__file__).resolve().parents[2]
CORE_TESTS = [
    "test_layout",
    "test_state",
    "test_games",
    "test_render",
    "test_match_frames",
    "mp_no_alloc",
    "test_protocol",
    "mp_dispatch_no_alloc",
    "test_panel",
    "mp_buttons_task",
    "test_store",
    "test_old_records",
    "test_flashrecord",
    "test_ring",
    "test_linebuffer",
    "test_blelink",
    "test_hallpayload",
]


def run_on_micropython(
    modules: list[str], heap: str | None = None, firmware: Path = ROOT / "firmware"
) -> subprocess.CompletedProcess[str]:
    exe = find_micropython()
    args = [str(exe)]
    if heap:
        args += ["-X", "heapsize=" + heap]
    # The host's codec (cribboard.wire) is in the subset MicroPython runs: the core tests decode
    # the firmware's lines with it on both interpreters.
    path = f"{firmware}:{ROOT / 'tests' / 'core'}:{ROOT / 'host'}:.frozen"
    env = dict(os.environ, MICROPYPATH=path)
    return subprocess.run(
        args + [str(ROOT / "tests" / "core" / "mprun.py"), *modules],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("module", CORE_TESTS)
def test_core_module_passes_on_micropython(module: str) -> None:
    result = run_on_micropython([module])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS" in result.stdout and "FAIL" not in result.stdout


@pytest.mark.parametrize("module", ["test_state", "test_render", "mp_no_alloc"])
def test_core_runs_in_a_32k_heap(module: str) -> None:
    """A 32-bit board with a 32 KB heap runs the core (layout, state, renderer) and its tests.

    The core is loaded as the board holds it: compiled to .mpy by `cribboard deploy`'s build,
    so it is not compiled in the board's RAM (the tests themselves still are), its native
    functions as machine code for the interpreter. From source the core's tests need about 32wK
    on their own, with no margin (`make bench` prints both)."""
    firmware = firmware_build.build(arch=interpreter_arch(find_micropython()))
    result = run_on_micropython([module], heap="32wK", firmware=firmware)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout


def test_a_failing_assertion_on_micropython_fails(tmp_path: Path) -> None:
    (tmp_path / "test_broken.py").write_text("def test_wrong():\n    assert 1 == 2\n")
    exe = find_micropython()
    env = dict(os.environ, MICROPYPATH=f"{tmp_path}:{ROOT / 'tests' / 'core'}:.frozen")
    result = subprocess.run(
        [str(exe), str(ROOT / "tests" / "core" / "mprun.py"), "test_broken"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 1
    assert "FAIL test_broken test_wrong" in result.stdout
