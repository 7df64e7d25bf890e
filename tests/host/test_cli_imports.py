"""The command line starts at once (issue 39): each command line imports what it needs. Its
rows are cheap to read, a row's arguments are made only when the line names it, and
`--version` and `--help` load no board, network or app code. Counted in modules, which no
load on the machine changes (the times are `make bench`'s: bench/cli_bench.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cribboard.cmdline.rows import Args, Command, arg, build_parser
from cribboard.virtual import VirtualBoard

# Reads the command line as `cribboard` does, then writes its exit status and the modules it
# imported, a line each (in plain text: the driver imports nothing the command might not).
DRIVER = """\
import sys
from cribboard.cli import main
out, words = sys.argv[1], sys.argv[2:]
try:
    status = main(words)
except SystemExit as stopped:
    status = stopped.code
with open(out, "w") as file:
    file.write("\\n".join([repr(status), *sorted(sys.modules)]))
"""

# Never for reading the command line: the apps, the board's link, the network.
APPS = (
    "cribboard.play.",
    "cribboard.rules",
    "cribboard.bridge.",
    "cribboard.mqtt",
    "cribboard.web",
    "cribboard.hallwire",
    "cribboard.ble",
    "cribboard.deploy",
    "paho",
    "aiomqtt",
    "bleak",
)
ROWS = ("cribboard.hall.cli", "cribboard.remote.cli", "cribboard.virtual.cli")
"""A feature's command row: read for every line (the rest of the feature is not)."""
HALL_HOME = "cribboard.hall.home"
"""Where a hall's files are and what names them, which the hall's rows quote in their help
(the standard library and the base floor: the store it opens is imported when it opens it)."""
VIRTUAL_REGISTRY = "cribboard.virtual.registry"
"""The running virtual boards, read by a board command that finds its board (a small file
reader: no subprocess, no pty)."""
BOARD = ("asyncio", "serial", "cribboard.api", "cribboard.client", "cribboard.transport")


def imported(tmp_path: Path, *words: str) -> set[str]:
    out = tmp_path / "modules.txt"
    ran = subprocess.run(
        [sys.executable, "-c", DRIVER, str(out), *words],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    status, *modules = out.read_text().split("\n")
    assert status in ("0", "None"), ran.stderr
    return set(modules)


def among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The modules `names` names: a name is the module and its submodules; a name ending in a
    dot, the package's submodules only (its __init__ is cheap)."""

    def named(module: str, name: str) -> bool:
        if name.endswith("."):
            return module.startswith(name)
        return module == name or module.startswith(name + ".")

    return sorted(m for m in modules if any(named(m, name) for name in names))


def features_beyond_rows(modules: set[str]) -> list[str]:
    """Modules of the hall, remote games and the virtual board other than their rows."""
    packages = ("cribboard.hall.", "cribboard.remote.", "cribboard.virtual.")
    return [m for m in among(modules, packages) if m not in (*ROWS, HALL_HOME, VIRTUAL_REGISTRY)]


@pytest.mark.parametrize("words", [["--version"], ["--help"], ["--lang", "sv", "--help"]])
def test_version_and_help_load_no_board_network_or_app(tmp_path: Path, words: list[str]) -> None:
    modules = imported(tmp_path, *words)
    assert among(modules, APPS) == []
    assert among(modules, BOARD) == []
    assert "cribboard.portshare" not in modules
    assert features_beyond_rows(modules) == []


ASYNC_LINK = ("asyncio", "cribboard.api", "cribboard.client", "cribboard.transport")
"""The library's link, on asyncio: a one-shot command (cribboard.oneshot) needs none of it."""


@pytest.mark.parametrize("words", [["peg", "blue", "1"], ["status"], ["set", "orange", "3"]])
def test_a_one_shot_command_loads_pyserial_and_the_shared_port_and_no_asyncio(
    tmp_path: Path, vboard: VirtualBoard, words: list[str]
) -> None:
    modules = imported(tmp_path, "--port", vboard.port, *words)
    assert {"serial", "cribboard.oneshot", "cribboard.portshare"} <= modules
    assert among(modules, ASYNC_LINK) == []
    assert among(modules, APPS) == []
    assert features_beyond_rows(modules) == []


UNNEEDED_STDLIB = ("dataclasses", "inspect", "hashlib", "shutil", "tempfile", "json", "logging")
"""The standard library's modules a one-shot command has no use for: `dataclasses` (with
`inspect`, `ast`, `dis`), `hashlib` (OpenSSL), `shutil` and `tempfile` (the compression
modules), `json` (for `--json` only), `logging` (without -v it shows nothing: QuietLog)."""


@pytest.mark.parametrize("words", [["peg", "blue", "1"], ["status"]])
def test_a_one_shot_command_loads_no_standard_module_it_does_not_use(
    tmp_path: Path, vboard: VirtualBoard, words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No runtime directory: the shared port's files go to the temporary directory, found
    # without `tempfile`. A short one (pytest's own under xdist is too deep for a Unix
    # socket's 108-byte path, whatever the file's name).
    temporary = Path(tempfile.mkdtemp(prefix="cb-", dir="/tmp"))
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(temporary / "absent"))
        monkeypatch.setenv("TMPDIR", str(temporary))
        modules = imported(tmp_path, "--port", vboard.port, *words)
        assert list(temporary.glob("cribboard-*/port-*.lock"))  # the files went there
    finally:
        shutil.rmtree(temporary)
    assert "cribboard.oneshot" in modules
    assert among(modules, UNNEEDED_STDLIB) == []


@pytest.mark.parametrize("words", [["players", "list"], ["export", "--games", "-"]])
def test_the_hall_commands_that_read_the_store_load_nothing_of_the_network(
    tmp_path: Path, words: list[str]
) -> None:
    from cribboard.hall.home import open_store

    with open_store(tmp_path, create=True) as store:
        store.register("Ann")
    modules = imported(tmp_path, "hall", *words, "--dir", str(tmp_path))
    assert "cribboard.hall.store" in modules
    assert among(modules, ("aiohttp", "aiomqtt", "paho", "cribboard.hall.director")) == []


def test_a_command_left_on_asyncio_loads_the_library(tmp_path: Path, vboard: VirtualBoard) -> None:
    modules = imported(tmp_path, "--port", vboard.port, "match")
    assert {"asyncio", "cribboard.api"} <= modules
    assert "cribboard.oneshot" not in modules


def test_a_command_whose_help_needs_the_rules_loads_them_when_named(tmp_path: Path) -> None:
    assert "cribboard.play.scorekeeper" in imported(tmp_path, "keep", "--help")
    assert "cribboard.rules.allhands" in imported(tmp_path, "count", "--help")


def test_a_rows_arguments_are_made_only_when_the_line_names_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    made: list[str] = []

    def lazy_args() -> Args:
        made.append("lazy")
        return (arg("--deep", action="store_true", help="made late"),)

    rows = (
        Command("quick", "a quick one", lambda args: 0, (arg("n", type=int),)),
        Command("lazy", "its arguments made late", lambda args: 0, lazy_args),
        Command(
            "group",
            "a group",
            commands=(Command("inner", "inside", lambda args: 0, lazy_args),),
        ),
    )
    parser = build_parser(rows, (), "some rows")
    assert parser.parse_args(["quick", "3"]).n == 3
    assert made == []
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    assert "its arguments made late" in capsys.readouterr().out
    assert made == []
    assert parser.parse_args(["lazy", "--deep"]).deep is True
    assert made == ["lazy"]
    assert parser.parse_args(["group", "inner", "--deep"]).deep is True
    assert made == ["lazy", "lazy"]
    with pytest.raises(SystemExit):
        parser.parse_args(["lazy", "--help"])
    assert "made late" in capsys.readouterr().out
