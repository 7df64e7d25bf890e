"""The hall's own certificate authority: the broker speaks TLS with a certificate it signed, and
every client (director, tables, boards, links) verifies the broker against it.

In the broker's state directory (the director's alone, 0700)::

    ca.pem / ca.key        the hall's CA (ECDSA P-256), valid CA_DAYS; ca.key never leaves here
    server.pem / server.key  the broker's certificate for the names it is reached by

    certs = HallCertificates(state_dir)
    certs.ensure(["127.0.0.1", "192.168.1.10", "clubpc"])  # the CA once, the server when stale
    certs.ca_pem, certs.ca_der   # what `cribboard deploy --cafile` gives the boards

ECDSA P-256 rather than RSA: the board's mbedTLS verifies a P-256 signature in a fraction of
the time and heap an RSA-2048 one needs, and the certificates are a third of the size.

Both are valid from 1999 (VALID_FROM): a board has no battery clock, and mbedTLS checks the
dates against the clock it has (a Pico W starts at 2021-01-01, an ESP32 at 2000-01-01, until
something sets it). So a board accepts them from power-on; it cannot tell an expired one,
which is why `hall start` renews the broker's a month before it expires.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Iterable
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from cribboard.errors import HallError
from cribboard.i18n import _

CA_DAYS = 3650
CA_WARNING_DAYS = 90  # `hall start` warns this long before the CA expires
SERVER_DAYS = 825  # what browsers and most clients still accept for a server certificate
CA_FILE = "ca.pem"
CA_KEY = "ca.key"
SERVER_FILE = "server.pem"
SERVER_KEY = "server.key"


VALID_FROM = datetime.datetime(1999, 1, 1, tzinfo=datetime.UTC)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _san(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def make_ca(common_name: str, *, days: int = CA_DAYS) -> tuple[bytes, bytes]:
    """A new CA: (certificate PEM, private key PEM)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(VALID_FROM)
        .not_valid_after(_now() + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def make_server(
    ca_pem: bytes,
    ca_key_pem: bytes,
    names: Iterable[str],
    *,
    not_before: datetime.datetime | None = None,
    days: int = SERVER_DAYS,
) -> tuple[bytes, bytes]:
    """A server certificate signed by the CA for `names` (host names and IP addresses):
    (certificate PEM, private key PEM), valid from VALID_FROM (or `not_before`) until `days`
    from now (or from `not_before`: a test makes one that has expired)."""
    ca = x509.load_pem_x509_certificate(ca_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    chosen = list(dict.fromkeys(names))
    key = ec.generate_private_key(ec.SECP256R1())
    start = VALID_FROM if not_before is None else not_before
    until = (_now() if not_before is None else not_before) + datetime.timedelta(days=days)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, chosen[0])]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(until)
        .add_extension(x509.SubjectAlternativeName([_san(n) for n in chosen]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def server_names(cert_pem: bytes) -> set[str]:
    """The names (DNS and IP) a certificate is for."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {str(n) for n in san.get_values_for_type(x509.DNSName)} | {
        str(a) for a in san.get_values_for_type(x509.IPAddress)
    }


def pem_to_der(pem: bytes) -> bytes:
    """A PEM certificate's DER bytes (what a board's mbedTLS loads with the least heap)."""
    return x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)


def write_private(path: Path, data: bytes) -> None:
    """Write a file only its owner can read or write (0600), whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)


class CAExpired(HallError):
    """The hall's CA has expired: no client can verify the broker until it is renewed."""


def renew_command() -> str:
    """What renews a hall's CA."""
    return "cribboard hall start --renew-ca"


def ca_expired_words(ca_file: Path, when: datetime.datetime) -> str:
    return _(
        "the hall's CA (%(ca)s) expired on %(date)s: no table can verify the broker any more; "
        "`%(command)s` makes a new one, then give every table the new ca.pem (`cribboard "
        "deploy --cafile`, `serve --broker --cafile`)",
        ca=ca_file,
        date=when.date().isoformat(),
        command=renew_command(),
    )


class HallCertificates:
    """The CA and the server certificate in one state directory (see the module's docstring)."""

    def __init__(self, state_dir: Path, hall: str = "club") -> None:
        self.state_dir = state_dir
        self.hall = hall

    @property
    def ca_file(self) -> Path:
        return self.state_dir / CA_FILE

    @property
    def server_file(self) -> Path:
        return self.state_dir / SERVER_FILE

    @property
    def server_key(self) -> Path:
        return self.state_dir / SERVER_KEY

    @property
    def ca_pem(self) -> bytes:
        return self.ca_file.read_bytes()

    @property
    def ca_der(self) -> bytes:
        return pem_to_der(self.ca_pem)

    @property
    def ca_expires(self) -> datetime.datetime:
        """When the hall's CA expires."""
        return x509.load_pem_x509_certificate(self.ca_pem).not_valid_after_utc

    def renew_ca(self) -> None:
        """A new CA (the tables need its ca.pem), and a new server certificate signed by it at
        the next :meth:`ensure`."""
        cert, key = make_ca(f"cribboard hall {self.hall} CA")
        write_private(self.state_dir / CA_KEY, key)
        write_private(self.ca_file, cert)
        self.server_file.unlink(missing_ok=True)

    def ensure(self, names: Iterable[str]) -> bool:
        """Make the CA if there is none; (re)make the server certificate when it is missing,
        expires within a month, or lacks one of `names`. True when it made a new one.
        CAExpired (saying what to run) when the CA has expired."""
        wanted = list(dict.fromkeys(names))
        if not self.ca_file.exists():
            cert, key = make_ca(f"cribboard hall {self.hall} CA")
            write_private(self.state_dir / CA_KEY, key)
            write_private(self.ca_file, cert)
        ca_expires = self.ca_expires
        if ca_expires <= _now():
            raise CAExpired(ca_expired_words(self.ca_file, ca_expires))
        if self.server_file.exists() and self.server_key.exists():
            current = self.server_file.read_bytes()
            expires = x509.load_pem_x509_certificate(current).not_valid_after_utc
            fresh = expires - _now() > datetime.timedelta(days=30)
            if fresh and set(wanted) <= server_names(current):
                return False
            wanted = list(dict.fromkeys(wanted + sorted(server_names(current))))
        # Never longer than the CA that signs it: past the CA's date nobody could verify it.
        days = min(SERVER_DAYS, max(1, (ca_expires - _now()).days))
        cert, key = make_server(
            self.ca_pem, (self.state_dir / CA_KEY).read_bytes(), wanted, days=days
        )
        write_private(self.server_key, key)
        write_private(self.server_file, cert)
        return True
