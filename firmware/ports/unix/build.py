"""Build the unix MicroPython interpreters with a real `bluetooth` module, with provenance.

    python3 firmware/ports/unix/build.py --sources DIR [--stacks btstack nimble] [--jobs N]

DIR holds bare git repositories (snapshots or clones) of micropython/micropython,
bluekitchen/btstack and micropython/mynewt-nimble, found as the rp2 build finds them
(`DIR/OWNER+NAME/repo`, `DIR/OWNER+NAME`, `DIR/NAME.git` or `DIR/NAME`). Nothing is downloaded.

MicroPython v1.28.0's unix port is built twice, x86-64 Linux, with the host's gcc:

- `micropython-bt-btstack`: `bluetooth` on btstack (the commit the tag pins; the stack of the
  Pico W images) over an HCI H4 UART, with one patch of MicroPython (patches/, a header the
  unix port's H4 build lacks);
- `micropython-bt-nimble`: `bluetooth` on NimBLE (the commit the tag pins, in MicroPython's
  fork of mynewt-nimble; the stack of the ESP32 boards), unpatched.

Both read the HCI UART named by the environment variable MICROPYBTUART. Each freezes asyncio
and a one-line module `blestack` naming its stack (the firmware's limits per stack,
cribfw/blestack.py). Without berkeley-db, TLS and libffi, so the binaries need only the C
library. The binaries go to firmware/ports/unix/bin/ with `<name>.json` (sources, patches,
toolchain, command, sha256) and PROVENANCE.md; tests/ble/test_unix_bt_binaries.py checks them.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent  # firmware/ports/unix
ROOT = HERE.parents[2]
OUT = HERE / "bin"
PATCHES = HERE / "patches"
DEFAULT_BUILD_DIR = ROOT / "build" / "unix"


def _rp2_build() -> ModuleType:
    """The rp2 build script: its checkout and pin helpers are shared, not copied."""
    spec = importlib.util.spec_from_file_location("rp2_build", HERE.parent / "rp2" / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


rp2 = _rp2_build()
BuildFailure = rp2.BuildFailure
MICROPYTHON_TAG = rp2.MICROPYTHON_TAG
MICROPYTHON_COMMIT = rp2.MICROPYTHON_COMMIT

BTSTACK = next(lib for lib in rp2.LIBRARIES if lib.path == "lib/btstack")
# Not built from, but MicroPython's build refuses a frozen manifest without it.
MICROPYTHON_LIB = next(lib for lib in rp2.LIBRARIES if lib.path == "lib/micropython-lib")
NIMBLE = rp2.Library(
    "lib/mynewt-nimble", "micropython/mynewt-nimble", "42849560ba7906f023f61e5f7ff3709ba2c1dfca"
)

COMMON = [
    "VARIANT=standard",
    "MICROPY_PY_BLUETOOTH=1",
    "MICROPY_PY_BTREE=0",
    "MICROPY_PY_SSL=0",
    "MICROPY_PY_FFI=0",
]
# name: (library, make variables, patches)
STACKS: dict[str, tuple[object, list[str], list[str]]] = {
    "btstack": (
        BTSTACK,
        [
            "MICROPY_BLUETOOTH_BTSTACK=1",
            "MICROPY_BLUETOOTH_BTSTACK_H4=1",
            # Explicit: the Makefile picks USB whenever pkg-config finds libusb-1.0.
            "MICROPY_BLUETOOTH_BTSTACK_USB=0",
        ],
        ["unix-mpbthciport-h.patch"],
    ),
    "nimble": (NIMBLE, ["MICROPY_BLUETOOTH_NIMBLE=1"], []),
}


def binary_name(stack: str) -> str:
    return f"micropython-bt-{stack}"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def toolchain() -> dict[str, str]:
    versions = {
        "gcc": rp2.tool_version("gcc", "--version"),
        "make": rp2.tool_version("make", "--version"),
        "python3": rp2.tool_version("python3", "--version"),
        "libc": rp2.tool_version("ldd", "--version"),
    }
    missing = [name for name, version in versions.items() if not version]
    if missing:
        raise BuildFailure(f"missing tools: {', '.join(missing)} (Debian: build-essential)")
    return versions


def prepare(sources: Path, src: Path, stacks: list[str]) -> list[object]:
    """Check out MicroPython at the tag and each stack's library at the commit it pins."""
    mirror = rp2.find_repository(sources, rp2.MICROPYTHON_REPOSITORY)
    if mirror is None:
        raise BuildFailure(f"no {rp2.MICROPYTHON_REPOSITORY} repository under {sources}")
    tagged = rp2.git("rev-parse", MICROPYTHON_TAG + "^{commit}", git_dir=mirror)
    if tagged != MICROPYTHON_COMMIT:
        raise BuildFailure(f"{MICROPYTHON_TAG} is {tagged}, not {MICROPYTHON_COMMIT}")
    top = src / "micropython"
    print(f"checking out micropython {MICROPYTHON_TAG}", flush=True)
    rp2.check_out(mirror, MICROPYTHON_COMMIT, top, ())
    rp2.git(
        "update-ref",
        "refs/tags/" + MICROPYTHON_TAG,
        rp2.git("rev-parse", MICROPYTHON_TAG, git_dir=mirror),
        cwd=top,
    )
    trees = [
        rp2.Tree(
            "micropython",
            rp2.MICROPYTHON_REPOSITORY,
            ".",
            MICROPYTHON_COMMIT,
            rp2.describe(mirror, MICROPYTHON_COMMIT),
            [],
        )
    ]
    pinned = rp2.git("ls-tree", MICROPYTHON_COMMIT, "lib/", git_dir=mirror)
    for library in [MICROPYTHON_LIB] + [STACKS[stack][0] for stack in stacks]:
        assert isinstance(library, rp2.Library)
        if f"commit {library.commit}\t{library.path}" not in pinned:
            raise BuildFailure(f"{MICROPYTHON_TAG} does not pin {library.path} at {library.commit}")
        library_mirror = rp2.find_repository(sources, library.repository)
        if library_mirror is None:
            raise BuildFailure(f"no {library.repository} repository under {sources}")
        print(f"checking out {library.path} ({library.commit[:12]})", flush=True)
        left_out = rp2.check_out(
            library_mirror, library.commit, top / library.path, library.absent_ok
        )
        trees.append(
            rp2.Tree(
                library.path.removeprefix("lib/"),
                library.repository,
                library.path,
                library.commit,
                rp2.describe(library_mirror, library.commit),
                left_out,
            )
        )
    rp2.verify(top, trees)
    return trees


def apply_patches(top: Path, names: list[str]) -> None:
    """Apply the stack's patches to the clean MicroPython checkout (new files only, so the
    version string stays the plain tag), undoing any earlier build's first."""
    header = top / "ports" / "unix" / "mpbthciport.h"
    header.unlink(missing_ok=True)
    for name in names:
        rp2.git("apply", str(PATCHES / name), cwd=top)


def build_commands(stack: str, build: str, manifest: str, jobs: str) -> list[list[str]]:
    variables = COMMON + STACKS[stack][1]
    return [
        ["make", "-C", "mpy-cross", f"-j{jobs}"],
        ["make", "-C", "ports/unix", f"-j{jobs}"]
        + variables
        + [f"BUILD={build}", f"PROG={binary_name(stack)}", f"FROZEN_MANIFEST={manifest}"],
    ]


def write_manifest(directory: Path, stack: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "blestack.py").write_text(f'NAME = "{stack}"\n', encoding="utf-8")
    manifest = directory / "manifest.py"
    manifest.write_text(MANIFEST, encoding="utf-8")
    return manifest


MANIFEST = """include("$(MPY_DIR)/extmod/asyncio")
module("blestack.py")
"""


def build_stack(
    stack: str, top: Path, work: Path, trees: list[object], tools: dict[str, str], jobs: int
) -> dict[str, object]:
    build = work / "out" / stack  # kept between runs: make rebuilds what changed
    manifest = write_manifest(work / "manifest" / stack, stack)
    patches = STACKS[stack][2]
    apply_patches(top, patches)
    epoch = rp2.git("log", "-1", "--format=%ct", MICROPYTHON_COMMIT, cwd=top)
    env = dict(os.environ, SOURCE_DATE_EPOCH=epoch)
    log = work / "logs" / f"{stack}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    print(f"building {binary_name(stack)} ...", flush=True)
    started = time.monotonic()
    for command in build_commands(stack, str(build), str(manifest), str(jobs)):
        rp2.run_logged(command, top, log, env)
    seconds = time.monotonic() - started
    program = build / binary_name(stack)
    data = program.read_bytes()
    if f"MicroPython {MICROPYTHON_TAG} on ".encode() not in data:
        raise BuildFailure(f"{program} does not call itself MicroPython {MICROPYTHON_TAG}")
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / binary_name(stack)
    shutil.copyfile(program, target)
    target.chmod(0o755)
    library = STACKS[stack][0]
    record: dict[str, object] = {
        "schema": 1,
        "binary": binary_name(stack),
        "stack": stack,
        "platform": "linux-x86_64",
        "micropython": MICROPYTHON_TAG,
        "bytes": len(data),
        "sha256": sha256(data),
        "sources": [
            {
                "name": tree.name,
                "repository": tree.repository,
                "path": tree.path,
                "describe": tree.describe,
                "commit": tree.commit,
                "left_out": tree.left_out,
            }
            for tree in trees
            if tree.path in (".", MICROPYTHON_LIB.path, getattr(library, "path", ""))
        ],
        "patches": [
            {
                "file": f"firmware/ports/unix/patches/{name}",
                "sha256": sha256((PATCHES / name).read_bytes()),
            }
            for name in patches
        ],
        "frozen": {"manifest": MANIFEST, "blestack.py": f'NAME = "{stack}"\n'},
        "toolchain": tools,
        "build": {
            "rebuild": f"python3 firmware/ports/unix/build.py --sources DIR --stacks {stack}",
            "commands": [
                " ".join(command)
                for command in build_commands(stack, "<build>", "<manifest>", "<jobs>")
            ],
            "cwd": "<micropython checkout>",
            "environment": {"SOURCE_DATE_EPOCH": epoch},
        },
    }
    (OUT / f"{binary_name(stack)}.json").write_text(
        json.dumps(record, indent=2) + "\n", encoding="utf-8"
    )
    print(f"  {binary_name(stack)}: {len(data)} bytes, {seconds:.0f} s", flush=True)
    return record


def render_provenance(records: list[dict[str, object]]) -> str:
    """The human-readable summary of the binaries' provenance files."""
    lines = [
        "# The unix Bluetooth interpreters: where they come from",
        "",
        "Generated by `firmware/ports/unix/build.py` from the `<binary>.json` files beside this",
        "one; do not edit by hand. x86-64 Linux, dynamically linked against the C library only.",
        "",
        "| binary | stack | bytes | sha256 |",
        "| --- | --- | ---: | --- |",
    ]
    for record in records:
        lines.append(
            f"| `{record['binary']}` | {record['stack']} | {record['bytes']:,} | "
            f"`{record['sha256']}` |"
        )
    for record in records:
        sources, patches, tools, build = (
            record["sources"],
            record["patches"],
            record["toolchain"],
            record["build"],
        )
        assert isinstance(sources, list) and isinstance(patches, list)
        assert isinstance(tools, dict) and isinstance(build, dict)
        lines += ["", f"## {record['binary']}", "", "Sources:", ""]
        for source in sources:
            described = f" ({source['describe']})" if source["describe"] else ""
            left_out = (
                f"; left out (absent from the snapshot, unused): {', '.join(source['left_out'])}"
                if source["left_out"]
                else ""
            )
            lines.append(
                f"- {source['repository']} `{source['commit']}`{described} at `{source['path']}`"
                f"{left_out}"
            )
        lines += ["", "Patches: " + (", ".join(f"`{p['file']}`" for p in patches) or "none")]
        lines += ["", "Toolchain: " + "; ".join(f"{k}: {v}" for k, v in tools.items())]
        lines += ["", "Commands (in the MicroPython checkout):", ""]
        lines += [f"    {command}" for command in build["commands"]]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="build.py",
        description="Build MicroPython v1.28.0's unix port with bluetooth on btstack (H4 UART) "
        "and on NimBLE, with provenance files.",
    )
    parser.add_argument(
        "--sources",
        type=Path,
        required=True,
        metavar="DIR",
        help="the directory holding the bare git repositories of micropython/micropython, "
        "bluekitchen/btstack and micropython/mynewt-nimble",
    )
    parser.add_argument(
        "--stacks", nargs="+", choices=list(STACKS), default=list(STACKS), metavar="STACK"
    )
    parser.add_argument("--build-dir", type=Path, default=DEFAULT_BUILD_DIR, metavar="DIR")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.sources.is_dir():
        print(f"build.py: --sources {args.sources}: no such directory", file=sys.stderr)
        return 2
    work = args.build_dir.resolve()
    try:
        tools = toolchain()
        trees = prepare(args.sources.resolve(), work / "src", args.stacks)
        top = work / "src" / "micropython"
        for stack in args.stacks:
            build_stack(stack, top, work, trees, tools, args.jobs)
    except (BuildFailure, subprocess.CalledProcessError) as error:
        print(f"build.py: {error}", file=sys.stderr)
        return 1
    records = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(OUT.glob("*.json"))]
    (OUT / "PROVENANCE.md").write_text(render_provenance(records), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
