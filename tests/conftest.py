import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The core tests import cribcore straight from firmware/ (the one source) and their helpers.
for extra in (ROOT / "firmware", ROOT / "tests" / "core"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))
