"""Small SVG writing helpers: numbers with at most two decimals, escaped text, one element per
call. Every drawing of the hardware package is built from these."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"


def number(value: float) -> str:
    """A number for SVG: at most two decimals, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def attributes(attrs: Mapping[str, object]) -> str:
    """`stroke_width=2, class_="cut"` as `stroke-width="2" class="cut"`; None leaves one out."""
    parts = []
    for key, value in attrs.items():
        if value is None:
            continue
        text = number(value) if isinstance(value, (int, float)) else escape(str(value))
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{text}"')
    return " ".join(parts)


def tag(name: str, **attrs: object) -> str:
    return f"<{name} {attributes(attrs)}/>"


def text(x: float, y: float, words: str, **attrs: object) -> str:
    return f"<text {attributes({'x': x, 'y': y, **attrs})}>{escape(words)}</text>"


def line(x1: float, y1: float, x2: float, y2: float, **attrs: object) -> str:
    return tag("line", x1=x1, y1=y1, x2=x2, y2=y2, **attrs)


def path(points: Sequence[tuple[float, float]], **attrs: object) -> str:
    d = "M" + " L".join(f"{number(x)} {number(y)}" for x, y in points)
    return tag("path", d=d, fill="none", **attrs)


def document(
    width: float,
    height: float,
    min_x: float,
    min_y: float,
    body: Iterable[str],
    title: str,
    unit: str = "mm",
    scale: float = 1,
) -> str:
    """A whole SVG file: `width` x `height` user units shown as `scale` times that many
    `unit`s (a drawing in millimetres at 2:1: unit "mm", scale 2)."""
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{number(width * scale)}{unit}" '
        f'height="{number(height * scale)}{unit}" viewBox="{number(min_x)} {number(min_y)} '
        f'{number(width)} {number(height)}" font-family="{FONT}">'
    )
    return "\n".join([head, f"<title>{escape(title)}</title>", *body, "</svg>", ""])
