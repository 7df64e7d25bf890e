# Starting a board's table client for the club hall (cribfw/hall.py) from its configuration
# (/hall.json, cribfw/hallconfig.py): main() calls join_hall() only when that file exists, so a
# board that plays alone loads none of it.


def add_hall(app, config, memory_path=None, wlan=None):
    """Report to the club hall over MQTT: `config` a cribfw.hallconfig.HallConfig;
    `memory_path` the file keeping the last command run (None: in memory only); `wlan` the
    board's network.WLAN station interface, joined to the config's Wi-Fi (None: the board is on
    a network already, as the virtual board is). Adds the client's task to the app and returns
    the client (cribfw.hall.HallClient). Raises ImportError on a board without sockets."""
    from cribfw.hall import HallClient
    from cribfw.hallmemory import CommandMemory

    wifi = None
    if wlan is not None and config.ssid:
        from cribfw.wifi import Wifi

        wifi = Wifi(wlan, config.ssid, config.wifi_password or "")
    app.hall = HallClient(app.ctx, config, CommandMemory(memory_path), wifi)
    app.tasks.append(app.hall.run)
    return app.hall


def join_hall(app):
    """main()'s part: report to the hall the board's configuration names, joining its Wi-Fi on
    a board that has one. A board whose configuration is unreadable, or that has no sockets,
    plays alone."""
    from cribfw import hallconfig

    try:
        config = hallconfig.load()
    except ValueError:
        return
    if config is None:
        return
    wlan = None
    if config.ssid and app.ctx.net is None:  # (a board serving its page joins in wifinet.py)
        try:
            import network

            wlan = network.WLAN(network.STA_IF)
        except (ImportError, AttributeError, OSError):
            wlan = None
    try:
        add_hall(app, config, "/hall-last.dat", wlan)
    except (ImportError, ValueError, OSError):
        pass  # no sockets (or no TLS), or a CA mbedTLS cannot read: the board plays alone
