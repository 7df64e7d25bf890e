"""The linked games' MQTT topics, version 1: every name, QoS and retain flag, once (docs/mqtt.md,
"Linked boards"). A topic is::

    cribboard/link/v1/<game>/<side>/move/<seq>   one move of a side (retained, QoS 1)
    cribboard/link/v1/<game>/<side>/online       1 while the side is connected (its Last Will: 0)
    cribboard/link/v1/<game>/<side>/sync         a side's own marker: read back only by itself

Linked games have their own root beside the hall's (``cribboard/v1/<hall>/...``), so a game
name never meets a hall name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cribboard.i18n import _
from cribboard.link import LinkedGameError
from cribboard.mqtt.names import NAME_RULE, is_topic_name
from cribboard.mqtt.roots import LINK_ROOT as ROOT
from cribboard.mqtt.roots import LINK_USER as LINK_USER

# ROOT and LINK_USER, part of this scheme, are defined below the hall and the linked games: a
# hall's broker lets linked games in.
VERSION = "v1"
MOVE = "move"
ONLINE = "online"
SYNC = "sync"

_SIDE = re.compile(r"[a-z0-9]{1,16}\Z")


@dataclass(frozen=True)
class TopicName:
    """A parsed linked game's topic: `seq` is set for a move."""

    game: str
    side: str
    leaf: str
    seq: int | None = None


def check_game(game: str) -> str:
    """The game name, if it can name one in a topic (:mod:`cribboard.mqtt.names`); LinkedGameError
    otherwise."""
    if not is_topic_name(game):
        raise LinkedGameError(_("bad game name %(name)r: %(rule)s", name=game, rule=_(NAME_RULE)))
    return game


def check_side(side: str) -> str:
    """A side's id: 1-16 of a-z and 0-9."""
    if not _SIDE.match(side):
        raise LinkedGameError(_("bad side id %(side)r: 1 to 16 of a-z and 0-9", side=side))
    return side


def game_prefix(game: str) -> str:
    return f"{ROOT}/{VERSION}/{check_game(game)}"


def move_topic(game: str, side: str, seq: int) -> str:
    return f"{game_prefix(game)}/{check_side(side)}/{MOVE}/{seq}"


def side_topic(game: str, side: str, leaf: str) -> str:
    """A side's `online` or `sync` topic."""
    if leaf not in (ONLINE, SYNC):
        raise LinkedGameError(f"not a side topic: {leaf}")
    return f"{game_prefix(game)}/{check_side(side)}/{leaf}"


def every_move(game: str) -> str:
    """The filter for every move of every side of a game."""
    return f"{game_prefix(game)}/+/{MOVE}/+"


def every_online(game: str) -> str:
    return f"{game_prefix(game)}/+/{ONLINE}"


def parse(topic: str) -> TopicName:
    """A linked game's topic, in parts; LinkedGameError for anything else."""
    parts = topic.split("/")
    if len(parts) < 6 or "/".join(parts[:3]) != f"{ROOT}/{VERSION}":
        raise LinkedGameError(f"not a {ROOT}/{VERSION} topic: {topic}")
    game, side, leaf = check_game(parts[3]), check_side(parts[4]), parts[5]
    if leaf == MOVE and len(parts) == 7:
        if not parts[6].isdigit() or parts[6] != str(int(parts[6])) or int(parts[6]) < 1:
            raise LinkedGameError(f"bad move number in {topic}")
        return TopicName(game, side, leaf, int(parts[6]))
    if leaf in (ONLINE, SYNC) and len(parts) == 6:
        return TopicName(game, side, leaf)
    raise LinkedGameError(f"unknown linked game topic: {topic}")
