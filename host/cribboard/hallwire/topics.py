"""The club hall's MQTT topics, version 1: every topic name, QoS and retain flag, once.

Described with byte-level examples in docs/mqtt.md. A topic is::

    cribboard/v1/<hall>/table/<N>/<leaf>     leaf: state, event, online, cmd, ack
    cribboard/v1/<hall>/<leaf>               leaf: standings, round

A breaking change to a topic or a payload bumps ``v1``; fields are only ever added within it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cribboard.errors import HallError
from cribboard.i18n import _
from cribboard.mqtt.names import NAME_RULE, is_topic_name
from cribcore import hall as core
from cribcore.hall import ACK as ACK
from cribcore.hall import CMD as CMD
from cribcore.hall import EVENT as EVENT
from cribcore.hall import MAX_TABLES as MAX_TABLES
from cribcore.hall import ONLINE as ONLINE
from cribcore.hall import ROOT as ROOT
from cribcore.hall import STATE as STATE
from cribcore.hall import VERSION as VERSION

# Per table (the names, the range of table numbers, a table's topic prefix and its user are the
# shared core's, which a board's own table client uses too). The table publishes state, event,
# online and ack and reads cmd.
TABLE_LEAVES = (STATE, EVENT, ONLINE, CMD, ACK)
TABLE_PUBLISHES = (STATE, EVENT, ONLINE, ACK)

# Hall-wide, published by the director.
STANDINGS = "standings"
ROUND = "round"
HALL_LEAVES = (STANDINGS, ROUND)

DIRECTOR_USER = "director"
VIEWER_USER = "viewer"


@dataclass(frozen=True)
class Delivery:
    """How messages on a leaf are published."""

    qos: int
    retain: bool


DELIVERY: dict[str, Delivery] = {
    # The latest state replaces the last; the next change or a reconnect republishes it, so
    # QoS 0 is enough (a board's umqtt.simple publishes it without waiting for an answer).
    STATE: Delivery(*core.STATE_DELIVERY),
    # Every change, queued for the director while it is away: nothing missed.
    EVENT: Delivery(*core.EVENT_DELIVERY),
    # "1" on connecting; "0" by the broker (the Last Will) when the table's link dies.
    ONLINE: Delivery(*core.ONLINE_DELIVERY),
    # Queued for a table that is away (it keeps a persistent session); never retained, so a
    # command runs once.
    CMD: Delivery(*core.CMD_DELIVERY),
    ACK: Delivery(*core.ACK_DELIVERY),
    STANDINGS: Delivery(1, True),
    ROUND: Delivery(1, True),
}


@dataclass(frozen=True)
class TopicName:
    """A parsed topic: `table` is None for a hall-wide topic."""

    hall: str
    table: int | None
    leaf: str


def check_hall(hall: str) -> str:
    """The hall name, if it can name one in a topic (:mod:`cribboard.mqtt.names`); raises
    HallError otherwise."""
    if not is_topic_name(hall):
        raise HallError(_("bad hall name %(name)r: %(rule)s", name=hall, rule=_(NAME_RULE)))
    return hall


def check_table(table: int) -> int:
    """The table number, if in 1..MAX_TABLES; raises HallError otherwise."""
    if not 1 <= table <= MAX_TABLES:
        raise HallError(
            _(
                "bad table number %(table)s: tables are 1..%(most)d",
                table=table,
                most=MAX_TABLES,
            )
        )
    return table


def hall_prefix(hall: str) -> str:
    """``cribboard/v1/<hall>``: everything of one hall is under it."""
    return f"{ROOT}/{VERSION}/{check_hall(hall)}"


def table_topic(hall: str, table: int | str, leaf: str) -> str:
    """A table's topic; `table` may be ``+`` (any table) in a subscription filter."""
    if leaf not in TABLE_LEAVES:
        raise HallError(f"not a table topic: {leaf}")
    if table != "+":
        table = check_table(int(table))
    prefix: str = core.table_prefix(check_hall(hall), table)
    return prefix + leaf


def hall_topic(hall: str, leaf: str) -> str:
    """A hall-wide topic (standings, round)."""
    if leaf not in HALL_LEAVES:
        raise HallError(f"not a hall topic: {leaf}")
    return f"{hall_prefix(hall)}/{leaf}"


def table_user(table: int) -> str:
    """The broker user name of a table: ``table-N``."""
    user: str = core.TABLE_USER % check_table(table)
    return user


def parse(topic: str) -> TopicName:
    """Parse a hall topic; raises HallError for anything else (another version included)."""
    parts = topic.split("/")
    if len(parts) < 4 or parts[0] != ROOT or parts[1] != VERSION:
        raise HallError(f"not a {ROOT}/{VERSION} topic: {topic}")
    hall = check_hall(parts[2])
    if len(parts) == 4 and parts[3] in HALL_LEAVES:
        return TopicName(hall, None, parts[3])
    if len(parts) == 6 and parts[3] == "table" and parts[5] in TABLE_LEAVES:
        if not parts[4].isdigit() or parts[4] != str(int(parts[4])):
            raise HallError(f"bad table number in {topic}")
        return TopicName(hall, check_table(int(parts[4])), parts[5])
    raise HallError(f"unknown hall topic: {topic}")
