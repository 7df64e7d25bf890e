"""The firmware as a package for MicroPython's own installer, `mip` (`mpremote mip install`).

``firmware/package.json`` lists the files `cribboard deploy` puts on a board (the same list,
:func:`cribboard.firmware_build.source_files`), each at its path on the board and at its path
beside the package file, so the firmware/ directory served over HTTP (or read as a local path)
is the package::

    mpremote mip install --target / http://HOST:PORT/package.json

mip copies the files as they are: source, which the board compiles as it imports them (deploy
copies bytecode instead, which needs less of the board's RAM).

``python -m cribboard.mip`` writes firmware/package.json again; ``--check`` only says whether it
is up to date (exit 1 when stale; tests/host/test_mip.py fails then too).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from cribboard.firmware_build import source_files
from cribboard.paths import firmware_dir, page_files

PACKAGE_FILE = "package.json"
_VERSION = re.compile(r'^FIRMWARE_VERSION = "([^"]+)"$', re.M)


def firmware_version(root: Path) -> str:
    """The version the firmware in `root` reports (cribfw/version.py)."""
    found = _VERSION.search((root / "cribfw" / "version.py").read_text(encoding="utf-8"))
    if found is None:
        raise ValueError(f"no FIRMWARE_VERSION in {root / 'cribfw' / 'version.py'}")
    return found.group(1)


def package(root: Path | None = None) -> dict[str, Any]:
    """mip's package description of the firmware in `root` (default: the package's firmware/):
    `urls` pairs each file's path on the board with its URL relative to the package file."""
    root = root or firmware_dir()
    urls = [[board_path, board_path] for board_path in (*source_files(root), *page_files(root))]
    return {"urls": urls, "version": firmware_version(root)}


def package_text(root: Path | None = None) -> str:
    """The package file's text, as written (stable: one file per line, sorted)."""
    data = package(root)
    lines = ",\n".join(f"    {json.dumps(pair)}" for pair in data["urls"])
    return f'{{\n  "urls": [\n{lines}\n  ],\n  "version": {json.dumps(data["version"])}\n}}\n'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cribboard.mip",
        description="Write firmware/package.json, the firmware's package for mip.",
    )
    parser.add_argument("--root", type=Path, help="the firmware directory (default: firmware/)")
    parser.add_argument(
        "--check", action="store_true", help="only check it is up to date (exit 1 when stale)"
    )
    args = parser.parse_args(argv)
    root = args.root or firmware_dir()
    target = root / PACKAGE_FILE
    text = package_text(root)
    current = target.read_text(encoding="utf-8") if target.is_file() else None
    if args.check:
        if current != text:
            print(f"{target} is stale: python -m cribboard.mip", file=sys.stderr)
            return 1
        return 0
    if current != text:
        target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
