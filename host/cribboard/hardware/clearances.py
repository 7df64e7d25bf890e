"""The room each button needs: from a button's centre to the frame's inside face, at least 7 mm
(the nut and the body of a 7 mm panel-mount button clear the frame), 6 mm for the three-player
buttons beside the USB-C socket at the left end (there the layout has less room). Checked
against the case's data by the tests, listed in the README and drawn on the template."""

from __future__ import annotations

from dataclasses import dataclass

from cribboard.hardware.case import Case

BUTTON_CLEARANCE_MM = 7
"""From a button's centre to the frame's inside face."""
BESIDE_USB_CLEARANCE_MM = 6
"""The same for the buttons at the USB-C socket's end (C+ and C-, three players only)."""


@dataclass(frozen=True)
class Clearance:
    """One button's room: the nearest inside face of the frame and how far it is."""

    button: str
    x: float
    y: float
    faces: tuple[str, ...]
    """The nearest of the frame's inside faces (`left`, `right`, `top`, `bottom`): one, or two
    as far away as each other in a corner."""
    distance_mm: float
    required_mm: float

    @property
    def ok(self) -> bool:
        return self.distance_mm >= self.required_mm


def clearances(case: Case) -> list[Clearance]:
    """Every button's room, in the order of `Case.button_positions`."""
    inside = case.frame_inside()
    out = []
    for name, (x, y) in case.button_positions().items():
        gaps = {
            "left": x - inside["left"],
            "right": inside["right"] - x,
            "top": y - inside["top"],
            "bottom": inside["bottom"] - y,
        }
        nearest = min(gaps.values())
        faces = tuple(side for side, gap in gaps.items() if gap == nearest)
        beside_usb = x < case.width_mm / 2  # the USB-C socket is in the left end wall
        required = BESIDE_USB_CLEARANCE_MM if beside_usb else BUTTON_CLEARANCE_MM
        out.append(Clearance(name, x, y, faces, nearest, required))
    return out


def clearance_problems(case: Case) -> list[str]:
    """Each button too close to the frame (empty when all have their room)."""
    return [
        f"button {c.button}: {c.distance_mm:g} mm to the frame's {' and '.join(c.faces)} "
        "inside face, "
        f"needs {c.required_mm:g} mm"
        for c in clearances(case)
        if not c.ok
    ]


def clearances_markdown(case: Case) -> str:
    """The README's table: each button's centre, its nearest frame face and the room it has."""
    out = [
        "| button | centre (x, y) | nearest frame inside face | room | needs |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in clearances(case):
        three = " (three players)" if c.button.startswith("C") else ""
        out.append(
            f"| {c.button}{three} | {c.x:g}, {c.y:g} mm | {' and '.join(c.faces)} | "
            f"{c.distance_mm:g} mm | "
            f"{c.required_mm:g} mm{'' if c.ok else ' **too close**'} |"
        )
    return "\n".join(out)
