# Where a Wi-Fi board reports to the club hall: a small JSON file on its flash, written by
# `cribboard deploy --broker mqtt://HOST:PORT --table N [--hall H] [--user U] [--wifi SSID]`
# (host/cribboard/hallsetup.py). Read once at start; no file: the board plays alone.
#   {"hall": "club", "table": 3, "host": "192.168.1.10", "port": 1883, "user": "table-3",
#    "password": "...", "ssid": "clubwifi", "wifi_password": "..."}
# "ssid" and "wifi_password" are absent for a board that is already on a network (the virtual
# board uses the host's). The file holds passwords: nothing on the board ever prints it.

from cribcore.files import HALL_CONFIG

PATH = "/" + HALL_CONFIG


class HallConfig:
    def __init__(self, hall, table, host, port, user, password, ssid=None, wifi_password=None):
        self.hall = hall
        self.table = table
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.ssid = ssid
        self.wifi_password = wifi_password


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


def parse(obj):
    """A HallConfig from the file's JSON object; ValueError naming a bad field (never a value)."""
    if not isinstance(obj, dict):
        raise ValueError("hall config: not a JSON object")
    return HallConfig(
        _text(obj, "hall"),
        _number(obj, "table", 1, 999),
        _text(obj, "host"),
        _number(obj, "port", 1, 65535),
        _text(obj, "user"),
        _text(obj, "password"),
        _text(obj, "ssid", False),
        _text(obj, "wifi_password", False),
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
