"""`-v` / `--verbose` on every command: the standard `logging` module, to stderr.

Without it nothing is configured (Python prints a warning of the package's as a bare line);
`-v` shows what the package does (ports opened and probed, connections, the bridge's and the
hall's steps), `-vv` every protocol line sent and received as well.

The modules a one-shot command imports (`cribboard peg`) log through a `QuietLog`, which
imports no `logging` of its own."""

from __future__ import annotations

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


_DEBUG = 10
_INFO = 20  # (logging's levels, as numbers: the standard library fixes them)


class QuietLog:
    """A module's logger that costs nothing to import: its debug and info records go to
    ``logging.getLogger(name)`` once the process has imported `logging` (as `-v` does, or a
    program that configures it), and are dropped before. Dropping them loses nothing: where
    `logging` was never imported, nothing was configured, and an unconfigured logging drops a
    record below WARNING. Importing `logging` (with traceback, tokenize, threading) would cost
    a one-shot command about 6 ms for records it does not show."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def debug(self, message: str, *args: object) -> None:
        self._log(_DEBUG, message, args)

    def info(self, message: str, *args: object) -> None:
        self._log(_INFO, message, args)

    def _log(self, level: int, message: str, args: tuple[object, ...]) -> None:
        if "logging" in sys.modules:
            import logging

            # stacklevel 3: the record names the line that called debug() or info()
            logging.getLogger(self.name).log(level, message, *args, stacklevel=3)


def configure(level: int) -> None:
    """Send the package's log records to stderr: 1 = INFO, 2 or more = DEBUG; 0 changes nothing."""
    if level <= 0:
        return
    import logging  # (here: a command line without -v logs nothing, see QuietLog)

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    package = logging.getLogger("cribboard")
    package.addHandler(handler)
    package.setLevel(logging.DEBUG if level >= 2 else logging.INFO)
