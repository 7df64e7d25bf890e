"""What the options `hall start` and `hall page` share mean: the broker reached (``--broker``,
``--user``, the password from ``--password-env`` or ``$CRIBBOARD_HALL_PASSWORD``, never from
the command line, ``--cafile``), how this computer reaches the hall's private broker, and the
page's port and the address it is shown at."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from cribboard.cmdline.rows import UsageError
from cribboard.hall.home import PASSWORD_ENV
from cribboard.hall.page import DEFAULT_HTTP_PORT
from cribboard.i18n import _
from cribboard.mqtt.address import BrokerAddress, ask_password
from cribboard.web.addresses import lan_address

if TYPE_CHECKING:
    from cribboard.hall.broker import Broker
    from cribboard.hall.page import Page


def refuse_password_on_the_line(args: argparse.Namespace) -> None:
    """UsageError for --password (every user of the computer would see it in ps), saying how
    to give it."""
    if args.password is not None:
        raise UsageError(
            _(
                "--password would show the password to every user of this computer (ps): put "
                "it in an environment variable and name it with --password-env VAR (or set "
                "$%(env)s)",
                env=PASSWORD_ENV,
            )
        )


def password(args: argparse.Namespace, user: str) -> str | None:
    """The broker password: from the variable --password-env names, else
    $CRIBBOARD_HALL_PASSWORD, else asked for on a terminal; never from the command line."""
    variable = args.password_env or (PASSWORD_ENV if os.environ.get(PASSWORD_ENV) else None)
    return ask_password(variable, _("broker password for %(user)s: ", user=user))


def checked_cafile(cafile: str | None) -> str | None:
    """--cafile, checked: a readable file."""
    if cafile is not None and not Path(cafile).is_file():
        raise UsageError(_("--cafile %(file)s: no such file", file=cafile))
    return cafile


def given_broker(
    args: argparse.Namespace, url: str, user: str, cafile: str | None
) -> BrokerAddress:
    """An existing broker at `url`, as --user (else `user`) with its password."""
    login = args.user or user
    return BrokerAddress.parse(url, login, password(args, login), checked_cafile(cafile))


def local_address(broker: Broker, user: str) -> BrokerAddress:
    """How `user` reaches the hall's private broker from this computer."""
    ca = broker.ca_file
    return BrokerAddress.parse(
        broker.url, user, broker.credentials(user).password, None if ca is None else str(ca)
    )


def http_port(args: argparse.Namespace) -> int:
    """--http-port, else the page's default."""
    return DEFAULT_HTTP_PORT if args.http_port is None else int(args.http_port)


def page_url(page: Page) -> str:
    """Where the page is seen: its URL, and on the club's network the LAN address too when it
    listens on every address."""
    if page.host in ("0.0.0.0", "::"):
        lan = lan_address()
        if lan:
            return _(
                "%(url)s (on the club's network: http://%(lan)s:%(port)s/)",
                url=page.url,
                lan=lan,
                port=page.bound_port,
            )
    return str(page.url)
