"""Rebuild the rp2 firmware images in firmware/ports/rp2/images/ from source, with provenance.

    python3 firmware/ports/rp2/build.py --sources DIR [--images NAME ...] [--jobs N]

(or `make rp2-images RP2_SOURCES=DIR`). DIR holds bare git repositories (snapshots or clones)
of MicroPython and the libraries its v1.28.0 tag pins, each found as `DIR/OWNER+NAME/repo`,
`DIR/OWNER+NAME`, `DIR/NAME.git` or `DIR/NAME`. Nothing is downloaded.

The script checks out each pinned commit into build/rp2/src/ (MicroPython, with the libraries
nested in its lib/ as its submodules), verifies every commit id against the pins, builds
mpy-cross and then MicroPython's rp2 port per image with the arm-none-eabi toolchain (Debian:
gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib cmake build-essential)
and no picotool, encodes each firmware.bin as UF2 (cribboard.uf2), and writes next to each image
`<image>.json` (sources, toolchain, command, flash layout, symbols, digests) and PROVENANCE.md.
An image that cannot be built is reported and left as it was; the others are still built.

Python 3.11 standard library only (plus the host package's own uf2 and frozen modules, which
are standard library only too).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent  # firmware/ports/rp2
FIRMWARE = HERE.parents[1]
ROOT = FIRMWARE.parent
# The host package and the shared core it imports (cribcore, in firmware/), as in a clone.
sys.path[:0] = [str(ROOT / "host"), str(FIRMWARE)]

from cribboard import uf2  # noqa: E402
from cribboard.frozen import (  # noqa: E402
    PAGE_MODULE,
    board_digest,
    board_files,
    frozen_digest,
    frozen_name,
    frozen_sources,
    page_module,
)

MICROPYTHON_TAG = "v1.28.0"
MICROPYTHON_COMMIT = "e0e9fbb17ed6fd06bb76e266ae554784c9c80804"
MICROPYTHON_REPOSITORY = "micropython/micropython"


@dataclass(frozen=True)
class Library:
    """A submodule of MicroPython that the rp2 port builds from, at the commit v1.28.0 pins."""

    path: str  # in the MicroPython tree
    repository: str  # owner/name on GitHub
    commit: str
    wireless: bool = False  # needed only by the Pico W boards (Wi-Fi and Bluetooth)
    # Files the public snapshots lack (large, unused by the build): left out of the checkout.
    absent_ok: tuple[str, ...] = ()


LIBRARIES = (
    Library(
        "lib/pico-sdk",
        "raspberrypi/pico-sdk",
        "a1438dff1d38bd9c65dbd693f0e5db4b9ae91779",
        absent_ok=("src/rp2350/hardware_regs/RP2350.svd",),
    ),
    Library("lib/tinyusb", "hathach/tinyusb", "aa0fc2e08f1c2dd6f026a431e8989357fbb4c5bf"),
    Library(
        "lib/micropython-lib",
        "micropython/micropython-lib",
        "8380c7bb8f9e5e5260e9539156742925e00366b2",
    ),
    Library(
        "lib/mbedtls",
        "Mbed-TLS/mbedtls",
        "107ea89daaefb9867ea9121002fbbdf926780e98",
        absent_ok=("tests/suites/test_suite_psa_crypto_op_fail.generated.data",),
    ),
    Library(
        "lib/cyw43-driver",
        "georgerobotics/cyw43-driver",
        "055d64274b014dd7b1c2fc94d26e8a18face7124",
        wireless=True,
    ),
    Library(
        "lib/btstack",
        "bluekitchen/btstack",
        "77e752abd6a0992334047a48038a5a3960e5c6bc",
        wireless=True,
        absent_ok=(
            "port/msp432p401lp-cc256x/ti/devices/msp432p4xx/driverlib/keil/msp432p4xx_driverlib.lib",
            "port/stm32-wb55xx-nucleo-freertos/Drivers/STM32WBxx_HAL_Driver/STM32WB55xx_User_Manual.chm",
        ),
    ),
    Library(
        "lib/lwip", "lwip-tcpip/lwip", "77dcd25a72509eb83f72b033d219b1d40cd8eb95", wireless=True
    ),
)


@dataclass(frozen=True)
class Image:
    """One image to build: a board of MicroPython's rp2 port, stock or with the firmware frozen."""

    name: str
    board: str
    frozen: bool  # the cribboard firmware frozen in through manifest.py
    wireless: bool
    family_id: int
    mpy_cross_march: str  # the -march the port's build passes mpy-cross for frozen code
    variant: str | None = None

    @property
    def stem(self) -> str:
        return self.name.removesuffix(".uf2")


IMAGES = (
    Image(
        f"micropython-RPI_PICO-{MICROPYTHON_TAG}.uf2",
        "RPI_PICO",
        frozen=False,
        wireless=False,
        family_id=uf2.RP2040_FAMILY_ID,
        mpy_cross_march="armv6m",
    ),
    Image(
        "cribboard-RPI_PICO.uf2",
        "RPI_PICO",
        frozen=True,
        wireless=False,
        family_id=uf2.RP2040_FAMILY_ID,
        mpy_cross_march="armv6m",
    ),
    Image(
        "cribboard-RPI_PICO_W.uf2",
        "RPI_PICO_W",
        frozen=True,
        wireless=True,
        family_id=uf2.RP2040_FAMILY_ID,
        mpy_cross_march="armv6m",
    ),
    Image(
        "cribboard-RPI_PICO2_W.uf2",
        "RPI_PICO2_W",
        frozen=True,
        wireless=True,
        family_id=uf2.RP2350_ARM_S_FAMILY_ID,
        mpy_cross_march="armv7m",
    ),
)

# RAM-resident SDK functions that erase and program the flash. An emulator without a flash
# controller model intercepts calls to them (their addresses change with every build).
FLASH_SYMBOLS = ("flash_range_erase", "flash_range_program")
# Also recorded when present: the SDK's other direct flash access (serial commands: unique id).
OPTIONAL_SYMBOLS = ("flash_do_cmd",)
HEAP_SYMBOLS = ("__GcHeapStart", "__GcHeapEnd")

DEFAULT_BUILD_DIR = ROOT / "build" / "rp2"
DEFAULT_OUT = HERE / "images"
APT_PACKAGES = (
    "gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib cmake build-essential"
)


class BuildFailure(Exception):
    """A step of the build failed; the message says which and why."""


# --- git --------------------------------------------------------------------------------------


def git(*args: str, cwd: Path | None = None, git_dir: Path | None = None) -> str:
    command = ["git"]
    if git_dir is not None:
        command += ["--git-dir", str(git_dir)]
    result = subprocess.run(
        command + list(args), cwd=cwd, capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        raise BuildFailure(f"git {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout.strip()


def find_repository(sources: Path, repository: str) -> Path | None:
    """The git directory of `repository` (owner/name) under `sources`, or None."""
    owner, name = repository.split("/")
    for candidate in (
        sources / f"{owner}+{name}" / "repo",
        sources / f"{owner}+{name}",
        sources / f"{name}.git",
        sources / name,
        sources / name / ".git",
    ):
        if (candidate / "objects").is_dir() and (candidate / "HEAD").is_file():
            return candidate
    return None


def absent_files(mirror: Path, commit: str) -> list[str]:
    """Files of `commit` whose contents the repository at `mirror` lacks."""
    listing = git("ls-tree", "-r", "-z", commit, git_dir=mirror)
    blobs: dict[str, list[str]] = {}
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        _, kind, object_id = meta.split()
        if kind == "blob":
            blobs.setdefault(object_id, []).append(path)
    check = subprocess.run(
        ["git", "--git-dir", str(mirror), "cat-file", "--batch-check"],
        input="\n".join(blobs) + "\n",
        capture_output=True,
        text=True,
        timeout=600,
    )
    absent = []
    for line in check.stdout.splitlines():
        if line.endswith(" missing"):
            absent += blobs[line.split()[0]]
    return sorted(absent)


def check_out(mirror: Path, commit: str, dest: Path, absent_ok: tuple[str, ...]) -> list[str]:
    """Check out `commit` of the repository at `mirror` into `dest` (sharing its objects),
    leaving out the files in `absent_ok` when the repository lacks them (sparse checkout, so
    the tree stays clean). Returns the files left out."""
    try:
        git("cat-file", "-e", commit + "^{commit}", git_dir=mirror)
    except BuildFailure:
        raise BuildFailure(f"{mirror} has no commit {commit}: fetch a newer snapshot") from None
    absent = absent_files(mirror, commit)
    unexpected = [path for path in absent if path not in absent_ok]
    if unexpected:
        raise BuildFailure(f"{mirror} lacks files of {commit[:12]}: {', '.join(unexpected)}")
    if (dest / ".git").is_dir() and is_clean_checkout(dest, commit):
        return absent
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    git("init", "-q", str(dest))
    (dest / ".git" / "objects" / "info" / "alternates").write_text(
        str((mirror / "objects").resolve()) + "\n"
    )
    git("update-ref", "--no-deref", "HEAD", commit, cwd=dest)
    if absent:
        git("sparse-checkout", "set", "--no-cone", "/*", *("!/" + p for p in absent), cwd=dest)
    git("reset", "-q", "--hard", "HEAD", cwd=dest)
    return absent


def is_clean_checkout(tree: Path, commit: str) -> bool:
    try:
        head = git("rev-parse", "HEAD", cwd=tree)
        status = git("status", "--porcelain", "--untracked-files=no", cwd=tree)
    except BuildFailure:
        return False
    return head == commit and not status


def describe(mirror: Path, commit: str) -> str:
    """The nearest tag of `commit` (`v3.6.2`, `0.19.0-24-gaa0fc2e08`), or '' when untagged."""
    try:
        return git("describe", "--tags", commit, git_dir=mirror)
    except BuildFailure:
        return ""


@dataclass
class Tree:
    """A checked-out source tree, as the provenance records it."""

    name: str
    repository: str
    path: str  # in the MicroPython tree ('.' for MicroPython itself)
    commit: str
    describe: str
    left_out: list[str]


def prepare_sources(sources: Path, src: Path, wireless: bool) -> tuple[list[Tree], list[str]]:
    """Check out MicroPython and its pinned libraries under `src`; returns the trees and the
    problems that rule out the wireless images (empty when `wireless` is False or all is well).
    """
    mirror = find_repository(sources, MICROPYTHON_REPOSITORY)
    if mirror is None:
        raise BuildFailure(f"no {MICROPYTHON_REPOSITORY} repository under {sources}")
    tagged = git("rev-parse", MICROPYTHON_TAG + "^{commit}", git_dir=mirror)
    if tagged != MICROPYTHON_COMMIT:
        raise BuildFailure(f"{MICROPYTHON_TAG} is {tagged} in {mirror}, not {MICROPYTHON_COMMIT}")
    pinned = {}
    for line in git("ls-tree", MICROPYTHON_COMMIT, "lib/", git_dir=mirror).splitlines():
        meta, path = line.split("\t")
        _, kind, object_id = meta.split()
        if kind == "commit":
            pinned[path] = object_id
    for library in LIBRARIES:
        if pinned.get(library.path) != library.commit:
            raise BuildFailure(
                f"{MICROPYTHON_TAG} pins {library.path} at {pinned.get(library.path)}, "
                f"this script at {library.commit}"
            )
    top = src / "micropython"
    print(f"checking out micropython {MICROPYTHON_TAG} ({MICROPYTHON_COMMIT[:12]})", flush=True)
    check_out(mirror, MICROPYTHON_COMMIT, top, ())
    # makeversionhdr.py names the build after `git describe`: the tag must be in the checkout.
    git(
        "update-ref",
        "refs/tags/" + MICROPYTHON_TAG,
        git("rev-parse", MICROPYTHON_TAG, git_dir=mirror),
        cwd=top,
    )
    trees = [
        Tree(
            "micropython",
            MICROPYTHON_REPOSITORY,
            ".",
            MICROPYTHON_COMMIT,
            describe(mirror, MICROPYTHON_COMMIT),
            [],
        )
    ]
    wireless_problems = []
    for library in LIBRARIES:
        if library.wireless and not wireless:
            continue
        library_mirror = find_repository(sources, library.repository)
        dest = top / library.path
        if library_mirror is None:
            problem = f"no {library.repository} repository under {sources} (for {library.path})"
            if library.wireless:
                wireless_problems.append(problem)
                continue
            raise BuildFailure(problem)
        print(f"checking out {library.path} ({library.commit[:12]})", flush=True)
        try:
            left_out = check_out(library_mirror, library.commit, dest, library.absent_ok)
        except BuildFailure as error:
            if library.wireless:
                wireless_problems.append(str(error))
                continue
            raise
        trees.append(
            Tree(
                library.path.removeprefix("lib/"),
                library.repository,
                library.path,
                library.commit,
                describe(library_mirror, library.commit),
                left_out,
            )
        )
    verify(top, trees)
    return trees, wireless_problems


def verify(top: Path, trees: list[Tree]) -> None:
    """Every checked-out tree is at its pinned commit with nothing changed; MicroPython's own
    version string (git describe, as its build runs it) is the plain tag."""
    for tree in trees:
        where = top / tree.path
        if not is_clean_checkout(where, tree.commit):
            raise BuildFailure(f"{where} is not a clean checkout of {tree.commit}")
    version = git("describe", "--tags", "--dirty", "--always", cwd=top)
    if version != MICROPYTHON_TAG:
        raise BuildFailure(f"the MicroPython checkout describes itself as {version}")


# --- board facts --------------------------------------------------------------------------------


def read_define(header: Path, name: str) -> str | None:
    """The text of `#define NAME ...` in a header (the first one), or None."""
    pattern = re.compile(r"^\s*#\s*define\s+" + re.escape(name) + r"\s+(.+?)\s*(//.*)?$")
    for line in header.read_text(encoding="utf-8").splitlines():
        match = pattern.match(line)
        if match:
            return match.group(1)
    return None


def evaluate(expression: str, known: dict[str, int]) -> int:
    """An integer C constant expression of numbers, + - * / and names in `known`."""
    tree = ast.parse(expression.replace("/", "//"), mode="eval")

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in known:
            return known[node.id]
        if isinstance(node, ast.BinOp):
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.FloorDiv):
                return left // right
        raise BuildFailure(f"cannot evaluate {expression!r}")

    return value(tree)


def board_display_name(top: Path, image: Image) -> str:
    """The board's name as MicroPython's banner shows it (MICROPY_HW_BOARD_NAME)."""
    header = top / "ports" / "rp2" / "boards" / image.board / "mpconfigboard.h"
    text = read_define(header, "MICROPY_HW_BOARD_NAME")
    if text is None or not text.startswith('"'):
        raise BuildFailure(f"no MICROPY_HW_BOARD_NAME string in {header}")
    return text.strip('"')


def flash_layout(top: Path, image: Image) -> dict[str, object]:
    """Flash size, storage region and ROMFS size, from the board's and the SDK's headers."""
    port = top / "ports" / "rp2"
    board_dir = port / "boards" / image.board
    cmake = (board_dir / "mpconfigboard.cmake").read_text(encoding="utf-8")
    match = re.search(r'set\(PICO_BOARD\s+"?([\w-]+)"?\)', cmake)
    pico_board = match.group(1) if match else image.board.lower()
    sdk_header = (
        top / "lib" / "pico-sdk" / "src" / "boards" / "include" / "boards" / f"{pico_board}.h"
    )
    board_header = board_dir / "mpconfigboard.h"
    port_header = port / "mpconfigport.h"
    known: dict[str, int] = {}
    text = read_define(sdk_header, "PICO_FLASH_SIZE_BYTES")
    if text is None:
        raise BuildFailure(f"no PICO_FLASH_SIZE_BYTES in {sdk_header}")
    known["PICO_FLASH_SIZE_BYTES"] = evaluate(text, known)
    found = {
        "PICO_FLASH_SIZE_BYTES": sdk_header.relative_to(top).as_posix()
    }  # where each came from
    for name in ("MICROPY_HW_FLASH_STORAGE_BYTES", "MICROPY_HW_ROMFS_BYTES"):
        for header in (board_header, port_header):
            text = read_define(header, name)
            if text is not None:
                known[name] = evaluate(text, known)
                found[name] = header.relative_to(top).as_posix()
                break
        else:
            raise BuildFailure(f"no {name} in {board_header} or {port_header}")
    base_text = read_define(board_header, "MICROPY_HW_FLASH_STORAGE_BASE")
    # rp2_flash.c's default: the storage region ends the flash.
    base = (
        evaluate(base_text, known)
        if base_text
        else known["PICO_FLASH_SIZE_BYTES"] - known["MICROPY_HW_FLASH_STORAGE_BYTES"]
    )
    storage = known["MICROPY_HW_FLASH_STORAGE_BYTES"]
    return {
        "flash_size": known["PICO_FLASH_SIZE_BYTES"],
        "storage_offset": base,
        "storage_length": storage,
        "storage_address": f"{uf2.FLASH_BASE + base:#010x}",
        "storage_block_size": 4096,
        "storage_block_count": storage // 4096,
        "romfs_length": known["MICROPY_HW_ROMFS_BYTES"],
        "pico_board": pico_board,
        "headers": found,
    }


# --- tools --------------------------------------------------------------------------------------


def tool_version(*command: str) -> str:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except OSError:
        return ""
    return (
        (result.stdout or result.stderr).splitlines()[0].strip() if result.returncode == 0 else ""
    )


def toolchain() -> dict[str, str]:
    versions = {
        "arm-none-eabi-gcc": tool_version("arm-none-eabi-gcc", "--version"),
        "cmake": tool_version("cmake", "--version"),
        "gcc": tool_version("gcc", "--version"),
        "make": tool_version("make", "--version"),
        "python3": tool_version("python3", "--version"),
    }
    missing = [name for name, version in versions.items() if not version]
    if missing or not shutil.which("arm-none-eabi-nm"):
        raise BuildFailure(
            f"missing tools ({', '.join(missing) or 'arm-none-eabi-nm'}): on Debian, "
            f"apt-get install {APT_PACKAGES} (make rp2-toolchain)"
        )
    return versions


def symbols(elf: Path, names: tuple[str, ...]) -> dict[str, int]:
    """Addresses of `names` in `elf` (arm-none-eabi-nm; a Thumb function's bit 0 left clear)."""
    output = subprocess.run(
        ["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    found: dict[str, int] = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in names:
            found[parts[2]] = int(parts[0], 16)
    return found


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- building -----------------------------------------------------------------------------------


def build_commands(image: Image, build: str, board_dir: str, jobs: str) -> list[list[str]]:
    """Configure and build, run in the MicroPython checkout: what ports/rp2/Makefile runs, with
    every option spelled out (that Makefile appends BOARD and BOARD_DIR to CMAKE_ARGS, which a
    CMAKE_ARGS on its command line would silently replace). A cribboard image is built from its
    out-of-tree board definition (`board_dir`, firmware/ports/rp2/boards/BOARD: the port's board
    with the firmware frozen in), MicroPython's documented route for a custom board."""
    configure = [
        "cmake",
        "-S",
        "ports/rp2",
        "-B",
        build,
        "-DPICO_BUILD_DOCS=0",
        f"-DMICROPY_BOARD={image.board}",
        "-DPICO_NO_PICOTOOL=1",
    ]
    if image.frozen:
        configure.append(f"-DMICROPY_BOARD_DIR={board_dir}")
    if image.variant:
        configure.append(f"-DMICROPY_BOARD_VARIANT={image.variant}")
    return [configure, ["make", "-C", build, f"-j{jobs}"]]


def run_logged(command: list[str], cwd: Path, log: Path, env: dict[str, str]) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        result = subprocess.run(
            command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=3600
        )
    if result.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        raise BuildFailure(f"{' '.join(command)} failed (log: {log}):\n{tail}")


def check_frozen(image: Image, build: Path, mpy_cross: Path, scratch: Path) -> list[str]:
    """The frozen modules of the build are the firmware's files, compiled byte for byte as the
    manifests should have compiled them (our `_boot.py` in place of the port's). Returns the
    frozen names of the firmware's files."""
    content = (build / "frozen_content.c").read_text(encoding="utf-8", errors="replace")
    names_block = content.split("const char mp_frozen_names[]", 1)[1].split("};", 1)[0]
    names = re.findall(r'"([^"\\]+)\\0"', names_block)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise BuildFailure(f"{image.name}: frozen twice: {', '.join(duplicates)}")
    ours = []
    for relative, path in frozen_sources(FIRMWARE).items():
        name = frozen_name(relative)
        if name not in names:
            raise BuildFailure(f"{image.name}: {relative} is not frozen (as {name})")
        expected = scratch / (name[: -len(".py")] + ".mpy")
        expected.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                str(mpy_cross),
                "-s",
                name,
                f"-march={image.mpy_cross_march}",
                "-o",
                str(expected),
                str(path),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        frozen = build / "frozen_mpy" / (name[: -len(".py")] + ".mpy")
        if frozen.read_bytes() != expected.read_bytes():
            raise BuildFailure(f"{image.name}: the frozen {name} is not {relative}")
        ours.append(name)
    return ours


def build_image(
    image: Image,
    top: Path,
    work: Path,
    out: Path,
    trees: list[Tree],
    tools: dict[str, str],
    jobs: int,
    env: dict[str, str],
) -> dict[str, object]:
    """Build one image, write it and its provenance into `out`; returns the provenance."""
    build = work / "out" / image.stem
    shutil.rmtree(build, ignore_errors=True)
    print(f"building {image.name} ({image.board}) ...", flush=True)
    started = time.monotonic()
    log = work / "logs" / f"{image.stem}.log"
    log.unlink(missing_ok=True)
    for command in build_commands(image, str(build), str(HERE / "boards" / image.board), str(jobs)):
        run_logged(command, top, log, env)
    seconds = time.monotonic() - started
    binary = (build / "firmware.bin").read_bytes()
    elf = build / "firmware.elf"

    board_name = board_display_name(top, image)
    # The banner names the board: "MicroPython v1.28.0 on ...; Raspberry Pi Pico W with RP2040".
    if f"{board_name} with ".encode() not in binary:
        raise BuildFailure(f"{image.name}: the build is not for {board_name}")
    layout = flash_layout(top, image)
    layout["firmware_end_offset"] = len(binary)
    storage_offset = layout["storage_offset"]
    assert isinstance(storage_offset, int)
    if len(binary) > storage_offset:
        raise BuildFailure(
            f"{image.name}: the firmware ({len(binary)} bytes) runs into the storage region at {storage_offset:#x}"
        )
    found = symbols(elf, FLASH_SYMBOLS + OPTIONAL_SYMBOLS + HEAP_SYMBOLS)
    missing = [name for name in FLASH_SYMBOLS + HEAP_SYMBOLS if name not in found]
    if missing:
        raise BuildFailure(f"{image.name}: {elf} has no {', '.join(missing)}")

    frozen = None
    if image.frozen:
        names = check_frozen(
            image, build, top / "mpy-cross" / "build" / "mpy-cross", work / "check" / image.stem
        )
        frozen = {
            "digest": frozen_digest(FIRMWARE),
            "files": list(frozen_sources(FIRMWARE)),
            "names": names,
            "manifest": f"firmware/ports/rp2/boards/{image.board}/manifest.py",
            "board_digest": board_digest(image.board, FIRMWARE),
            "board_files": list(board_files(image.board, FIRMWARE)),
        }

    data = uf2.encode(binary, uf2.FLASH_BASE, image.family_id)
    ranges = uf2.decode(data, image.family_id)
    if len(ranges) != 1 or ranges[0][0] != uf2.FLASH_BASE or not ranges[0][1].startswith(binary):
        raise BuildFailure(f"{image.name}: the UF2 does not decode to firmware.bin")
    out.mkdir(parents=True, exist_ok=True)
    (out / image.name).write_bytes(data)

    heap_start, heap_end = found["__GcHeapStart"], found["__GcHeapEnd"]
    record: dict[str, object] = {
        "schema": 1,
        "image": image.name,
        "kind": "cribboard" if image.frozen else "stock",
        "board": image.board,
        "board_name": board_name,
        "variant": image.variant,
        "micropython": MICROPYTHON_TAG,
        "uf2": {
            "bytes": len(data),
            "sha256": sha256(data),
            "family_id": f"{image.family_id:#010x}",
            "base": f"{uf2.FLASH_BASE:#010x}",
            "blocks": len(data) // uf2.BLOCK_SIZE,
            "payload_size": uf2.PAGE_SIZE,
        },
        "firmware_bin": {"bytes": len(binary), "sha256": sha256(binary)},
        "flash": layout,
        "symbols": {
            name: f"{found[name]:#010x}"
            for name in FLASH_SYMBOLS + OPTIONAL_SYMBOLS
            if name in found
        },
        "gc_heap": {
            "start": f"{heap_start:#010x}",
            "end": f"{heap_end:#010x}",
            "bytes": heap_end - heap_start,
        },
        "frozen": frozen,
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
            if image.wireless or tree.path not in {lib.path for lib in LIBRARIES if lib.wireless}
        ],
        "toolchain": tools,
        "build": {
            "rebuild": f"python3 firmware/ports/rp2/build.py --sources DIR --images {image.name}",
            "commands": [
                " ".join(command)
                for command in build_commands(
                    image,
                    "<build>",
                    f"<cribboard>/firmware/ports/rp2/boards/{image.board}",
                    "<jobs>",
                )
            ],
            "cwd": "<micropython checkout>",
            "environment": {"SOURCE_DATE_EPOCH": env["SOURCE_DATE_EPOCH"]},
            "uf2": "cribboard.uf2.encode(firmware.bin, base, family_id)",
        },
    }
    (out / f"{image.name}.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(
        f"  {image.name}: {len(data)} bytes, firmware.bin {len(binary)} bytes, {seconds:.0f} s",
        flush=True,
    )
    return record


# --- PROVENANCE.md ------------------------------------------------------------------------------


def render_provenance(records: list[dict[str, object]]) -> str:
    """The human-readable summary of the images' provenance files."""
    lines = [
        "# The rp2 images: where they come from",
        "",
        "Generated by `firmware/ports/rp2/build.py` (`make rp2-images`) from the `<image>.json` files",
        "beside this one; do not edit by hand.",
        "",
        "| image | board | kind | bytes | sha256 |",
        "| --- | --- | --- | ---: | --- |",
    ]
    for record in records:
        image = record["uf2"]
        assert isinstance(image, dict)
        lines.append(
            f"| `{record['image']}` | {record['board']} | {record['kind']} | "
            f"{image['bytes']:,} | `{image['sha256']}` |"
        )
    for record in records:
        image, binary, flash = record["uf2"], record["firmware_bin"], record["flash"]
        build, heap, frozen = record["build"], record["gc_heap"], record["frozen"]
        sources, tools, found = record["sources"], record["toolchain"], record["symbols"]
        assert isinstance(image, dict) and isinstance(binary, dict) and isinstance(flash, dict)
        assert isinstance(build, dict) and isinstance(heap, dict) and isinstance(sources, list)
        assert isinstance(tools, dict) and isinstance(found, dict)
        lines += [
            "",
            f"## {record['image']}",
            "",
            f"MicroPython {record['micropython']}, board {record['board']}"
            + (f" variant {record['variant']}" if record["variant"] else "")
            + (", the cribboard firmware frozen in" if frozen else ", stock")
            + f". UF2 family {image['family_id']}, {image['blocks']} blocks from {image['base']};"
            f" firmware.bin {binary['bytes']:,} bytes (sha256 `{binary['sha256']}`).",
            "",
            "| source | path | tag | commit |",
            "| --- | --- | --- | --- |",
        ]
        for source in sources:
            lines.append(
                f"| {source['repository']} | `{source['path']}` | {source['describe'] or '-'} | "
                f"`{source['commit']}` |"
            )
        left_out = [f"{s['path']}/{p}" for s in sources for p in s["left_out"]]
        if left_out:
            lines += [
                "",
                "Left out of the checkouts (absent from the snapshots, unused): "
                + ", ".join(f"`{p}`" for p in left_out)
                + ".",
            ]
        lines += [
            "",
            "Toolchain: "
            + "; ".join(f"{tool} `{version}`" for tool, version in tools.items())
            + ".",
            "",
            f"Build (in the MicroPython checkout, SOURCE_DATE_EPOCH={build['environment']['SOURCE_DATE_EPOCH']}): "
            + ", then ".join(f"`{command}`" for command in build["commands"])
            + f". Rebuild: `{build['rebuild']}`.",
            "",
            f"Flash: {flash['flash_size']:,} bytes; firmware {flash['firmware_end_offset']:,} bytes from offset 0;"
            f" littlefs storage {flash['storage_length']:,} bytes at offset {flash['storage_offset']:#x}"
            f" ({flash['storage_address']}, {flash['storage_block_count']} blocks of"
            f" {flash['storage_block_size']}); ROMFS {flash['romfs_length']} bytes.",
            "",
            f"GC heap: {heap['bytes']:,} bytes ({heap['start']}..{heap['end']}). Flash functions (RAM): "
            + ", ".join(f"`{name}` {address}" for name, address in found.items())
            + ".",
        ]
        if frozen:
            assert isinstance(frozen, dict)
            lines += [
                "",
                f"Frozen firmware digest (cribboard.frozen.frozen_digest): `{frozen['digest']}`,"
                f" over {len(frozen['files'])} files: "
                + ", ".join(f"`{name}`" for name in frozen["files"])
                + ".",
            ]
    return "\n".join(lines) + "\n"


def write_provenance(out: Path) -> None:
    order = {image.name: index for index, image in enumerate(IMAGES)}
    records = [json.loads(path.read_text(encoding="utf-8")) for path in out.glob("*.uf2.json")]
    records.sort(key=lambda record: order.get(record["image"], len(order)))
    out.mkdir(parents=True, exist_ok=True)
    (out / "PROVENANCE.md").write_text(render_provenance(records), encoding="utf-8")


# --- main ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="build.py",
        description="Rebuild the rp2 firmware images (MicroPython v1.28.0, stock and with the "
        "cribboard firmware frozen in) from source, with their provenance files.",
    )
    parser.add_argument(
        "--sources",
        type=Path,
        required=True,
        metavar="DIR",
        help="the directory holding the bare git repositories of micropython/micropython, "
        "raspberrypi/pico-sdk, hathach/tinyusb, micropython/micropython-lib, Mbed-TLS/mbedtls "
        "and (for the Pico W images) georgerobotics/cyw43-driver, bluekitchen/btstack, "
        "lwip-tcpip/lwip; each as DIR/OWNER+NAME/repo, DIR/OWNER+NAME, DIR/NAME.git or DIR/NAME",
    )
    parser.add_argument(
        "--images",
        nargs="+",
        choices=[image.name for image in IMAGES],
        metavar="NAME",
        help="build only these images (default: all): " + ", ".join(i.name for i in IMAGES),
    )
    parser.add_argument(
        "--build-dir",
        type=Path,
        default=DEFAULT_BUILD_DIR,
        metavar="DIR",
        help="checkouts and build trees (default: build/rp2 in the repository, git-ignored)",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help="where the images go"
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, metavar="N", help="parallel compile jobs"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.sources.is_dir():
        print(f"build.py: --sources {args.sources}: no such directory", file=sys.stderr)
        return 2
    images = [image for image in IMAGES if not args.images or image.name in args.images]
    work = args.build_dir.resolve()
    try:
        tools = toolchain()
        trees, wireless_problems = prepare_sources(
            args.sources.resolve(), work / "src", any(image.wireless for image in images)
        )
        top = work / "src" / "micropython"
        epoch = git("log", "-1", "--format=%ct", MICROPYTHON_COMMIT, cwd=top)
        page = work / "page"  # the table page as a module, for the Wi-Fi boards' manifests
        page.mkdir(parents=True, exist_ok=True)
        (page / PAGE_MODULE).write_text(page_module(FIRMWARE), encoding="utf-8")
        env = dict(os.environ, SOURCE_DATE_EPOCH=epoch, CRIBBOARD_PAGE_DIR=str(page))
        print("building mpy-cross ...", flush=True)
        log = work / "logs" / "mpy-cross.log"
        log.unlink(missing_ok=True)
        run_logged(["make", "-C", "mpy-cross", f"-j{args.jobs}"], top, log, env)
    except BuildFailure as error:
        print(f"build.py: {error}", file=sys.stderr)
        return 1
    failures = []
    for image in images:
        if image.wireless and wireless_problems:
            failures.append(f"{image.name}: not built: " + "; ".join(wireless_problems))
            continue
        try:
            build_image(image, top, work, args.out, trees, tools, args.jobs, env)
        except BuildFailure as error:
            failures.append(str(error))
    write_provenance(args.out)
    for failure in failures:
        print(f"build.py: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
