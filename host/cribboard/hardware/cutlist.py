"""The cut list: the wood for the case, from the case's dimensions. The frame stands under the
top panel's edges, its outside flush with them; its corners are butt joints (the end pieces
between the sides) or mitres (every piece 45 degrees at both ends)."""

from __future__ import annotations

from dataclasses import dataclass

from cribboard.hardware.case import Case

JOINTS = ("butt", "mitre")


@dataclass(frozen=True)
class Piece:
    """Pieces of one size: how many, and the size (mm)."""

    name: str
    qty: int
    length_mm: float
    width_mm: float
    thickness_mm: float
    ends: str
    note: str = ""


def frame_pieces(case: Case, joint: str = "butt") -> list[Piece]:
    """The frame's four pieces, cut from stock `frame_height_mm` wide and `frame_mm` thick."""
    if joint not in JOINTS:
        raise ValueError(f"joint is one of {JOINTS}, not {joint!r}")
    width, thickness = case.frame_height_mm, case.frame_mm
    slot_w, slot_h = case.usb_slot_mm
    usb = f"one of them (the left end): the USB-C slot, {slot_w} x {slot_h} mm, in the middle"
    if joint == "butt":
        return [
            Piece("side", 2, case.width_mm, width, thickness, "square", "the full length"),
            Piece("end", 2, case.height_mm - 2 * thickness, width, thickness, "square", usb),
        ]
    return [
        Piece(
            "side",
            2,
            case.width_mm,
            width,
            thickness,
            "45° mitre both ends",
            "long point to long point",
        ),
        Piece("end", 2, case.height_mm, width, thickness, "45° mitre both ends", usb),
    ]


def panels(case: Case) -> list[Piece]:
    """The top panel (drilled with the template) and the back panel (the base)."""
    return [
        Piece("top panel", 1, case.width_mm, case.height_mm, case.panel_mm, "square", "drilled"),
        Piece("back panel", 1, case.width_mm, case.height_mm, case.back_mm, "square", "screwed on"),
    ]


def stock_length_mm(case: Case, joint: str = "butt") -> float:
    """Frame stock needed: every piece end to end, one saw cut (kerf) between pieces and at
    both ends."""
    pieces = frame_pieces(case, joint)
    count = sum(piece.qty for piece in pieces)
    return sum(piece.qty * piece.length_mm for piece in pieces) + (count + 1) * case.kerf_mm


def cutlist_markdown(case: Case) -> str:
    """The README's cut list: the frame both ways, the panels, and how much stock."""
    out = [
        "| joint | piece | qty | length | width | thickness | ends | note |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for joint in JOINTS:
        for p in frame_pieces(case, joint):
            out.append(
                f"| {joint} | {p.name} | {p.qty} | {p.length_mm:g} mm | {p.width_mm:g} mm | "
                f"{p.thickness_mm:g} mm | {p.ends} | {p.note} |"
            )
    for p in panels(case):
        out.append(
            f"| | {p.name} | {p.qty} | {p.length_mm:g} mm | {p.width_mm:g} mm | "
            f"{p.thickness_mm:g} mm | {p.ends} | {p.note} |"
        )
    out.append("")
    needs = ", ".join(
        f"{stock_length_mm(case, joint) / 1000:.2f} m for {joint} joints" for joint in JOINTS
    )
    out.append(
        f"Frame stock ({case.frame_height_mm:g} x {case.frame_mm:g} mm): {needs} (with "
        f"{case.kerf_mm:g} mm per saw cut). The case stands {case.depth_mm:g} mm tall: "
        f"{case.panel_mm:g} mm top panel, {case.frame_height_mm:g} mm frame, "
        f"{case.back_mm:g} mm back panel."
    )
    return "\n".join(out)
