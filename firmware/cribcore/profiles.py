# Board profiles: per supported microcontroller board, the pins and defaults the firmware uses,
# and the USB ids the host looks for when it searches for boards.
# Data only; app.main() builds the hardware objects from it.


class Profile:
    def __init__(self, name, led_pin, buttons, budget_ma, usb_ids, status_led=None):
        self.name = name
        self.led_pin = led_pin
        self.buttons = buttons  # {"A+": pin, ...}: pegging buttons (see README)
        self.budget_ma = budget_ma  # LED current budget
        self.usb_ids = usb_ids  # ((vid, pid), ...) for host discovery
        self.status_led = status_led


PROFILES = {
    # Raspberry Pi Pico 2 W / Pico W: GPIO 23, 24, 25, 29 belong to the wireless chip.
    "pico2w": Profile("pico2w", 16, {"A+": 2, "A-": 3, "B+": 4, "B-": 5, "deal": 6, "new": 7},
                      400, ((0x2E8A, 0x0005), (0x2E8A, 0x000F))),
    # ESP32-S3 with native USB: avoid strapping pins 0, 3, 45, 46 and USB pins 19, 20.
    "esp32s3": Profile("esp32s3", 4, {"A+": 5, "A-": 6, "B+": 7, "B-": 15, "deal": 16,
                                      "new": 17}, 400, ((0x303A, 0x1001), (0x303A, 0x4001))),
    # The virtual board (MicroPython's unix port with simulated pins).
    "sim": Profile("sim", 0, {"A+": 2, "A-": 3, "B+": 4, "B-": 5, "deal": 6, "new": 7},
                   400, ()),
}


def detect():
    """The profile for the board this runs on."""
    import sys

    if sys.platform == "rp2":
        return PROFILES["pico2w"]
    if sys.platform == "esp32":
        return PROFILES["esp32s3"]
    return PROFILES["sim"]
