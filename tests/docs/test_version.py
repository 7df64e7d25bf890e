"""One version: the firmware's `cribfw/version.py` is the only place it is written; the package's
metadata (pyproject.toml's dynamic version), the host's `__version__`, `cribboard --version`,
the board's `hello` and the changelog all say the same. (The built wheel's metadata is checked
in tests/docs/test_wheel.py.)"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import cribboard
from cribboard.cli import main
from cribboard.virtual.interpreter import find_micropython
from cribcore.protocol import PROTOCOL_MAJOR, PROTOCOL_MINOR
from cribfw.version import FIRMWARE_VERSION

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_written_once_in_the_firmware_and_the_package_reads_it() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", FIRMWARE_VERSION)
    assert cribboard.__version__ == FIRMWARE_VERSION
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert "version" not in PYPROJECT["project"]
    source = PYPROJECT["tool"]["hatch"]["version"]
    assert source["path"] == "firmware/cribfw/version.py"
    # hatchling searches the file with the pattern, line by line (re.MULTILINE).
    text = (ROOT / source["path"]).read_text(encoding="utf-8")
    assert re.search(source["pattern"], text, re.MULTILINE)["version"] == FIRMWARE_VERSION


def test_the_installed_metadata_has_the_same_version() -> None:
    installed = importlib.metadata.version("cribboard")
    assert installed == FIRMWARE_VERSION, (
        f"the installed metadata says {installed}: reinstall (make test does, or "
        "pip install -e '.[test]')"
    )


def test_version_names_the_package_and_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    protocol = f"{PROTOCOL_MAJOR}.{PROTOCOL_MINOR}"
    assert capsys.readouterr().out == f"cribboard {FIRMWARE_VERSION} (protocol {protocol})\n"


def test_python_dash_m_cribboard_is_the_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cribboard", "--lang", "sv", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"cribboard {FIRMWARE_VERSION} (protokoll {PROTOCOL_MAJOR}.{PROTOCOL_MINOR})\n"
    )


def test_the_version_file_runs_on_micropython() -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'firmware')!r}); "
        "from cribfw.version import FIRMWARE_VERSION; print(FIRMWARE_VERSION)"
    )
    result = subprocess.run(
        [find_micropython(), "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == FIRMWARE_VERSION


def test_the_changelog_starts_with_this_version() -> None:
    headings = re.findall(
        r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.MULTILINE
    )
    assert headings and headings[0] == FIRMWARE_VERSION
