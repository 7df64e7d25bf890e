"""A remote game's secret: what keeps a stranger with the broker's shared password out of it.

Both ends are given the same secret (``cribboard remote --secret-env VAR``, or typed at a
prompt). From it and the game's name comes a key (PBKDF2-SHA256: a guessed secret costs a
stranger time), and from the key:

- the game's *channel*, the name in its topics (``cribboard/link/v2/<channel>/...``): 24 hex
  digits that say nothing of the game's name; without the secret one can neither find a game
  by its name nor list the names of the games on the broker;
- a MAC (HMAC-SHA256) on every message a side publishes, over its topic (the side's id, the
  move's number) and its payload: the receiver drops a message whose MAC is wrong, so a
  stranger can inject no move (peg, set, undo, new game) and cannot pose as a side.

    key = GameKey("friday", "correct horse battery")
    topic = move_topic(key.channel, instance, side, seq)
    payload = key.sign(topic, encode_move(move))
    body = key.verify(topic, payload)     # the move's bytes, or None: not signed with this key
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import os
import sys

from cribboard.i18n import _
from cribboard.remote import RemoteGameError

MIN_SECRET = 8  # characters
MAX_SECRET = 256
ITERATIONS = 100_000
_SALT = b"cribboard-link-v1:"
_MAC_HEX = 64  # HMAC-SHA256 in hex
CHANNEL_HEX = 24


def check_secret(secret: str) -> str:
    """The secret, if long enough to be worth something; RemoteGameError otherwise."""
    if not MIN_SECRET <= len(secret) <= MAX_SECRET:
        raise RemoteGameError(
            _(
                "a remote game's secret is %(least)d to %(most)d characters, the same at both "
                "ends (not %(length)d)",
                least=MIN_SECRET,
                most=MAX_SECRET,
                length=len(secret),
            )
        )
    return secret


def game_secret(variable: str | None, game: str) -> str:
    """The game's secret: from the environment variable named, else asked for without echo
    on a terminal; RemoteGameError when there is none (never printed, never logged)."""
    if variable:
        secret = os.environ.get(variable)
        if secret is None:
            raise RemoteGameError(
                _("--secret-env %(var)s: that environment variable is not set", var=variable)
            )
    elif sys.stdin.isatty():
        secret = getpass.getpass(
            _("the secret of game %(game)s (the same at both ends): ", game=game)
        )
    else:
        raise RemoteGameError(
            _("a remote game needs its secret: --secret-env VAR (the same at both ends)")
        )
    return check_secret(secret)


class GameKey:
    """The key of one remote game (see the module's docstring)."""

    def __init__(self, game: str, secret: str) -> None:
        check_secret(secret)
        self._key = hashlib.pbkdf2_hmac(
            "sha256", secret.encode(), _SALT + game.encode(), ITERATIONS
        )
        self.channel = hmac.new(self._key, b"channel", hashlib.sha256).hexdigest()[:CHANNEL_HEX]

    def _mac(self, topic: str, body: bytes) -> bytes:
        message = topic.encode() + b"\0" + body
        return hmac.new(self._key, message, hashlib.sha256).hexdigest().encode()

    def sign(self, topic: str, body: bytes) -> bytes:
        """`body` as published on `topic`: its MAC (hex), a space, the body."""
        return self._mac(topic, body) + b" " + body

    def verify(self, topic: str, payload: bytes) -> bytes | None:
        """The body of a payload signed for `topic` with this key; None for anything else."""
        mac, space, body = payload.partition(b" ")
        if not space or len(mac) != _MAC_HEX:
            return None
        return body if hmac.compare_digest(mac, self._mac(topic, body)) else None
