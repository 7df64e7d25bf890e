"""`cribboard serve`'s options for a board at a club hall's table (``--broker``, ``--hall``,
``--table``, ``--user``, ``--password-env``) and Bluetooth boards (``--ble``), and what they
make. Cheap to import: the command line's table holds them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cribboard.cmdline.rows import Arg, UsageError, arg
from cribboard.i18n import N_, _

if TYPE_CHECKING:
    from cribboard.bridge.halltable import TableSettings

TABLE_ARGS: tuple[Arg, ...] = (
    arg(
        "--ble",
        dest="serve_ble",
        action="append",
        metavar="NAME",
        help=N_(
            "a board over Bluetooth LE: its name (Cribboard-XXXX) or address (repeat for more)"
        ),
    ),
    arg(
        "--broker",
        old_names=("--mqtt",),
        metavar="URL",
        help=N_(
            "sit the board at a club hall's table: the hall's broker, mqtt://HOST:PORT or "
            "mqtts://HOST:PORT (docs/mqtt.md); with --hall and --table"
        ),
    ),
    arg("--hall", help=N_("the hall's name (with --broker)")),
    arg("--table", type=int, metavar="N", help=N_("the table's number (with --broker)")),
    arg("--user", help=N_("the broker user (default table-N)")),
    arg(
        "--cafile",
        metavar="PEM",
        help=N_(
            "the CA that signed the mqtts:// broker's certificate (a hall's ca.pem; default: "
            "the system's CAs)"
        ),
    ),
    arg(
        "--password-env",
        metavar="VAR",
        help=N_(
            "the environment variable that holds the broker password (default: asked for when "
            "on a terminal)"
        ),
    ),
)


def table_settings(args: argparse.Namespace, boards: int) -> TableSettings | None:
    """The hall table the options name, None without ``--broker``; UsageError for options that
    do not go together. `boards`: how many boards were named (a table has one)."""
    if args.broker is None:
        named = (args.hall, args.table, args.user, args.password_env, args.cafile)
        if any(value is not None for value in named):
            raise UsageError(
                _("--hall, --table, --user, --password-env and --cafile go with --broker")
            )
        return None
    if args.hall is None or args.table is None:
        raise UsageError(_("--broker needs --hall NAME and --table N"))
    if boards > 1:
        raise UsageError(_("a hall table has one board: name one (--port, --ble or --virtual)"))
    from cribboard.bridge.halltable import TableSettings, default_memory_file
    from cribboard.errors import HallError
    from cribboard.hallwire import topics
    from cribboard.mqtt import AddressError
    from cribboard.mqtt.address import BrokerAddress, ask_password

    try:
        user = args.user or topics.table_user(args.table)
        topics.check_hall(args.hall)
        address = BrokerAddress.parse(args.broker, username=user, cafile=args.cafile)
        address.tls_context()  # a CA file that cannot be read: said now, in one line
        password = ask_password(
            args.password_env,
            _("password for %(user)s at %(url)s: ", user=user, url=address.url),
        )
    except (HallError, AddressError) as err:
        raise UsageError(str(err)) from None
    return TableSettings(
        address.with_login(user, password),
        args.hall,
        args.table,
        default_memory_file(args.hall, args.table),
    )
