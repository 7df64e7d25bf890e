"""The solder joints, counted from the design's parts: every lead, pin or lug is soldered once,
and every wire end that lands on the perfboard is a joint of its own. Wires that end on a part
(the bus wires and data hops on the LEDs' leads, the wires to the buttons' lugs) are soldered in
that part's joint. The LED count comes from the layout, the buttons from the board profile."""

from __future__ import annotations

from dataclasses import dataclass

from cribboard.hardware.boards import BOARD_INFO, BOARD_PROFILES, BUTTON_NAMES, title_of
from cribcore import layout
from cribcore.profiles import PROFILES, Profile

LED_LEADS = 4  # DIN, VDD, GND, DOUT
BUFFER_PINS = 14  # the 74AHCT125's DIP-14 socket (the chip itself plugs in)

# Wires on the perfboard between the parts on it, each with two ends (the wiring diagram and the
# pin tables): the data line into the buffer and out to the resistor, the buffer's supply, its
# enable, and the unused gates tied off.
PERFBOARD_LINKS = (
    "controller's LED data pin to 74AHCT125 pin 2 (1A)",
    "74AHCT125 pin 3 (1Y) to the 330 Ω resistor",
    "controller's 5 V pin to 74AHCT125 pin 14 (VCC)",
    "74AHCT125 pin 14 to pin 4 (2OE, unused)",
    "74AHCT125 pin 14 to pin 10 (3OE, unused)",
    "74AHCT125 pin 14 to pin 13 (4OE, unused)",
    "controller's GND pin to 74AHCT125 pin 7 (GND)",
    "74AHCT125 pin 7 to pin 1 (1OE: gate 1 on)",
    "74AHCT125 pin 7 to pin 5 (2A, unused)",
    "74AHCT125 pin 7 to pin 9 (3A, unused)",
    "74AHCT125 pin 7 to pin 12 (4A, unused)",
)
# Wires leaving the perfboard (one end on it; the other on LED 1 or the buses): the data line
# from the resistor, +5 V and GND to the chain, and one GND wire shared by the buttons.
WIRES_OUT = ("data to LED 1's DIN", "+5 V to the chain", "GND to the chain", "GND to the buttons")


@dataclass(frozen=True)
class Joints:
    """Solder joints of one kind of part."""

    what: str
    count: int
    each: int

    @property
    def joints(self) -> int:
        return self.count * self.each


def joint_rows(profile: Profile, *, leds: int = layout.HOLES, players: int = 2) -> list[Joints]:
    """Every joint of a board with `leds` LEDs, the controller of `profile` and the buttons a
    `players`-player board has (two players: A+ A- B+ B- deal; three: C+ C- too)."""
    names = BUTTON_NAMES if players == 3 else BUTTON_NAMES[:5]
    buttons = sum(1 for name in names if name in profile.buttons)
    info = BOARD_INFO.get(profile.name)
    header = info.header_pins if info else 0
    return [
        Joints("addressable LED, one per hole (DIN, VDD, GND, DOUT)", leds, LED_LEADS),
        Joints("100 nF capacitor beside each LED, across the bus wires", leds, 2),
        Joints("100 nF capacitor at the 74AHCT125", 1, 2),
        Joints("DIP-14 socket for the 74AHCT125", 1, BUFFER_PINS),
        Joints("330 Ω resistor", 1, 2),
        Joints("1000 µF capacitor", 1, 2),
        Joints("push button (two lugs)", buttons, 2),
        Joints(f"header socket pin for the {_short_title(profile)}", header, 1),
        Joints("wire on the perfboard between its parts (two ends)", len(PERFBOARD_LINKS), 2),
        Joints("wire leaving the perfboard: data, +5 V, GND, buttons' GND", len(WIRES_OUT), 1),
        Joints("wire from the perfboard to a button's pin", buttons, 1),
    ]


def _short_title(profile: Profile) -> str:
    return title_of(profile).split(" (")[0]


def total_joints(profile: Profile, *, leds: int = layout.HOLES, players: int = 2) -> int:
    return sum(row.joints for row in joint_rows(profile, leds=leds, players=players))


def joints_markdown() -> str:
    """The README's count: the table for the first board, the totals for every board."""
    first = PROFILES[BOARD_PROFILES[0]]
    out = ["| part | count | joints each | joints |", "| --- | --- | --- | --- |"]
    for row in joint_rows(first):
        if row.count and row.each:
            out.append(f"| {row.what} | {row.count} | {row.each} | {row.joints} |")
    out.append("")
    totals = []
    for name in BOARD_PROFILES:
        profile = PROFILES[name]
        two, three = total_joints(profile), total_joints(profile, players=3)
        totals.append(f"**{two} joints** with the {title_of(profile)} ({three} for three players)")
    out.append("In all: " + "; ".join(totals) + ".")
    out.append("")
    out.append(
        "Not counted: the controller's own header pins, already soldered on a Pico 2 WH or a "
        "DevKitC (a Pico without headers needs its 40 too)."
    )
    return "\n".join(out)


def effort_line() -> str:
    """The guide's summary of the work, with the joint count."""
    counts = sorted({total_joints(PROFILES[name]) for name in BOARD_PROFILES})
    joints = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    return (
        f"Skills: drilling, {joints} solder joints (through-hole, no fine pitch; counted in "
        "[Solder joints](#solder-joints)), a terminal. Time: a weekend."
    )
