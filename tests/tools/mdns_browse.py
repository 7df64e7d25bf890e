"""Browse mDNS for `_http._tcp` services and print the first one found as one JSON line (name,
server, addresses, port, properties), then exit; exit 1 when none appears within the time given.
A real zeroconf browser, run by tests/page/test_bridge_lan.py inside the network namespace where the
bridge announces itself."""

from __future__ import annotations

import asyncio
import json
import sys

from zeroconf import IPVersion, ServiceListener, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

SERVICE_TYPE = "_http._tcp.local."


async def browse(interface: str, seconds: float) -> int:
    found: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    class Listener(ServiceListener):
        def add_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            if not found.done():
                found.set_result(name)

        def update_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            pass

        def remove_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            pass

    zc = AsyncZeroconf(interfaces=[interface], ip_version=IPVersion.V4Only)
    browser = AsyncServiceBrowser(zc.zeroconf, SERVICE_TYPE, Listener())
    try:
        name = await asyncio.wait_for(found, seconds)
        info = await zc.async_get_service_info(SERVICE_TYPE, name, int(seconds * 1000))
        if info is None:
            return 1
        print(
            json.dumps(
                {
                    "name": name,
                    "server": info.server,
                    "addresses": info.parsed_addresses(),
                    "port": info.port,
                    "properties": {
                        k.decode(): (v or b"").decode() for k, v in info.properties.items()
                    },
                }
            ),
            flush=True,
        )
        return 0
    except TimeoutError:
        return 1
    finally:
        await browser.async_cancel()
        await zc.async_close()


if __name__ == "__main__":
    sys.exit(asyncio.run(browse(sys.argv[1], float(sys.argv[2]))))
