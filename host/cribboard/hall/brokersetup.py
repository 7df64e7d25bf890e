"""The hall's private broker made ready for `hall start`: opened, or made the first time, its
TLS held to the options (``--plain``, ``--renew-ca``), its CA's end told before it comes, a copy
of a running hall refused, and how the tables connect told on the terminal or written to a file.
Starting it, taking up one a killed director left running and watching it are the
supervisor's (:mod:`cribboard.hall.supervisor`)."""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from cribboard.cmdline.rows import UsageError
from cribboard.errors import HallError
from cribboard.hall.broker import Broker
from cribboard.hall.certs import CA_WARNING_DAYS, renew_command
from cribboard.hall.home import BROKER_DIR, DEFAULT_TABLES
from cribboard.hall.lifecycle import config_of, listening_process
from cribboard.hallwire import topics
from cribboard.i18n import N_, _
from cribboard.web.addresses import lan_address

_PLAIN_WARNING = N_(
    "broker: WARNING: plain MQTT (--plain): the tables' passwords cross the network in the "
    "clear; anyone on the club's network can read them and pose as a table"
)


def private_broker(hall_dir: Path, hall: str, players: int, args: argparse.Namespace) -> Broker:
    """The hall's private broker, not started: made on the first start (users for --tables
    boards, else enough for `players`), its TLS as the options ask."""
    if args.user or args.password_env or args.cafile:
        raise UsageError(_("--user, --password-env and --cafile go with --broker"))
    broker_dir = hall_dir / BROKER_DIR
    if (broker_dir / "hall.json").exists():
        broker = Broker.open(broker_dir)
    else:
        broker = Broker.create(
            broker_dir,
            hall,
            args.tables or max(DEFAULT_TABLES, math.ceil(players / 2)),
            host=args.mqtt_host,
            port=args.mqtt_port,
            viewer=True,
            tls=not args.plain,
        )
    if args.plain and broker.tls:
        raise UsageError(
            _("%(dir)s was made with TLS: it keeps it (leave out --plain)", dir=broker_dir)
        )
    if not broker.tls:
        print(_(_PLAIN_WARNING), file=sys.stderr, flush=True)
        if args.renew_ca:
            raise UsageError(_("--renew-ca is for a broker with TLS"))
    elif args.renew_ca:
        broker.certificates.renew_ca()
        print(
            _(
                "broker: a new CA, %(ca)s: give every table this ca.pem (`cribboard "
                "deploy --cafile`, `serve --broker --cafile`)",
                ca=broker.ca_file,
            ),
            flush=True,
        )
    else:
        _warn_of_the_ca(broker)
    _not_a_copy_of_a_running_hall(broker)
    return broker


def _warn_of_the_ca(broker: Broker) -> None:
    """Say so when the hall's CA expires soon (an expired one stops the start, saying what to
    run: cribboard.hall.certs.CAExpired)."""
    certificates = broker.certificates
    if not certificates.ca_file.exists():
        return
    expires = certificates.ca_expires
    left = expires - datetime.datetime.now(datetime.UTC)
    if datetime.timedelta(0) < left <= datetime.timedelta(days=CA_WARNING_DAYS):
        print(
            _(
                "broker: WARNING: the hall's CA expires on %(date)s; `%(command)s` makes a new "
                "one (then every table needs the new ca.pem)",
                date=expires.date().isoformat(),
                command=renew_command(),
            ),
            file=sys.stderr,
            flush=True,
        )


def _not_a_copy_of_a_running_hall(broker: Broker) -> None:
    """HallError when the broker on this hall's port is another directory's: this one is a
    copy of a hall that runs (a backup restored beside it), whose director it would fight."""
    pid = listening_process(broker.port)
    config = None if pid is None else config_of(pid)
    ours = broker.state_dir / "mosquitto.conf"
    if pid is None or config is None or config.resolve() == ours.resolve():
        return
    other = config.parent.parent
    raise HallError(
        _(
            "%(dir)s is a copy of the hall in %(other)s, whose broker (pid %(pid)d) runs on this "
            "hall's port %(port)d: two directors would fight over the same tables; run the "
            "hall from %(other)s, or stop it first",
            dir=broker.state_dir.parent,
            other=other,
            pid=pid,
            port=broker.port,
        )
    )


def tell_tables(broker: Broker, hall: str, credentials: Path | None) -> None:
    """How the tables connect (the broker's URL, its CA, each table's user and password): on
    the terminal, or into `credentials` (--credentials), a file only its owner can read."""
    host = broker.host
    if host in ("0.0.0.0", "::"):
        host = lan_address() or "127.0.0.1"
    url = f"{'mqtts' if broker.tls else 'mqtt'}://{host}:{broker.port}"
    users = {
        topics.table_user(n): broker.credentials(topics.table_user(n)).password
        for n in range(1, broker.tables + 1)
    }
    print(
        _(
            "broker: %(url)s (a private mosquitto; its state in %(dir)s)",
            url=url,
            dir=broker.state_dir,
        ),
        flush=True,
    )
    ca = broker.ca_file
    if ca is not None:
        print(_("broker: TLS; the tables verify it with the hall's CA: %(ca)s", ca=ca), flush=True)
        print(
            _(
                "a Wi-Fi board: cribboard deploy --broker %(url)s --cafile %(ca)s --table N "
                "(its password from $CRIBBOARD_MQTT_PASSWORD)",
                url=url,
                ca=ca,
            ),
            flush=True,
        )
    if credentials is not None:
        found: dict[str, Any] = {"url": url, "hall": hall, "users": users}
        if ca is not None:
            found["cafile"] = str(ca)
        text = json.dumps(found, indent=1) + "\n"
        fd = os.open(credentials, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(text)
        print(
            _("how the tables connect (URL, users, passwords): %(file)s", file=credentials),
            flush=True,
        )
        return
    print(
        _(
            "tables connect to %(url)s, hall %(hall)s, as these users (client id = user):",
            url=url,
            hall=hall,
        ),
        flush=True,
    )
    for user, password in users.items():
        print(f"  {user}  {password}", flush=True)
