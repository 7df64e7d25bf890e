"""Whether a broker lets a user in, asked without touching the user's session.

A client library logs in and acknowledges whatever the broker then hands it: a probe that logs in
as the hall's director that way takes the messages queued for the director (the tables' acks and
events of a game played while it was down) and they are gone. This probe sends a CONNECT with
the session kept (clean session off), reads the CONNACK and closes the connection: the broker
keeps the session, and whatever it began to send is sent again at the director's next login
(MQTT 3.1.1, 4.4: unacknowledged QoS 1 messages are sent again).

    if await lets_in(address, "director"): ...
"""

from __future__ import annotations

import asyncio
import ssl
import struct

from cribboard.mqtt.address import BrokerAddress

PROBE_TIMEOUT_S = 2.0
ACCEPTED = 0


class CertificateRefused(Exception):
    """The broker's certificate did not verify (the message says why, as OpenSSL does)."""


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("!H", len(data)) + data


def connect_packet(client_id: str, username: str | None, password: str | None) -> bytes:
    """An MQTT 3.1.1 CONNECT that keeps the session (clean session off), keepalive 30 s."""
    flags = 0x80 * bool(username) | 0x40 * bool(password)
    body = _string("MQTT") + bytes((4, flags)) + struct.pack("!H", 30) + _string(client_id)
    if username:
        body += _string(username)
    if password:
        body += _string(password)
    length = bytearray()
    remaining = len(body)
    while True:
        byte, remaining = remaining % 128, remaining // 128
        length.append(byte | (0x80 if remaining else 0))
        if not remaining:
            break
    return b"\x10" + bytes(length) + body


async def lets_in(address: BrokerAddress, client_id: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether the broker at `address` accepts its user's login as `client_id` now; False when
    nothing answers there or the login is refused. CertificateRefused when it answers with a
    certificate this client does not trust."""
    context = address.tls_context()
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(
                address.host,
                address.port,
                ssl=context,
                server_hostname=address.host if context is not None else None,
            )
            try:
                writer.write(connect_packet(client_id, address.username, address.password))
                await writer.drain()
                connack = await reader.readexactly(4)
            finally:
                writer.transport.abort()  # no DISCONNECT, no PUBACK: the session stays whole
    except ssl.SSLCertVerificationError as err:
        raise CertificateRefused(str(err)) from None
    except (OSError, TimeoutError, asyncio.IncompleteReadError, ssl.SSLError):
        return False
    return connack[0] == 0x20 and connack[3] == ACCEPTED
