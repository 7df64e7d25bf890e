"""The page's address as a QR code in the terminal, for a phone's camera (`cribboard serve`).

Two rows of modules share one line of text (half blocks). With colour, light and dark modules
are painted white and black, so the code reads on a dark or a light terminal; without colour
(a pipe, NO_COLOR) light modules are drawn and dark ones left blank, which reads on the dark
background most terminals have."""

from __future__ import annotations

import segno

QUIET_ZONE = 4
"""Modules of light border on each side, as the QR standard asks."""

_PLAIN = {(True, True): "█", (True, False): "▀", (False, True): "▄", (False, False): " "}
_WHITE, _BLACK = "97", "30"


def modules(text: str) -> list[list[bool]]:
    """The code's modules with the quiet zone, True = light."""
    code = segno.make(text, error="m", micro=False)
    inner = [[not bool(dark) for dark in row] for row in code.matrix]
    width = len(inner[0]) + 2 * QUIET_ZONE
    blank = [[True] * width for _ in range(QUIET_ZONE)]
    pad = [True] * QUIET_ZONE
    return blank + [pad + row + pad for row in inner] + [[True] * width for _ in range(QUIET_ZONE)]


def terminal_text(text: str, *, color: bool) -> str:
    """The code of `text` as lines of half blocks (see the module's docstring)."""
    rows = modules(text)
    if len(rows) % 2:
        rows.append([True] * len(rows[0]))
    lines = []
    for top, bottom in zip(rows[::2], rows[1::2], strict=True):
        if color:
            # The upper half block in the top module's colour on the bottom module's.
            cells = [
                f"\x1b[{_WHITE if t else _BLACK};{'107' if b else '40'}m▀"
                for t, b in zip(top, bottom, strict=True)
            ]
            lines.append("".join(cells) + "\x1b[0m")
        else:
            lines.append("".join(_PLAIN[t, b] for t, b in zip(top, bottom, strict=True)))
    return "\n".join(lines)
