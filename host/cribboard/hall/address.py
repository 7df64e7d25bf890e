"""Where a hall's broker is and how to log in: ``mqtt://host:port`` (plain) or
``mqtts://host:port`` (TLS), a user and a password, made into an aiomqtt client."""

from __future__ import annotations

import getpass
import logging
import os
import socket
import ssl
import sys
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import aiomqtt

from cribboard.hall import HallError

SCHEMES = {"mqtt": 1883, "mqtts": 8883}
KEEPALIVE_S = 30  # docs/mqtt.md: a table's keepalive is 30 s or less; the others follow it
# Small messages go out at once: without it, Nagle's algorithm and the broker's delayed ACK
# hold each QoS 1 round trip for about 40 ms.
_SOCKET_OPTIONS = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)
# paho logs a lost connection as an error on stderr; the hall's clients say it themselves, in
# one line, and reconnect.
_MQTT_LOG = logging.getLogger("cribboard.hall.mqtt")
_MQTT_LOG.setLevel(logging.CRITICAL)


def ask_password(variable: str | None, prompt: str) -> str | None:
    """A broker password: from the environment variable named (HallError when it is not set),
    else asked for without echo on a terminal, else none (a broker that lets the user in
    without one). Never printed, never logged."""
    if variable:
        password = os.environ.get(variable)
        if password is None:
            raise HallError(f"--password-env {variable}: that environment variable is not set")
        return password
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    return None


@dataclass(frozen=True)
class BrokerAddress:
    """A broker's address and the user a client logs in as."""

    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)  # never in a log line

    @classmethod
    def parse(
        cls, url: str, username: str | None = None, password: str | None = None
    ) -> BrokerAddress:
        """``mqtt://host[:port]`` or ``mqtts://host[:port]``; HallError for anything else."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as err:
            raise HallError(f"bad broker URL {url!r}: {err}")
        if parts.scheme not in SCHEMES or not parts.hostname or parts.path not in ("", "/"):
            raise HallError(f"bad broker URL {url!r}: use mqtt://HOST:PORT or mqtts://HOST:PORT")
        return cls(
            parts.hostname,
            port or SCHEMES[parts.scheme],
            parts.scheme == "mqtts",
            username,
            password,
        )

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'mqtts' if self.tls else 'mqtt'}://{host}:{self.port}"

    def client(
        self,
        identifier: str | None = None,
        *,
        clean_session: bool = True,
        will: aiomqtt.Will | None = None,
        keepalive: int = KEEPALIVE_S,
    ) -> aiomqtt.Client:
        """An aiomqtt client for this broker and user (not connected yet: ``async with``).
        `clean_session` False keeps the session (subscriptions, queued QoS 1 messages) while
        the client is away; it needs an `identifier`."""
        return aiomqtt.Client(
            self.host,
            self.port,
            username=self.username,
            password=self.password,
            identifier=identifier,
            clean_session=clean_session,
            will=will,
            keepalive=keepalive,
            tls_context=ssl.create_default_context() if self.tls else None,
            timeout=10.0,
            socket_options=_SOCKET_OPTIONS,
            logger=_MQTT_LOG,
        )
