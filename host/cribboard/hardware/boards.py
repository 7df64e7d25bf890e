"""The supported boards: each chip's pin facts (which GPIOs exist, which the reference board
brings out, which are reserved and why), how a maker finds a pin on the board, and the check of a
board profile's pins against its chip (used by the tests that validate the profiles)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cribcore.profiles import Profile


@dataclass(frozen=True)
class Chip:
    """Pin facts of one microcontroller (and the reference board the BOM names)."""

    name: str
    vendor_id: int  # the USB vendor id MicroPython uses on it
    gpios: frozenset[int]  # GPIOs the chip has
    header: frozenset[int]  # GPIOs the reference board brings out to its pins
    reserved: Mapping[int, str]  # GPIO -> why the board must not use it


_PICO_HEADER_GPIOS = frozenset([*range(23), 26, 27, 28])

CHIPS: dict[str, Chip] = {
    # The Pico W (RP2040) and Pico 2 W (RP2350A) with their wireless chip: GPIO 0..29, the
    # Pico's header pinout.
    "pico-w": Chip(
        "pico-w",
        0x2E8A,
        frozenset(range(30)),
        _PICO_HEADER_GPIOS,
        {
            23: "wireless chip power (WL_ON)",
            24: "wireless chip data / interrupt",
            25: "wireless chip select",
            29: "wireless chip clock (and VSYS sense)",
        },
    ),
    # The Pico (RP2040, no wireless): the same header; the pins off it run the board.
    "pico": Chip(
        "pico",
        0x2E8A,
        frozenset(range(30)),
        _PICO_HEADER_GPIOS,
        {
            23: "power supply mode (SMPS PS)",
            24: "VBUS sense",
            25: "on-board LED",
            29: "VSYS sense (ADC3)",
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

# The Pico / Pico W / Pico 2 W header: physical pin number -> name.
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
class Draw:
    """What a controller board takes from the USB port, in mA at 5 V: allowances to plan the
    power with, not measurements made here: the upper ends of the typical figures its chips'
    makers publish, rounded up. The maker's guide says how to read a board's own."""

    running: int  # the firmware running, USB connected, Bluetooth (if any) advertising
    wifi: int = 0  # added while Wi-Fi is connected with power saving off (the club hall's mode)
    wifi_peak: int = 0  # brief peaks while Wi-Fi transmits (the supply's capacitor rides them out)


@dataclass(frozen=True)
class BoardInfo:
    chip: str  # a key of CHIPS
    title: str  # the board to buy
    header_pins: int  # its two pin headers, which plug into sockets on the perfboard
    draw: Draw  # its own current (the LEDs' is the renderer's estimate)
    wired_as: str | None = None  # a board drawn in the guide that this one is wired exactly like


_PICO_W_DRAW = Draw(running=50, wifi=70, wifi_peak=250)

# The boards of the board profiles, by profile name. The maker's guide draws the first of each
# wiring; a board `wired_as` another has the same pins (tests/docs/test_hardware.py checks) and is
# built from that one's drawing and pin table.
BOARD_INFO: dict[str, BoardInfo] = {
    "pico2w": BoardInfo("pico-w", "Raspberry Pi Pico 2 W (or Pico W)", 2 * 20, _PICO_W_DRAW),
    "esp32s3": BoardInfo(
        "esp32s3",
        "ESP32-S3-DevKitC-1 (native USB port)",
        2 * 22,
        Draw(running=100, wifi=100, wifi_peak=350),
    ),
    "picow": BoardInfo("pico-w", "Raspberry Pi Pico W", 2 * 20, _PICO_W_DRAW, wired_as="pico2w"),
    "pico": BoardInfo("pico", "Raspberry Pi Pico", 2 * 20, Draw(running=30), wired_as="pico2w"),
}
BOARD_PROFILES = tuple(name for name, info in BOARD_INFO.items() if info.wired_as is None)
"""The boards the maker's guide draws (wiring diagram, pin table, joint count)."""

_PICO_CHIPS = ("pico", "pico-w")


def chip_of(profile: Profile) -> str:
    info = BOARD_INFO.get(profile.name)
    return info.chip if info else ""


def title_of(profile: Profile) -> str:
    info = BOARD_INFO.get(profile.name)
    return info.title if info else profile.name


def pin_label(profile: Profile, gpio: int) -> str:
    """How a maker finds a GPIO on the board: the Pico's header pin, the DevKitC's silkscreen."""
    if chip_of(profile) in _PICO_CHIPS:
        return f"GP{gpio} (pin {_PICO_PIN_OF['GP' + str(gpio)]})"
    return f"GPIO{gpio} (marked {gpio})"


def power_labels(profile: Profile) -> tuple[str, str]:
    """(5 V pin, GND pin) of a board, as a maker finds them."""
    if chip_of(profile) in _PICO_CHIPS:
        return ("VBUS (pin 40)", "GND (pin 38)")
    return ("5V (marked 5V)", "GND (marked G)")


def usb_port_name(profile: Profile) -> str:
    if chip_of(profile) in _PICO_CHIPS:
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
    elif status is not None and not (chip_name in _PICO_CHIPS and status == "LED"):
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
