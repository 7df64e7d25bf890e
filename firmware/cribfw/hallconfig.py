# Where a Wi-Fi board reports to the club hall: a small JSON file on its flash, written by
# `cribboard deploy --broker mqtts://HOST:PORT --cafile ca.pem --table N [--hall H] [--user U]
# [--wifi SSID]` (host/cribboard/hall/tablesetup.py). Read once at start; no file: the board plays
# alone.
#   {"hall": "club", "table": 3, "host": "192.168.1.10", "port": 8883, "user": "table-3",
#    "password": "...", "ssid": "clubwifi", "wifi_password": "...", "ca": "MIIB..."}
# "ssid" and "wifi_password" are absent for a board that is already on a network (the virtual
# board uses the host's). "ca" (the hall CA's DER bytes, base64): the board speaks TLS and
# verifies the broker against it (cribfw/halltls.py); absent: plain MQTT. The file holds
# passwords: nothing on the board ever prints it.

from cribcore.files import HALL_CONFIG
from cribcore.hall import MAX_TABLES

PATH = "/" + HALL_CONFIG


class HallConfig:
    def __init__(
        self, hall, table, host, port, user, password, ssid=None, wifi_password=None, ca=None
    ):
        self.hall = hall
        self.table = table
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.ssid = ssid
        self.wifi_password = wifi_password
        self.ca = ca  # DER bytes, or None: plain MQTT


def _text(obj, key, needed=True):
    # `needed` False: may be absent (None) or empty (an open Wi-Fi has no password).
    value = obj.get(key)
    if value is None and not needed:
        return None
    if not isinstance(value, str) or (needed and not value):
        raise ValueError("hall config: %s missing" % key)
    return value


def _number(obj, key, low, high):
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError("hall config: %s must be %d..%d" % (key, low, high))
    return value


def _ca(obj):
    text = _text(obj, "ca", False)
    if text is None:
        return None
    import binascii

    try:
        ca = binascii.a2b_base64(text)
    except ValueError:
        raise ValueError("hall config: ca is not base64")
    if not ca:
        raise ValueError("hall config: ca missing")
    return ca


def parse(obj):
    """A HallConfig from the file's JSON object; ValueError naming a bad field (never a value)."""
    if not isinstance(obj, dict):
        raise ValueError("hall config: not a JSON object")
    return HallConfig(
        _text(obj, "hall"),
        _number(obj, "table", 1, MAX_TABLES),
        _text(obj, "host"),
        _number(obj, "port", 1, 65535),
        _text(obj, "user"),
        _text(obj, "password"),
        _text(obj, "ssid", False),
        _text(obj, "wifi_password", False),
        _ca(obj),
    )


def load(path=PATH):
    """The board's HallConfig, or None when it has none; ValueError when it is unreadable."""
    import json

    try:
        f = open(path)
    except OSError:
        return None
    with f:
        try:
            obj = json.load(f)
        except ValueError:
            raise ValueError("hall config: not JSON")
    return parse(obj)
