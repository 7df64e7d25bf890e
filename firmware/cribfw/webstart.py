# Starting the board's own web server (cribfw/webserver.py): main() calls start_web() on a board
# with Wi-Fi (the `network` module passed in: the page over the board's own network, joined or
# opened by cribfw/wifinet.py) and on the virtual board, whose launcher names a loopback port
# (CRIBBOARD_SIM_WEB) and whose network is the host's. Nothing of it is loaded on other boards.

PORT = 80


class HostNet:
    """The virtual board's network: the host's, already up (nothing to join or open)."""

    def __init__(self, ip, port):
        self.config = None
        self.port = port
        self.mode = b"host"
        self.ip = ip
        self.name = b"localhost"
        self.ssid = b""
        self.ap_ssid = b""

    def reconfigure(self, config):
        self.config = config  # (saved by the set-up page; the host's network stays as it is)


def _config():
    """The board's WifiConfig (or an empty one) and whether it is at a club hall's table."""
    from cribfw import hallconfig, wificonfig

    try:
        config = wificonfig.load()
    except ValueError:
        config = None  # unreadable: as none (the set-up page writes a new one)
    if config is None:
        config = wificonfig.WifiConfig()
    hall = None
    try:
        hall = hallconfig.load()
    except ValueError:
        pass
    if config.ssid is None and hall is not None and hall.ssid:
        config.ssid = hall.ssid  # the club hall's network serves the page too
        config.password = hall.wifi_password or ""
    return config, hall is not None


def _sim_address():
    """The virtual board's (host, port) from its launcher, or None."""
    import os

    where = os.getenv("CRIBBOARD_SIM_WEB") if hasattr(os, "getenv") else None
    if not where:
        return None
    host, _, port = where.rpartition(":")
    return host or "127.0.0.1", int(port)


def start_web(app, network=None):
    """Serve the page: over Wi-Fi with `network` (MicroPython's module), else where the virtual
    board's launcher says. Adds the tasks to the app; returns the server, or None (no page)."""
    if network is not None:
        from cribfw.wifinet import WifiNet

        config, hall = _config()
        try:
            net = WifiNet(network, config, hall)
        except (OSError, AttributeError, ValueError):
            return None  # no radio after all
        host, port = "0.0.0.0", PORT
        app.tasks.append(net.run)
    else:
        where = _sim_address()
        if where is None:
            return None
        host, port = where
        net = HostNet(host.encode(), port)
    from cribfw import pagefiles
    from cribfw.webserver import WebServer

    server = WebServer(app.dispatcher, app.ctx.admission, pagefiles.load(), net)
    app.ctx.web = server
    app.ctx.net = net

    async def web_task(app):
        try:
            await server.start(host, port)
        except OSError:
            app.ctx.web = None  # the port is taken, or no network stack: USB and Bluetooth play on

    app.tasks.append(web_task)
    return server
