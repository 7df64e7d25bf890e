"""The side section: the board cut across its width through the first column of holes, from
the same data as the template: the top panel and its holes, an LED seated in each (flange
against the underside, dome standing proud), the bus wires, capacitor and data hop under it,
the frame and the back panel, with their sizes. Drawn in millimetres at 2:1; `y` runs across the
board as on the template, `z` down from the top panel's surface."""

from __future__ import annotations

from dataclasses import dataclass

from cribboard.hardware import svg
from cribboard.hardware.case import CASE, Case
from cribcore import layout

SCALE = 2
WOOD = "#e2c49a"
END_GRAIN = "#c9a477"
LED = "#e8eef8"
COPPER = "#b5651d"
BLACK = "#222"
GREY = "#666"
RED = "#c0392b"
DATA = "#1f6fb2"
LEFT, TOP, RIGHT, BOTTOM = 40, 30, 92, 30  # paper around the section (mm)
LEAD_DROP_MM = 4  # how far below the flange the leads bend to the bus wires
BUS_SPREAD_MM = 3.5  # the bus wires, either side of an LED's leads
WIRE_MM = 0.6  # 22 AWG


@dataclass(frozen=True)
class _Under:
    """Heights (z, mm down from the top surface) of what hangs under an LED."""

    flange_bottom: float
    bus: float
    cap: float
    hop: float


def _under(case: Case) -> _Under:
    flange_bottom = case.panel_mm + case.led_flange_thickness_mm
    bus = flange_bottom + LEAD_DROP_MM
    return _Under(flange_bottom, bus, bus + 2, bus + 4.5)


def section_svg(case: Case = CASE) -> str:
    """The side section as an SVG file."""
    column = layout.hole_xy_mm(0)[0]
    body = [
        svg.tag(
            "rect",
            x=-LEFT,
            y=-TOP,
            width=case.height_mm + LEFT + RIGHT,
            height=case.depth_mm + TOP + BOTTOM,
            fill="#fff",
        ),
        svg.text(
            -LEFT + 4,
            -TOP + 9,
            f"cribboard: side section across the board, through column 1 ({column} mm from the "
            "left end), 2:1",
            font_size=4,
        ),
        svg.text(
            -LEFT + 4,
            -TOP + 15,
            "Sizes in mm, from cribcore/layout.py and the case's dimensions "
            "(python -m cribboard.hardware). Seen from the left end; row A at the left.",
            font_size=2.6,
            fill=GREY,
        ),
    ]
    body += _wood(case)
    for row in range(layout.ROWS):
        body += _led(case, case.hole_xy(row * layout.COLS)[1])
    body += _dimensions(case)
    body += _labels(case)
    return svg.document(
        case.height_mm + LEFT + RIGHT,
        case.depth_mm + TOP + BOTTOM,
        -LEFT,
        -TOP,
        body,
        "cribboard side section",
        scale=SCALE,
    )


def _wood(case: Case) -> list[str]:
    """The top panel (cut through at each hole), the frame's two sides, the back panel."""
    edges = [0.0]
    for row in range(layout.ROWS):
        y = case.hole_xy(row * layout.COLS)[1]
        edges += [y - case.hole_mm / 2, y + case.hole_mm / 2]
    edges.append(case.height_mm)
    out = []
    for start, end in zip(edges[::2], edges[1::2]):
        out.append(_block("panel", start, 0, end - start, case.panel_mm, WOOD))
    under = case.panel_mm
    out.append(_block("frame", 0, under, case.frame_mm, case.frame_height_mm, END_GRAIN))
    out.append(
        _block(
            "frame",
            case.height_mm - case.frame_mm,
            under,
            case.frame_mm,
            case.frame_height_mm,
            END_GRAIN,
        )
    )
    base = under + case.frame_height_mm
    out.append(_block("back", 0, base, case.height_mm, case.back_mm, WOOD))
    return out


def _block(kind: str, y: float, z: float, width: float, height: float, fill: str) -> str:
    return svg.tag(
        "rect",
        class_=kind,
        x=y,
        y=z,
        width=width,
        height=height,
        fill=fill,
        stroke=BLACK,
        stroke_width=0.25,
    )


def _led(case: Case, y: float) -> list[str]:
    """One LED in its hole: dome and body above the flange, the flange against the panel's
    underside, the leads bent to the bus wires, its capacitor and the data hop below."""
    r = case.led_body_mm / 2
    flange = case.led_flange_mm / 2
    top = case.panel_mm + case.led_flange_thickness_mm - case.led_height_mm
    under = _under(case)
    dome = (
        f"M{svg.number(y - r)} {svg.number(case.panel_mm)} L{svg.number(y - r)} "
        f"{svg.number(top + r)} A{svg.number(r)} {svg.number(r)} 0 0 1 {svg.number(y + r)} "
        f"{svg.number(top + r)} L{svg.number(y + r)} {svg.number(case.panel_mm)} Z"
    )
    out = [
        svg.tag("path", class_="led", d=dome, fill=LED, stroke=BLACK, stroke_width=0.25),
        svg.tag(
            "rect",
            class_="flange",
            x=y - flange,
            y=case.panel_mm,
            width=2 * flange,
            height=case.led_flange_thickness_mm,
            fill=LED,
            stroke=BLACK,
            stroke_width=0.25,
        ),
    ]
    for side, colour in ((-1, RED), (1, BLACK)):  # VDD to the +5 V bus, GND to the GND bus
        lead = y + side * 0.8
        bus = y + side * BUS_SPREAD_MM
        out.append(
            svg.path(
                [(lead, under.flange_bottom), (lead, under.bus), (bus, under.bus)],
                stroke=COPPER,
                stroke_width=0.45,
            )
        )
        out.append(
            svg.tag("circle", class_="bus", cx=bus, cy=under.bus, r=WIRE_MM / 2, fill=colour)
        )
    out.append(
        svg.tag(
            "rect",
            class_="capacitor",
            x=y - 1.6,
            y=under.cap - 0.8,
            width=3.2,
            height=1.6,
            rx=0.6,
            fill="#f2d16b",
            stroke=BLACK,
            stroke_width=0.2,
        )
    )
    out.append(svg.tag("circle", class_="hop", cx=y, cy=under.hop, r=0.6, fill=DATA))
    return out


def _dimension(
    kind: str, a: tuple[float, float], b: tuple[float, float], value: float, side: float
) -> str:
    """A dimension line from `a` to `b` (y, z) with end ticks and its value in mm, written on
    the `side` (-1: left or above, 1: right or below)."""
    (y1, z1), (y2, z2) = a, b
    vertical = y1 == y2
    tick = 1.2
    parts = [svg.line(y1, z1, y2, z2, stroke=GREY, stroke_width=0.15)]
    for y, z in (a, b):
        if vertical:
            parts.append(svg.line(y - tick, z, y + tick, z, stroke=GREY, stroke_width=0.15))
        else:
            parts.append(svg.line(y, z - tick, y, z + tick, stroke=GREY, stroke_width=0.15))
    label = f"{value:g}"
    if vertical and abs(z2 - z1) < 3:  # too short to write beside: above its top end
        parts.append(svg.text(y1, min(z1, z2) - 1.5, label, font_size=2.6, text_anchor="middle"))
    elif vertical:
        anchor = "end" if side < 0 else "start"
        parts.append(
            svg.text(y1 + side * 1.5, (z1 + z2) / 2 + 1, label, font_size=2.6, text_anchor=anchor)
        )
    else:
        z = z1 + (-1.2 if side < 0 else 3.4)
        parts.append(svg.text((y1 + y2) / 2, z, label, font_size=2.6, text_anchor="middle"))
    attrs = svg.attributes({"class": "dimension", "data_what": kind, "data_mm": value})
    return f"<g {attrs}>" + "".join(parts) + "</g>"


def _dimensions(case: Case) -> list[str]:
    """Panel thickness (the holes' depth), how far the LED stands proud, the frame, the back
    panel, the whole depth; the frame's thickness and the board's width below."""
    panel, frame_h, back = case.panel_mm, case.frame_height_mm, case.back_mm
    depth = case.depth_mm
    first = case.hole_xy(0)[1]
    proud = case.led_proud_mm
    width = case.height_mm
    return [
        _dimension("hole depth", (first - 4.5, 0), (first - 4.5, panel), panel, -1),
        _dimension("proud", (first + 4.5, -proud), (first + 4.5, 0), round(proud, 2), 1),
        _dimension("panel", (-6, 0), (-6, panel), panel, -1),
        _dimension("frame height", (-6, panel), (-6, panel + frame_h), frame_h, -1),
        _dimension("back", (-6, panel + frame_h), (-6, depth), back, -1),
        _dimension("depth", (-20, 0), (-20, depth), depth, -1),
        _dimension(
            "frame thickness",
            (width - case.frame_mm, depth + 6),
            (width, depth + 6),
            case.frame_mm,
            1,
        ),
        _dimension("width", (0, depth + 15), (width, depth + 15), width, 1),
    ]


def _labels(case: Case) -> list[str]:
    """What each part is, with leader lines from the last row's LED and the right-hand wood to
    a column of labels beside the section."""
    y = case.hole_xy(3 * layout.COLS)[1]
    under = _under(case)
    top = case.panel_mm + case.led_flange_thickness_mm - case.led_height_mm
    right = case.height_mm
    items = [
        (
            (y, top),
            f"5 mm LED: its dome stands {case.led_proud_mm:g} mm proud of the panel",
        ),
        (
            (right - case.frame_mm - 2, case.panel_mm / 2),
            f"top panel, {case.panel_mm:g} mm: each {case.hole_mm} mm hole {case.panel_mm:g} mm "
            "deep",
        ),
        ((y + case.led_flange_mm / 2, case.panel_mm + 0.5), "flange under the panel stops the LED"),
        (
            (y + BUS_SPREAD_MM, under.bus),
            "+5 V (red) and GND buses: bare 22 AWG wire along each row",
        ),
        ((y + 1.6, under.cap), "100 nF across the buses, beside each LED"),
        ((y + 0.6, under.hop), "data hop: DOUT to the next LED's DIN"),
        (
            (right - case.frame_mm / 2, case.panel_mm + case.frame_height_mm / 2),
            f"frame, {case.frame_mm:g} x {case.frame_height_mm:g} mm stock, glued under the edge",
        ),
        (
            (right - 4, case.panel_mm + case.frame_height_mm + case.back_mm / 2),
            f"back panel (the base), {case.back_mm:g} mm, screwed to the frame",
        ),
    ]
    out = []
    column = right + 8
    last = -1e9
    for (fy, fz), words in items:
        z = max(fz, last + 4.2)
        last = z
        out.append(svg.path([(fy, fz), (column, z)], stroke=GREY, stroke_width=0.15))
        out.append(svg.text(column + 1, z + 0.9, words, font_size=2.5))
    out.append(
        svg.text(
            0,
            case.depth_mm + BOTTOM - 6,
            "The perfboard with the controller sits at the left end, near LED 1 (not in this "
            "section).",
            font_size=2.6,
            fill=GREY,
        )
    )
    return out
