"""The README's pictures, made from the running programs (`make screenshots`):

    docs/images/terminal.png   the scorekeeper (`make run`) in a terminal: its real output,
                               colour codes and all, drawn with a font the project installs
    docs/images/page.png       the bridge's web page in headless Chromium
    docs/images/page.txt       what the page showed, and the page's source files' digests
    docs/images/history.png    the page's history on a phone (made-up games: cribdev.recordgen)
    docs/images/history.txt    what the history showed, its files' digests

Both show the same game on a fresh virtual board (`scene.py`). The terminal picture is
reproducible byte for byte: the font comes from a pinned PyPI package, and the rasteriser and
compressor with the pinned Pillow wheel. A Chromium screenshot is not (the browser's version and
the system's fonts draw it), so `page.txt` records what the page showed instead, and the tests
compare that (tests/page/test_screenshots.py).
"""

from __future__ import annotations

from pathlib import Path

IMAGES = Path(__file__).resolve().parents[3] / "docs" / "images"
"""Where the pictures live (docs/images/ in the source tree)."""
