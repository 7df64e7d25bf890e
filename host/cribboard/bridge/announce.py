"""The bridge on the local network, by name: an mDNS / DNS-SD announcement, so a phone at the
table opens `http://cribboard.local:PORT/` instead of typing an address, and browsers of
services (`_http._tcp`) list "Cribboard bridge".

Announced only when the bridge listens beyond this computer (a token is then required: the
announcement carries no token). A second bridge on the network keeps working: its service gets a
new instance name (`Cribboard bridge (2)`); the host name `cribboard.local` then answers for
both, so such a table uses the address or the QR code instead."""

from __future__ import annotations

import logging
import socket
from collections.abc import Sequence

from zeroconf import IPVersion, ServiceInfo
from zeroconf.asyncio import AsyncZeroconf

log = logging.getLogger(__name__)

SERVICE_TYPE = "_http._tcp.local."
HOST_NAME = "cribboard.local."
INSTANCE = "Cribboard bridge"


class Announcement:
    """The bridge's service and host name, announced on `addresses` (IPv4, this computer's
    addresses on the local network) while it runs: `await start()`, `await stop()`."""

    def __init__(self, port: int, addresses: Sequence[str], instance: str = INSTANCE) -> None:
        self.port = port
        self.addresses = list(addresses)
        self.info = ServiceInfo(
            SERVICE_TYPE,
            f"{instance}.{SERVICE_TYPE}",
            addresses=[socket.inet_aton(address) for address in self.addresses],
            port=port,
            properties={"path": "/", "api": "/openapi.json"},
            server=HOST_NAME,
        )
        self._zeroconf: AsyncZeroconf | None = None

    @property
    def url(self) -> str:
        """The page's address by name (without the token)."""
        return f"http://{HOST_NAME.rstrip('.')}:{self.port}/"

    async def start(self) -> None:
        """Announce (answers mDNS queries from now on). Raises OSError when this computer's
        network has no multicast."""
        zc = AsyncZeroconf(interfaces=self.addresses, ip_version=IPVersion.V4Only)
        try:
            await zc.async_register_service(self.info, allow_name_change=True)
        except BaseException:
            await zc.async_close()
            raise
        self._zeroconf = zc
        log.info("announced %s as %s on %s", self.info.name, self.url, ", ".join(self.addresses))

    async def stop(self) -> None:
        """Withdraw the announcement (a goodbye packet) and stop answering."""
        zc, self._zeroconf = self._zeroconf, None
        if zc is not None:
            await zc.async_unregister_service(self.info)
            await zc.async_close()
