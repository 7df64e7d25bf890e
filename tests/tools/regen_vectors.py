"""Rewrite the expected lines of tests/core/vectors.py's VECTORS session (and END_STATE) from what
the firmware's dispatcher answers now. A developer tool for a deliberate protocol change: run it,
read the diff (`git diff tests/core/vectors.py`) line by line, then bring docs/protocol.md's
examples along (tests/core/test_protocol.py checks each of them is a vector line).

    .venv/bin/python tests/tools/regen_vectors.py
"""

from __future__ import annotations

import ast
import pprint
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VECTORS_PY = ROOT / "tests" / "core" / "vectors.py"
sys.path[:0] = [str(ROOT / "tests" / "core"), str(ROOT / "firmware")]

import test_protocol as T  # noqa: E402
import vectors as V  # noqa: E402


def _vectors_node(tree: ast.Module) -> ast.List:
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "VECTORS":
            assert isinstance(node.value, ast.List)
            return node.value
    raise SystemExit("no VECTORS list in vectors.py")


def main() -> int:
    source = VECTORS_PY.read_text()
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:
        return starts[lineno - 1] + col

    node = _vectors_node(ast.parse(source))
    session = T.Session()
    edits = []
    try:
        for element, (data, expected) in zip(node.elts, V.VECTORS, strict=True):
            got = session.send(data)
            if got == expected:
                continue
            assert isinstance(element, ast.Tuple) and len(element.elts) == 2
            data_node = element.elts[0]
            data_src = source[
                offset(data_node.lineno, data_node.col_offset) : offset(
                    data_node.end_lineno or 0, data_node.end_col_offset or 0
                )
            ]
            new = "(%s, [%s])" % (data_src, ", ".join(repr(line) for line in got))
            edits.append(
                (
                    offset(element.lineno, element.col_offset),
                    offset(element.end_lineno or 0, element.end_col_offset or 0),
                    new,
                )
            )
        end_state = T.board_state(session.board)
    finally:
        session.close()
    for start, end, new in reversed(edits):
        source = source[:start] + new + source[end:]
    head, _, tail = source.partition("END_STATE = ")
    _, _, rest = tail.partition("}\n")
    source = head + "END_STATE = " + pprint.pformat(end_state, sort_dicts=False) + "\n" + rest
    VECTORS_PY.write_text(source)
    print("%d steps rewritten; now run ruff format and read the diff" % len(edits))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
