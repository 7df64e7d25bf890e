# Joining the club's Wi-Fi on a board that has it (Pico W, Pico 2 W, ESP32-S3), without ever
# waiting for it: the WLAN interface is made by main() (network.WLAN(network.STA_IF)) and passed
# in; connect() only starts joining, and the table client asks `up()` each turn. A board that
# loses the network (the access point restarted, out of range) asks to join again every RETRY_MS.
# The virtual board has no WLAN: its table client uses the host's network as it is (no Wifi).

from cribfw.clock import ticks_diff, ticks_ms

RETRY_MS = 15000  # joining takes a few seconds; ask again only after this long


class Wifi:
    def __init__(self, wlan, ssid, password):
        self.wlan = wlan
        self.ssid = ssid
        self.password = password
        self._asked_ms = 0
        self._asked = False

    def up(self, now=None):
        """Whether the board is on the network; starts (or restarts) joining when not."""
        wlan = self.wlan
        if wlan.isconnected():
            return True
        now = ticks_ms() if now is None else now
        if not self._asked or ticks_diff(now, self._asked_ms) >= RETRY_MS:
            self._asked = True
            self._asked_ms = now
            try:
                wlan.active(True)
                try:
                    # Answers at once: no power saving, which delays each packet by up to
                    # a beacon interval (a QoS 1 publish waits for its answer).
                    wlan.config(pm=wlan.PM_NONE)
                except (AttributeError, ValueError, OSError):
                    pass
                wlan.connect(self.ssid, self.password)  # returns at once; joining goes on
            except OSError:
                pass  # (an ESP32 already joining refuses a second connect: asked again later)
        return False
