"""The floors of docs/architecture.md, enforced: every import of the host package, the dev tools,
the shared core and the firmware is read with `ast` (those inside functions too), mapped to its
floor by the document's table, and checked against that floor's rule; and no module imports
itself round a circle."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
# Where each top-level package's source is, as it is imported.
SOURCES = {
    "cribboard": ROOT / "host",
    "cribdev": ROOT / "host",
    "cribcore": ROOT / "firmware",
    "cribfw": ROOT / "firmware",
}

# Known breaks of the rule, still to mend: (importing module, imported module) and why each is
# still there. Empty when the floors hold; a break not listed fails, and so does an entry that
# no longer happens (delete it).
KNOWN_BREAKS: dict[tuple[str, str], str] = {}
# Known circles, still to mend: the modules of each, sorted.
KNOWN_CIRCLES: dict[tuple[str, ...], str] = {}


@dataclass(frozen=True)
class Floor:
    name: str
    members: tuple[str, ...]
    may_import: tuple[str, ...]  # the floors right below
    together: bool  # its members may import each other


def floors() -> dict[str, Floor]:
    """The table of docs/architecture.md: | Floor | Members | May import | Rule |."""
    found: dict[str, Floor] = {}
    for line in DOC.read_text().splitlines():
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("Floor", "") or set(cells[0]) <= {"-"}:
            continue
        below = tuple(word.strip() for word in cells[2].split(",") if word.strip())
        found[cells[0]] = Floor(
            cells[0],
            tuple(re.findall(r"`([\w.]+)`", cells[1])),
            tuple(word for word in below if word != "itself"),
            "itself" in below,
        )
    return found


def modules() -> dict[str, Path]:
    """Every module of the four packages, by its dotted name (a package by its own name)."""
    found = {}
    for package, base in SOURCES.items():
        for path in sorted((base / package).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            parts = path.relative_to(base).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """The modules of ours that module `name` imports, with the line: `from a import b` is
    module a.b when there is one, else a."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target, node.lineno


def member_of(name: str, table: dict[str, Floor]) -> tuple[str, Floor] | None:
    """The member of the table a module belongs to, and its floor. A member is a module, or a
    package with all that is in it; but a package whose parts the table names (`cribboard`) is
    its `__init__` alone."""
    named = [(member, floor) for floor in table.values() for member in floor.members]
    for member, floor in named:
        if name == member:
            return member, floor
    for member, floor in named:
        inside = any(other.startswith(member + ".") for other, _ in named)
        if name.startswith(member + ".") and not inside:
            return member, floor
    return None


def below(floor: Floor, table: dict[str, Floor]) -> set[str]:
    """Every floor `floor` may import: those it names, and theirs."""
    seen: set[str] = set()
    todo = list(floor.may_import)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += table[name].may_import
    return seen


def graph() -> dict[str, dict[str, int]]:
    known = modules()
    return {name: dict(imports(name, path, known)) for name, path in known.items()}


def judge(name: str, target: str, table: dict[str, Floor]) -> str | None:
    """What is wrong with module `name` importing module `target`; None when the rule allows it."""
    mine, theirs = member_of(name, table), member_of(target, table)
    assert mine is not None, f"{name} is on no floor of docs/architecture.md: add it"
    assert theirs is not None, f"{target} is on no floor of docs/architecture.md: add it"
    if mine[0] == theirs[0] or theirs[1].name in below(mine[1], table):
        return None
    if mine[1] == theirs[1]:
        if mine[1].together:
            return None
        return f"sideways: {theirs[0]} stands apart from {mine[0]} on {mine[1].name}"
    return f"upward: {mine[1].name} may not import {theirs[1].name}"


def breaks() -> dict[tuple[str, str], str]:
    """Every import against the table's rule, and what is wrong with it."""
    table = floors()
    found = {}
    for name, targets in graph().items():
        for target, line in targets.items():
            why = judge(name, target, table)
            if why is not None:
                found[(name, target)] = f"{name} (line {line}) imports {target}: {why}"
    return found


def circles() -> list[tuple[str, ...]]:
    """The modules that import each other round a circle (Tarjan's strongly connected
    components with more than one module)."""
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for node in edges:
        if node not in index:
            visit(node)
    return found


def test_the_table_names_known_floors() -> None:
    table = floors()
    assert {"core", "base", "features", "cli"} <= set(table)
    for floor in table.values():
        assert set(floor.may_import) <= set(table), floor
        assert floor.name not in below(floor, table), f"{floor.name} is below itself"
    members = [member for floor in table.values() for member in floor.members]
    assert len(members) == len(set(members)), "a member on two floors"
    known = modules()
    for member in members:
        assert member in known, f"docs/architecture.md names {member}: no such module"


def test_no_import_runs_up_or_sideways() -> None:
    found = breaks()
    new = [why for key, why in sorted(found.items()) if key not in KNOWN_BREAKS]
    assert not new, "imports against docs/architecture.md:\n" + "\n".join(new)
    mended = [key for key in KNOWN_BREAKS if key not in found]
    assert not mended, f"mended, delete from KNOWN_BREAKS: {mended}"


def test_no_import_circle() -> None:
    found = circles()
    new = [circle for circle in found if circle not in KNOWN_CIRCLES]
    assert not new, "modules importing each other round a circle: " + "; ".join(
        " <-> ".join(circle) for circle in new
    )
    mended = [circle for circle in KNOWN_CIRCLES if circle not in found]
    assert not mended, f"mended, delete from KNOWN_CIRCLES: {mended}"


def test_the_rule_sees_a_break() -> None:
    # The check itself: a feature reaching into another, and a floor reaching up, are caught;
    # going down, and within a member, are not.
    table = floors()
    assert "sideways" in str(judge("cribboard.hall.page", "cribboard.bridge.server", table))
    assert "upward" in str(judge("cribcore.layout", "cribboard.api", table))
    assert "upward" in str(judge("cribboard.remote.cli", "cribboard.cli", table))
    assert "upward" in str(judge("cribboard.api", "cribfw.store", table))
    assert judge("cribboard.cli", "cribboard.hall.cli", table) is None
    assert judge("cribboard.hall.page", "cribboard.web.hub", table) is None
    assert judge("cribboard.hall.director", "cribboard.hall.store", table) is None
    assert judge("cribdev.simtable", "cribcore.hall", table) is None
