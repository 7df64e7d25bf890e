"""A private Eclipse Mosquitto for one hall: generated config, per-table credentials, an ACL.

Everything lives in one state directory::

    hall.json        the hall's name, table count, host, port and TLS (kept for every start)
    mosquitto.conf   the generated config (listener, TLS, persistence, password file, ACL)
    passwd           the users, hashed by mosquitto_passwd
    acl              who may publish and read what (see acl_text)
    credentials.json the plain passwords, to hand to the tables (mode 0600)
    data/            the broker's persistence: retained messages, queued QoS 1 messages
    mosquitto.log    the broker's log
    ca.pem, ca.key   the hall's private CA (cribboard.hall.certs); ca.pem goes to the tables
    server.pem, server.key  the broker's certificate, signed by the CA

The listener speaks TLS unless the hall was made with ``tls=False`` (``hall start --plain``):
passwords then cross the network in the clear. The directory is the director's alone (0700).

    broker = Broker.create(state_dir, "club", tables=8)   # free port on 127.0.0.1
    broker.start()
    ... broker.port, broker.credentials("table-3") ...
    broker.restart()                                      # same port, same state
    broker.stop()

`Broker.open(state_dir)` takes up an existing state directory (after a restart of the director).
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from cribboard.errors import HallError
from cribboard.fdlimit import raise_fd_limit
from cribboard.hall import certs
from cribboard.hallwire import topics
from cribboard.hallwire.messages import MAX_MESSAGE_BYTES
from cribboard.mqtt.roots import LINK_ROOT, LINK_USER

INSTALL_HINT = (
    "install Eclipse Mosquitto: `sudo apt-get install mosquitto` (Debian, Ubuntu; or `make "
    "mosquitto`), `brew install mosquitto` (macOS), or name the executable with "
    "CRIBBOARD_MOSQUITTO"
)
# Debian installs the broker in /usr/sbin, which is not on every user's PATH.
_SEARCH_DIRS = ("/usr/sbin", "/usr/local/sbin", "/opt/homebrew/sbin")
# How often the broker writes its in-memory state (retained, queued) to data/ while running; it
# always writes it on a clean stop. A broker that crashes loses at most this much: the tables
# republish their state when they reconnect.
AUTOSAVE_S = 10
# What a stranger on the club's network can make the broker hold (docs/mqtt.md, "The broker",
# says why each is what it is):
# - a packet: the largest message (a large hall's standings) with its topic and header. The
#   broker refuses a larger one from its length, before reading it: a CONNECT announcing 200 MiB
#   (no password needed) or a table's 100 MiB PUBLISH costs nothing.
MAX_PACKET_BYTES = MAX_MESSAGE_BYTES + 1024
# - connections: an idle TLS connection costs the broker about 42 KiB until it says something
#   (mosquitto drops one that sends no CONNECT within 90 s); this many at most, and never more
#   than its descriptors allow.
MAX_CONNECTIONS = 4096
_RESERVED_FDS = 128  # the broker's own files: its listener, log, persistence, passwords
# - the messages queued for one client while it is away (only the director's queue grows: it
#   reads every table's events; a hall of 200 tables plays a few thousand an hour).
MAX_QUEUED_MESSAGES = 100_000
MAX_QUEUED_BYTES = 64 * 1024 * 1024
# - sessions of clients that do not come back (a remote game's clients keep none; a table or
#   the director that is away longer gets its commands again when it is back).
SESSION_EXPIRY = "14d"
# - the broker's heap as a whole: what no client, nor all of them together, can go past.
MEMORY_LIMIT = 512 * 1024 * 1024
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
_POLL_S = 0.02


class MosquittoNotFound(HallError):
    """No mosquitto executable (or no mosquitto_passwd beside it)."""


class BrokerError(HallError):
    """The broker would not start, or its state directory is unusable."""


@dataclass(frozen=True)
class Credentials:
    """A broker user: give these to a table client (or the director, a viewer)."""

    username: str
    password: str


def find_executable(name: str) -> str:
    """The path of `name` (``mosquitto``, ``mosquitto_passwd``): $CRIBBOARD_MOSQUITTO's
    directory first, then PATH, then the sbin directories; MosquittoNotFound otherwise."""
    named = os.environ.get("CRIBBOARD_MOSQUITTO")
    if named:
        candidate = Path(named).parent / name if name != "mosquitto" else Path(named)
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            raise MosquittoNotFound(
                f"{name} not found at {candidate} (from CRIBBOARD_MOSQUITTO): {INSTALL_HINT}"
            )
        return str(candidate)
    found = shutil.which(name) or shutil.which(name, path=os.pathsep.join(_SEARCH_DIRS))
    if found is None:
        raise MosquittoNotFound(f"{name} not found: {INSTALL_HINT}")
    return found


def free_port(host: str) -> int:
    """A TCP port free on `host` right now."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port: int = sock.getsockname()[1]
            return port
    except OSError as err:
        raise BrokerError(f"cannot listen on {host}: {err.strerror or err}")


def acl_text(hall: str, tables: int, *, viewer: bool, links: bool = False) -> str:
    """The ACL: a table publishes only under its own topics and reads only its own commands;
    the director reads the hall and alone publishes commands, standings and rounds; the
    viewer reads the hall; the user ``link`` (`links`) reads and writes remote games
    (``cribboard remote``). Anonymous clients get nothing (and are refused at connect)."""
    prefix = topics.hall_prefix(hall)
    lines = [
        f"# Generated by cribboard for hall {hall}: {tables} tables.",
        f"user {topics.DIRECTOR_USER}",
        f"topic read {prefix}/#",
        f"topic write {topics.table_topic(hall, '+', topics.CMD)}",
    ]
    lines += [f"topic write {topics.hall_topic(hall, leaf)}" for leaf in topics.HALL_LEAVES]
    if viewer:
        lines += [f"user {topics.VIEWER_USER}", f"topic read {prefix}/#"]
    if links:
        lines += [f"user {LINK_USER}", f"topic readwrite {LINK_ROOT}/#"]
    for table in range(1, tables + 1):
        lines.append(f"user {topics.table_user(table)}")
        lines += [
            f"topic write {topics.table_topic(hall, table, leaf)}"
            for leaf in topics.TABLE_PUBLISHES
        ]
        lines.append(f"topic read {topics.table_topic(hall, table, topics.CMD)}")
    return "\n".join(lines) + "\n"


def tls_lines(state_dir: Path) -> list[str]:
    """The listener's TLS settings: the hall's CA and the broker's certificate (TLS 1.2 or
    later; no client certificates, the clients log in with passwords)."""
    return [
        f"cafile {state_dir / certs.CA_FILE}",
        f"certfile {state_dir / certs.SERVER_FILE}",
        f"keyfile {state_dir / certs.SERVER_KEY}",
        "tls_version tlsv1.2",
        "require_certificate false",
    ]


def max_connections(fd_limit: int) -> int:
    """The connections the broker takes at most, with `fd_limit` descriptors."""
    return max(64, min(MAX_CONNECTIONS, fd_limit - _RESERVED_FDS))


def config_text(
    state_dir: Path,
    host: str,
    port: int,
    *,
    tls: bool = True,
    links: bool = False,
    fd_limit: int = 1024,
    queued_messages: int = MAX_QUEUED_MESSAGES,
) -> str:
    """The broker's mosquitto.conf for a state directory. `links`: it has the user ``link``,
    which every end of every remote game shares, so client ids cannot be tied to users.
    `fd_limit`: the descriptors the broker may hold (its connections stay below).
    `queued_messages`: the most queued for one client."""
    lines = [
        "# Generated by cribboard (cribboard.hall.broker): regenerated on every start.",
        f"listener {port} {host}",
        f"max_connections {max_connections(fd_limit)}",
        *(tls_lines(state_dir) if tls else []),
        "allow_anonymous false",
        f"password_file {state_dir / 'passwd'}",
        f"acl_file {state_dir / 'acl'}",
        "persistence true",
        f"persistence_location {state_dir / 'data'}/",
        f"autosave_interval {AUTOSAVE_S}",
        # Deliver each small message at once (a board's umqtt cannot set it on its side):
        # Nagle's algorithm would hold a state behind an unacknowledged one for ~40 ms.
        "set_tcp_nodelay true",
        # No packet above this is read (a table's are a few hundred bytes; the director's
        # round and standings of a large hall fit); its sender is disconnected.
        f"max_packet_size {MAX_PACKET_BYTES}",
        f"max_queued_messages {queued_messages}",
        f"max_queued_bytes {MAX_QUEUED_BYTES}",
        f"persistent_client_expiration {SESSION_EXPIRY}",
        f"memory_limit {MEMORY_LIMIT}",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
        "log_type notice",
        "log_type information",
        "connection_messages true",
        "log_timestamp_format %Y-%m-%dT%H:%M:%S",
    ]
    if not links:
        # A client's id is its user name: nobody can take a table's or the director's id and
        # knock it off the broker.
        lines.append("use_username_as_clientid true")
    if os.getuid() == 0:
        # Started as root, mosquitto drops to the user "mosquitto", which cannot write here.
        lines.append(f"user {pwd.getpwuid(os.getuid()).pw_name}")
    return "\n".join(lines) + "\n"


class Broker:
    """A mosquitto process for one hall, from a state directory (see the module's docstring)."""

    def __init__(self, state_dir: Path) -> None:
        """Take up a state directory made by :meth:`create` (use :meth:`open`)."""
        self.state_dir = state_dir
        try:
            settings = json.loads((state_dir / "hall.json").read_text())
            self.hall: str = topics.check_hall(settings["hall"])
            self.tables: int = int(settings["tables"])
            self.host: str = str(settings["host"])
            self.port: int = int(settings["port"])
            self.tls: bool = bool(settings.get("tls", False))
            self.queued_messages = int(settings.get("queued_messages", MAX_QUEUED_MESSAGES))
            self._credentials: dict[str, str] = json.loads(
                (state_dir / "credentials.json").read_text()
            )
        except (OSError, ValueError, KeyError) as err:
            raise BrokerError(f"{state_dir} is not a hall broker's state directory: {err}")
        self._process: subprocess.Popen[bytes] | None = None

    @classmethod
    def create(
        cls,
        state_dir: Path,
        hall: str,
        tables: int,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        viewer: bool = False,
        links: bool = False,
        tls: bool = True,
        queued_messages: int = MAX_QUEUED_MESSAGES,
    ) -> Broker:
        """Make a new state directory: users `director`, `table-1`..`table-N` (and `viewer`,
        and `link` for remote games) with random passwords, the ACL, the config. `port` None: a port free now on `host`
        (kept for every later start). `host` ``0.0.0.0`` listens on every interface. `tls`
        False: a plain listener (passwords in the clear; only when asked for). `queued_messages`: the
        most it queues for one client away (smaller only to show the limit)."""
        topics.check_hall(hall)
        if tables < 1 or tables > topics.MAX_TABLES:
            raise BrokerError(f"a hall has 1..{topics.MAX_TABLES} tables, not {tables}")
        passwd_tool = find_executable("mosquitto_passwd")
        private_dir(state_dir)
        if (state_dir / "hall.json").exists():
            raise BrokerError(f"{state_dir} already holds a hall: open it instead")
        chosen = free_port(host) if port is None else port
        (state_dir / "data").mkdir(exist_ok=True)
        users = [topics.DIRECTOR_USER] + [topics.table_user(n) for n in range(1, tables + 1)]
        if viewer:
            users.append(topics.VIEWER_USER)
        if links:
            users.append(LINK_USER)
        credentials = {user: secrets.token_urlsafe(18) for user in users}
        _write_private(state_dir / "credentials.json", json.dumps(credentials, indent=1) + "\n")
        # Plain "user:password" lines, then hashed in place (PBKDF2-SHA512) by the broker's tool.
        passwd = state_dir / "passwd"
        _write_private(passwd, "".join(f"{u}:{p}\n" for u, p in credentials.items()))
        done = subprocess.run([passwd_tool, "-U", str(passwd)], capture_output=True, text=True)
        if done.returncode != 0:
            passwd.unlink()
            raise BrokerError(f"mosquitto_passwd failed: {done.stderr.strip() or done.stdout}")
        _write_private(state_dir / "acl", acl_text(hall, tables, viewer=viewer, links=links))
        settings = {"hall": hall, "tables": tables, "host": host, "port": chosen, "tls": tls}
        if queued_messages != MAX_QUEUED_MESSAGES:
            settings["queued_messages"] = queued_messages  # (a test's smaller queue)
        _write_private(state_dir / "hall.json", json.dumps(settings, indent=1) + "\n")
        made = cls(state_dir)
        if tls:
            made.certificates.ensure(made.server_names())
        return made

    @classmethod
    def open(cls, state_dir: Path) -> Broker:
        """Take up an existing state directory (same hall, port, users, retained messages)."""
        return cls(state_dir)

    def credentials(self, username: str) -> Credentials:
        """The user's name and password (``director``, ``table-N``, ``viewer``)."""
        try:
            return Credentials(username, self._credentials[username])
        except KeyError:
            raise BrokerError(f"no broker user {username!r} in this hall") from None

    @property
    def certificates(self) -> certs.HallCertificates:
        """The hall's CA and the broker's certificate (in the state directory)."""
        return certs.HallCertificates(self.state_dir, self.hall)

    @property
    def ca_file(self) -> Path | None:
        """The CA file the clients verify the broker with; None for a plain broker."""
        return self.certificates.ca_file if self.tls else None

    @property
    def url(self) -> str:
        """``mqtts://HOST:PORT`` (``mqtt://`` for a plain broker) as this computer reaches it."""
        host = "127.0.0.1" if self.host == "0.0.0.0" else "::1" if self.host == "::" else self.host
        host = f"[{host}]" if ":" in host else host
        return f"{'mqtts' if self.tls else 'mqtt'}://{host}:{self.port}"

    def server_names(self) -> list[str]:
        """The names the tables may reach the broker by: its address, or for every interface
        the loopback names, this computer's LAN address and host name."""
        if self.host not in ("0.0.0.0", "::"):
            return [self.host]
        from cribboard.web.addresses import lan_address

        names = ["127.0.0.1", "::1", "localhost"]
        own = socket.gethostname()
        if own.isascii() and own.replace("-", "").replace(".", "").isalnum():
            names.append(own)  # a name a certificate can hold
        lan = lan_address()
        return names if lan is None else [lan, *names]

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        """Start the broker and wait until it accepts connections; BrokerError with the log's
        last lines if it exits instead (a port taken, a bad file)."""
        if self.running:
            return
        executable = find_executable("mosquitto")
        if self._accepts():
            raise BrokerError(f"{self.host}:{self.port} is in use: is this hall's broker running?")
        private_dir(self.state_dir)
        if self.tls:
            # A new LAN address since the last start: a new server certificate, same CA.
            self.certificates.ensure(self.server_names())
        conf = self.state_dir / "mosquitto.conf"
        links = LINK_USER in self._credentials
        # As many descriptors as the system allows (inherited): idle connections from
        # strangers must not run it out of them.
        limit = raise_fd_limit()
        _write_private(
            conf,
            config_text(
                self.state_dir,
                self.host,
                self.port,
                tls=self.tls,
                links=links,
                fd_limit=limit,
                queued_messages=self.queued_messages,
            ),
        )
        log = self.state_dir / "mosquitto.log"
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "ab") as log_file:
            offset = log_file.tell()
            self._process = subprocess.Popen(
                [executable, "-c", str(conf)],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,  # a Ctrl-C in the director's terminal is the director's
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._accepts():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = log.read_bytes()[offset:].decode(errors="replace").strip()
                raise BrokerError(
                    f"mosquitto did not start on {self.host}:{self.port}: "
                    + (tail.splitlines()[-1] if tail else "no message (see mosquitto.log)")
                )
            time.sleep(_POLL_S)

    def stop(self) -> None:
        """Stop the broker cleanly (it saves retained and queued messages to data/)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self) -> None:
        """Stop and start again: same port, same users, retained messages kept."""
        self.stop()
        self.start()

    def __enter__(self) -> Broker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accepts(self) -> bool:
        host = "127.0.0.1" if self.host == "0.0.0.0" else "::1" if self.host == "::" else self.host
        try:
            with socket.create_connection((host, self.port), timeout=0.5):
                return True
        except OSError:
            return False


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (passwords)."""
    certs.write_private(path, text.encode())


def private_dir(path: Path) -> None:
    """Make `path` (and missing parents) a directory only its owner can enter (0700)."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
