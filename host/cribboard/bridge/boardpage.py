"""The table page as a board with Wi-Fi serves it (firmware/cribfw/pagefiles.py): the bridge's
static site (:func:`cribboard.bridge.export.site_files`), each file gzip-compressed, in
``firmware/web/`` with an index, ``files.txt``: one line per file, its URL path and its ETag.
`cribboard deploy` and mip copy the folder to the board's flash; a cribboard image freezes it
(firmware/ports/rp2/build.py, :func:`cribboard.frozen.page_module`).

The board keeps of each language's catalog only the page's own sentences (those in its
scripts, and the players' colours), not the whole command line's.

``python -m cribboard.bridge.boardpage`` (run by ``make mip``) writes the folder again;
``--check`` only says whether it is up to date (exit 1 when stale; tests/page/test_board_page.py
fails then too). The check compares the files' contents, not their compressed bytes, which
another zlib may write differently.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

from cribboard.bridge.export import site_files
from cribboard.paths import PAGE_DIR, firmware_dir

INDEX = "files.txt"
# Not served by the board: the static folder's copy of index.html (the site's root has it),
# and the record of games' part of the page (a board keeps no record: the page loads it only
# from a bridge).
_LEFT_OUT = {"static/index.html", "static/records.js"}


def _page_catalog(data: bytes, scripts: str, names: set[str]) -> bytes:
    catalog = json.loads(data)

    def keep(message: str) -> bool:
        return message in scripts or message in names

    catalog["messages"] = {k: v for k, v in catalog["messages"].items() if keep(k)}
    catalog["plurals"] = {k: v for k, v in catalog["plurals"].items() if keep(k)}
    return (json.dumps(catalog, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def page_files() -> dict[str, bytes]:
    """The board's page files by URL path (``/static/app.js``), uncompressed, sorted."""
    site = {name: data for name, data in site_files().items() if name not in _LEFT_OUT}
    scripts = "\n".join(data.decode() for name, data in site.items() if name.endswith(".js"))
    names = {player["name"] for player in json.loads(site["layout.json"])["players"]}
    files = {}
    for name, data in site.items():
        if re.fullmatch(r"i18n/[a-z]+\.json", name) and name != "i18n/languages.json":
            data = _page_catalog(data, scripts, names)
        files["/" + name] = data
    return files


def etag(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def compress(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def write(root: Path | None = None) -> Path:
    """Write ``root/web/`` (root: the firmware tree) afresh; returns the folder."""
    folder = (root or firmware_dir()) / PAGE_DIR
    files = page_files()
    wanted = {folder / (path[1:] + ".gz") for path in files} | {folder / INDEX}
    if folder.is_dir():
        for old in folder.rglob("*"):
            if old.is_file() and old not in wanted:
                old.unlink()
    for path, data in files.items():
        target = folder / (path[1:] + ".gz")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or gzip.decompress(target.read_bytes()) != data:
            target.write_bytes(compress(data))
    (folder / INDEX).write_text(index_text(files))
    return folder


def index_text(files: dict[str, bytes]) -> str:
    return "".join(f"{path} {etag(data)}\n" for path, data in files.items())


def stale(root: Path | None = None) -> list[str]:
    """What differs between ``root/web/`` and the page as it is now (empty: up to date)."""
    folder = (root or firmware_dir()) / PAGE_DIR
    files = page_files()
    problems = []
    index = folder / INDEX
    if not index.is_file() or index.read_text() != index_text(files):
        problems.append(INDEX)
    for path, data in files.items():
        target = folder / (path[1:] + ".gz")
        if not target.is_file() or gzip.decompress(target.read_bytes()) != data:
            problems.append(path)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cribboard.bridge.boardpage",
        description="Write firmware/web/, the table page as a board serves it.",
    )
    parser.add_argument("--root", type=Path, help="the firmware directory (default: firmware/)")
    parser.add_argument(
        "--check", action="store_true", help="only check it is up to date (exit 1 when stale)"
    )
    args = parser.parse_args(argv)
    if args.check:
        problems = stale(args.root)
        if problems:
            print(f"firmware/web is stale ({', '.join(problems[:3])}): make mip", file=sys.stderr)
            return 1
        return 0
    write(args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
