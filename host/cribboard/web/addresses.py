"""This computer's addresses as a web page's server sees them: whether a host is this computer
only (a server bound there answers no one else), and its address on the local network (what a
phone on the same network opens)."""

from __future__ import annotations

import contextlib
import ipaddress
import socket


def is_loopback(host: str) -> bool:
    """Whether a host name or address is this computer only."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def lan_address() -> str | None:
    """This computer's address on the local network, as a phone would reach it (best effort;
    no packet is sent)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.254.254.254", 1))
        address = str(s.getsockname()[0])
        return None if address.startswith("127.") else address
    return None
