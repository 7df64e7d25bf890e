"""`-v` / `--verbose` on every command: the standard `logging` module, to stderr.

Without it nothing is configured (Python prints a warning of the package's as a bare line);
`-v` shows what the package does (ports opened and probed, connections, the bridge's and the
hall's steps), `-vv` every protocol line sent and received as well."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

FORMAT = "cribboard: %(levelname)s %(name)s: %(message)s"


def verbosity(words: Sequence[str]) -> int:
    """How many times -v / --verbose (or -vv, -vvv) stands on the line, anywhere before `--`:
    read before the parser runs, so that commands with a parser of their own (`hall`, `virtual`)
    take it after their name too."""
    count = 0
    for word in words:
        if word == "--":
            break
        if word == "--verbose":
            count += 1
        elif len(word) > 1 and word.startswith("-") and set(word[1:]) == {"v"}:
            count += len(word) - 1
    return count


def without_verbosity(words: Sequence[str]) -> list[str]:
    """The words without the -v options that `verbosity` counted."""
    out: list[str] = []
    for i, word in enumerate(words):
        if word == "--":
            out.extend(words[i:])
            break
        if word == "--verbose" or (
            len(word) > 1 and word.startswith("-") and set(word[1:]) == {"v"}
        ):
            continue
        out.append(word)
    return out


def configure(level: int) -> None:
    """Send the package's log records to stderr: 1 = INFO, 2 or more = DEBUG; 0 changes nothing."""
    if level <= 0:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    package = logging.getLogger("cribboard")
    package.addHandler(handler)
    package.setLevel(logging.DEBUG if level >= 2 else logging.INFO)
