"""The drilling template: the top panel at 1:1 with every LED hole, button hole and the USB-C
socket's place, from the layout; whole, or on two A4 / US Letter sheets that overlap."""

from __future__ import annotations

from cribboard.hardware import svg
from cribboard.hardware.case import CASE, Case
from cribboard.hardware.clearances import clearances
from cribcore import layout

_PAD_X = 15  # paper around the board (mm)
_PAD_TOP = 22
_INFO_H = 52  # below the board: scale bar and notes
SHEET_OVERLAP_MM = 20  # the two printer sheets overlap by this much, at the middle


def _board_drawing(case: Case) -> list[str]:
    """The board, in board coordinates (mm, origin at the board's top-left corner)."""
    outline = svg.tag(
        "rect",
        x=0,
        y=0,
        width=case.width_mm,
        height=case.height_mm,
        rx=3,
        class_="cut",
        fill="none",
        stroke="#000",
        stroke_width=0.3,
    )
    return [
        outline,
        *_holes(case),
        *_hole_labels(case),
        *_buttons(case),
        *_usb_socket(case),
        *_frame_and_clearances(case),
    ]


def _drill(kind: str, x: float, y: float, r: float, **attrs: object) -> str:
    """A hole to drill (`kind`: hole or button): its circle and a centre cross to punch."""
    circle = svg.tag(
        "circle",
        class_=kind,
        cx=x,
        cy=y,
        r=r,
        fill="none",
        stroke="#000",
        stroke_width=0.25,
        **attrs,
    )
    return (
        '<g class="drill">'
        + circle
        + svg.line(x - r - 1.5, y, x + r + 1.5, y, stroke="#000", stroke_width=0.12)
        + svg.line(x, y - r - 1.5, x, y + r + 1.5, stroke="#000", stroke_width=0.12)
        + "</g>"
    )


def _holes(case: Case) -> list[str]:
    """Every LED hole, with its hole id and the LED under it."""
    r = case.hole_mm / 2
    out = []
    for hole in range(layout.HOLES):
        x, y = case.hole_xy(hole)
        led = layout.LED_OF_HOLE[hole]
        out.append(_drill("hole", x, y, r, data_hole=hole, data_led=led))
    return out


def _hole_labels(case: Case) -> list[str]:
    """Column numbers above row A and below row B; row names beside the rows; the win hole."""
    out = []
    top = case.hole_xy(0)[1] - 5.5
    bottom = case.hole_xy(3 * layout.COLS)[1] + 8
    for col in range(4, layout.COLS, 5):
        x = case.hole_xy(col)[0]
        out.append(svg.text(x, top, str(col + 1), font_size=3, text_anchor="middle"))
        out.append(svg.text(x, bottom, str(col + 1), font_size=3, text_anchor="middle"))
    names = ("A outer", "A inner", "B inner", "B outer")
    for row in range(layout.ROWS):
        y = case.hole_xy(row * layout.COLS)[1]
        out.append(svg.text(-1.5, y + 0.8, names[row], font_size=2.2, text_anchor="end"))
    wx, wy = case.hole_xy(layout.WIN_HOLE)
    out.append(svg.text(wx, wy - 4.5, "WIN", font_size=2.5, text_anchor="middle"))
    return out


def _buttons(case: Case) -> list[str]:
    """The button holes, named; dashed: C+ and C-, three players only."""
    r = case.button_hole_mm / 2
    out = []
    for name, (x, y) in case.button_positions().items():
        optional = name.startswith("C")
        dashes = "1 0.7" if optional else None
        out.append(_drill("button", x, y, r, stroke_dasharray=dashes, data_button=name))
        if optional:
            out.append(svg.text(x, y - r - 1.2, name, font_size=2.4, text_anchor="middle"))
        else:
            out.append(svg.text(x + r + 1, y - r - 0.5, name, font_size=2.4))
    return out


def _usb_socket(case: Case) -> list[str]:
    """The USB-C socket's place in the left end wall (dashed: it is not in the top panel)."""
    width = case.usb_slot_mm[0]
    y = case.usb_y_mm
    return [
        svg.tag(
            "rect",
            class_="connector",
            x=-6,
            y=y - width / 2,
            width=4,
            height=width,
            fill="none",
            stroke="#000",
            stroke_width=0.25,
            stroke_dasharray="1 0.7",
        ),
        svg.text(
            -8,
            y,
            "USB-C jack",
            font_size=2.2,
            text_anchor="middle",
            transform=f"rotate(-90 {svg.number(-8)} {svg.number(y)})",
        ),
    ]


def _frame_and_clearances(case: Case) -> list[str]:
    """The frame's inside face under the panel (dashed grey), and each button's distance to
    the nearest part of it: the room the button's nut and body need."""
    faces = case.frame_inside()
    grey = "#777"
    out = [
        svg.tag(
            "rect",
            class_="frame",
            x=faces["left"],
            y=faces["top"],
            width=faces["right"] - faces["left"],
            height=faces["bottom"] - faces["top"],
            fill="none",
            stroke=grey,
            stroke_width=0.2,
            stroke_dasharray="2 1",
        )
    ]
    r = case.button_hole_mm / 2
    for room in clearances(case):
        for face in room.faces:
            out.append(_clearance(room.button, room.x, room.y, r, face, room.distance_mm))
    return out


def _clearance(button: str, x: float, y: float, r: float, face: str, distance: float) -> str:
    """A button's distance to one face of the frame: a thin line from the hole's edge to the
    face, and the figure."""
    grey = "#777"
    sideways = face in ("left", "right")
    direction = 1 if face in ("right", "bottom") else -1
    if sideways:
        start, end = (x + direction * r, y), (x + direction * distance, y)
        label = ((start[0] + end[0]) / 2, y - 0.6)
    else:
        start, end = (x, y + direction * r), (x, y + direction * distance)
        label = (x + 1, (start[1] + end[1]) / 2 + 0.6)
    attrs = svg.attributes({"data_button": button, "data_face": face, "data_mm": distance})
    return (
        f'<g class="clearance" {attrs}>'
        + svg.line(*start, *end, stroke=grey, stroke_width=0.15)
        + svg.text(*label, f"{distance:g}", font_size=1.8, fill=grey)
        + "</g>"
    )


def _scale_bar(x: float, y: float) -> list[str]:
    out = [
        svg.tag(
            "rect", x=x, y=y, width=100, height=3, fill="none", stroke="#000", stroke_width=0.25
        )
    ]
    for i in range(10):
        if i % 2 == 0:
            out.append(svg.tag("rect", x=x + 10 * i, y=y, width=10, height=3, fill="#000"))
    for i in range(0, 11):
        out.append(svg.text(x + 10 * i, y + 7, str(10 * i), font_size=2.5, text_anchor="middle"))
    out.append(svg.text(x + 105, y + 3, "mm: this bar must measure exactly 100 mm", font_size=3))
    return out


def _template_notes(case: Case, x: float, y: float) -> list[str]:
    lines = [
        f"cribboard drilling template, 1:1. Board {case.width_mm} x {case.height_mm} mm (cut line). Print at 100 % "
        '("actual size", no fit-to-page); check the scale bar.',
        f"LED holes {case.hole_mm} mm ({layout.HOLES}: four rows of {layout.COLS} in groups "
        f"of {layout.GROUP}, plus the win hole). Buttons {case.button_hole_mm} mm (dashed: C+ and C-, "
        "three-player boards only). Centre-punch each cross.",
        f"USB-C jack: a {case.usb_slot_mm[0]} x {case.usb_slot_mm[1]} mm slot (or what your jack needs) "
        "in the left end wall, level with the win hole.",
        f"Dashed grey: the frame's inside face ({case.frame_mm:g} mm stock under the edges); "
        "the small figures: each button's distance to it in mm.",
        "Generated by `python -m cribboard.hardware` from cribcore/layout.py (the firmware's "
        "own layout).",
    ]
    return [svg.text(x, y + 5 * i, line, font_size=3) for i, line in enumerate(lines)]


def template_svg(case: Case = CASE) -> str:
    """The whole board at 1:1 (380 mm wide: for a large-format printer, a plotter, or to tile)."""
    width = case.width_mm + 2 * _PAD_X
    height = _PAD_TOP + case.height_mm + _INFO_H
    body = [svg.tag("rect", x=-_PAD_X, y=-_PAD_TOP, width=width, height=height, fill="#fff")]
    body += ['<g id="board">', *_board_drawing(case), "</g>"]
    body += _scale_bar(0, case.height_mm + 14)
    body += _template_notes(case, 0, case.height_mm + 26)
    body.append(
        svg.text(0, -_PAD_TOP + 8, "cribboard: top panel drilling template (1:1)", font_size=5)
    )
    return svg.document(width, height, -_PAD_X, -_PAD_TOP, body, "cribboard drilling template")


def template_sheet_svg(sheet: int, case: Case = CASE) -> str:
    """One of two sheets that fit A4 or US Letter (landscape); tape them so the crosses meet."""
    half = SHEET_OVERLAP_MM / 2
    split = case.width_mm // 2  # the sheets meet here (board x)
    x0 = -_PAD_X if sheet == 1 else split - half - 5
    x1 = split + half + 5 if sheet == 1 else case.width_mm + _PAD_X
    width = x1 - x0
    height = _PAD_TOP + case.height_mm + _INFO_H
    body = [svg.tag("rect", x=x0, y=-_PAD_TOP, width=width, height=height, fill="#fff")]
    body.append(
        svg.tag(
            "rect",
            x=split - half,
            y=-_PAD_TOP + 10,
            width=2 * half,
            height=case.height_mm + _PAD_TOP - 4,
            fill="#eee",
        )
    )
    body += ['<g id="board">', *_board_drawing(case), "</g>"]
    for y in (-8, case.height_mm + 6):  # alignment crosses in the overlap, on both sheets
        for x in (split - half / 2, split + half / 2):
            body.append(svg.line(x - 3, y, x + 3, y, stroke="#000", stroke_width=0.2))
            body.append(svg.line(x, y - 3, x, y + 3, stroke="#000", stroke_width=0.2))
    bar_x = x0 + 8
    body += _scale_bar(bar_x, case.height_mm + 14)
    body.append(
        svg.text(
            bar_x,
            case.height_mm + 28,
            f"Sheet {sheet} of 2 (A4 / Letter landscape, 100 %). "
            "Overlap the grey bands so the four crosses coincide, then tape.",
            font_size=3,
        )
    )
    body.append(
        svg.text(
            bar_x,
            case.height_mm + 33,
            "Board "
            + ("left" if sheet == 1 else "right")
            + f" half; holes {case.hole_mm} mm, buttons "
            f"{case.button_hole_mm} mm. From cribcore/layout.py.",
            font_size=3,
        )
    )
    body.append(
        svg.text(
            x0 + 8,
            -_PAD_TOP + 8,
            f"cribboard drilling template, sheet {sheet} of 2 (1:1)",
            font_size=5,
        )
    )
    return svg.document(
        width, height, x0, -_PAD_TOP, body, f"cribboard drilling template, sheet {sheet} of 2"
    )
