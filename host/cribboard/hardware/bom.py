"""The parts list: hardware/bom.csv read, and shown as the README's table."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

BOM_COLUMNS = ("item", "qty", "build", "part", "order", "notes")


def read_bom(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def bom_markdown(rows: Sequence[Mapping[str, str]]) -> str:
    out = [
        "| # | qty | for | part | order (part family) | notes |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        out.append("| " + " | ".join(row[c].replace("|", "/") for c in BOM_COLUMNS) + " |")
    return "\n".join(out)
