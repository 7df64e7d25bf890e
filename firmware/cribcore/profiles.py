# Board profiles: per supported microcontroller board, the pins and defaults the firmware uses,
# and the USB ids the host looks for when it searches for boards.
# Data only; app.main() builds the hardware objects from it. hardware/README.md has the wiring;
# tests/docs/test_hardware.py checks every pin against its chip (cribboard/hardware/boards.py has the chips'
# pin facts): the pin exists, is not reserved, and is used once.
#
# Buttons: each one connects its GPIO to GND when pressed (the firmware enables the internal
# pull-up and reads "pressed" as low). Names are the pegging panel's (cribfw/panel.py): per player
# "+" and "-", one shared "deal". "C+"/"C-" are for a three-player board; a two-player build
# leaves those pins unconnected (the pull-up keeps them reading "not pressed").
#
# USB ids are MicroPython's own, since the board runs stock MicroPython firmware:
#   rp2 port (Pico, Pico W, Pico 2 W and every rp2 board without ids of its own): 2E8A:0005
#   esp32 port on an ESP32-S3's native USB (TinyUSB CDC): 303A:4001; a build whose REPL is on
#   the chip's built-in USB-Serial/JTAG peripheral shows 303A:1001.
# A board found by its ids still has to answer hello before it counts as a cribbage board.


class Profile:
    def __init__(self, name, led_pin, buttons, budget_ma, usb_ids, status_led=None):
        self.name = name
        self.led_pin = led_pin  # GPIO of the LED chain's data line (through the 5 V buffer)
        self.buttons = buttons  # {"A+": gpio, ...}: pegging buttons, active low
        self.budget_ma = budget_ma  # LED current budget (the renderer's limiter)
        self.usb_ids = usb_ids  # ((vid, pid), ...) for host discovery
        # Status LED, or None: a GPIO number, or a pin name the port knows ("LED": the on-board
        # LED of the Pico W / Pico 2 W, which hangs off the wireless chip).
        self.status_led = status_led


_PICO_BUTTONS = {"A+": 2, "A-": 3, "B+": 4, "B-": 5, "deal": 6, "C+": 7, "C-": 8}
_RP2_USB = ((0x2E8A, 0x0005),)

PROFILES = {
    # The Raspberry Pi Picos share one header pinout and one wiring (hardware/README.md): the
    # LED data on GP16, the buttons on GP2..GP8. GPIO 23, 24, 25 and 29 are not on the header:
    # on the Pico 2 W and Pico W they belong to the wireless chip (the on-board LED hangs off
    # it: "LED"); on the Pico they are its power-save, VBUS and VSYS sense pins and its LED
    # (GPIO 25, also named "LED").
    "pico2w": Profile("pico2w", 16, _PICO_BUTTONS, 400, _RP2_USB, "LED"),  # RP2350, wireless
    "picow": Profile("picow", 16, _PICO_BUTTONS, 400, _RP2_USB, "LED"),  # RP2040, wireless
    "pico": Profile("pico", 16, _PICO_BUTTONS, 400, _RP2_USB, "LED"),  # RP2040, USB only
    # ESP32-S3 with native USB (ESP32-S3-DevKitC-1 or similar, WROOM-1/-2 module): avoid the
    # strapping pins 0, 3, 45, 46, the USB pins 19, 20, the module's flash/PSRAM pins 26..37 and
    # UART0 43, 44. The DevKitC's on-board LED is an RGB pixel (GPIO 38 or 48 by board
    # revision), so this profile has no plain status LED.
    "esp32s3": Profile(
        "esp32s3",
        4,
        {"A+": 5, "A-": 6, "B+": 7, "B-": 15, "deal": 16, "C+": 17, "C-": 18},
        400,
        ((0x303A, 0x4001), (0x303A, 0x1001)),
    ),
    # The virtual board (MicroPython's unix port with simulated pins): the Pico's pins.
    "sim": Profile("sim", 16, _PICO_BUTTONS, 400, ()),
}


# Which profile an rp2 board gets, by its name as MicroPython reports it
# (sys.implementation._machine, e.g. "Raspberry Pi Pico W with RP2040"): the first entry whose
# text is in the name. Any other rp2 board is taken for a Pico (no wireless, the same pins).
RP2_BOARDS = (("Pico 2 W", "pico2w"), ("Pico W", "picow"), ("Pico", "pico"))
RP2_DEFAULT = "pico"


def rp2_profile_name(machine):
    """The profile name for an rp2 board called `machine` (sys.implementation._machine)."""
    for text, name in RP2_BOARDS:
        if text in machine:
            return name
    return RP2_DEFAULT


def detect():
    """The profile for the board this runs on."""
    import sys

    if sys.platform == "rp2":
        return PROFILES[rp2_profile_name(sys.implementation._machine)]
    if sys.platform == "esp32":
        return PROFILES["esp32s3"]
    return PROFILES["sim"]
