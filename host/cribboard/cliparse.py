"""Argument parsing for the command lines: a bad argument is one line on stderr, exit 2."""

from __future__ import annotations

import argparse
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, not argparse's usage block: scripts read
    stderr, people read the first line."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")
