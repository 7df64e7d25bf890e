"""Where a hall's broker is and how to log in: ``mqtt://host:port`` (plain) or
``mqtts://host:port`` (TLS, verified against the system's CAs or a `cafile`, such as a hall's
own ``ca.pem``), a user and a password, made into an aiomqtt client; and why a broker refused
a client, in one line (:func:`refusal`)."""

from __future__ import annotations

import getpass
import logging
import math
import os
import socket
import ssl
import sys
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiomqtt

from cribboard.i18n import N_, _
from cribboard.mqtt import AddressError
from cribboard.waiting import within

SCHEMES = {"mqtt": 1883, "mqtts": 8883}
KEEPALIVE_S = 30  # docs/mqtt.md: a table's keepalive is 30 s or less; the others follow it
# Small messages go out at once: without it, Nagle's algorithm and the broker's delayed ACK
# hold each QoS 1 round trip for about 40 ms.
_SOCKET_OPTIONS = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)
# paho logs a lost connection as an error on stderr; the hall's and the link's clients say it
# themselves, in one line, and reconnect.
_MQTT_LOG = logging.getLogger("cribboard.mqtt.client")
_MQTT_LOG.setLevel(logging.CRITICAL)

T = TypeVar("T")


class Client(aiomqtt.Client):
    """aiomqtt's client, whose every wait (connect, publish, subscribe, disconnect) keeps a
    cancellation: aiomqtt waits with :func:`asyncio.wait_for`, which on Python 3.11 drops a
    cancel that meets a publication's acknowledgement (see :mod:`cribboard.waiting`), and the
    director, a table or a remote game cancelled then never stopped."""

    session_present = False
    """Whether the broker kept this client's session from before (the CONNACK's flag)."""

    def _on_connect(self, client: Any, userdata: Any, flags: Any, *args: Any) -> None:
        self.session_present = bool(getattr(flags, "session_present", False))
        super()._on_connect(client, userdata, flags, *args)

    def acknowledge_when_taken(self) -> None:
        """From now on a QoS 1 message is acknowledged only by :meth:`acknowledge`, once it has
        been taken (kept on disk): a client killed before then gets it again from the broker
        with its session, instead of losing it."""
        self._client.manual_ack_set(True)

    def received_now(self) -> list[aiomqtt.Message]:
        """The messages received and not read yet, without waiting (read them with the one
        :attr:`messages` gave: a batch)."""
        queue = self._queue
        return [queue.get_nowait() for _ in range(queue.qsize())]

    def acknowledge(self, message: aiomqtt.Message) -> None:
        """Acknowledge a message taken (see :meth:`acknowledge_when_taken`)."""
        if message.qos > 0:
            self._client.ack(message.mid, message.qos)

    async def _wait_for(self, fut: Awaitable[T], timeout: float | None) -> T:
        if timeout is None:
            timeout = self.timeout
        try:
            return await within(fut, None if timeout == math.inf else timeout)
        except TimeoutError:
            raise aiomqtt.MqttError("Operation timed out") from None


def ask_password(variable: str | None, prompt: str) -> str | None:
    """A broker password: from the environment variable named (AddressError when it is not set),
    else asked for without echo on a terminal, else none (a broker that lets the user in
    without one). Never printed, never logged."""
    if variable:
        password = os.environ.get(variable)
        if password is None:
            raise AddressError(
                _("--password-env %(var)s: that environment variable is not set", var=variable)
            )
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
    cafile: str | None = None  # the CA (PEM) that signed the broker's certificate

    def with_login(
        self, username: str | None, password: str | None, cafile: str | None = None
    ) -> BrokerAddress:
        """The same broker with another user (and a CA file, when given)."""
        return replace(self, username=username, password=password, cafile=cafile or self.cafile)

    def tls_context(self) -> ssl.SSLContext | None:
        """The TLS context that verifies the broker (its certificate and its host name);
        None for plain MQTT. AddressError when the CA file cannot be read."""
        if not self.tls:
            return None
        try:
            return ssl.create_default_context(cafile=self.cafile)
        except (OSError, ssl.SSLError) as err:
            raise AddressError(
                _(
                    "--cafile %(file)s: not a readable PEM CA file (%(error)s)",
                    file=self.cafile,
                    error=err,
                )
            )

    @classmethod
    def parse(
        cls,
        url: str,
        username: str | None = None,
        password: str | None = None,
        cafile: str | None = None,
    ) -> BrokerAddress:
        """``mqtt://host[:port]`` or ``mqtts://host[:port]``; AddressError for anything else (and
        for a `cafile` with plain MQTT, which would be ignored)."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as err:
            raise AddressError(_("bad broker URL %(url)r: %(error)s", url=url, error=err))
        if parts.scheme not in SCHEMES or not parts.hostname or parts.path not in ("", "/"):
            raise AddressError(
                _("bad broker URL %(url)r: use mqtt://HOST:PORT or mqtts://HOST:PORT", url=url)
            )
        if cafile is not None and parts.scheme != "mqtts":
            raise AddressError(_("--cafile goes with an mqtts:// broker, not %(url)s", url=url))
        return cls(
            parts.hostname,
            port or SCHEMES[parts.scheme],
            parts.scheme == "mqtts",
            username,
            password,
            cafile,
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
    ) -> Client:
        """An aiomqtt client for this broker and user (not connected yet: ``async with``).
        `clean_session` False keeps the session (subscriptions, queued QoS 1 messages) while
        the client is away; it needs an `identifier`."""
        return Client(
            self.host,
            self.port,
            username=self.username,
            password=self.password,
            identifier=identifier,
            clean_session=clean_session,
            will=will,
            keepalive=keepalive,
            tls_context=self.tls_context(),
            timeout=10.0,
            socket_options=_SOCKET_OPTIONS,
            logger=_MQTT_LOG,
        )


# What OpenSSL says when it refuses a certificate, and the reason in words.
_UNKNOWN_CA = N_("it is signed by an unknown CA (give the hall's ca.pem: --cafile)")
_REFUSALS = (
    ("certificate has expired", N_("it has expired")),
    ("not yet valid", N_("it is not valid yet (is this computer's clock right?)")),
    ("hostname mismatch", N_("it is not for this host name")),
    ("ip address mismatch", N_("it is not for this address")),
    ("unable to get local issuer", _UNKNOWN_CA),
    ("self-signed certificate", _UNKNOWN_CA),
    ("self signed certificate", _UNKNOWN_CA),
    ("unknown ca", _UNKNOWN_CA),
)


def certificate_refused(err: BaseException) -> bool:
    """Whether `err` says this client refused the broker's certificate."""
    low = str(err).lower()
    return "certificate verify failed" in low or "certificate_verify_failed" in low


def refusal(err: BaseException, address: BrokerAddress) -> str | None:
    """One line saying why the broker at `address` cannot be used, for an error that will not
    go away by trying again (a refused certificate, a refused login, a plain client at a TLS
    listener); None for anything else (a broker that is away: try again)."""
    text = str(err)
    low = text.lower()
    if certificate_refused(err):
        reason = next((_(said) for clue, said in _REFUSALS if clue in low), None)
        if reason is None:
            detail = text.split("certificate verify failed:")[-1].split("(_ssl")[0].strip()
            reason = detail or text
        return _(
            "%(url)s: refused the broker's certificate: %(reason)s",
            url=address.url,
            reason=reason,
        )
    if "wrong version number" in low or "record layer failure" in low:
        return _("%(url)s: the broker does not speak TLS there (mqtt:// instead?)", url=address.url)
    if "authori" in low or "bad user name or password" in low:
        return _(
            "%(url)s: the broker refused the login of %(user)s: %(error)s",
            url=address.url,
            user=address.username,
            error=text,
        )
    return None
