"""The wiring diagram of each supported board, drawn part by part: the controller (with the
USB-C socket), its supply pins to the +5 V and GND rails, the 74AHCT125 buffer, the data line
with its series resistor, the LED chain with its bulk capacitor, the buttons, and the notes (the
chain's route from the layout, what sits at every LED). The parts share the coordinates below,
so the wires of one meet the pins of the next."""

from __future__ import annotations

from cribboard.hardware import svg
from cribboard.hardware.boards import (
    BUTTON_NAMES,
    pin_label,
    power_labels,
    title_of,
    usb_port_name,
)
from cribcore import layout
from cribcore.profiles import Profile

RED = "#c0392b"
BLACK = "#222"
DATA = "#1f6fb2"
GREY = "#777"

WIDTH, HEIGHT = 1260, 780
RAIL_5V, RAIL_GND = 100, 480  # the rails' heights, running right from the controller
Y_5V, Y_DATA, Y_GND = 240, 300, 380  # the controller's right-hand pins
MCU_LEFT, MCU_RIGHT, MCU_TOP, MCU_BOTTOM = 250, 540, 150, 470  # the controller board
RAIL_DROP_X = 580  # where the controller's power wires turn to the rails
BUF_LEFT, BUF_RIGHT, BUF_TOP, BUF_BOTTOM = 630, 770, 240, 370  # the 74AHCT125
BUTTONS_TOP = 240  # the first button's wire
BUTTON_PITCH = 30
GND_BUS_X = 40  # the buttons' ground bus, left of them


def chain_description() -> list[str]:
    """Where the LED chain runs, from the layout's chain order (one line per row + win hole)."""
    names = ("row A outer", "row A inner", "row B inner", "row B outer")
    lines = []
    for row in range(layout.ROWS):
        first = layout.HOLE_OF_LED[row * layout.COLS]
        last = layout.HOLE_OF_LED[row * layout.COLS + layout.COLS - 1]
        lines.append(
            f"LED {row * layout.COLS + 1}..{row * layout.COLS + layout.COLS}: {names[row]}, "
            f"column {layout.hole_col(first) + 1} to {layout.hole_col(last) + 1}"
        )
    lines.append(f"LED {layout.LED_OF_HOLE[layout.WIN_HOLE] + 1}: the win hole")
    return lines


def _led_box(x: float, y: float, label: str, sub: str) -> list[str]:
    return [
        svg.tag(
            "rect", x=x, y=y, width=70, height=56, rx=6, fill="#fff", stroke=BLACK, stroke_width=1.5
        ),
        svg.text(x + 35, y + 24, label, font_size=13, text_anchor="middle", font_weight="bold"),
        svg.text(x + 35, y + 40, sub, font_size=10, text_anchor="middle"),
        svg.text(x + 4, y + 52, "DIN", font_size=8),
        svg.text(x + 66, y + 52, "DOUT", font_size=8, text_anchor="end"),
    ]


def _switch(x: float, y: float) -> list[str]:
    """A push button drawn from (x, y) leftwards to (x - 60, y)."""
    return [
        svg.line(x, y, x - 18, y, stroke=GREY, stroke_width=2),
        svg.tag("circle", cx=x - 20, cy=y, r=2.5, fill="#fff", stroke=BLACK, stroke_width=1.5),
        svg.tag("circle", cx=x - 40, cy=y, r=2.5, fill="#fff", stroke=BLACK, stroke_width=1.5),
        svg.line(x - 44, y - 8, x - 16, y - 8, stroke=BLACK, stroke_width=2),
        svg.line(x - 30, y - 8, x - 30, y - 15, stroke=BLACK, stroke_width=2),
        svg.line(x - 42, y, x - 60, y, stroke=BLACK, stroke_width=2),
    ]


def _cap(x: float, y_top: float, y_bottom: float, label: str, polar: bool = False) -> list[str]:
    mid = (y_top + y_bottom) / 2
    out = [
        svg.line(x, y_top, x, mid - 4, stroke=RED, stroke_width=2),
        svg.line(x, mid + 4, x, y_bottom, stroke=BLACK, stroke_width=2),
        svg.line(x - 10, mid - 4, x + 10, mid - 4, stroke=BLACK, stroke_width=2.5),
        svg.line(x - 10, mid + 4, x + 10, mid + 4, stroke=BLACK, stroke_width=2.5),
        svg.text(x + 14, mid + 4, label, font_size=11),
    ]
    if polar:
        out.append(svg.text(x - 16, mid - 6, "+", font_size=12, text_anchor="middle"))
    return out


def _ground(x: float, y: float) -> list[str]:
    """A ground symbol hanging from (x, y)."""
    return [
        svg.line(x, y, x, y + 8, stroke=BLACK, stroke_width=2),
        svg.line(x - 10, y + 8, x + 10, y + 8, stroke=BLACK, stroke_width=2),
        svg.line(x - 6, y + 12, x + 6, y + 12, stroke=BLACK, stroke_width=2),
        svg.line(x - 2, y + 16, x + 2, y + 16, stroke=BLACK, stroke_width=2),
        svg.text(x + 12, y + 16, "GND", font_size=9),
    ]


def wiring_svg(profile: Profile) -> str:
    """The wiring of one supported board: power, the LED data path through the 74AHCT125 and
    the series resistor, the LED chain with its capacitors, and the buttons."""
    body = _heading(profile)
    body += _controller(profile)
    body += _supply(profile)
    body += _buffer()
    body += _data_line()
    body += _chain()
    body += _buttons(profile)
    body += _notes(profile)
    body += _chain_order()
    body += _at_every_led()
    title = f"cribboard wiring: {title_of(profile)}"
    return svg.document(WIDTH, HEIGHT, 0, 0, body, title, unit="")


def _heading(profile: Profile) -> list[str]:
    return [
        svg.tag("rect", x=0, y=0, width=WIDTH, height=HEIGHT, fill="#fff"),
        svg.text(
            20, 34, f"cribboard wiring: {title_of(profile)}", font_size=22, font_weight="bold"
        ),
        svg.text(
            20,
            56,
            f'board profile "{profile.name}" (firmware/cribcore/profiles.py); '
            "generated by python -m cribboard.hardware",
            font_size=12,
            fill=GREY,
        ),
    ]


def _controller(profile: Profile) -> list[str]:
    """The microcontroller board, with the USB-C socket cabled to its own USB connector."""
    title, _, subtitle = title_of(profile).partition(" (")
    middle = (MCU_LEFT + MCU_RIGHT) / 2
    out = [
        svg.tag(
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
        svg.text(345, 90, "USB-C panel jack", font_size=12, text_anchor="middle"),
        svg.text(345, 105, "(left end wall)", font_size=10, text_anchor="middle"),
        svg.path([(345, 112), (345, MCU_TOP)], stroke=GREY, stroke_width=6),
        svg.text(355, 128, "data + 5 V to", font_size=10),
        svg.text(355, 141, usb_port_name(profile), font_size=10),
        svg.tag(
            "rect",
            x=MCU_LEFT,
            y=MCU_TOP,
            width=MCU_RIGHT - MCU_LEFT,
            height=MCU_BOTTOM - MCU_TOP,
            rx=10,
            fill="#e8f3e8",
            stroke=BLACK,
            stroke_width=2,
        ),
        svg.text(
            middle, MCU_TOP + 24, title, font_size=14, text_anchor="middle", font_weight="bold"
        ),
    ]
    if subtitle:
        out.append(
            svg.text(middle, MCU_TOP + 40, "(" + subtitle, font_size=11, text_anchor="middle")
        )
    return out


def _supply(profile: Profile) -> list[str]:
    """The controller's right-hand pins: 5 V and GND out to the rails, and the LED data pin."""
    v5_label, gnd_label = power_labels(profile)
    pin_x = MCU_RIGHT - 8
    turn = RAIL_DROP_X
    return [
        svg.text(pin_x, Y_5V + 4, v5_label, font_size=12, text_anchor="end"),
        svg.path([(MCU_RIGHT, Y_5V), (turn, Y_5V), (turn, RAIL_5V)], stroke=RED, stroke_width=3),
        svg.text(
            pin_x,
            Y_DATA + 4,
            pin_label(profile, profile.led_pin) + "  LED data",
            font_size=12,
            text_anchor="end",
        ),
        svg.text(pin_x, Y_GND + 4, gnd_label, font_size=12, text_anchor="end"),
        svg.path(
            [(MCU_RIGHT, Y_GND), (turn, Y_GND), (turn, RAIL_GND)], stroke=BLACK, stroke_width=3
        ),
        svg.line(turn, RAIL_5V, WIDTH - 20, RAIL_5V, stroke=RED, stroke_width=4),
        svg.text(WIDTH - 20, RAIL_5V - 8, "+5 V rail", font_size=13, text_anchor="end", fill=RED),
        svg.line(turn, RAIL_GND, WIDTH - 20, RAIL_GND, stroke=BLACK, stroke_width=4),
        svg.text(WIDTH - 20, RAIL_GND + 20, "GND rail", font_size=13, text_anchor="end"),
    ]


def _buffer() -> list[str]:
    """The 74AHCT125 (gate 1, powered at 5 V) with its decoupling capacitor; the unused gates."""
    middle = (BUF_LEFT + BUF_RIGHT) / 2
    out = [
        svg.tag(
            "rect",
            x=BUF_LEFT,
            y=BUF_TOP,
            width=BUF_RIGHT - BUF_LEFT,
            height=BUF_BOTTOM - BUF_TOP,
            rx=4,
            fill="#fff8e6",
            stroke=BLACK,
            stroke_width=2,
        ),
        svg.text(
            middle,
            BUF_TOP + 36,
            "74AHCT125",
            font_size=14,
            text_anchor="middle",
            font_weight="bold",
        ),
        svg.text(middle, BUF_TOP + 50, "(gate 1, at 5 V)", font_size=10, text_anchor="middle"),
        svg.path([(MCU_RIGHT, Y_DATA), (BUF_LEFT, Y_DATA)], stroke=DATA, stroke_width=3),
        svg.text(BUF_LEFT + 6, Y_DATA + 4, "2 1A", font_size=11),
        svg.text(BUF_LEFT + 6, 346, "1 1OE", font_size=11),
        svg.path([(BUF_LEFT, 342), (605, 342), (605, RAIL_GND)], stroke=BLACK, stroke_width=2),
        svg.text(BUF_RIGHT - 6, Y_DATA + 4, "1Y 3", font_size=11, text_anchor="end"),
        svg.path([(680, BUF_TOP), (680, RAIL_5V)], stroke=RED, stroke_width=2),
        svg.text(685, BUF_TOP + 14, "14 VCC", font_size=11),
        svg.path([(720, BUF_BOTTOM), (720, RAIL_GND)], stroke=BLACK, stroke_width=2),
        svg.text(714, BUF_BOTTOM - 6, "7 GND", font_size=11, text_anchor="end"),
    ]
    out += _cap(740, RAIL_5V, 190, "100 nF")
    out += _ground(740, 190)
    out.append(
        svg.text(
            BUF_LEFT - 40,
            RAIL_GND + 22,
            "74AHCT125 unused gates: pins 4, 10, 13 (OE) to "
            "+5 V; pins 5, 9, 12 (A) to GND; pins 6, 8, 11 open",
            font_size=10,
        )
    )
    return out


def _data_line() -> list[str]:
    """From the buffer's output through the 330 Ω series resistor towards LED 1."""
    return [
        svg.path([(BUF_RIGHT, Y_DATA), (790, Y_DATA)], stroke=DATA, stroke_width=3),
        svg.tag(
            "rect",
            x=790,
            y=Y_DATA - 8,
            width=46,
            height=16,
            fill="#fff",
            stroke=BLACK,
            stroke_width=2,
        ),
        svg.text(813, Y_DATA - 14, "330 Ω", font_size=12, text_anchor="middle"),
        svg.path([(836, Y_DATA), (880, Y_DATA)], stroke=DATA, stroke_width=3),
        svg.text(790, Y_DATA + 28, "wire to LED 1:", font_size=10, fill=DATA),
        svg.text(790, Y_DATA + 41, "under 10 cm", font_size=10, fill=DATA),
    ]


def _chain() -> list[str]:
    """The bulk capacitor where the supply meets the chain, then LED 1, LED 2 ... the last, each
    between the rails, DOUT to the next one's DIN."""
    out = _cap(850, RAIL_5V, 190, "1000 µF", polar=True)
    out += _ground(850, 190)
    leds = [
        (880, "LED 1", "hole A1"),
        (980, "LED 2", "hole A2"),
        (1160, f"LED {layout.HOLES}", "win hole"),
    ]
    for x, label, sub in leds:
        out += _led_box(x, Y_DATA - 28, label, sub)
        out += [
            svg.line(x + 20, Y_DATA - 28, x + 20, RAIL_5V, stroke=RED, stroke_width=2),
            svg.text(x + 24, Y_DATA - 34, "VDD", font_size=8),
            svg.line(x + 50, Y_DATA + 28, x + 50, RAIL_GND, stroke=BLACK, stroke_width=2),
            svg.text(x + 54, Y_DATA + 40, "GND", font_size=8),
        ]
    out += [
        svg.path([(950, Y_DATA), (980, Y_DATA)], stroke=DATA, stroke_width=3),
        svg.path([(1050, Y_DATA), (1080, Y_DATA)], stroke=DATA, stroke_width=3),
        svg.text(1105, Y_DATA + 6, "…", font_size=26, text_anchor="middle"),
        svg.path([(1130, Y_DATA), (1160, Y_DATA)], stroke=DATA, stroke_width=3),
    ]
    return out


def _buttons(profile: Profile) -> list[str]:
    """The profile's buttons on the controller's left, each between its pin and a GND bus."""
    gnd_pin = power_labels(profile)[1].split(" (")[0]
    bus_end = BUTTONS_TOP + BUTTON_PITCH * 6 + 10
    out = [
        svg.text(MCU_LEFT + 8, BUTTONS_TOP - 26, gnd_pin + " (any GND pin)", font_size=11),
        svg.path(
            [(MCU_LEFT, BUTTONS_TOP - 30), (GND_BUS_X, BUTTONS_TOP - 30), (GND_BUS_X, bus_end)],
            stroke=BLACK,
            stroke_width=3,
        ),
        svg.text(GND_BUS_X - 6, BUTTONS_TOP + BUTTON_PITCH * 6 + 30, "GND", font_size=12),
    ]
    for i, name in enumerate(BUTTON_NAMES):
        gpio = profile.buttons.get(name)
        if gpio is None:
            continue
        y = BUTTONS_TOP + BUTTON_PITCH * i
        out += _switch(MCU_LEFT, y)
        out += [
            svg.line(MCU_LEFT - 60, y, GND_BUS_X, y, stroke=BLACK, stroke_width=2),
            svg.text(MCU_LEFT + 8, y + 4, f"{pin_label(profile, gpio)}  {name}", font_size=11),
            svg.text(
                MCU_LEFT - 66,
                y - 4,
                name + (" *" if name.startswith("C") else ""),
                font_size=10,
                text_anchor="end",
            ),
        ]
    footnote_y = BUTTONS_TOP + BUTTON_PITCH * 7 + 30
    out.append(svg.text(20, footnote_y, "* C+ / C-: three-player boards only", font_size=10))
    return out


def _notes(profile: Profile) -> list[str]:
    """The status LED, the buttons' and the power's rules, the LED budget."""
    if profile.status_led == "LED":
        status = 'on-board LED ("LED"): nothing to wire'
    elif profile.status_led is None:
        status = "none in this profile"
    else:
        status = f"{pin_label(profile, int(profile.status_led))} → 1 kΩ → LED → GND"
    notes = [
        f"Status LED: {status}.",
        "Buttons: momentary, normally open, between the pin",
        "and GND (the firmware turns on the pull-up).",
        "Never feed the LEDs from 3V3. Join all grounds.",
        f"LED budget {profile.budget_ma} mA (the firmware's limiter):",
        "see hardware/README.md, Power.",
    ]
    return [svg.text(20, 560 + 18 * i, note, font_size=12) for i, note in enumerate(notes)]


def _chain_order() -> list[str]:
    """Where the chain runs, from the layout, and how the LEDs are joined."""
    x, y = 560, 540
    heading = "LED chain order (from cribcore/layout.py):"
    out = [svg.text(x, y, heading, font_size=13, font_weight="bold")]
    for i, route in enumerate(chain_description()):
        out.append(svg.text(x, y + 20 + 17 * i, route, font_size=12))
    out += [
        svg.text(x, y + 130, "5 mm WS2812D-class LEDs seated from below;", font_size=11),
        svg.text(x, y + 145, "DOUT of each to DIN of the next.", font_size=11),
        svg.text(x, y + 165, "+5 V and GND: bare 22 AWG bus wire along each", font_size=11),
        svg.text(x, y + 180, "row, fed at LED 1 (and at LED 121 too if you like).", font_size=11),
    ]
    return out


def _at_every_led() -> list[str]:
    """One LED between the rails with its 100 nF capacitor, and which lead is which."""
    x, y = 1020, 560
    out = [
        svg.tag(
            "rect",
            x=x - 20,
            y=y - 40,
            width=230,
            height=190,
            rx=6,
            fill="none",
            stroke=GREY,
            stroke_dasharray="4 3",
        ),
        svg.text(x - 10, y - 22, "at every LED", font_size=12, font_weight="bold"),
        svg.tag(
            "rect",
            x=x,
            y=y + 20,
            width=70,
            height=44,
            rx=6,
            fill="#fff",
            stroke=BLACK,
            stroke_width=1.5,
        ),
        svg.text(x + 35, y + 47, "5 mm LED", font_size=10, text_anchor="middle"),
        svg.path([(x - 15, y + 42), (x, y + 42)], stroke=DATA, stroke_width=2),
        svg.text(x - 15, y + 36, "DIN", font_size=8),
        svg.path([(x + 70, y + 42), (x + 85, y + 42)], stroke=DATA, stroke_width=2),
        svg.text(x + 72, y + 36, "DOUT", font_size=8),
        svg.path([(x + 20, y + 20), (x + 20, y), (x + 130, y)], stroke=RED, stroke_width=2),
        svg.text(x + 24, y + 14, "VDD", font_size=8),
        svg.path(
            [(x + 45, y + 64), (x + 45, y + 120), (x + 130, y + 120)],
            stroke=BLACK,
            stroke_width=2,
        ),
        svg.text(x + 49, y + 76, "GND", font_size=8),
        svg.text(x - 10, y + 140, "lead order: see your LED's datasheet", font_size=9),
    ]
    out += _cap(x + 130, y, y + 120, "100 nF")
    return out
