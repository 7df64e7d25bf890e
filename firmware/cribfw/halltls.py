# TLS for the table client (cribfw/hall.py): the hall's broker proves who it is with a
# certificate its own CA signed (cribboard.hall.certs); the board has that CA from its hall
# configuration and checks the certificate and the host name before umqtt.simple sends the
# password. MicroPython's `tls` module (mbedTLS) does the work.
#
# umqtt.simple wraps its socket itself (`ssl.wrap_socket(sock, server_hostname=...)`): this
# object stands in for the SSLContext there and keeps the plain socket, because the SSL socket
# has no settimeout() and cribfw/boundedsock.py must still bound every read and write.
# The context (the parsed CA) is made once; each connection's TLS session costs heap while it
# lasts (`make bench` prints what the emulated Pico W measures).


class TlsWrapper:
    """Verifies the broker against `ca` (DER bytes). Raises ImportError on a board without
    TLS, OSError (or ValueError) for a CA mbedTLS cannot read."""

    def __init__(self, ca):
        import tls

        # A client context requires the peer's certificate (CERT_REQUIRED) from the start, and
        # then a server_hostname to check it against (umqtt passes the broker's address).
        context = tls.SSLContext(tls.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(ca)  # cadata, positional in MicroPython
        self.context = context
        self.raw = None  # the plain socket under the last connection

    def wrap_socket(self, sock, server_hostname=None):
        # A refused certificate raises here (ValueError naming why, or OSError).
        self.raw = sock
        return self.context.wrap_socket(sock, server_hostname=server_hostname)
