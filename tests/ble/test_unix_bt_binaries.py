"""The unix MicroPython interpreters with a real Bluetooth stack (firmware/ports/unix/bin): each is
the binary its provenance file describes, built from the pinned sources with the committed patches,
and runs as MicroPython v1.28.0 with `bluetooth` on the stack it names."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import platform
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PORT = ROOT / "firmware" / "ports" / "unix"
BIN = PORT / "bin"
STACKS = ("btstack", "nimble")
PINNED = {
    ".": "e0e9fbb17ed6fd06bb76e266ae554784c9c80804",
    "lib/micropython-lib": "8380c7bb8f9e5e5260e9539156742925e00366b2",
    "lib/btstack": "77e752abd6a0992334047a48038a5a3960e5c6bc",
    "lib/mynewt-nimble": "42849560ba7906f023f61e5f7ff3709ba2c1dfca",
}
RUNS_HERE = sys.platform == "linux" and platform.machine() == "x86_64"


def _record(stack: str) -> dict[str, object]:
    record: dict[str, object] = json.loads(
        (BIN / f"micropython-bt-{stack}.json").read_text(encoding="utf-8")
    )
    return record


def _build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unix_build", PORT / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_binary_has_its_provenance() -> None:
    binaries = {p.name for p in BIN.iterdir() if not p.name.endswith((".json", ".md"))}
    assert binaries == {f"micropython-bt-{stack}" for stack in STACKS}
    assert {p.name for p in BIN.glob("*.json")} == {f"{name}.json" for name in binaries}


@pytest.mark.parametrize("stack", STACKS)
def test_the_binary_is_the_one_its_provenance_describes(stack: str) -> None:
    data = (BIN / f"micropython-bt-{stack}").read_bytes()
    record = _record(stack)
    assert record["stack"] == stack and record["micropython"] == "v1.28.0"
    assert record["bytes"] == len(data)
    assert record["sha256"] == hashlib.sha256(data).hexdigest()
    assert b"MicroPython v1.28.0 on " in data  # the clean tag, not "-dirty"


@pytest.mark.parametrize("stack", STACKS)
def test_the_sources_are_the_commits_v1_28_0_pins(stack: str) -> None:
    sources = _record(stack)["sources"]
    assert isinstance(sources, list)
    by_path = {source["path"]: source["commit"] for source in sources}
    library = "lib/btstack" if stack == "btstack" else "lib/mynewt-nimble"
    assert set(by_path) == {".", "lib/micropython-lib", library}
    assert all(by_path[path] == PINNED[path] for path in by_path)


@pytest.mark.parametrize("stack", STACKS)
def test_the_patches_are_the_committed_ones(stack: str) -> None:
    patches = _record(stack)["patches"]
    assert isinstance(patches, list)
    for patch in patches:
        data = (ROOT / patch["file"]).read_bytes()
        assert patch["sha256"] == hashlib.sha256(data).hexdigest(), patch["file"]
    names = [Path(patch["file"]).name for patch in patches]
    assert names == (["unix-mpbthciport-h.patch"] if stack == "btstack" else [])


def test_the_provenance_summary_is_up_to_date() -> None:
    build = _build_script()
    records = [_record(stack) for stack in STACKS]
    assert (BIN / "PROVENANCE.md").read_text(encoding="utf-8") == build.render_provenance(records)


@pytest.mark.skipif(not RUNS_HERE, reason="the binaries are for x86-64 Linux")
@pytest.mark.parametrize("stack", STACKS)
def test_the_binary_runs_with_its_stack_and_asyncio_frozen(stack: str) -> None:
    result = subprocess.run(
        [
            str(BIN / f"micropython-bt-{stack}"),
            "-c",
            "import sys, blestack, bluetooth, asyncio; "
            "print(sys.implementation.version[:3], blestack.NAME, hasattr(bluetooth, 'BLE'))",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["(1,", "28,", "0)", stack, "True"]


def test_the_build_script_says_where_its_sources_come_from() -> None:
    result = subprocess.run(
        [sys.executable, str(PORT / "build.py"), "--sources", str(ROOT / "no-such-dir")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "no such directory" in result.stderr
