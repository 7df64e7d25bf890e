# The set-up page: give the board a Wi-Fi network from a phone, with nothing else. Plain HTML with
# a form, no script, short enough for a phone's screen and free to scroll (a captive-portal
# sign-in window, where Android's cannot scroll pages that fix their height, as WLED's), with the
# page's fixed address for those that open the full browser instead.
#
# Saving a network is a change to the board, so it follows the admission rule (cribfw/admission.py):
# the form's network waits, the board calls for a decision (its win hole double-blinks), and a
# tap of the deal button within the window saves it; then the board joins it (cribfw/wifinet.py).
# In access-point mode every other site a phone asks for (its captive-portal check) is sent here.

from cribfw import wificonfig

_STYLE = (
    b"<style>body{font:18px/1.5 sans-serif;margin:1em;max-width:30em}"
    b"input,button{font:inherit;display:block;width:100%;box-sizing:border-box;margin:.3em 0 1em}"
    b"button{padding:.5em}p.note{color:#444}</style>"
)


class Pending:
    """A network from the form, waiting for the deal button: admission's candidate "link"."""

    def __init__(self, config):
        self.config = config
        self.trusted = False  # admitted: a tap of deal saves it
        self.address = None  # (nothing for the admission to remember)


def escape(text):
    return (
        text.replace(b"&", b"&amp;")
        .replace(b"<", b"&lt;")
        .replace(b">", b"&gt;")
        .replace(b'"', b"&quot;")
    )


def unquote(value):
    """A form field's bytes: '+' is a space, %XX a byte; ValueError on a bad escape."""
    value = value.replace(b"+", b" ")
    if b"%" not in value:
        return value
    out = bytearray()
    parts = value.split(b"%")
    out += parts[0]
    for part in parts[1:]:
        if len(part) < 2:
            raise ValueError("bad escape")
        out.append(int(part[:2], 16))
        out += part[2:]
    return bytes(out)


def form_fields(body):
    fields = {}
    for pair in body.split(b"&"):
        key, _, value = pair.partition(b"=")
        fields[key] = unquote(value)
    return fields


class Setup:
    """The set-up page's routes for `net` (cribfw.wifinet.WifiNet) with `admission` (the board's)."""

    def __init__(self, net, admission):
        self.net = net
        self.admission = admission
        self.pending = None
        self.message = b""

    def route(self, req):
        """(status, content type, body, extra headers) for a request the set-up page answers,
        or None."""
        net = self.net
        path = req.path()
        if net.mode == b"ap" and not self._ours(req.headers.get(b"host")):
            # A phone's captive-portal check (or any other site): the set-up page.
            where = _base(net) + b"setup"
            return 302, b"text/plain", b"", b"Location: " + where + b"\r\n"
        if path != b"/setup":
            return None
        if req.method == b"POST":
            self._post(req.body)
        return 200, b"text/html; charset=utf-8", self.page(), b"Cache-Control: no-store\r\n"

    def _ours(self, host):
        if host is None:
            return True
        host = host.split(b":")[0].lower()
        net = self.net
        return host == net.ip or host == net.name + b".local" or host == net.name

    def _post(self, body):
        try:
            fields = form_fields(body)
            ssid = wificonfig.check_ssid(fields.get(b"ssid", b"").decode())
            password = wificonfig.check_password(fields.get(b"password", b"").decode())
        except (ValueError, UnicodeError) as err:
            self.message = escape(str(err).encode())
            return
        old = self.net.config or wificonfig.WifiConfig()
        config = wificonfig.WifiConfig(ssid, password, old.name, old.ap_password)
        self.pending = Pending(config)
        self.admission.request(self.pending)
        self.message = b""

    def tick(self):
        """Saves the pending network once the deal button admitted it (the server's watch calls
        this twice a second); forgets it when the call for a decision ran out."""
        pending = self.pending
        if pending is None:
            return
        if pending.trusted:
            self.pending = None
            try:
                wificonfig.save(pending.config)
            except OSError:
                self.message = b"The board could not save the network: try again."
                return
            self.message = b"Saved. The board joins " + escape((pending.config.ssid or "").encode())
            self.message += b": connect this phone to that network and open http://"
            self.message += self.net.name + b".local/"
            self.net.reconfigure(pending.config)
        elif not self.admission.calling() and self.admission.candidate is not pending:
            self.pending = None
            self.message = b"Not saved: the deal button was not tapped in time."

    def page(self):
        net = self.net
        base = _base(net)
        if net.mode == b"sta":
            where = b"on the network " + escape(net.ssid) + b", at http://" + net.name
            where += b".local/ (" + base + b")"
        elif net.mode == b"ap":
            where = b"its own network " + escape(net.ap_ssid) + b", at " + base
        elif net.mode == b"host":
            where = b"on this computer's network, at " + base  # (the virtual board)
        else:
            where = b"joining the network " + escape(net.ssid)
        body = b"<!doctype html><html lang=en><head><meta charset=utf-8>"
        body += b'<meta name=viewport content="width=device-width,initial-scale=1">'
        if self.pending is not None:
            body += b'<meta http-equiv=refresh content="2">'
        body += b"<title>cribboard set-up</title>" + _STYLE + b"</head><body><h1>cribboard</h1>"
        body += b"<p>The board is " + where + b".</p>"
        if self.pending is not None:
            body += b"<p><strong>Tap the deal button on the board</strong> (its win hole blinks)"
            body += b" within 30 seconds to save the network.</p>"
        elif self.message:
            body += b"<p><strong>" + self.message + b"</strong></p>"
        body += b'<p><a href="/">Score on the board</a></p>'
        body += b"<h2>Join a Wi-Fi network</h2><form method=post action=/setup>"
        body += b"<label>Network name<input name=ssid maxlength=32 required></label>"
        body += b"<label>Password<input name=password type=password maxlength=63></label>"
        body += b"<button>Save</button></form>"
        body += b"<p class=note>If this window cannot scroll or type, open " + base
        body += b"setup in the phone's browser instead.</p></body></html>"
        return body


def _base(net):
    """The page's address: b"http://192.168.4.1/" (with the port when it is not 80)."""
    base = b"http://" + net.ip
    if net.port != 80:
        base += b":%d" % net.port
    return base + b"/"
