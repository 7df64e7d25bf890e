"""Write the web page as a static site, for the Web Bluetooth mode without a bridge: any HTTPS
host (or `http://localhost`) can serve it, and Chrome on a phone drives the board directly.

    python -m cribboard.bridge.export DIR

DIR gets index.html, static/, board/ (the drawing the pages share) and the generated layout.json, protocol.json and i18n/ (the
page's translations)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from cribboard.bridge import catalogs
from cribboard.i18n import LANGUAGES
from cribboard.web import BOARD_FILES, meta

STATIC_DIR = Path(__file__).resolve().parent / "static"


def export(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(STATIC_DIR, target / "static", dirs_exist_ok=True)
    shutil.copy(STATIC_DIR / "index.html", target / "index.html")
    shutil.copytree(BOARD_FILES, target / "board", dirs_exist_ok=True)
    (target / "layout.json").write_text(json.dumps(meta.layout_json()) + "\n")
    (target / "protocol.json").write_text(json.dumps(meta.protocol_json()) + "\n")
    i18n = target / "i18n"
    i18n.mkdir(exist_ok=True)
    (i18n / "languages.json").write_text(json.dumps(catalogs.languages_json()) + "\n")
    for code in LANGUAGES:
        (i18n / f"{code}.json").write_text(json.dumps(catalogs.catalog_json(code)) + "\n")


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
