# The board on Wi-Fi for its own page: the only code that touches network.WLAN for it (the club
# hall's table client has cribfw/wifi.py). The `network` module is passed in (main() imports it).
#
# With a network in /wifi.json (cribfw/wificonfig.py) the board joins it as a station under its
# name (network.hostname: `NAME.local` on the network where the port answers mDNS). When it has
# none, or cannot join within JOIN_MS, it opens its own access point, `Cribboard-XXXX` (the last
# two bytes of its address) with the set-up password, where the page is at http://192.168.4.1/
# and every name a phone looks up points to it (cribfw/captivedns.py); it keeps trying the
# station every RETRY_MS and closes the access point once joined. `mode` says which: b"join",
# b"sta", b"ap"; `ip` the page's address. Nothing here waits: joining goes on in the radio.

from cribfw.clock import ticks_diff, ticks_ms
from cribfw.wificonfig import DEFAULT_NAME

JOIN_MS = 20000
RETRY_MS = 60000
LOOK_MS = 500
AP_PREFIX = "Cribboard-"


class WifiNet:
    def __init__(self, network, config, hall=False):
        self.network = network
        self.sta = network.WLAN(network.STA_IF)
        self.ap = network.WLAN(network.AP_IF)
        mac = self.sta.config("mac")
        suffix = "%02X%02X" % (mac[-2], mac[-1])
        self.ap_ssid = (AP_PREFIX + suffix).encode()
        default = "cribboard-" + suffix.lower() if hall else DEFAULT_NAME
        self.config = config
        self.name = (config.name or default).encode()
        self.ssid = (config.ssid or "").encode()
        self.mode = b"join"
        self.ip = b""
        self.port = 80
        self.dns = None  # the captive-portal DNS while the access point is open

    def reconfigure(self, config):
        """Join `config`'s network from now on (the set-up page saved it)."""
        self.config = config
        self.ssid = (config.ssid or "").encode()

    async def run(self, app=None):
        import asyncio

        try:
            self.network.hostname(self.name.decode())
        except (AttributeError, ValueError, OSError):
            pass  # (a port without it keeps its own name)
        while True:
            config = self.config
            if config.ssid and self._join(config):
                since = ticks_ms()
                while not self.sta.isconnected() and ticks_diff(ticks_ms(), since) < JOIN_MS:
                    await asyncio.sleep_ms(LOOK_MS)
                if self.sta.isconnected():
                    self._close_ap()
                    self.mode = b"sta"
                    self.ip = self.sta.ifconfig()[0].encode()
                    while self.sta.isconnected() and self.config is config:
                        await asyncio.sleep_ms(LOOK_MS)
                    continue  # lost, or another network: join again
            self._open_ap()
            since = ticks_ms()
            while self.config is config and (
                not config.ssid or ticks_diff(ticks_ms(), since) < RETRY_MS
            ):
                await asyncio.sleep_ms(LOOK_MS)

    def _join(self, config):
        sta = self.sta
        try:
            sta.active(True)
            try:
                sta.config(pm=sta.PM_NONE)  # answer at once (see cribfw/wifi.py)
            except (AttributeError, ValueError, OSError):
                pass
            sta.disconnect()
            sta.connect(config.ssid, config.password)
        except OSError:
            return False
        if self.mode != b"ap":
            self.mode = b"join"
        return True

    def _open_ap(self):
        if self.mode == b"ap":
            return
        ap = self.ap
        password = self.config.ap_password
        try:
            try:
                ap.config(ssid=self.ap_ssid.decode(), key=password)
            except (TypeError, ValueError):
                ap.config(essid=self.ap_ssid.decode(), password=password, authmode=3)
            ap.active(True)
        except OSError:
            return
        self.mode = b"ap"
        self.ip = ap.ifconfig()[0].encode()
        from cribfw.captivedns import CaptiveDns

        self.dns = CaptiveDns(self.ip)
        self.dns.start()

    def _close_ap(self):
        if self.dns is not None:
            self.dns.stop()
            self.dns = None
        try:
            self.ap.active(False)
        except OSError:
            pass
