"""Argument parsing for the command lines: a bad argument is one line on stderr, exit 2."""

from __future__ import annotations

import argparse
from typing import NoReturn

from cribboard.i18n import _


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, not argparse's usage block: scripts read
    stderr, people read the first line."""

    def error(self, message: str) -> NoReturn:
        line = _(
            "%(prog)s: %(message)s (see %(command)s --help)",
            prog=self.prog,
            message=message,
            command=self.prog,
        )
        self.exit(2, line + "\n")
