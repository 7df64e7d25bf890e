"""MicroPython's own install route: firmware/package.json (python -m cribboard.mip) lists what
`cribboard deploy` copies, and `mpremote mip install` puts a working firmware on a board running
stock MicroPython, the package served over loopback HTTP as from any web server."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cribboard.api import SyncBoard
from cribboard.firmware_build import source_files
from cribboard.mip import PACKAGE_FILE, main, package_text
from cribboard.paths import firmware_dir, page_files
from cribboard.virtual import VirtualBoard
from cribfw.version import FIRMWARE_VERSION

PACKAGE = firmware_dir() / PACKAGE_FILE


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def served(directory: Path) -> Iterator[str]:
    """`directory` over HTTP on a free port of 127.0.0.1; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_package_file_is_up_to_date_and_lists_what_deploy_copies() -> None:
    assert PACKAGE.read_text(encoding="utf-8") == package_text(), (
        "firmware/package.json is stale: python -m cribboard.mip"
    )
    data = json.loads(PACKAGE.read_text(encoding="utf-8"))
    assert data["version"] == FIRMWARE_VERSION
    # The firmware's modules, then the table page a board with Wi-Fi serves (firmware/web/).
    assert [board for board, _ in data["urls"]] == [*source_files(), *page_files()]
    for _, url in data["urls"]:
        assert (firmware_dir() / url).is_file(), url


def test_the_generator_writes_it_and_its_check_finds_it_stale(tmp_path: Path) -> None:
    root = tmp_path / "firmware"
    for board_path, path in source_files().items():
        (root / board_path).parent.mkdir(parents=True, exist_ok=True)
        (root / board_path).write_bytes(path.read_bytes())
    assert main(["--root", str(root), "--check"]) == 1  # none yet
    assert main(["--root", str(root)]) == 0
    assert main(["--root", str(root), "--check"]) == 0
    (root / "cribfw" / "extra.py").write_text("X = 1\n")
    assert main(["--root", str(root), "--check"]) == 1
    main(["--root", str(root)])
    assert ["cribfw/extra.py", "cribfw/extra.py"] in json.loads((root / PACKAGE_FILE).read_text())[
        "urls"
    ]


def test_mpremote_mip_install_puts_a_working_firmware_on_stock_micropython() -> None:
    # mip installs the sources, which the board compiles as it imports them (about 136 KB of
    # heap with Bluetooth; a bytecode deploy's needs are held by tests/ble/test_ble.py).
    with served(firmware_dir()) as base, VirtualBoard(stock=True, heap="144wK") as stock:
        result = subprocess.run(
            [
                *(sys.executable, "-m", "mpremote", "connect", stock.port),
                *("mip", "install", "--target", "/", base + PACKAGE_FILE),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        assert "Done" in result.stdout
        # Left at MicroPython's prompt: opening the board restarts it, now with the app.
        with SyncBoard.open(stock.port, timeout=10.0) as board:
            hello = board.hello
        assert hello.firmware == FIRMWARE_VERSION and hello.fields.get("store") == "fresh"
