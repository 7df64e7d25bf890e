"""The bridge on a local network, as a phone at the table finds it: `cribboard serve` off
localhost announces itself by mDNS / DNS-SD (seen by a real zeroconf browser) and prints the
page's address as a QR code (decoded back by a real QR reader).

Everything happens inside a network namespace of the test's own (`ip netns`, as root), with a
veth pair for a local network: nothing is sent onto this machine's real network."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cribboard.bridge.qr import QUIET_ZONE, modules
from support import Spawn

ROOT = Path(__file__).resolve().parents[2]
BROWSE = ROOT / "tests" / "tools" / "mdns_browse.py"
ADDRESS = "10.77.0.1"
TOKEN = "lan-t0ken-for-phones"
WAIT_S = 30  # a bound for a failure; every step waits for its event

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None,
    reason="needs root and iproute2's ip for a network namespace of the test's own",
)

_HALF = {"█": (True, True), "▀": (True, False), "▄": (False, True), " ": (False, False)}


def _ip(*words: str) -> None:
    subprocess.run(["ip", *words], check=True, capture_output=True, timeout=WAIT_S)


@pytest.fixture
def netns() -> Iterator[str]:
    """A network namespace with loopback and one veth link at 10.77.0.1/24 (multicast on)."""
    name = f"cribtest-{uuid.uuid4().hex[:8]}"
    _ip("netns", "add", name)
    try:
        _ip("-n", name, "link", "set", "lo", "up")
        _ip("-n", name, "link", "add", "v0", "type", "veth", "peer", "name", "v1")
        _ip("-n", name, "addr", "add", f"{ADDRESS}/24", "dev", "v0")
        _ip("-n", name, "link", "set", "v0", "up")
        _ip("-n", name, "link", "set", "v1", "up")
        _ip("-n", name, "route", "add", "default", "via", "10.77.0.2", "dev", "v0")
        yield name
    finally:
        _ip("netns", "del", name)


def _matrix(lines: list[str]) -> list[list[bool]]:
    """The printed half blocks back into modules (True = light)."""
    rows: list[list[bool]] = []
    for line in lines:
        pairs = [_HALF[char] for char in line]
        rows.append([top for top, _ in pairs])
        rows.append([bottom for _, bottom in pairs])
    return rows


def _decode(rows: list[list[bool]]) -> list[str]:
    """Read the modules with a real QR decoder (zxing-cpp), drawn 4 pixels a module."""
    zxingcpp = pytest.importorskip("zxingcpp")
    from PIL import Image

    scale = 4
    image = Image.new("L", (len(rows[0]) * scale, len(rows) * scale), 255)
    for y, row in enumerate(rows):
        for x, light in enumerate(row):
            if not light:
                image.paste(0, (x * scale, y * scale, (x + 1) * scale, (y + 1) * scale))
    return [result.text for result in zxingcpp.read_barcodes(image)]


def test_qr_modules_round_trip() -> None:
    """The plain half blocks hold the code's modules, quiet zone included, and decode."""
    from cribboard.bridge.qr import terminal_text

    url = "http://192.168.1.20:8321/?token=abc"
    rows = _matrix(terminal_text(url, color=False).splitlines())
    wanted = modules(url)
    assert rows[: len(wanted)] == wanted
    assert all(rows[i] == [True] * len(rows[0]) for i in range(QUIET_ZONE))
    assert _decode(rows) == [url]


def test_serve_off_localhost_is_announced_and_prints_a_qr_code(
    netns: str, tmp_path: Path, spawn: Spawn
) -> None:
    env = dict(os.environ)
    env.pop("CRIBBOARD_PORT", None)
    env.pop("CRIBBOARD_TOKEN", None)
    serve = spawn(
        ["ip", "netns", "exec", netns, sys.executable, "-m", "cribboard.cli", "serve"]
        + ["--virtual", "--http-host", ADDRESS, "--http-port", "0", "--token", TOKEN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert serve.stdout is not None
        lines: list[str] = []
        while not lines or not lines[-1].startswith("on this network also as "):
            line = serve.stdout.readline()
            assert line, f"serve ended: {lines} {serve.stderr.read() if serve.stderr else ''}"
            lines.append(line.rstrip("\n"))
        phone = next(line for line in lines if line.startswith("on a phone on this network: "))
        phone_url = phone.split(": ", 1)[1]
        port = int(phone_url.split(":")[2].split("/")[0])
        assert phone_url == f"http://{ADDRESS}:{port}/?token={TOKEN}"
        assert lines[-1] == f"on this network also as http://cribboard.local:{port}/?token={TOKEN}"

        # The QR code says the phone's address, token included.
        start = lines.index("scan with a phone's camera:") + 1
        end = lines.index("", start)
        assert _decode(_matrix(lines[start:end])) == [phone_url]

        # A real mDNS browser on the same network finds the bridge, by name and address.
        browsed = subprocess.run(
            ["ip", "netns", "exec", netns, sys.executable, str(BROWSE), ADDRESS, str(WAIT_S)],
            capture_output=True,
            text=True,
            timeout=WAIT_S * 2,
        )
        assert browsed.returncode == 0, browsed.stderr
        service = json.loads(browsed.stdout)
        assert service["name"] == "Cribboard bridge._http._tcp.local."
        assert service["server"] == "cribboard.local."
        assert service["addresses"] == [ADDRESS] and service["port"] == port
        assert service["properties"] == {"path": "/", "api": "/openapi.json"}
        assert TOKEN not in browsed.stdout  # the token never goes on the air

        # The page answers by that name (the token still required).
        if shutil.which("curl"):
            got = subprocess.run(
                ["ip", "netns", "exec", netns, "curl", "-s", "-w", "%{http_code}"]
                + ["--resolve", f"cribboard.local:{port}:{ADDRESS}"]
                + ["-o", "/dev/null", f"http://cribboard.local:{port}/api/state"]
                + ["-o", "/dev/null", f"http://cribboard.local:{port}/api/state?token={TOKEN}"],
                capture_output=True,
                text=True,
                timeout=WAIT_S,
            )
            assert got.stdout == "401200"
    finally:
        serve.terminate()
        serve.communicate(timeout=WAIT_S)
    assert serve.returncode == 0
