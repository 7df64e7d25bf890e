"""`cribboard deploy`'s hall and Wi-Fi options: a Wi-Fi board reports to a club hall from its own
firmware (cribboard.hall.tablesetup writes its configuration), and serves its own page on the
network `--wifi` names (cribboard.wifisetup, without --broker)."""

from __future__ import annotations

import argparse

from cribboard.cmdline.rows import Arg, UsageError, arg, int_in
from cribboard.hall.tablesetup import (
    DEFAULT_HALL,
    HallSetup,
    HallSetupError,
    make_setup,
    write_config,
)
from cribboard.i18n import L_, N_, _
from cribboard.wifisetup import WifiSetup, WifiSetupError, make_wifi_setup, write_wifi
from cribcore.hall import MAX_TABLES

HALL_ARGS: tuple[Arg, ...] = (
    arg(
        "--broker",
        metavar="URL",
        help=N_(
            "report to the club hall at this broker (mqtts://HOST:PORT, with --cafile; mqtt:// "
            "for a plain one) from the board's own firmware; the password from "
            "$CRIBBOARD_MQTT_PASSWORD, else asked"
        ),
    ),
    arg(
        "--cafile",
        metavar="PEM",
        help=N_(
            "the hall's CA (its broker directory's ca.pem): the board verifies the broker with it"
        ),
    ),
    arg(
        "--table",
        type=int_in(1, MAX_TABLES, N_("table")),
        help=N_("the board's table number in the hall"),
    ),
    arg("--hall", help=L_("the hall's name (default %(hall)s)", hall=DEFAULT_HALL)),
    arg("--user", help=N_("the broker user (default table-N)")),
    arg(
        "--wifi",
        metavar="SSID",
        help=N_(
            "the Wi-Fi the board joins, for its own page (and with --broker, for the hall); its "
            "password from $CRIBBOARD_WIFI_PASSWORD, else asked"
        ),
    ),
)


def hall_setup(args: argparse.Namespace) -> HallSetup | None:
    """The hall configuration deploy's options ask for (passwords read now, before anything is
    copied), or None without --broker."""
    if args.broker is None:
        if args.table is not None or args.hall or args.user or args.cafile:
            raise UsageError(_("--table, --hall, --user and --cafile go with --broker"))
        return None
    if args.table is None:
        raise UsageError(_("--broker needs --table: the board's table number"))
    try:
        return make_setup(
            args.broker,
            args.table,
            hall=args.hall,
            user=args.user,
            ssid=args.wifi,
            cafile=args.cafile,
        )
    except HallSetupError as err:
        raise UsageError(str(err)) from None


def wifi_setup(args: argparse.Namespace) -> WifiSetup | None:
    """The network deploy's --wifi asks for without --broker (its password read now), or None."""
    if args.wifi is None or args.broker is not None:
        return None  # (with --broker the hall's configuration carries it)
    from cribboard.hall.tablesetup import ask_secret

    try:
        return make_wifi_setup(args.wifi, ask_secret)
    except (WifiSetupError, HallSetupError) as err:
        raise UsageError(str(err)) from None


def configure(
    port: str, setup: HallSetup | None, reset: bool = True, wifi: WifiSetup | None = None
) -> None:
    """Copy the hall configuration and the page's network to the board on `port` and restart it
    (unless `reset` is False)."""
    if wifi is not None:
        write_wifi(port, wifi, reset=reset and setup is None)
    if setup is not None:
        write_config(port, setup, reset=reset)
