"""The hardware package's generator: the drilling template, the wiring diagrams, the picture of
the finished board, and the generated parts of hardware/README.md (parts table, pin tables, power
figures), all from the data the firmware itself uses: `cribcore.layout` (holes, millimetres, LED
chain order) and `cribcore.profiles` (pins, USB ids, current budget).

    python -m cribboard.hardware              # regenerate hardware/ (in a source checkout)
    python -m cribboard.hardware --out DIR    # write somewhere else
    python -m cribboard.hardware --check      # exit 1 when a generated file is out of date
    python -m cribboard.hardware --power      # print the power figures

Also here: what each supported chip's pins are (which exist, which are reserved and why), used
by the tests that validate the board profiles.
"""

from __future__ import annotations

import argparse
import csv
import functools
import itertools
import math
import random
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cribcore import layout as L
from cribcore import limits
from cribcore import render as R
from cribcore.profiles import PROFILES, Profile
from cribcore.state import GameError, GameState

# --- the chips and boards ----------------------------------------------------------------------


@dataclass(frozen=True)
class Chip:
    """Pin facts of one microcontroller (and the reference board the BOM names)."""

    name: str
    vendor_id: int  # the USB vendor id MicroPython uses on it
    gpios: frozenset[int]  # GPIOs the chip has
    header: frozenset[int]  # GPIOs the reference board brings out to its pins
    reserved: Mapping[int, str]  # GPIO -> why the board must not use it


CHIPS: dict[str, Chip] = {
    # RP2350A (Pico 2 W) and RP2040 (Pico W): GPIO 0..29, the same board pinout.
    "rp2350": Chip(
        "rp2350",
        0x2E8A,
        frozenset(range(30)),
        frozenset([*range(23), 26, 27, 28]),
        {
            23: "wireless chip power (WL_ON)",
            24: "wireless chip data / interrupt",
            25: "wireless chip select",
            29: "wireless chip clock (and VSYS sense)",
        },
    ),
    # ESP32-S3: GPIO 0..21 and 26..48 exist (22..25 do not).
    "esp32s3": Chip(
        "esp32s3",
        0x303A,
        frozenset([*range(22), *range(26, 49)]),
        frozenset([*range(22), *range(35, 49)]),
        {
            0: "strapping pin (boot mode; the BOOT button)",
            3: "strapping pin (JTAG source)",
            45: "strapping pin (flash voltage)",
            46: "strapping pin (boot mode, ROM log)",
            19: "native USB D-",
            20: "native USB D+",
            **{g: "module SPI flash" for g in range(26, 33)},
            **{g: "module octal flash / PSRAM (N8R8, N16R8 modules)" for g in range(33, 38)},
            43: "UART0 TX (USB-UART bridge, boot messages)",
            44: "UART0 RX (USB-UART bridge)",
            38: "DevKitC-1 v1.1 on-board RGB LED",
            48: "DevKitC-1 v1.0 on-board RGB LED",
        },
    ),
}

# The Pico W / Pico 2 W header: physical pin number -> name.
PICO_HEADER: dict[int, str] = {
    1: "GP0",
    2: "GP1",
    3: "GND",
    4: "GP2",
    5: "GP3",
    6: "GP4",
    7: "GP5",
    8: "GND",
    9: "GP6",
    10: "GP7",
    11: "GP8",
    12: "GP9",
    13: "GND",
    14: "GP10",
    15: "GP11",
    16: "GP12",
    17: "GP13",
    18: "GND",
    19: "GP14",
    20: "GP15",
    21: "GP16",
    22: "GP17",
    23: "GND",
    24: "GP18",
    25: "GP19",
    26: "GP20",
    27: "GP21",
    28: "GND",
    29: "GP22",
    30: "RUN",
    31: "GP26",
    32: "GP27",
    33: "AGND",
    34: "GP28",
    35: "ADC_VREF",
    36: "3V3(OUT)",
    37: "3V3_EN",
    38: "GND",
    39: "VSYS",
    40: "VBUS",
}
_PICO_PIN_OF = {name: pin for pin, name in PICO_HEADER.items() if name.startswith("GP")}

# The pegging panel's buttons (cribfw/panel.py): a two-player board needs the first five.
BUTTON_NAMES = ("A+", "A-", "B+", "B-", "deal", "C+", "C-")


@dataclass(frozen=True)
class BoardInfo:
    chip: str  # a key of CHIPS
    title: str  # the board to buy


# The boards the hardware package documents, by board profile name.
BOARD_INFO: dict[str, BoardInfo] = {
    "pico2w": BoardInfo("rp2350", "Raspberry Pi Pico 2 W (or Pico W)"),
    "esp32s3": BoardInfo("esp32s3", "ESP32-S3-DevKitC-1 (native USB port)"),
}
BOARD_PROFILES = tuple(BOARD_INFO)


def chip_of(profile: Profile) -> str:
    info = BOARD_INFO.get(profile.name)
    return info.chip if info else ""


def title_of(profile: Profile) -> str:
    info = BOARD_INFO.get(profile.name)
    return info.title if info else profile.name


def pin_label(profile: Profile, gpio: int) -> str:
    """How a maker finds a GPIO on the board: the Pico's header pin, the DevKitC's silkscreen."""
    if chip_of(profile) == "rp2350":
        return f"GP{gpio} (pin {_PICO_PIN_OF['GP' + str(gpio)]})"
    return f"GPIO{gpio} (marked {gpio})"


def power_labels(profile: Profile) -> tuple[str, str]:
    """(5 V pin, GND pin) of a board, as a maker finds them."""
    if chip_of(profile) == "rp2350":
        return ("VBUS (pin 40)", "GND (pin 38)")
    return ("5V (marked 5V)", "GND (marked G)")


def usb_port_name(profile: Profile) -> str:
    if chip_of(profile) == "rp2350":
        return "the Pico's micro-USB"
    return "the DevKitC's port marked USB (not UART)"


def profile_problems(profile: Profile, chip_name: str | None = None) -> list[str]:
    """Everything wrong with a board profile's pins (empty when it is fine). The chip is the
    profile's board's (BOARD_INFO) unless named; without one, only names and reuse are checked."""
    chip_name = chip_of(profile) if chip_name is None else chip_name
    problems: list[str] = []
    pins: list[tuple[str, int]] = [("LED data", profile.led_pin)]
    pins += [(f"button {name}", gpio) for name, gpio in profile.buttons.items()]
    status = profile.status_led
    if isinstance(status, int) and not isinstance(status, bool):
        pins.append(("status LED", status))
    elif status is not None and not (chip_name == "rp2350" and status == "LED"):
        problems.append(f"status LED {status!r} is neither a GPIO nor a pin the board names")
    for name in profile.buttons:
        if name not in BUTTON_NAMES:
            problems.append(f"unknown button name {name!r} (the panel knows {BUTTON_NAMES})")
    for name in BUTTON_NAMES[:5]:
        if name not in profile.buttons:
            problems.append(f"no {name} button (a two-player board needs A+ A- B+ B- deal)")
    seen: dict[int, str] = {}
    for what, gpio in pins:
        if gpio in seen:
            problems.append(f"GPIO {gpio} used twice: {seen[gpio]} and {what}")
        seen[gpio] = what
    chip = CHIPS.get(chip_name)
    if chip is None:
        return problems
    for what, gpio in pins:
        if gpio not in chip.gpios:
            problems.append(f"{what}: GPIO {gpio} does not exist on {chip.name}")
        elif gpio in chip.reserved:
            problems.append(f"{what}: GPIO {gpio} is reserved ({chip.reserved[gpio]})")
        elif gpio not in chip.header:
            problems.append(f"{what}: GPIO {gpio} is not on the board's header")
    for vid, _pid in profile.usb_ids:
        if vid != chip.vendor_id:
            problems.append(f"USB vendor id {vid:#06x} is not {chip.name}'s {chip.vendor_id:#06x}")
    if not profile.usb_ids:
        problems.append("no USB ids: the host cannot find the board")
    return problems


# --- the physical extras: buttons and the connector ------------------------------------------

BUTTON_HOLE_MM = 7  # panel-mount momentary push button, 7 mm mounting hole
W = L.BOARD_WIDTH_MM
H = L.BOARD_HEIGHT_MM
_BUTTON_X = W - 16  # a column at the right end, clear of the last holes and the frame
_C_X = L.MARGIN_X_MM // 2  # three players: C's buttons at the left end, beside the win hole


def button_positions() -> dict[str, tuple[int, int]]:
    """Centre (mm, board coordinates) of each button's hole. A's near A's rows (top), B's near
    B's rows (bottom), deal in the middle; C's (three players) at the left end."""
    mid = H // 2
    return {
        "A+": (_BUTTON_X, mid - 28),
        "A-": (_BUTTON_X, mid - 14),
        "deal": (_BUTTON_X, mid),
        "B-": (_BUTTON_X, mid + 14),
        "B+": (_BUTTON_X, mid + 28),
        "C-": (_C_X, mid + 14),
        "C+": (_C_X, mid + 28),
    }


# The USB-C panel jack sits in the left end wall, at mid height: the controller and the start
# of the LED chain (row A, column 1) are at that end, so the data wire to LED 1 stays short.
USB_Y_MM = H // 2
USB_SLOT_MM = (10, 4)  # a typical panel-mount USB-C jack's slot (width, height)


# --- small SVG helpers -------------------------------------------------------------------------


def _n(value: float) -> str:
    """A number for SVG: at most two decimals, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attrs(attrs: Mapping[str, object]) -> str:
    parts = []
    for key, value in attrs.items():
        if value is None:
            continue
        text = _n(value) if isinstance(value, (int, float)) else _esc(str(value))
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{text}"')
    return " ".join(parts)


def _tag(name: str, **attrs: object) -> str:
    return f"<{name} {_attrs(attrs)}/>"


def _text(x: float, y: float, text: str, **attrs: object) -> str:
    return f"<text {_attrs({'x': x, 'y': y, **attrs})}>{_esc(text)}</text>"


def _line(x1: float, y1: float, x2: float, y2: float, **attrs: object) -> str:
    return _tag("line", x1=x1, y1=y1, x2=x2, y2=y2, **attrs)


def _path(points: Sequence[tuple[float, float]], **attrs: object) -> str:
    d = "M" + " L".join(f"{_n(x)} {_n(y)}" for x, y in points)
    return _tag("path", d=d, fill="none", **attrs)


FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"


# --- the drilling template ---------------------------------------------------------------------

_PAD_X = 15  # paper around the board (mm)
_PAD_TOP = 22
_INFO_H = 46  # below the board: scale bar and notes
SHEET_SPLIT_MM = W // 2  # the two printer sheets meet here (board x)
SHEET_OVERLAP_MM = 20  # and overlap by this much


def _board_drawing() -> list[str]:
    """The board, in board coordinates (mm, origin at the board's top-left corner)."""
    out = [
        _tag(
            "rect",
            x=0,
            y=0,
            width=W,
            height=H,
            rx=3,
            class_="cut",
            fill="none",
            stroke="#000",
            stroke_width=0.3,
        )
    ]
    r = L.LED_HOLE_DIAMETER_MM / 2
    for hole in range(L.HOLES):
        x, y = L.hole_xy_mm(hole)
        out.append(
            '<g class="drill">'
            + _tag(
                "circle",
                class_="hole",
                cx=x,
                cy=y,
                r=r,
                fill="none",
                stroke="#000",
                stroke_width=0.25,
                data_hole=hole,
                data_led=L.LED_OF_HOLE[hole],
            )
            + _line(x - r - 1.5, y, x + r + 1.5, y, stroke="#000", stroke_width=0.12)
            + _line(x, y - r - 1.5, x, y + r + 1.5, stroke="#000", stroke_width=0.12)
            + "</g>"
        )
    # Column numbers above row A and below row B; row names beside the rows; the win hole.
    for col in range(4, L.COLS, 5):
        x = L.hole_xy_mm(col)[0]
        out.append(
            _text(x, L.hole_xy_mm(0)[1] - 5.5, str(col + 1), font_size=3, text_anchor="middle")
        )
        out.append(
            _text(
                x, L.hole_xy_mm(3 * L.COLS)[1] + 8, str(col + 1), font_size=3, text_anchor="middle"
            )
        )
    names = ("A outer", "A inner", "B inner", "B outer")
    for row in range(L.ROWS):
        y = L.hole_xy_mm(row * L.COLS)[1]
        out.append(_text(-1.5, y + 0.8, names[row], font_size=2.2, text_anchor="end"))
    wx, wy = L.hole_xy_mm(L.WIN_HOLE)
    out.append(_text(wx, wy - 4.5, "WIN", font_size=2.5, text_anchor="middle"))
    # Buttons (dashed: three players only) and the USB-C jack's place in the end wall.
    rb = BUTTON_HOLE_MM / 2
    for name, (x, y) in button_positions().items():
        optional = name.startswith("C")
        out.append(
            '<g class="drill">'
            + _tag(
                "circle",
                class_="button",
                cx=x,
                cy=y,
                r=rb,
                fill="none",
                stroke="#000",
                stroke_width=0.25,
                stroke_dasharray="1 0.7" if optional else None,
                data_button=name,
            )
            + _line(x - rb - 1.5, y, x + rb + 1.5, y, stroke="#000", stroke_width=0.12)
            + _line(x, y - rb - 1.5, x, y + rb + 1.5, stroke="#000", stroke_width=0.12)
            + "</g>"
        )
        if optional:
            out.append(_text(x, y - rb - 1.2, name, font_size=2.4, text_anchor="middle"))
        else:
            out.append(_text(x + rb + 1, y - rb - 0.5, name, font_size=2.4))
    sw, _sh = USB_SLOT_MM
    out.append(
        _tag(
            "rect",
            class_="connector",
            x=-6,
            y=USB_Y_MM - sw / 2,
            width=4,
            height=sw,
            fill="none",
            stroke="#000",
            stroke_width=0.25,
            stroke_dasharray="1 0.7",
        )
    )
    out.append(
        _text(
            -8,
            USB_Y_MM,
            "USB-C jack",
            font_size=2.2,
            text_anchor="middle",
            transform=f"rotate(-90 {_n(-8)} {_n(USB_Y_MM)})",
        )
    )
    return out


def _scale_bar(x: float, y: float) -> list[str]:
    out = [
        _tag("rect", x=x, y=y, width=100, height=3, fill="none", stroke="#000", stroke_width=0.25)
    ]
    for i in range(10):
        if i % 2 == 0:
            out.append(_tag("rect", x=x + 10 * i, y=y, width=10, height=3, fill="#000"))
    for i in range(0, 11):
        out.append(_text(x + 10 * i, y + 7, str(10 * i), font_size=2.5, text_anchor="middle"))
    out.append(_text(x + 105, y + 3, "mm: this bar must measure exactly 100 mm", font_size=3))
    return out


def _template_notes(x: float, y: float) -> list[str]:
    lines = [
        f"cribboard drilling template, 1:1. Board {W} x {H} mm (cut line). Print at 100 % "
        '("actual size", no fit-to-page); check the scale bar.',
        f"LED holes {L.LED_HOLE_DIAMETER_MM} mm ({L.HOLES}: four rows of {L.COLS} in groups "
        f"of {L.GROUP}, plus the win hole). Buttons {BUTTON_HOLE_MM} mm (dashed: C+ and C-, "
        "three-player boards only). Centre-punch each cross.",
        f"USB-C jack: a {USB_SLOT_MM[0]} x {USB_SLOT_MM[1]} mm slot (or what your jack needs) "
        "in the left end wall, level with the win hole.",
        "Generated by `python -m cribboard.hardware` from cribcore/layout.py (the firmware's "
        "own layout).",
    ]
    return [_text(x, y + 5 * i, line, font_size=3) for i, line in enumerate(lines)]


def _svg(
    width: float,
    height: float,
    min_x: float,
    min_y: float,
    body: Iterable[str],
    title: str,
    unit: str = "mm",
) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}{unit}" '
        f'height="{_n(height)}{unit}" viewBox="{_n(min_x)} {_n(min_y)} {_n(width)} '
        f'{_n(height)}" font-family="{FONT}">'
    )
    return "\n".join([head, f"<title>{_esc(title)}</title>", *body, "</svg>", ""])


def template_svg() -> str:
    """The whole board at 1:1 (380 mm wide: for a large-format printer, a plotter, or to tile)."""
    width = W + 2 * _PAD_X
    height = _PAD_TOP + H + _INFO_H
    body = [_tag("rect", x=-_PAD_X, y=-_PAD_TOP, width=width, height=height, fill="#fff")]
    body += ['<g id="board">', *_board_drawing(), "</g>"]
    body += _scale_bar(0, H + 14)
    body += _template_notes(0, H + 26)
    body.append(
        _text(0, -_PAD_TOP + 8, "cribboard: top panel drilling template (1:1)", font_size=5)
    )
    return _svg(width, height, -_PAD_X, -_PAD_TOP, body, "cribboard drilling template")


def template_sheet_svg(sheet: int) -> str:
    """One of two sheets that fit A4 or US Letter (landscape); tape them so the crosses meet."""
    half = SHEET_OVERLAP_MM / 2
    x0 = -_PAD_X if sheet == 1 else SHEET_SPLIT_MM - half - 5
    x1 = SHEET_SPLIT_MM + half + 5 if sheet == 1 else W + _PAD_X
    width = x1 - x0
    height = _PAD_TOP + H + _INFO_H
    body = [_tag("rect", x=x0, y=-_PAD_TOP, width=width, height=height, fill="#fff")]
    body.append(
        _tag(
            "rect",
            x=SHEET_SPLIT_MM - half,
            y=-_PAD_TOP + 10,
            width=2 * half,
            height=H + _PAD_TOP - 4,
            fill="#eee",
        )
    )
    body += ['<g id="board">', *_board_drawing(), "</g>"]
    for y in (-8, H + 6):  # alignment crosses in the overlap, on both sheets
        for x in (SHEET_SPLIT_MM - half / 2, SHEET_SPLIT_MM + half / 2):
            body.append(_line(x - 3, y, x + 3, y, stroke="#000", stroke_width=0.2))
            body.append(_line(x, y - 3, x, y + 3, stroke="#000", stroke_width=0.2))
    bar_x = x0 + 8
    body += _scale_bar(bar_x, H + 14)
    body.append(
        _text(
            bar_x,
            H + 28,
            f"Sheet {sheet} of 2 (A4 / Letter landscape, 100 %). "
            "Overlap the grey bands so the four crosses coincide, then tape.",
            font_size=3,
        )
    )
    body.append(
        _text(
            bar_x,
            H + 33,
            "Board "
            + ("left" if sheet == 1 else "right")
            + f" half; holes {L.LED_HOLE_DIAMETER_MM} mm, buttons "
            f"{BUTTON_HOLE_MM} mm. From cribcore/layout.py.",
            font_size=3,
        )
    )
    body.append(
        _text(
            x0 + 8,
            -_PAD_TOP + 8,
            f"cribboard drilling template, sheet {sheet} of 2 (1:1)",
            font_size=5,
        )
    )
    return _svg(
        width, height, x0, -_PAD_TOP, body, f"cribboard drilling template, sheet {sheet} of 2"
    )


# --- the wiring diagrams -----------------------------------------------------------------------

RED = "#c0392b"
BLACK = "#222"
DATA = "#1f6fb2"
GREY = "#777"


def chain_description() -> list[str]:
    """Where the LED chain runs, from the layout's chain order (one line per row + win hole)."""
    names = ("row A outer", "row A inner", "row B inner", "row B outer")
    lines = []
    for row in range(L.ROWS):
        first = L.HOLE_OF_LED[row * L.COLS]
        last = L.HOLE_OF_LED[row * L.COLS + L.COLS - 1]
        lines.append(
            f"LED {row * L.COLS + 1}..{row * L.COLS + L.COLS}: {names[row]}, "
            f"column {L.hole_col(first) + 1} to {L.hole_col(last) + 1}"
        )
    lines.append(f"LED {L.LED_OF_HOLE[L.WIN_HOLE] + 1}: the win hole")
    return lines


def _led_box(x: float, y: float, label: str, sub: str) -> list[str]:
    return [
        _tag(
            "rect", x=x, y=y, width=70, height=56, rx=6, fill="#fff", stroke=BLACK, stroke_width=1.5
        ),
        _text(x + 35, y + 24, label, font_size=13, text_anchor="middle", font_weight="bold"),
        _text(x + 35, y + 40, sub, font_size=10, text_anchor="middle"),
        _text(x + 4, y + 52, "DIN", font_size=8),
        _text(x + 66, y + 52, "DOUT", font_size=8, text_anchor="end"),
    ]


def _switch(x: float, y: float) -> list[str]:
    """A push button drawn from (x, y) leftwards to (x - 60, y)."""
    return [
        _line(x, y, x - 18, y, stroke=GREY, stroke_width=2),
        _tag("circle", cx=x - 20, cy=y, r=2.5, fill="#fff", stroke=BLACK, stroke_width=1.5),
        _tag("circle", cx=x - 40, cy=y, r=2.5, fill="#fff", stroke=BLACK, stroke_width=1.5),
        _line(x - 44, y - 8, x - 16, y - 8, stroke=BLACK, stroke_width=2),
        _line(x - 30, y - 8, x - 30, y - 15, stroke=BLACK, stroke_width=2),
        _line(x - 42, y, x - 60, y, stroke=BLACK, stroke_width=2),
    ]


def _cap(x: float, y_top: float, y_bottom: float, label: str, polar: bool = False) -> list[str]:
    mid = (y_top + y_bottom) / 2
    out = [
        _line(x, y_top, x, mid - 4, stroke=RED, stroke_width=2),
        _line(x, mid + 4, x, y_bottom, stroke=BLACK, stroke_width=2),
        _line(x - 10, mid - 4, x + 10, mid - 4, stroke=BLACK, stroke_width=2.5),
        _line(x - 10, mid + 4, x + 10, mid + 4, stroke=BLACK, stroke_width=2.5),
        _text(x + 14, mid + 4, label, font_size=11),
    ]
    if polar:
        out.append(_text(x - 16, mid - 6, "+", font_size=12, text_anchor="middle"))
    return out


def _ground(x: float, y: float) -> list[str]:
    """A ground symbol hanging from (x, y)."""
    return [
        _line(x, y, x, y + 8, stroke=BLACK, stroke_width=2),
        _line(x - 10, y + 8, x + 10, y + 8, stroke=BLACK, stroke_width=2),
        _line(x - 6, y + 12, x + 6, y + 12, stroke=BLACK, stroke_width=2),
        _line(x - 2, y + 16, x + 2, y + 16, stroke=BLACK, stroke_width=2),
        _text(x + 12, y + 16, "GND", font_size=9),
    ]


def wiring_svg(profile: Profile) -> str:
    """The wiring of one supported board: power, the LED data path through the 74AHCT125 and
    the series resistor, the LED chain with its capacitors, and the buttons."""
    v5_label, gnd_label = power_labels(profile)
    width, height = 1260, 780
    rail_5v, rail_gnd = 100, 480
    body = [
        _tag("rect", x=0, y=0, width=width, height=height, fill="#fff"),
        _text(20, 34, f"cribboard wiring: {title_of(profile)}", font_size=22, font_weight="bold"),
        _text(
            20,
            56,
            f'board profile "{profile.name}" (firmware/cribcore/profiles.py); '
            "generated by python -m cribboard.hardware",
            font_size=12,
            fill=GREY,
        ),
    ]
    # The microcontroller board, with the USB-C jack cabled to its own USB connector.
    mx0, mx1, my0, my1 = 250, 540, 150, 470
    title, _, subtitle = title_of(profile).partition(" (")
    body += [
        _tag(
            "rect",
            x=270,
            y=72,
            width=150,
            height=40,
            rx=8,
            fill="#eee",
            stroke=BLACK,
            stroke_width=1.5,
        ),
        _text(345, 90, "USB-C panel jack", font_size=12, text_anchor="middle"),
        _text(345, 105, "(left end wall)", font_size=10, text_anchor="middle"),
        _path([(345, 112), (345, my0)], stroke=GREY, stroke_width=6),
        _text(355, 128, "data + 5 V to", font_size=10),
        _text(355, 141, usb_port_name(profile), font_size=10),
        _tag(
            "rect",
            x=mx0,
            y=my0,
            width=mx1 - mx0,
            height=my1 - my0,
            rx=10,
            fill="#e8f3e8",
            stroke=BLACK,
            stroke_width=2,
        ),
        _text(
            (mx0 + mx1) / 2, my0 + 24, title, font_size=14, text_anchor="middle", font_weight="bold"
        ),
    ]
    if subtitle:
        body.append(
            _text((mx0 + mx1) / 2, my0 + 40, "(" + subtitle, font_size=11, text_anchor="middle")
        )
    # Right side: 5 V, LED data, GND.
    y_5v, y_data, y_gnd = 240, 300, 380
    rx = 580  # where the board's power wires turn to the rails
    body += [
        _text(mx1 - 8, y_5v + 4, v5_label, font_size=12, text_anchor="end"),
        _path([(mx1, y_5v), (rx, y_5v), (rx, rail_5v)], stroke=RED, stroke_width=3),
        _text(
            mx1 - 8,
            y_data + 4,
            pin_label(profile, profile.led_pin) + "  LED data",
            font_size=12,
            text_anchor="end",
        ),
        _text(mx1 - 8, y_gnd + 4, gnd_label, font_size=12, text_anchor="end"),
        _path([(mx1, y_gnd), (rx, y_gnd), (rx, rail_gnd)], stroke=BLACK, stroke_width=3),
        _line(rx, rail_5v, width - 20, rail_5v, stroke=RED, stroke_width=4),
        _text(width - 20, rail_5v - 8, "+5 V rail", font_size=13, text_anchor="end", fill=RED),
        _line(rx, rail_gnd, width - 20, rail_gnd, stroke=BLACK, stroke_width=4),
        _text(width - 20, rail_gnd + 20, "GND rail", font_size=13, text_anchor="end"),
    ]
    # The 74AHCT125 buffer (gate 1) with its decoupling capacitor, then the series resistor.
    bx0, bx1, by0, by1 = 630, 770, 240, 370
    body += [
        _tag(
            "rect",
            x=bx0,
            y=by0,
            width=bx1 - bx0,
            height=by1 - by0,
            rx=4,
            fill="#fff8e6",
            stroke=BLACK,
            stroke_width=2,
        ),
        _text(
            (bx0 + bx1) / 2,
            by0 + 36,
            "74AHCT125",
            font_size=14,
            text_anchor="middle",
            font_weight="bold",
        ),
        _text((bx0 + bx1) / 2, by0 + 50, "(gate 1, at 5 V)", font_size=10, text_anchor="middle"),
        _path([(mx1, y_data), (bx0, y_data)], stroke=DATA, stroke_width=3),
        _text(bx0 + 6, y_data + 4, "2 1A", font_size=11),
        _text(bx0 + 6, 346, "1 1OE", font_size=11),
        _path([(bx0, 342), (605, 342), (605, rail_gnd)], stroke=BLACK, stroke_width=2),
        _text(bx1 - 6, y_data + 4, "1Y 3", font_size=11, text_anchor="end"),
        _path([(680, by0), (680, rail_5v)], stroke=RED, stroke_width=2),
        _text(685, by0 + 14, "14 VCC", font_size=11),
        _path([(720, by1), (720, rail_gnd)], stroke=BLACK, stroke_width=2),
        _text(714, by1 - 6, "7 GND", font_size=11, text_anchor="end"),
    ]
    body += _cap(740, rail_5v, 190, "100 nF")
    body += _ground(740, 190)
    body += [
        _text(
            bx0 - 40,
            rail_gnd + 22,
            "74AHCT125 unused gates: pins 4, 10, 13 (OE) to "
            "+5 V; pins 5, 9, 12 (A) to GND; pins 6, 8, 11 open",
            font_size=10,
        )
    ]
    body += [
        _path([(bx1, y_data), (790, y_data)], stroke=DATA, stroke_width=3),
        _tag(
            "rect",
            x=790,
            y=y_data - 8,
            width=46,
            height=16,
            fill="#fff",
            stroke=BLACK,
            stroke_width=2,
        ),
        _text(813, y_data - 14, "330 Ω", font_size=12, text_anchor="middle"),
        _path([(836, y_data), (880, y_data)], stroke=DATA, stroke_width=3),
        _text(790, y_data + 28, "wire to LED 1:", font_size=10, fill=DATA),
        _text(790, y_data + 41, "under 10 cm", font_size=10, fill=DATA),
    ]
    # Bulk capacitor at the start of the chain, then the LEDs.
    body += _cap(850, rail_5v, 190, "1000 µF", polar=True)
    body += _ground(850, 190)
    leds = [(880, "LED 1", "hole A1"), (980, "LED 2", "hole A2"), (1160, "LED 121", "win hole")]
    for x, label, sub in leds:
        body += _led_box(x, y_data - 28, label, sub)
        body += [
            _line(x + 20, y_data - 28, x + 20, rail_5v, stroke=RED, stroke_width=2),
            _text(x + 24, y_data - 34, "VDD", font_size=8),
            _line(x + 50, y_data + 28, x + 50, rail_gnd, stroke=BLACK, stroke_width=2),
            _text(x + 54, y_data + 40, "GND", font_size=8),
        ]
    body += [
        _path([(950, y_data), (980, y_data)], stroke=DATA, stroke_width=3),
        _path([(1050, y_data), (1080, y_data)], stroke=DATA, stroke_width=3),
        _text(1105, y_data + 6, "…", font_size=26, text_anchor="middle"),
        _path([(1130, y_data), (1160, y_data)], stroke=DATA, stroke_width=3),
    ]
    # Buttons on the left of the board, each to a GND bus.
    gbus = 40
    y0 = 240
    body += [
        _text(mx0 + 8, y0 - 26, gnd_label.split(" (")[0] + " (any GND pin)", font_size=11),
        _path(
            [(mx0, y0 - 30), (gbus, y0 - 30), (gbus, y0 + 30 * 6 + 10)],
            stroke=BLACK,
            stroke_width=3,
        ),
        _text(gbus - 6, y0 + 30 * 6 + 30, "GND", font_size=12),
    ]
    for i, name in enumerate(BUTTON_NAMES):
        gpio = profile.buttons.get(name)
        if gpio is None:
            continue
        y = y0 + 30 * i
        body += _switch(mx0, y)
        body += [
            _line(mx0 - 60, y, gbus, y, stroke=BLACK, stroke_width=2),
            _text(mx0 + 8, y + 4, f"{pin_label(profile, gpio)}  {name}", font_size=11),
            _text(
                mx0 - 66,
                y - 4,
                name + (" *" if name.startswith("C") else ""),
                font_size=10,
                text_anchor="end",
            ),
        ]
    body.append(_text(20, y0 + 30 * 7 + 30, "* C+ / C-: three-player boards only", font_size=10))
    # Notes, the chain's route, and what sits at every LED.
    status = (
        'on-board LED ("LED"): nothing to wire'
        if profile.status_led == "LED"
        else "none in this profile"
        if profile.status_led is None
        else f"{pin_label(profile, int(profile.status_led))} → 1 kΩ → LED → GND"
    )
    notes = [
        f"Status LED: {status}.",
        "Buttons: momentary, normally open, between the pin",
        "and GND (the firmware turns on the pull-up).",
        "Never feed the LEDs from 3V3. Join all grounds.",
        f"LED budget {profile.budget_ma} mA (the firmware's limiter):",
        "see hardware/README.md, Power.",
    ]
    for i, line in enumerate(notes):
        body.append(_text(20, 560 + 18 * i, line, font_size=12))
    cx, cy = 560, 540
    body.append(
        _text(
            cx, cy, "LED chain order (from cribcore/layout.py):", font_size=13, font_weight="bold"
        )
    )
    for i, line in enumerate(chain_description()):
        body.append(_text(cx, cy + 20 + 17 * i, line, font_size=12))
    body += [
        _text(cx, cy + 130, "5 mm WS2812D-class LEDs seated from below;", font_size=11),
        _text(cx, cy + 145, "DOUT of each to DIN of the next.", font_size=11),
        _text(cx, cy + 165, "+5 V and GND: bare 22 AWG bus wire along each", font_size=11),
        _text(cx, cy + 180, "row, fed at LED 1 (and at LED 121 too if you like).", font_size=11),
    ]
    dx, dy = 1020, 560
    body += [
        _tag(
            "rect",
            x=dx - 20,
            y=dy - 40,
            width=230,
            height=190,
            rx=6,
            fill="none",
            stroke=GREY,
            stroke_dasharray="4 3",
        ),
        _text(dx - 10, dy - 22, "at every LED", font_size=12, font_weight="bold"),
        _tag(
            "rect",
            x=dx,
            y=dy + 20,
            width=70,
            height=44,
            rx=6,
            fill="#fff",
            stroke=BLACK,
            stroke_width=1.5,
        ),
        _text(dx + 35, dy + 47, "5 mm LED", font_size=10, text_anchor="middle"),
        _path([(dx - 15, dy + 42), (dx, dy + 42)], stroke=DATA, stroke_width=2),
        _text(dx - 15, dy + 36, "DIN", font_size=8),
        _path([(dx + 70, dy + 42), (dx + 85, dy + 42)], stroke=DATA, stroke_width=2),
        _text(dx + 72, dy + 36, "DOUT", font_size=8),
        _path([(dx + 20, dy + 20), (dx + 20, dy), (dx + 130, dy)], stroke=RED, stroke_width=2),
        _text(dx + 24, dy + 14, "VDD", font_size=8),
        _path(
            [(dx + 45, dy + 64), (dx + 45, dy + 120), (dx + 130, dy + 120)],
            stroke=BLACK,
            stroke_width=2,
        ),
        _text(dx + 49, dy + 76, "GND", font_size=8),
        _text(dx - 10, dy + 140, "lead order: see your LED's datasheet", font_size=9),
    ]
    body += _cap(dx + 130, dy, dy + 120, "100 nF")
    return _svg(width, height, 0, 0, body, f"cribboard wiring: {title_of(profile)}", unit="")


# --- the power budget --------------------------------------------------------------------------


class NullPixels:
    """Just enough of neopixel.NeoPixel for the renderer (writes go nowhere)."""

    ORDER = (1, 0, 2, 3)

    def __init__(self) -> None:
        self.buf = bytearray(3 * L.HOLES)
        self.bpp = 3

    def write(self) -> None:
        pass


@dataclass(frozen=True)
class PowerFigures:
    budget_ma: int  # default LED budget of the supported boards
    ma_per_led: int  # the estimate's full-white draw of one LED
    idle_ma: int  # all LEDs dark
    brightest_sum: int  # channel values of the brightest game frame found (before scaling)
    brightest_state: str  # which state that is
    default_ma: int  # that frame at the default brightness, through the limiter
    default_scale: int
    full_natural_ma: int  # that frame at brightness 255 with no limiter
    full_ma: int  # ... and through the default limiter
    full_scale: int
    white_natural_ma: int  # every LED full white at brightness 255, no limiter
    white_ma: int  # ... through the default limiter


def _states() -> Iterator[tuple[GameState, int, str]]:
    """Game states that can be reached, with an animation time: a broad search for the brightest
    frame. Two players: every pair of scores. Three players: every combination of scores near
    the lap and skunk lines. Back pegs one or 29 behind; counts of 1 or 29 pending (every mix
    of them for three players; the preview drawn, its blink on); a won game at the peak of the winner's pulse."""
    pulse_peak = R.PULSE_MS // 2
    keys = (0, 1, 2, 29, 30, 31, 32, 59, 60, 61, 62, 89, 90, 91, 92, 119, 120, 121)
    for players in (2, 3):
        for target in limits.TARGETS:
            scores = range(target + 1) if players == 2 else [k for k in keys if k <= target]
            count_sets = (
                [(1, 1), (29, 29)] if players == 2 else list(itertools.product((1, 29), repeat=3))
            )
            for fronts in itertools.product(scores, repeat=players):
                for gap in (1, 29):
                    board = GameState(players, target)
                    try:
                        for p, front in enumerate(fronts):
                            if front:
                                board.set_pegs(p, front, max(0, front - gap))
                    except GameError:
                        continue
                    text = (
                        f"{players} players, {target} game, scores "
                        + ", ".join(str(f) for f in fronts)
                        + f" (back pegs {gap} behind)"
                    )
                    if board.winner != -1:
                        yield board, pulse_peak, text
                        continue
                    for counts in count_sets:
                        for p, count in enumerate(counts):
                            board.set_pending(p, count)
                        yield (
                            board,
                            0,
                            text + ", counts " + ", ".join(str(c) for c in counts) + " pending",
                        )


@functools.cache
def power_figures() -> PowerFigures:
    """The power budget, computed with the firmware's own renderer and limiter."""
    budget = PROFILES["pico2w"].budget_ma
    renderer = R.Renderer(NullPixels(), budget_ma=budget)
    best_sum, best_board, best_t, best_text = -1, GameState(), 0, ""
    for board, t, text in _states():
        renderer.draw(board, t)
        total = sum(renderer.frame)
        if total > best_sum:
            best_sum, best_t, best_text = total, t, text
            best_board = GameState(board.players, board.target)  # a copy: the search reuses boards
            for p in range(board.players):
                if board.front[p]:
                    best_board.set_pegs(p, board.front[p], board.back[p])
            for p in range(board.players):
                if board.pending[p]:
                    best_board.set_pending(p, board.pending[p])

    def shown(brightness: int, budget_ma: int) -> tuple[int, int]:
        r = R.Renderer(NullPixels(), budget_ma=budget_ma, brightness=brightness)
        r.draw(best_board, best_t)
        r.show()
        return int(r.estimated_ma), int(r.scale)

    default_ma, default_scale = shown(R.DEFAULT_BRIGHTNESS, budget)
    full_natural, _ = shown(limits.MAX_BRIGHTNESS, limits.MAX_BUDGET_MA)
    full_ma, full_scale = shown(255, budget)
    white = R.Renderer(NullPixels(), budget_ma=budget, brightness=255)
    white.frame[:] = bytes([255] * (3 * L.HOLES))
    white.show()
    idle = R.DEFAULT_IDLE_MA * L.HOLES
    return PowerFigures(
        budget_ma=budget,
        ma_per_led=R.DEFAULT_MA_PER_LED,
        idle_ma=idle,
        brightest_sum=best_sum,
        brightest_state=best_text,
        default_ma=default_ma,
        default_scale=default_scale,
        full_natural_ma=full_natural,
        full_ma=full_ma,
        full_scale=full_scale,
        white_natural_ma=R.DEFAULT_MA_PER_LED * L.HOLES + idle,
        white_ma=int(white.estimated_ma),
    )


def power_markdown(p: PowerFigures) -> str:
    return "\n".join(
        [
            "| case | LED current (estimate) |",
            "| --- | --- |",
            f"| all {L.HOLES} LEDs dark (idle draw, {R.DEFAULT_IDLE_MA} mA each) | {p.idle_ma} mA |",
            f"| brightest game frame, default brightness {R.DEFAULT_BRIGHTNESS} "
            f"(scale {p.default_scale}/256) | **{p.default_ma} mA** (limiter not needed) |",
            f"| same frame at brightness 255, no limiter | {p.full_natural_ma} mA |",
            f"| same frame at brightness 255, default {p.budget_ma} mA budget "
            f"(scale {p.full_scale}/256) | **{p.full_ma} mA** |",
            f"| every LED full white, no limiter (the firmware never draws this) | "
            f"{p.white_natural_ma} mA |",
            f"| every LED full white, default budget | {p.white_ma} mA |",
            "",
            f"The brightest game frame found: {p.brightest_state} (channel values add up to "
            f"{p.brightest_sum} before brightness). Estimate: channel sum x scale/256 x "
            f"{p.ma_per_led} mA / 765 + {R.DEFAULT_IDLE_MA} mA x {L.HOLES} LEDs, as in "
            "`cribcore/render.py`.",
        ]
    )


# --- the parts list ----------------------------------------------------------------------------

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


def pin_table_markdown(profile: Profile) -> str:
    v5, gnd = power_labels(profile)
    rows = [
        ("LED data", pin_label(profile, profile.led_pin), "74AHCT125 pin 2 (1A)"),
        ("+5 V", v5, "+5 V rail: every LED's VDD, 74AHCT125 pins 14, 4, 10, 13, 1000 µF (+)"),
        ("GND", gnd, "GND rail: every LED's GND, 74AHCT125 pins 1, 7, 5, 9, 12, 1000 µF (-)"),
    ]
    for name in BUTTON_NAMES:
        gpio = profile.buttons.get(name)
        if gpio is not None:
            extra = " (three players only)" if name.startswith("C") else ""
            rows.append(
                (
                    f"button {name}{extra}",
                    pin_label(profile, gpio),
                    "one leg of the button; the other leg to GND",
                )
            )
    if profile.status_led == "LED":
        rows.append(("status LED", "on-board LED", "nothing to wire"))
    elif profile.status_led is not None:
        rows.append(
            (
                "status LED",
                pin_label(profile, int(profile.status_led)),
                "1 kΩ resistor, LED anode; LED cathode to GND",
            )
        )
    out = ["| function | board pin | wire to |", "| --- | --- | --- |"]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(out)


# --- the picture of the finished board ---------------------------------------------------------

PNG_PX_PER_MM = 4
_PNG_MARGIN_MM = 10
_SUPERSAMPLE = 2


def sample_game() -> GameState:
    """The game the picture shows: orange on its second lap (the home-stretch glow), blue
    trailing behind the double-skunk line, orange dealing."""
    board = GameState(2, 121)
    board.set_pegs(0, 37, 31)
    board.set_pegs(1, 72, 64)
    board.set_dealer(1)
    return board


def _hue(rgb: tuple[int, int, int]) -> tuple[tuple[int, int, int], float]:
    """An LED's frame colour as (its hue at full strength, how bright it looks 0..1): the eye
    sees dim light brighter than its share of current, so faint glows stay visible."""
    peak = max(rgb)
    if peak == 0:
        return ((0, 0, 0), 0.0)
    r, g, b = (int(round(255 * c / peak)) for c in rgb)
    return ((r, g, b), (peak / 255) ** 0.5)


def _mix(a: Sequence[int], b: Sequence[int], t: float) -> tuple[int, int, int]:
    r, g, bl = (int(round(x + (y - x) * t)) for x, y in zip(a, b))
    return (r, g, bl)


def board_png(path: Path) -> None:
    """Draw the finished board, lit with a game in progress, from the layout and the renderer."""
    try:
        from PIL import Image, ImageChops, ImageDraw, ImageFilter
    except ImportError as err:  # pragma: no cover - Pillow is in the test extra
        raise SystemExit("the board picture needs Pillow: pip install pillow") from err
    s = PNG_PX_PER_MM * _SUPERSAMPLE
    m = _PNG_MARGIN_MM
    size = ((W + 2 * m) * s, (H + 2 * m) * s)

    def px(x: float, y: float) -> tuple[float, float]:
        return ((x + m) * s, (y + m) * s)

    def circle(draw: Any, x: float, y: float, r: float, **kw: Any) -> None:
        cx, cy = px(x, y)
        draw.ellipse((cx - r * s, cy - r * s, cx + r * s, cy + r * s), **kw)

    image = Image.new("RGB", size, (236, 233, 228))
    # Shadow, then the board with a grain.
    shadow = Image.new("L", size, 0)
    ImageDraw.Draw(shadow).rounded_rectangle(
        (*px(1.5, 2.5), *px(W + 1.5, H + 2.5)), radius=4 * s, fill=110
    )
    shadow = shadow.filter(ImageFilter.GaussianBlur(2.5 * s))
    image.paste((120, 110, 100), (0, 0), shadow)
    wood = Image.new("RGB", size, (122, 84, 56))
    grain = ImageDraw.Draw(wood)
    rng = random.Random(6)
    for _ in range(140):
        y0 = rng.uniform(-5, H + 5)
        amp, phase, period = rng.uniform(0.3, 2.0), rng.uniform(0, 6.3), rng.uniform(60, 220)
        shade = rng.randint(-22, 12)
        colour = (106 + shade, 71 + shade, 46 + shade)
        points = []
        for i in range(0, W + 11, 5):
            points.append(px(i - 5, y0 + amp * math.sin(phase + i * 6.283 / period)))
        grain.line(points, fill=colour, width=max(1, int(rng.uniform(0.15, 0.6) * s)))
    mask = Image.new("L", size, 0)
    ImageDraw.Draw(mask).rounded_rectangle((*px(0, 0), *px(W, H)), radius=4 * s, fill=255)
    image.paste(wood, (0, 0), mask)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle(
        (*px(0, 0), *px(W, H)), radius=4 * s, outline=(70, 46, 30), width=int(0.8 * s)
    )
    # The LEDs, lit by the firmware's renderer.
    renderer = R.Renderer(NullPixels())
    renderer.draw(sample_game(), 0)
    frame = renderer.frame
    glow = Image.new("RGB", size, (0, 0, 0))
    glow_draw = ImageDraw.Draw(glow)
    r_hole = L.LED_HOLE_DIAMETER_MM / 2
    for hole in range(L.HOLES):
        x, y = L.hole_xy_mm(hole)
        rgb = (frame[3 * hole], frame[3 * hole + 1], frame[3 * hole + 2])
        circle(draw, x, y, r_hole + 0.45, fill=(48, 32, 22))
        if rgb == (0, 0, 0):
            circle(draw, x, y, r_hole, fill=(196, 192, 184))
            circle(draw, x - 0.6, y - 0.6, r_hole * 0.45, fill=(214, 211, 204))
            continue
        hue, level = _hue(rgb)
        lens = _mix((196, 192, 184), hue, 0.2 + 0.8 * level)
        circle(draw, x, y, r_hole, fill=lens)
        circle(draw, x, y, r_hole * 0.5, fill=_mix(lens, (255, 255, 255), 0.45 * level))
        circle(glow_draw, x, y, r_hole * (1.0 + 2.0 * level), fill=_mix((0, 0, 0), hue, level))
    glow = glow.filter(ImageFilter.GaussianBlur(1.6 * s))
    image = ImageChops.screen(image, glow)
    draw = ImageDraw.Draw(image)
    # Buttons and the USB-C jack with its cable.
    caps = {"A": (40, 90, 200), "B": (235, 110, 20), "C": (170, 40, 150), "d": (235, 235, 230)}
    for name, (x, y) in button_positions().items():
        if name.startswith("C"):
            continue  # the picture shows a two-player build
        circle(draw, x, y, 5.2, fill=(60, 60, 60))
        circle(draw, x, y, 4.3, fill=caps[name[0]])
        circle(draw, x - 1.2, y - 1.2, 1.6, fill=tuple(min(255, c + 50) for c in caps[name[0]]))
    cx, cy = px(-m, USB_Y_MM)
    draw.rounded_rectangle(
        (cx, cy - 1.6 * s, *px(0, USB_Y_MM + 1.6)), radius=1.2 * s, fill=(70, 70, 74)
    )
    draw.rounded_rectangle(
        (*px(-4, USB_Y_MM - 3), *px(0.6, USB_Y_MM + 3)), radius=1 * s, fill=(40, 40, 44)
    )
    final = image.resize(
        (size[0] // _SUPERSAMPLE, size[1] // _SUPERSAMPLE), Image.Resampling.LANCZOS
    )
    final.save(path, format="PNG", optimize=False)


# --- README sections ---------------------------------------------------------------------------


def readme_sections(bom: Sequence[Mapping[str, str]], power: PowerFigures) -> dict[str, str]:
    """The generated parts of hardware/README.md, by marker name."""
    sections = {"bom": bom_markdown(bom), "power": power_markdown(power)}
    for name in BOARD_PROFILES:
        sections["pins-" + name] = pin_table_markdown(PROFILES[name])
    return sections


def fill_readme(text: str, sections: Mapping[str, str]) -> str:
    """Replace the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`."""
    for name, content in sections.items():
        pattern = re.compile(
            rf"(<!-- generated:{re.escape(name)} -->\n)(?:.*?\n)??"
            rf"(<!-- /generated:{re.escape(name)} -->)",
            re.S,
        )
        text, count = pattern.subn(
            lambda m: m.group(1) + content + "\n" + m.group(2),  # noqa: B023 (used at once)
            text,
        )
        if count != 1:
            raise ValueError(f"README needs one generated:{name} section (found {count})")
    return text


# --- generating --------------------------------------------------------------------------------

GENERATED = (
    "template.svg",
    "template-sheet1.svg",
    "template-sheet2.svg",
    "wiring-pico2w.svg",
    "wiring-esp32s3.svg",
    "board.png",
)


def default_out() -> Path:
    """hardware/ of the source checkout this module runs from."""
    here = Path(__file__).resolve().parents[2] / "hardware"
    if not (here / "bom.csv").is_file():
        raise SystemExit(
            "cribboard.hardware: no hardware/ folder beside this package (an "
            "installed copy?); give --out DIR with a bom.csv and README.md in it"
        )
    return here


def generate(
    out: Path, *, png: bool = True, progress: Callable[[str], None] | None = None
) -> list[Path]:
    """Write every generated file into `out` (which holds bom.csv and README.md)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def write_text(name: str, text: str) -> None:
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
        if progress:
            progress(str(path))

    write_text("template.svg", template_svg())
    write_text("template-sheet1.svg", template_sheet_svg(1))
    write_text("template-sheet2.svg", template_sheet_svg(2))
    for name in BOARD_PROFILES:
        write_text(f"wiring-{name}.svg", wiring_svg(PROFILES[name]))
    if png:
        board_png(out / "board.png")
        written.append(out / "board.png")
        if progress:
            progress(str(out / "board.png"))
    readme = out / "README.md"
    bom = out / "bom.csv"
    if readme.is_file() and bom.is_file():
        text = readme.read_text(encoding="utf-8")
        new = fill_readme(text, readme_sections(read_bom(bom), power_figures()))
        if new != text:
            write_text("README.md", new)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cribboard.hardware",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("--out", type=Path, help="folder to write (default: hardware/)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="regenerate into a temporary folder and compare; exit 1 if stale",
    )
    parser.add_argument("--power", action="store_true", help="print the power figures")
    args = parser.parse_args(argv)
    if args.power:
        print(power_markdown(power_figures()))
        return 0
    out = args.out or default_out()
    if args.check:
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            for name in ("bom.csv", "README.md"):
                shutil.copy(out / name, Path(tmp) / name)
            generate(Path(tmp), png=False)
            stale = [
                name
                for name in (*GENERATED[:-1], "README.md")
                if (Path(tmp) / name).read_bytes() != (out / name).read_bytes()
            ]
        if stale:
            print("out of date: " + ", ".join(stale) + " (run: make hardware)", file=sys.stderr)
            return 1
        print("hardware/ is up to date (board.png not compared)")
        return 0
    generate(out, progress=lambda p: print("wrote", p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
