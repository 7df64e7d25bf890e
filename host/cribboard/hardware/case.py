"""The physical board in millimetres: the top panel with the layout's holes, where the buttons
and the USB-C socket go, and the wood around them. Board coordinates: origin at the top panel's
top-left corner, x to the right (along the rows), y down (across them).

`CASE` is the board as built, from `cribcore.layout`; every drawing and table of the hardware
package takes a `Case`, so a copy with another dimension (`dataclasses.replace`) shows what that
dimension changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from cribcore import layout


@dataclass(frozen=True)
class Case:
    """The board's physical dimensions (mm)."""

    width_mm: int = layout.BOARD_WIDTH_MM
    """The top panel, along the rows."""
    height_mm: int = layout.BOARD_HEIGHT_MM
    """The top panel, across the rows."""
    margin_x_mm: int = layout.MARGIN_X_MM
    """From the left end to the first column of holes (the win hole sits in it)."""
    hole_mm: int = layout.LED_HOLE_DIAMETER_MM
    button_hole_mm: int = 7
    """A panel-mount momentary push button's mounting hole."""
    button_inset_mm: int = 16
    """The button column's centre, from the right end."""
    button_pitch_mm: int = 14
    """Between neighbouring buttons of the column."""
    usb_slot_mm: tuple[int, int] = (10, 4)
    """A typical panel-mount USB-C socket's slot (width, height), in the left end wall."""
    panel_mm: float = 6
    """The top panel's thickness: each LED hole is this deep."""
    frame_mm: float = 9
    """The frame's stock: its thickness (the walls), glued under the top panel's edges."""
    frame_height_mm: float = 34
    """The frame's stock: its width, the room under the top panel."""
    back_mm: float = 3
    """The back panel (the base), screwed to the frame."""
    led_body_mm: float = 5
    """The 5 mm LED's body, which fits its hole..."""
    led_flange_mm: float = 5.8
    """...and its flange (rim), which stops it from below."""
    led_flange_thickness_mm: float = 1
    led_height_mm: float = 8.6
    """From the flange's underside to the top of the dome."""
    kerf_mm: float = 3
    """What a saw cut takes, for the stock length."""

    def hole_xy(self, hole: int) -> tuple[int, int]:
        """Centre of a hole (the layout's)."""
        xy: tuple[int, int] = layout.hole_xy_mm(hole)
        return xy

    def button_positions(self) -> dict[str, tuple[int, int]]:
        """Centre of each button's hole. A's near A's rows (top), B's near B's rows (bottom),
        deal in the middle; C's (three players) at the left end, beside the win hole."""
        x = self.width_mm - self.button_inset_mm
        c_x = self.margin_x_mm // 2
        mid = self.height_mm // 2
        step = self.button_pitch_mm
        return {
            "A+": (x, mid - 2 * step),
            "A-": (x, mid - step),
            "deal": (x, mid),
            "B-": (x, mid + step),
            "B+": (x, mid + 2 * step),
            "C-": (c_x, mid + step),
            "C+": (c_x, mid + 2 * step),
        }

    @property
    def usb_y_mm(self) -> int:
        """The USB-C socket sits in the left end wall at mid height: the controller and the start
        of the LED chain (row A, column 1) are at that end, so the data wire to LED 1 stays
        short."""
        return self.height_mm // 2

    @property
    def led_proud_mm(self) -> float:
        """How far an LED's dome stands above the top panel, its flange against the underside."""
        return self.led_height_mm - self.led_flange_thickness_mm - self.panel_mm

    @property
    def depth_mm(self) -> float:
        """The whole box: top panel, frame, back panel."""
        return self.panel_mm + self.frame_height_mm + self.back_mm

    def frame_inside(self) -> dict[str, float]:
        """Where the frame's inside faces are, seen from above (board coordinates)."""
        return {
            "left": self.frame_mm,
            "right": self.width_mm - self.frame_mm,
            "top": self.frame_mm,
            "bottom": self.height_mm - self.frame_mm,
        }


CASE = Case()
"""The board as built."""
