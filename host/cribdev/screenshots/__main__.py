"""`python -m cribdev.screenshots` (`make screenshots`): the README's pictures in
docs/images/, from a fresh virtual board."""

from __future__ import annotations

import asyncio
import sys

from cribdev.screenshots import IMAGES
from cribdev.screenshots.make import make_pictures


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    written = asyncio.run(make_pictures(IMAGES))
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
