# The network a Wi-Fi board joins to serve its own page (cribfw/wifinet.py), on its flash as
# /wifi.json, written by `cribboard deploy --wifi SSID` or by the board's set-up page:
#   {"ssid": "home", "password": "...", "name": "cribboard", "ap_password": "..."}
# Every field may be absent: no "ssid": the board opens its own access point for the set-up
# page; no "name": "cribboard" (a board at a club hall's table: "cribboard-XXXX"); no
# "ap_password": DEFAULT_AP_PASSWORD. The file holds passwords: nothing on the board prints it.

from cribcore.files import WIFI_CONFIG

PATH = "/" + WIFI_CONFIG
DEFAULT_NAME = "cribboard"
DEFAULT_AP_PASSWORD = "cribbage"  # (README, "The board's own page"; 8 characters, WPA2's least)
MAX_SSID = 32  # bytes (802.11)
MAX_PASSWORD = 63  # WPA2's passphrase: 8..63 characters (or none, an open network)


class WifiConfig:
    def __init__(self, ssid=None, password="", name=None, ap_password=None):
        self.ssid = ssid
        self.password = password
        self.name = name
        self.ap_password = ap_password or DEFAULT_AP_PASSWORD


def check_ssid(ssid):
    if not isinstance(ssid, str) or not 1 <= len(ssid.encode()) <= MAX_SSID:
        raise ValueError("wifi: the network's name must be 1 to 32 bytes")
    return ssid


def check_password(password, what="password"):
    if not isinstance(password, str):
        raise ValueError("wifi: %s must be text" % what)
    if password and not 8 <= len(password) <= MAX_PASSWORD:
        raise ValueError("wifi: %s must be 8 to 63 characters (or none)" % what)
    return password


def check_name(name):
    """A name on the network: 1..32 of a-z, 0-9 and '-', not starting or ending with '-'."""
    ok = isinstance(name, str) and 1 <= len(name) <= 32 and name[0] != "-" and name[-1] != "-"
    if ok:
        for c in name:
            if not ("a" <= c <= "z" or "0" <= c <= "9" or c == "-"):
                ok = False
                break
    if not ok:
        raise ValueError("wifi: the name must be 1 to 32 of a-z, 0-9 and -")
    return name


def parse(obj):
    """A WifiConfig from the file's JSON object; ValueError naming a bad field (never a value)."""
    if not isinstance(obj, dict):
        raise ValueError("wifi: not a JSON object")
    ssid = obj.get("ssid")
    if ssid is not None:
        check_ssid(ssid)
    name = obj.get("name")
    if name is not None:
        check_name(name)
    ap_password = obj.get("ap_password")
    if ap_password is not None and len(check_password(ap_password, "ap_password")) < 8:
        raise ValueError("wifi: ap_password must be 8 to 63 characters")
    return WifiConfig(ssid, check_password(obj.get("password", "")), name, ap_password)


def load(path=PATH):
    """The board's WifiConfig, or None when it has none; ValueError when it is unreadable."""
    import json

    try:
        f = open(path)
    except OSError:
        return None
    with f:
        try:
            obj = json.load(f)
        except ValueError:
            raise ValueError("wifi: not JSON")
    return parse(obj)


def save(config, path=PATH):
    """Write `config` (a temporary file renamed over the old one)."""
    import json
    import os

    obj = {"ssid": config.ssid, "password": config.password}
    if config.name is not None:
        obj["name"] = config.name
    if config.ap_password != DEFAULT_AP_PASSWORD:
        obj["ap_password"] = config.ap_password
    temp = path + ".tmp"
    with open(temp, "w") as f:
        json.dump(obj, f)
    os.rename(temp, path)
