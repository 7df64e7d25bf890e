"""MQTT 3.1.1 packets written by hand, for the attacks a well-behaved client library will not
make: a CONNECT announcing 200 MiB, a PUBLISH streamed byte by byte, a probe that never
acknowledges what it is sent."""

from __future__ import annotations

import socket
import ssl
import struct
from pathlib import Path


def remaining_length(length: int) -> bytes:
    """MQTT's variable-length integer (up to 268,435,455)."""
    out = bytearray()
    while True:
        byte, length = length % 128, length // 128
        out.append(byte | (0x80 if length else 0))
        if not length:
            return bytes(out)


def _string(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return struct.pack("!H", len(data)) + data


def connect_packet(
    client_id: str, user: str | None = None, password: str | None = None, *, clean: bool = True
) -> bytes:
    flags = (0x02 if clean else 0) | (0x80 if user else 0) | (0x40 if password else 0)
    body = _string("MQTT") + bytes((4, flags)) + struct.pack("!H", 30) + _string(client_id)
    if user:
        body += _string(user)
    if password:
        body += _string(password)
    return b"\x10" + remaining_length(len(body)) + body


def publish_header(topic: str, payload_length: int, *, qos: int = 0, retain: bool = False) -> bytes:
    """A PUBLISH's fixed header, topic and packet id: the payload follows."""
    variable = _string(topic) + (struct.pack("!H", 1) if qos else b"")
    first = 0x30 | (qos << 1) | int(retain)
    return bytes((first,)) + remaining_length(len(variable) + payload_length) + variable


def open_socket(port: int, cafile: Path | None, timeout: float = 10.0) -> socket.socket:
    """A connection to a broker on loopback: TLS verified against `cafile`, or plain."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if cafile is None:
        return raw
    context = ssl.create_default_context(cafile=str(cafile))
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def read_connack(sock: socket.socket) -> int:
    """The CONNACK's return code (0: accepted)."""
    packet = _read_exactly(sock, 4)
    if packet[0] != 0x20:
        raise ConnectionError(f"not a CONNACK: {packet!r}")
    return packet[3]


def _read_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        data += chunk
    return data


def stream_until_cut(sock: socket.socket, total: int, chunk: int = 64 * 1024) -> int:
    """Send up to `total` bytes of filler; returns how many went before the broker cut the
    connection (`total` if it never did)."""
    filler = b"x" * chunk
    sent = 0
    try:
        while sent < total:
            sent += sock.send(filler[: min(chunk, total - sent)])
    except OSError:
        pass
    return sent
