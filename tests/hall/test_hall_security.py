"""The hall's security (issue 22, items 8 and 10), against the real mosquitto: the broker speaks
TLS with the hall's own CA unless --plain is asked for (with a warning); every client verifies
it and says in one line why a certificate was refused (unknown CA, wrong host name, expired);
the hall's files are the director's alone; the page answers neither other origins nor foreign
Host names."""

from __future__ import annotations

import asyncio
import datetime
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import aiomqtt
import pytest
from cryptography import x509

from cribboard.errors import HallError
from cribboard.hall.broker import Broker
from cribboard.hall.certs import HallCertificates, make_ca, make_server, write_private
from cribboard.hall.page import Page
from cribboard.hall.store import Store
from cribboard.hall.view import HallView
from cribboard.hallwire.tableclient import TableClient
from cribboard.mqtt.address import BrokerAddress, refusal
from hallsupport import HALL, WAIT_S, address, need_mosquitto, running_broker
from support import Spawn

CLI = [sys.executable, "-m", "cribboard.cli"]
UNKNOWN_CA = "signed by an unknown CA"
WRONG_NAME = "not for this host name"
EXPIRED = "it has expired"


@pytest.fixture
def expired_broker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Broker]:
    """A hall's broker whose certificate expired last year (its CA is good)."""
    need_mosquitto()
    broker = Broker.create(tmp_path / "expired", HALL, tables=1, links=True)
    certs = broker.certificates
    ca_key = (broker.state_dir / "ca.key").read_bytes()
    last_year = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=400)
    cert, key = make_server(certs.ca_pem, ca_key, ["127.0.0.1"], not_before=last_year, days=30)
    write_private(certs.server_key, key)
    write_private(certs.server_file, cert)
    with monkeypatch.context() as patched:  # started as it is: not renewed
        patched.setattr(HallCertificates, "ensure", lambda self, names: False)
        broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_broker_is_tls_by_default_and_its_files_are_the_directors_alone(
    tmp_path: Path,
) -> None:
    need_mosquitto()
    os.umask(0o022)  # what most accounts have: new files readable by everyone
    broker = Broker.create(tmp_path / "hall" / "broker", HALL, tables=2, viewer=True)
    assert broker.tls and broker.url.startswith("mqtts://127.0.0.1:")
    with broker:
        conf = (broker.state_dir / "mosquitto.conf").read_text()
        assert f"certfile {broker.state_dir / 'server.pem'}" in conf
        assert f"keyfile {broker.state_dir / 'server.key'}" in conf
        assert _mode(broker.state_dir) == 0o700
        for name in ("passwd", "credentials.json", "ca.key", "server.key", "acl", "hall.json"):
            assert _mode(broker.state_dir / name) == 0o600, name
        assert _mode(broker.state_dir / "mosquitto.log") == 0o600
    with Store.open(tmp_path / "hall" / "hall.sqlite"):
        pass
    assert _mode(tmp_path / "hall" / "hall.sqlite") == 0o600
    # A board has no battery clock (a Pico W starts at 2021-01-01, an ESP32 at 2000-01-01):
    # mbedTLS checks the dates against it, so both certificates are valid from before then.
    for pem in (broker.certificates.ca_pem, broker.certificates.server_file.read_bytes()):
        cert = x509.load_pem_x509_certificate(pem)
        assert cert.not_valid_before_utc.year < 2000
        assert cert.not_valid_after_utc > datetime.datetime.now(datetime.UTC)


def _started(process: subprocess.Popen[str], prefix: str) -> list[str]:
    """hall start's lines up to the first that starts with `prefix` (it stopped: fail)."""
    assert process.stdout is not None
    lines: list[str] = []
    while not (lines and lines[-1].startswith(prefix)):
        line = process.stdout.readline()
        assert line, f"hall start stopped: {lines}"
        lines.append(line)
    return lines


def test_hall_start_is_tls_and_says_how_the_tables_verify_it(tmp_path: Path, spawn: Spawn) -> None:
    need_mosquitto()
    hall_dir = tmp_path / "hall"
    process = spawn(
        [*CLI, "hall", "start", "--dir", str(hall_dir), "--mqtt-host", "127.0.0.1", "--no-page"]
        + ["--tables", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = _started(process, "director: connected")
    finally:
        process.terminate()
        process.wait(WAIT_S)
    ca = hall_dir / "broker" / "ca.pem"
    assert any(line.startswith("broker: mqtts://127.0.0.1:") for line in lines), lines
    assert f"broker: TLS; the tables verify it with the hall's CA: {ca}\n" in lines
    assert any(f"--cafile {ca} --table N" in line for line in lines), lines
    assert "WARNING" not in (process.stderr.read() if process.stderr else "")
    assert _mode(hall_dir) == 0o700 and _mode(hall_dir / "hall.sqlite") == 0o600


def test_plain_only_when_asked_for_and_then_with_a_warning(tmp_path: Path, spawn: Spawn) -> None:
    need_mosquitto()
    hall_dir = tmp_path / "hall"
    process = spawn(
        [*CLI, "hall", "start", "--dir", str(hall_dir), "--mqtt-host", "127.0.0.1", "--plain"]
        + ["--no-page", "--tables", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        warning = process.stderr.readline()
        assert "WARNING: plain MQTT" in warning and "in the clear" in warning
        while not (line := process.stdout.readline()).startswith("broker: mqtt://"):
            assert line, "hall start stopped"
        assert not Broker.open(hall_dir / "broker").tls
        assert not (hall_dir / "broker" / "ca.pem").exists()
    finally:
        process.terminate()
        process.wait(WAIT_S)
    # Stopped while it was starting: no half-made event loop left behind (its finalizer's error,
    # the hall's coroutine never run). (A director cancelled in the middle of its broker
    # connection may still leave aiomqtt's client to a finalizer: not checked here.)
    rest = process.stderr.read()
    assert "BaseEventLoop.__del__" not in rest and "was never awaited" not in rest, rest
    # Made plain, it stays plain; a TLS hall refuses --plain rather than drop its TLS.
    tls_dir = tmp_path / "tls"
    Broker.create(tls_dir / "broker", HALL, tables=1, viewer=True)
    refused = subprocess.run(
        [*CLI, "hall", "start", "--dir", str(tls_dir), "--plain", "--no-page"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "keeps it" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1


async def _refused(client: BrokerAddress) -> str:
    with pytest.raises(aiomqtt.MqttError) as err:
        async with client.client():
            pass
    said = refusal(err.value, client)
    assert said is not None
    return said


async def test_a_refused_certificate_says_why(tmp_path: Path, expired_broker: Broker) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        good = address(broker, "director")
        async with good.client():
            pass  # verified against the hall's CA
        stranger, _ = make_ca("a stranger's CA")
        (tmp_path / "stranger.pem").write_bytes(stranger)
        for client, why in (
            (good.with_login("director", good.password, str(tmp_path / "stranger.pem")), UNKNOWN_CA),
            (BrokerAddress.parse(broker.url, "director", good.password), UNKNOWN_CA),
            (BrokerAddress("localhost", broker.port, True, "director", cafile=good.cafile), WRONG_NAME),
            (address(expired_broker, "link"), EXPIRED),
        ):  # fmt: skip
            said = await _refused(client)
            assert why in said and "\n" not in said, said
        # A table client (serve --broker's) gives up with that line instead of trying for ever.
        table = TableClient(
            BrokerAddress.parse(broker.url, "table-1", broker.credentials("table-1").password),
            HALL,
            1,
            state=lambda: None,
            run=_never,
        )
        with pytest.raises(HallError, match=f"table 1: .*{UNKNOWN_CA}"):
            async with asyncio.timeout(WAIT_S):
                await table.start()


async def _never(command: Any) -> Any:
    raise AssertionError("no command comes")


def _one_line(result: subprocess.CompletedProcess[str], why: str) -> None:
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and why in lines[0], result.stderr


def test_the_command_lines_take_cafile_and_say_why_in_one_line(
    tmp_path: Path, expired_broker: Broker
) -> None:
    with running_broker(tmp_path / "broker", tables=1) as broker:
        ca = str(broker.ca_file)
        # The certificate is refused before any password is sent: any will do.
        env = {
            **os.environ,
            "PASSWORD": "x",
            "SECRET": "the game's secret",
            "XDG_STATE_HOME": str(tmp_path / "state"),
        }
        wrong_host = f"mqtts://localhost:{broker.port}"
        link = [*CLI, "remote", "--game", "g", "--port", "/nonexistent/tty", "--user", "link"]
        link += ["--password-env", "PASSWORD", "--secret-env", "SECRET"]
        runs = (
            (link + ["--broker", broker.url], UNKNOWN_CA),
            (link + ["--broker", wrong_host, "--cafile", ca], WRONG_NAME),
            (
                link + ["--broker", expired_broker.url, "--cafile", str(expired_broker.ca_file)],
                EXPIRED,
            ),
            (
                [*CLI, "hall", "start", "--dir", str(tmp_path / "other"), "--no-page"]
                + ["--broker", wrong_host, "--cafile", ca, "--password-env", "PASSWORD"],
                WRONG_NAME,
            ),
            (
                [*CLI, "hall", "page", "--dir", str(tmp_path / "other2"), "--http-port", "0"]
                + ["--broker", broker.url, "--password-env", "PASSWORD"],
                UNKNOWN_CA,
            ),
        )
        for words, why in runs:
            result = subprocess.run(
                words, capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL
            )
            _one_line(result, why)
        bad = subprocess.run(
            link + ["--broker", f"mqtt://127.0.0.1:{broker.port}", "--cafile", ca],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        _one_line(bad, "--cafile goes with an mqtts:// broker")


async def _get(url: str, **headers: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as response:
        return response.status, await response.json(content_type=None)


@pytest.mark.parametrize("listen", ["127.0.0.1", "0.0.0.0"])
async def test_the_page_follows_the_bridges_origin_and_host_rules(listen: str) -> None:
    async with Page(HallView(HALL), listen, 0) as page:
        api = f"http://127.0.0.1:{page.bound_port}/api/hall"
        status, _ = await _get(api)
        assert status == 200
        status, _ = await _get(api, Origin=f"http://127.0.0.1:{page.bound_port}")
        assert status == 200  # the page's own scripts
        status, body = await _get(api, Origin="http://evil.example")
        assert (status, body["error"]) == (403, "cross_origin")
        status, body = await _get(api, Host=f"evil.example:{page.bound_port}")
        assert (status, body["error"]) == (403, "bad_host")  # DNS rebinding
        status, _ = await _get(api, Host=f"localhost:{page.bound_port}")
        assert status == 200
        status, body = await _get(api, Host=f"192.168.1.10:{page.bound_port}")
        # On the network phones come by address; on loopback nobody should.
        assert status == (200 if listen == "0.0.0.0" else 403)
        ws = f"http://127.0.0.1:{page.bound_port}/api/ws"
        async with aiohttp.ClientSession() as http:
            with pytest.raises(aiohttp.WSServerHandshakeError) as err:
                await http.ws_connect(ws, origin="http://evil.example")
            assert err.value.status == 403
