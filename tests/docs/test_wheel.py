"""The package as a stranger gets it: an sdist built from this tree, a wheel built from that
sdist, and the wheel installed in a fresh virtual environment WITHOUT the test extras, outside
the repository. Every module of the wheel imports there, `cribboard keep` runs against the
virtual board, the firmware tree the wheel carries is the repository's, and the metadata is
what a package index shows.

Marked `wheel`: it needs pip's index for the build backend and the runtime dependencies (a warm
pip cache serves them; make test's set-up fills it). About a minute, most of it pip.
`pytest -m "not wheel"` leaves it out."""

from __future__ import annotations

import email
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

import pytest

from cribboard.firmware_build import source_files
from cribboard.frozen import frozen_sources
from cribfw.version import FIRMWARE_VERSION
from rp2support import ProtocolLink
from support import Spawn

# Most of the time goes to pip (the fixture installs the wheel's dependencies once).
pytestmark = [pytest.mark.wheel, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
PIP_TIMEOUT = 600.0  # a cold cache downloads the dependencies
TEST_TOOLS = ("pytest", "PIL", "babel", "playwright", "hypothesis", "mypy", "cribdev")


@dataclass(frozen=True)
class Installed:
    sdist: Path
    wheel: Path
    from_tree: Path  # the wheel built straight from this tree
    backend: Path  # hatchling and twine (pip --target)
    venv: Path
    home: Path  # a working directory outside the repository

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def cribboard(self) -> str:
        return str(self.venv / "bin" / "cribboard")

    def run(
        self, *args: str, stdin: str = "", env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.home,
            env=env or clean_env(),
        )


def clean_env() -> dict[str, str]:
    """The environment without this venv's or the repository's traces."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "CRIBBOARD_", "PYTEST", "VIRTUAL_ENV"))
    }
    env["LANGUAGE"] = "en"
    return env


def _pip(*args: str) -> None:
    """This venv's pip (pip's cache shared), on another environment with --python/--target."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _backend(backend: Path, hook: str, source: Path, out: Path) -> Path:
    """Run the build backend's PEP 517 hook (build_sdist, build_wheel) on `source`."""
    made = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, sys.argv[1]); import hatchling.build as b; "
            f"print(b.{hook}(sys.argv[2]))",
            str(backend),
            str(out),
        ],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    return out / made.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("wheel")
    # The build backend, as a front end's build isolation gets it (pyproject.toml's
    # requirement), and twine, which checks the dists as a package index would.
    backend = base / "backend"
    _pip("install", "--quiet", "--target", str(backend), "hatchling>=1.27", "twine")
    dist = base / "dist"
    sdist = _backend(backend, "build_sdist", ROOT, dist)
    unpacked = base / "unpacked"
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (tree,) = unpacked.iterdir()
    wheel = _backend(backend, "build_wheel", tree, dist)
    from_tree = _backend(backend, "build_wheel", ROOT, base / "from-tree")
    # A fresh environment with the wheel and its dependencies only (no pip of its own: this
    # venv's pip installs into it).
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _pip("--python", str(venv / "bin" / "python"), "install", "--quiet", str(wheel))
    home = base / "home"
    home.mkdir()
    yield Installed(sdist, wheel, from_tree, backend, venv, home)


def _metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


def test_the_wheel_holds_the_core_once_the_licence_and_no_development_tools(
    installed: Installed,
) -> None:
    with zipfile.ZipFile(installed.wheel) as archive:
        names = archive.namelist()
    assert "cribcore/state.py" in names
    assert not [n for n in names if "/cribcore/" in n], "cribcore shipped twice"
    assert not [n for n in names if n.startswith("cribdev/") or "node_modules" in n]
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".mpy"))]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "cribboard/py.typed" in names
    with tarfile.open(installed.sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    for name in ("LICENSE", "CHANGELOG.md", "README.md", "hatch_build.py", "Makefile"):
        assert name in members, name
    assert "firmware/cribcore/state.py" in members and "tests/docs/test_wheel.py" in members
    assert not [m for m in members if "node_modules" in m or m.startswith((".venv", ".hyp"))]


def test_the_metadata_is_what_an_index_shows(installed: Installed) -> None:
    meta = _metadata(installed.wheel)
    assert meta["Version"] == FIRMWARE_VERSION
    assert meta["License-Expression"] == "MIT"
    assert "Typing :: Typed" in meta.get_all("Classifier", [])
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL", []))
    assert urls["Repository"] == "https://github.com/cribboard/cribboard"
    requires = meta.get_all("Requires-Dist", [])
    assert not [r for r in requires if "extra ==" not in r and r.startswith(("babel", "pillow"))]
    readme = meta.get_payload()
    assert isinstance(readme, str) and "pipx install cribboard" in readme
    targets = re.findall(r"\]\(([^)\s]+)", readme)
    assert targets, "no links found in the README"
    relative = [t for t in targets if not t.startswith("https://")]
    assert not relative, f"links that break on a package index: {relative}"


def test_the_dists_pass_twine_check_and_the_wheel_is_reproducible(installed: Installed) -> None:
    # twine check renders the README as the package index does (readme_renderer).
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "check",
            "--strict",
            str(installed.sdist),
            str(installed.wheel),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean_env(), "PYTHONPATH": str(installed.backend)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed.wheel.read_bytes() == installed.from_tree.read_bytes()


def test_every_module_of_the_wheel_imports_without_the_test_tools(installed: Installed) -> None:
    script = """
import importlib, importlib.util, json, sys, sysconfig
from pathlib import Path
site = Path(sysconfig.get_paths()["purelib"])
modules = []
for package in ("cribboard", "cribcore"):
    for path in sorted((site / package).rglob("*.py")):
        parts = path.relative_to(site).with_suffix("").parts
        if parts[:2] == ("cribboard", "firmware") or parts[-1] == "__main__":
            continue  # the firmware runs on MicroPython; __main__ runs a program
        modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
failed = {}
for name in modules:
    try:
        importlib.import_module(name)
    except Exception as err:
        failed[name] = f"{type(err).__name__}: {err}"
present = [t for t in sys.argv[1:] if importlib.util.find_spec(t) is not None]
print(json.dumps({"modules": modules, "failed": failed, "test_tools": present}))
"""
    result = installed.run(installed.python, "-I", "-c", script, *TEST_TOOLS)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["test_tools"] == [], "the plain install has test tools"
    assert report["failed"] == {}
    assert len(report["modules"]) > 100
    assert "cribboard.hardware.picture" in report["modules"]


def test_the_installed_command_line(installed: Installed) -> None:
    result = installed.run(installed.cribboard, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"cribboard {FIRMWARE_VERSION} (protocol ")
    result = installed.run(installed.python, "-m", "cribboard", "--version")
    assert result.returncode == 0 and result.stdout.startswith("cribboard "), result.stderr
    # The maker's drawings need nothing more; the board picture names its extra.
    out = installed.home / "hardware"
    result = installed.run(installed.python, "-m", "cribboard.hardware", "--out", str(out))
    assert result.returncode == 1
    assert result.stderr == "the board picture needs Pillow: pip install 'cribboard[hardware]'\n"
    assert (out / "template.svg").is_file() and (out / "wiring-pico2w.svg").is_file()


def test_keep_runs_against_the_virtual_board(installed: Installed) -> None:
    result = installed.run(installed.cribboard, "keep", "--virtual", stdin="q\n")
    assert result.returncode == 0, result.stderr
    assert "game to 121, two players" in result.stdout


def test_the_firmware_the_wheel_carries_is_the_repository_s(installed: Installed) -> None:
    script = (
        "import json; from cribboard.firmware_build import source_files; "
        "from cribboard.frozen import frozen_sources; "
        "print(json.dumps([list(source_files()), list(frozen_sources())]))"
    )
    result = installed.run(installed.python, "-I", "-c", script)
    assert result.returncode == 0, result.stderr
    deployed, frozen = json.loads(result.stdout)
    assert deployed == list(source_files())
    assert frozen == list(frozen_sources())


def test_sim_rp2_says_how_to_get_the_emulator(installed: Installed, tmp_path: Path) -> None:
    env = {**clean_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = installed.run(installed.cribboard, "virtual", "--rp2", env=env)
    assert result.returncode == 1
    message = result.stderr.strip()
    assert message.startswith("cribboard virtual: ") and "\n" not in message
    assert "cribboard virtual --rp2 --install-emulator" in message


@pytest.mark.skipif(
    not (shutil.which("node") and shutil.which("npm")), reason="needs Node.js and npm"
)
def test_sim_rp2_installs_the_emulator_from_its_lock_file(
    installed: Installed, tmp_path: Path, spawn: Spawn
) -> None:
    cache = tmp_path / "cache"
    env = {**clean_env(), "XDG_CACHE_HOME": str(cache)}
    sim = spawn(
        [installed.cribboard, "virtual", "--rp2", "--install-emulator"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=installed.home,
        env=env,
    )
    try:
        assert sim.stdout is not None
        port = sim.stdout.readline().strip()  # printed once the chip is powered on
        assert port.startswith("/dev/"), sim.stderr.read() if sim.stderr else ""
        link = ProtocolLink(port)
        try:
            link.wait_up()  # the firmware answers once MicroPython has started it
        finally:
            link.close()
        status = installed.run(installed.cribboard, "--port", port, "status", "--json", env=env)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["firmware"] == FIRMWARE_VERSION
    finally:
        sim.send_signal(signal.SIGINT)
        out, err = sim.communicate(timeout=60)
    assert sim.returncode == 0, err
    (installed_dir,) = (cache / "cribboard" / "rp2-emulator").iterdir()
    lock = json.loads((installed_dir / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/rp2040js"]["version"]
    package = json.loads((installed_dir / "node_modules/rp2040js/package.json").read_text())
    assert package["version"] == pinned
