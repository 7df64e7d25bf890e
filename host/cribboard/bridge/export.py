"""Write the web page as a static site, for the Web Bluetooth mode without a bridge: any HTTPS
host (or `http://localhost`) can serve it, and Chrome on a phone drives the board directly.

    python -m cribboard.bridge.export DIR

DIR gets index.html, static/, board/ (the drawing the pages share) and the generated layout.json, protocol.json and i18n/ (the
page's translations)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cribboard.bridge import catalogs
from cribboard.i18n import LANGUAGES
from cribboard.web import BOARD_FILES, meta

STATIC_DIR = Path(__file__).resolve().parent / "static"


def site_files() -> dict[str, bytes]:
    """The static site's files by their path in it (``static/app.js``), sorted: what
    :func:`export` writes, and what the board serves (cribboard.bridge.boardpage)."""
    files = {"index.html": (STATIC_DIR / "index.html").read_bytes()}
    for folder, source in (("static", STATIC_DIR), ("board", BOARD_FILES)):
        for path in sorted(source.iterdir()):
            if path.is_file():
                files[f"{folder}/{path.name}"] = path.read_bytes()
    files["layout.json"] = (json.dumps(meta.layout_json()) + "\n").encode()
    files["protocol.json"] = (json.dumps(meta.protocol_json()) + "\n").encode()
    files["i18n/languages.json"] = (json.dumps(catalogs.languages_json()) + "\n").encode()
    for code in LANGUAGES:
        files[f"i18n/{code}.json"] = (json.dumps(catalogs.catalog_json(code)) + "\n").encode()
    return dict(sorted(files.items()))


def export(target: Path) -> None:
    for name, data in site_files().items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m cribboard.bridge.export DIR", file=sys.stderr)
        return 2
    export(Path(args[0]))
    print(f"the page is in {args[0]}: serve it over HTTPS (Web Bluetooth needs a secure page)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
