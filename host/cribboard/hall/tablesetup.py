"""A Wi-Fi board's place in a club hall: the small configuration file its own table client
reads at start (``/hall.json``, read by the firmware's ``cribfw/hallconfig.py``), made from
``cribboard deploy --broker mqtts://HOST:PORT --cafile ca.pem --table N [--hall H] [--user U]
[--wifi SSID]`` and copied to the board over mpremote, as deploy copies the firmware. With
``mqtts://`` the file carries the hall's CA (its DER bytes, base64): the board verifies the
broker's certificate and host name against it before it sends its password.

The passwords (the broker's and the Wi-Fi's) come from ``$CRIBBOARD_MQTT_PASSWORD`` and
``$CRIBBOARD_WIFI_PASSWORD``, or from a prompt that does not echo them. They are never printed,
logged, put on a command line or in an error message: the file goes to the board from a private
temporary copy (mode 0600), deleted at once.
"""

from __future__ import annotations

import binascii
import getpass
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cribboard.deploy import DeployError, put_private_file
from cribboard.errors import CribboardError, HallError
from cribboard.hallwire.topics import check_hall, check_table, table_user
from cribboard.i18n import _
from cribboard.mqtt import AddressError
from cribboard.mqtt.address import BrokerAddress
from cribcore.files import HALL_CONFIG

MQTT_PASSWORD_ENV = "CRIBBOARD_MQTT_PASSWORD"
WIFI_PASSWORD_ENV = "CRIBBOARD_WIFI_PASSWORD"
BOARD_FILE = HALL_CONFIG  # at the root of the board's flash (cribfw/hallconfig.py reads it)
DEFAULT_HALL = "club"
MAX_SSID_BYTES = 32  # 802.11
MAX_WIFI_PASSWORD_BYTES = 63  # WPA2 passphrase


class HallSetupError(CribboardError):
    """The hall options cannot make a configuration (the message never holds a password)."""


@dataclass(frozen=True)
class HallSetup:
    """Where a board reports: the broker's `host` and `port`, the `hall`, its `table` number,
    the broker `user` and `password`, the Wi-Fi it joins (`ssid` None: a board already on a
    network), and `ca` the DER bytes of the CA that signed the broker's certificate (None:
    plain MQTT)."""

    host: str
    port: int
    hall: str
    table: int
    user: str
    password: str = field(repr=False)
    ssid: str | None = None
    wifi_password: str | None = field(default=None, repr=False)
    ca: bytes | None = None

    def to_json(self) -> bytes:
        """The board's configuration file."""
        config: dict[str, object] = {
            "hall": self.hall,
            "table": self.table,
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
        }
        if self.ssid is not None:
            config["ssid"] = self.ssid
            config["wifi_password"] = self.wifi_password or ""
        if self.ca is not None:
            config["ca"] = binascii.b2a_base64(self.ca, newline=False).decode()
        return json.dumps(config).encode()

    def describe(self) -> str:
        """One line for people, without the passwords."""
        scheme = "mqtt" if self.ca is None else "mqtts"
        where = dict(
            table=self.table,
            hall=repr(self.hall),
            url=f"{scheme}://{self.host}:{self.port}",
            user=self.user,
            ssid=repr(self.ssid),
        )
        if self.ssid is None:
            line = _("table %(table)d of hall %(hall)s at %(url)s as %(user)s", **where)
        else:
            line = _(
                "table %(table)d of hall %(hall)s at %(url)s as %(user)s over Wi-Fi %(ssid)s",
                **where,
            )
        if not self.ca:
            line += " " + _("(plain MQTT: its password crosses the network in the clear)")
        return line


def ask_secret(prompt: str) -> str:
    """A password typed at the terminal, not echoed; HallSetupError when there is none to ask
    (getpass would fall back to an echoing read)."""
    if not sys.stdin.isatty():
        raise HallSetupError(_("no terminal to ask: %(prompt)s", prompt=prompt.rstrip(": ")))
    try:
        return getpass.getpass(prompt)
    except (EOFError, KeyboardInterrupt):
        raise HallSetupError(_("no password given")) from None


def make_setup(
    broker: str,
    table: int,
    *,
    hall: str | None = None,
    user: str | None = None,
    ssid: str | None = None,
    cafile: str | None = None,
    environ: Mapping[str, str] = os.environ,
    ask: Callable[[str], str] = ask_secret,
) -> HallSetup:
    """A checked HallSetup from deploy's options, with the passwords from the environment or
    `ask`; HallSetupError naming what is wrong."""
    try:
        address = BrokerAddress.parse(broker)
        hall = check_hall(hall if hall is not None else DEFAULT_HALL)
        table = check_table(table)
    except (HallError, AddressError) as err:
        raise HallSetupError(str(err)) from None
    ca = None
    if address.tls:
        if cafile is None:
            raise HallSetupError(
                _(
                    "an mqtts:// broker needs --cafile: the hall's CA (ca.pem in its broker "
                    "directory), which the board verifies the broker with"
                )
            )
        ca = read_ca(cafile)
    elif cafile is not None:
        raise HallSetupError(
            _("--cafile goes with an mqtts:// broker, not %(broker)s", broker=broker)
        )
    if ssid is not None and not 1 <= len(ssid.encode()) <= MAX_SSID_BYTES:
        raise HallSetupError(_("a Wi-Fi name is 1 to %(most)d bytes", most=MAX_SSID_BYTES))
    user = user or table_user(table)
    password = environ.get(MQTT_PASSWORD_ENV) or ask(_("MQTT password for %(user)s: ", user=user))
    if not password:
        raise HallSetupError(
            _("no MQTT password for %(user)s (set $%(env)s)", user=user, env=MQTT_PASSWORD_ENV)
        )
    wifi_password = None
    if ssid is not None:
        wifi_password = environ.get(WIFI_PASSWORD_ENV)
        if wifi_password is None:
            wifi_password = ask(
                _("Wi-Fi password for %(ssid)s (empty for an open network): ", ssid=ssid)
            )
        if len(wifi_password.encode()) > MAX_WIFI_PASSWORD_BYTES:
            raise HallSetupError(
                _("a Wi-Fi password is at most %(most)d bytes", most=MAX_WIFI_PASSWORD_BYTES)
            )
    return HallSetup(
        address.host, address.port, hall, table, user, password, ssid, wifi_password, ca
    )


MAX_CA_BYTES = 2048  # a board keeps the CA in its heap while connecting: one certificate


def read_ca(cafile: str) -> bytes:
    """The DER bytes of the one CA certificate in `cafile` (PEM); HallSetupError otherwise."""
    from cribboard.hall.certs import pem_to_der

    try:
        der = pem_to_der(Path(cafile).read_bytes())
    except OSError as err:
        raise HallSetupError(
            f"--cafile {cafile}: {err.strerror or err}"
        ) from None  # (the system's words)
    except ValueError:
        raise HallSetupError(_("--cafile %(file)s: not a PEM certificate", file=cafile)) from None
    if len(der) > MAX_CA_BYTES:
        raise HallSetupError(
            _("--cafile %(file)s: a CA of at most %(most)d bytes", file=cafile, most=MAX_CA_BYTES)
        )
    return der


def write_config(
    port: str,
    setup: HallSetup,
    *,
    reset: bool = True,
    progress: Callable[[str], None] = print,
    timeout: float = 60.0,
) -> None:
    """Copy `setup` to the board on `port` (over mpremote) and reset it (unless `reset` is
    False) so its table client starts."""
    try:
        put_private_file(port, BOARD_FILE, setup.to_json(), reset=reset, timeout=timeout)
    except DeployError as err:
        raise HallSetupError(
            _("the hall configuration did not reach the board: %(error)s", error=err)
        ) from err
    progress(_("hall: the board reports as %(setup)s", setup=setup.describe()))
