"""The network a Wi-Fi board joins to serve its own page (Pico W, Pico 2 W, ESP32-S3): the small
file its firmware reads at start (``/wifi.json``, read by ``cribfw/wificonfig.py``), made from
``cribboard deploy --wifi SSID`` (without ``--broker``: with it, the hall's configuration carries
the network) and copied to the board over mpremote. A board without one opens its own access
point for the set-up page (docs/protocol.md, "WebSocket").

The password comes from ``$CRIBBOARD_WIFI_PASSWORD`` or from a prompt that does not echo it; it
is never printed, logged, put on a command line or in an error message: the file goes to the
board from a private temporary copy (mode 0600), deleted at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from cribboard.boarddata import Health
from cribboard.errors import CribboardError
from cribboard.i18n import _
from cribcore.files import WIFI_CONFIG

WIFI_PASSWORD_ENV = "CRIBBOARD_WIFI_PASSWORD"
MAX_SSID_BYTES = 32  # 802.11
WPA2_PASSWORD = (8, 63)  # a passphrase's length in characters (none: an open network)


class WifiSetupError(CribboardError):
    """The Wi-Fi options cannot make a configuration (the message never holds a password)."""


class WifiSetup:
    """The network the board joins: its `ssid` and `password` (empty: an open network). Its
    repr never shows the password. (A plain class: `status` imports this module, and a
    one-shot command does not import `dataclasses`.)"""

    __slots__ = ("ssid", "password")

    def __init__(self, ssid: str, password: str) -> None:
        self.ssid = ssid
        self.password = password

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WifiSetup):
            return NotImplemented
        return (self.ssid, self.password) == (other.ssid, other.password)

    def __repr__(self) -> str:
        return f"WifiSetup(ssid={self.ssid!r})"

    def to_json(self) -> bytes:
        """The board's configuration file."""
        import json  # (here: `status` imports this module, and needs no JSON)

        return json.dumps({"ssid": self.ssid, "password": self.password}).encode()


def make_wifi_setup(
    ssid: str, ask: Callable[[str], str], environ: Mapping[str, str] = os.environ
) -> WifiSetup:
    """A checked WifiSetup for `ssid`, its password from the environment or `ask`."""
    if not 1 <= len(ssid.encode()) <= MAX_SSID_BYTES:
        raise WifiSetupError(_("a Wi-Fi name is 1 to %(most)d bytes", most=MAX_SSID_BYTES))
    password = environ.get(WIFI_PASSWORD_ENV)
    if password is None:
        password = ask(_("Wi-Fi password for %(ssid)s (empty for an open network): ", ssid=ssid))
    least, most = WPA2_PASSWORD
    if password and not least <= len(password) <= most:
        raise WifiSetupError(
            _("a Wi-Fi password is %(least)d to %(most)d characters", least=least, most=most)
        )
    return WifiSetup(ssid, password)


def write_wifi(
    port: str,
    setup: WifiSetup,
    *,
    reset: bool = True,
    progress: Callable[[str], None] = print,
    timeout: float = 60.0,
) -> None:
    """Copy `setup` to the board on `port` (over mpremote) and reset it (unless `reset` is
    False) so it joins the network."""
    # (here: `status` says where the page is, and loads no mpremote for it)
    from cribboard.deploy import DeployError, put_private_file

    try:
        put_private_file(port, WIFI_CONFIG, setup.to_json(), reset=reset, timeout=timeout)
    except DeployError as err:
        raise WifiSetupError(
            _("the Wi-Fi configuration did not reach the board: %(error)s", error=err)
        ) from None
    progress(
        _(
            "Wi-Fi: the board joins %(ssid)s and serves its page at http://cribboard.local/ "
            "(cribboard status shows its address)",
            ssid=setup.ssid,
        )
    )


def describe_page(health: Health) -> str | None:
    """Where a phone finds the board's own page, in words; None for a board without one."""
    if health.wifi is None:
        return None
    if health.wifi == "ap":
        return _(
            "page: join the board's own Wi-Fi (Cribboard-XXXX), then open %(url)s",
            url=health.page or "http://192.168.4.1/",
        )
    if health.page is None:
        return _("page: the board is joining its Wi-Fi")
    if health.wifi == "sta" and health.page_name:
        return _(
            "page: %(url)s (or http://%(name)s.local/ on iPhones and computers)",
            url=health.page,
            name=health.page_name,
        )
    return _("page: %(url)s", url=health.page)
