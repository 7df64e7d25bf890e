"""The remote games' MQTT topics, version 2: every name, QoS and retain flag, once (docs/mqtt.md,
"Remote games"). A topic is::

    cribboard/link/v2/<game>/hello/<side>                   a side's hello (retained, QoS 1)
    cribboard/link/v2/<game>/<instance>/<side>/move/<seq>   one move of a side (retained, QoS 1)
    cribboard/link/v2/<game>/<instance>/<side>/online       the side's connection (its Last Will)
    cribboard/link/v2/<game>/<instance>/<side>/sync         a side's own marker

`<instance>` names one game played under the game's name and secret: chosen at random when it
starts, so nothing of an earlier game (a replay of its signed messages included) reaches it.
Remote games have their own root beside the hall's (``cribboard/v1/<hall>/...``), so a game
name never meets a hall name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cribboard.i18n import _
from cribboard.mqtt.names import NAME_RULE, is_topic_name
from cribboard.mqtt.roots import LINK_ROOT as ROOT
from cribboard.mqtt.roots import LINK_USER as LINK_USER
from cribboard.remote import RemoteGameError

# ROOT and LINK_USER, part of this scheme, are defined below the hall and the remote games: a
# hall's broker lets remote games in.
VERSION = "v2"
MOVE = "move"
ONLINE = "online"
SYNC = "sync"
HELLO = "hello"

_SIDE = re.compile(r"[a-z0-9]{1,16}\Z")
_INSTANCE = re.compile(r"[0-9a-f]{16}\Z")


@dataclass(frozen=True)
class TopicName:
    """A parsed remote game's topic: `seq` is set for a move."""

    game: str
    side: str
    leaf: str
    seq: int | None = None
    instance: str = ""  # "" for a hello


def check_game(game: str) -> str:
    """The game name, if it can name one in a topic (:mod:`cribboard.mqtt.names`); RemoteGameError
    otherwise."""
    if not is_topic_name(game):
        raise RemoteGameError(_("bad game name %(name)r: %(rule)s", name=game, rule=_(NAME_RULE)))
    return game


def check_side(side: str) -> str:
    """A side's id: 1-16 of a-z and 0-9."""
    if not _SIDE.match(side):
        raise RemoteGameError(_("bad end id %(side)r: 1 to 16 of a-z and 0-9", side=side))
    return side


def check_instance(instance: str) -> str:
    """A game instance's id: 16 hex digits."""
    if not _INSTANCE.match(instance):
        raise RemoteGameError(f"bad game instance {instance!r}: 16 of 0-9 and a-f")
    return instance


def game_prefix(game: str) -> str:
    return f"{ROOT}/{VERSION}/{check_game(game)}"


def instance_prefix(game: str, instance: str) -> str:
    return f"{game_prefix(game)}/{check_instance(instance)}"


def hello_topic(game: str, side: str) -> str:
    return f"{game_prefix(game)}/{HELLO}/{check_side(side)}"


def every_hello(game: str) -> str:
    return f"{game_prefix(game)}/{HELLO}/+"


def move_topic(game: str, instance: str, side: str, seq: int) -> str:
    return f"{instance_prefix(game, instance)}/{check_side(side)}/{MOVE}/{seq}"


def side_topic(game: str, instance: str, side: str, leaf: str) -> str:
    """A side's `online` or `sync` topic in a game instance."""
    if leaf not in (ONLINE, SYNC):
        raise RemoteGameError(f"not a side topic: {leaf}")
    return f"{instance_prefix(game, instance)}/{check_side(side)}/{leaf}"


def every_move(game: str, instance: str) -> str:
    """The filter for every move of every side of a game instance."""
    return f"{instance_prefix(game, instance)}/+/{MOVE}/+"


def every_online(game: str, instance: str) -> str:
    return f"{instance_prefix(game, instance)}/+/{ONLINE}"


def parse(topic: str) -> TopicName:
    """A remote game's topic, in parts; RemoteGameError for anything else."""
    parts = topic.split("/")
    if len(parts) < 6 or "/".join(parts[:3]) != f"{ROOT}/{VERSION}":
        raise RemoteGameError(f"not a {ROOT}/{VERSION} topic: {topic}")
    game = check_game(parts[3])
    if parts[4] == HELLO and len(parts) == 6:
        return TopicName(game, check_side(parts[5]), HELLO)
    if len(parts) < 7:
        raise RemoteGameError(f"unknown remote game topic: {topic}")
    instance, side, leaf = check_instance(parts[4]), check_side(parts[5]), parts[6]
    if leaf == MOVE and len(parts) == 8:
        if not parts[7].isdigit() or parts[7] != str(int(parts[7])) or int(parts[7]) < 1:
            raise RemoteGameError(f"bad move number in {topic}")
        return TopicName(game, side, leaf, int(parts[7]), instance)
    if leaf in (ONLINE, SYNC) and len(parts) == 7:
        return TopicName(game, side, leaf, None, instance)
    raise RemoteGameError(f"unknown remote game topic: {topic}")
