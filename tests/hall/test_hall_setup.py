"""`cribboard deploy --broker ... --table N [--hall H] [--user U] [--wifi SSID]`: the board's hall
configuration (cribboard.hall.tablesetup) is checked before anything is copied, takes its passwords
from the environment or a prompt that does not echo, and never shows them; the firmware reads
what the host writes (cribfw/hallconfig.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cribboard.hall.certs import make_ca, pem_to_der
from cribboard.hall.director import choose_movement
from cribboard.hall.tablesetup import (
    MQTT_PASSWORD_ENV,
    WIFI_PASSWORD_ENV,
    HallSetupError,
    ask_secret,
    make_setup,
)
from cribboard.i18n import language
from cribcore.hall import MAX_TABLES
from cribfw import hallconfig

CLI = [sys.executable, "-m", "cribboard.cli"]
SECRET = "s3cret-Pa55"
WIFI_SECRET = "wifi-Pa55word"


def asked(answers: dict[str, str]) -> tuple[list[str], Callable[[str], str]]:
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return answers[prompt.split()[0]]

    return prompts, ask


def test_the_passwords_come_from_the_environment_or_the_prompt() -> None:
    prompts, ask = asked({"MQTT": SECRET, "Wi-Fi": WIFI_SECRET})
    setup = make_setup("mqtt://192.168.1.10:1884", 3, ssid="clubwifi", environ={}, ask=ask)
    assert prompts == [
        "MQTT password for table-3: ",
        "Wi-Fi password for clubwifi (empty for an open network): ",
    ]
    assert (setup.host, setup.port, setup.hall, setup.table, setup.user) == (
        "192.168.1.10",
        1884,
        "club",
        3,
        "table-3",
    )
    assert (setup.password, setup.wifi_password) == (SECRET, WIFI_SECRET)
    assert SECRET not in repr(setup) and WIFI_SECRET not in repr(setup)
    assert SECRET not in setup.describe() and "clubwifi" in setup.describe()

    prompts, ask = asked({})
    env = {MQTT_PASSWORD_ENV: SECRET, WIFI_PASSWORD_ENV: ""}
    open_wifi = make_setup(
        "mqtt://h",
        7,
        hall="east",
        user="board7",
        ssid="open",
        environ=env,
        ask=ask,
    )
    assert prompts == [] and open_wifi.wifi_password == "" and open_wifi.port == 1883
    assert (open_wifi.hall, open_wifi.user) == ("east", "board7")


def test_the_board_reads_what_the_host_writes(tmp_path: Path) -> None:
    env = {MQTT_PASSWORD_ENV: SECRET, WIFI_PASSWORD_ENV: WIFI_SECRET}
    setup = make_setup("mqtt://10.0.0.2:1883", 12, ssid="clubwifi", environ=env)
    config = hallconfig.parse(json.loads(setup.to_json()))
    assert (config.hall, config.table, config.host, config.port) == ("club", 12, "10.0.0.2", 1883)
    assert (config.user, config.password) == ("table-12", SECRET)
    assert (config.ssid, config.wifi_password) == ("clubwifi", WIFI_SECRET)
    assert config.ca is None  # plain MQTT: no CA
    assert "in the clear" in setup.describe()
    wired = make_setup("mqtt://10.0.0.2:1883", 12, environ=env)
    assert hallconfig.parse(json.loads(wired.to_json())).ssid is None
    ca_pem, _ = make_ca("test CA")
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(ca_pem)
    secured = make_setup("mqtts://10.0.0.2:8883", 12, cafile=str(ca_file), environ=env)
    assert hallconfig.parse(json.loads(secured.to_json())).ca == pem_to_der(ca_pem)
    assert "mqtts://10.0.0.2:8883" in secured.describe() and "clear" not in secured.describe()
    with pytest.raises(ValueError, match="ca is not base64"):
        hallconfig.parse({**json.loads(secured.to_json()), "ca": "A"})
    for broken in ({}, {"hall": "club"}, [1], {**json.loads(wired.to_json()), "table": "3"}):
        with pytest.raises(ValueError) as err:
            hallconfig.parse(broken)
        assert SECRET not in str(err.value)


def test_the_board_and_the_host_number_tables_alike() -> None:
    env = {MQTT_PASSWORD_ENV: SECRET}
    for table in (1, MAX_TABLES):
        setup = make_setup("mqtt://10.0.0.2:1883", table, environ=env)
        assert hallconfig.parse(json.loads(setup.to_json())).table == table
    written = json.loads(make_setup("mqtt://10.0.0.2:1883", 3, environ=env).to_json())
    for table in (0, MAX_TABLES + 1):
        with pytest.raises(HallSetupError, match="bad table number"):
            make_setup("mqtt://10.0.0.2:1883", table, environ=env)
        with pytest.raises(ValueError, match="table must be 1..%d" % MAX_TABLES):
            hallconfig.parse({**written, "table": table})


@pytest.mark.parametrize(
    ("broker", "table", "options", "says"),
    [
        ("mqtts://h:8883", 3, {}, "needs --cafile"),
        ("mqtts://h:8883", 3, {"cafile": "/nonexistent/ca.pem"}, "--cafile /nonexistent"),
        ("mqtt://h", 3, {"cafile": "/nonexistent/ca.pem"}, "goes with an mqtts"),
        ("http://h", 3, {}, "bad broker URL"),
        ("mqtt://h", 1000, {}, "bad table number"),
        ("mqtt://h", 3, {"hall": "Club Night"}, "bad hall name"),
        ("mqtt://h", 3, {"ssid": "x" * 33}, "Wi-Fi name"),
    ],
)
def test_bad_options_are_refused_before_a_password_is_asked(
    broker: str, table: int, options: dict[str, str], says: str
) -> None:
    prompts, ask = asked({"MQTT": SECRET, "Wi-Fi": WIFI_SECRET})
    with pytest.raises(HallSetupError, match=says):
        make_setup(broker, table, environ={}, ask=ask, **options)
    assert prompts == []


def test_the_hall_speaks_the_language_in_use() -> None:
    """The organiser's and the maker's sentences are in the catalogs (here Norwegian, Dutch,
    Swedish), the names and numbers in them as given."""
    with language("nb"), pytest.raises(HallSetupError, match="et Wi-Fi-navn er 1 til 32 byte"):
        make_setup("mqtt://h", 3, ssid="x" * 33, environ={}, ask=asked({})[1])
    with language("nl"):
        setup = make_setup("mqtt://h", 3, environ={MQTT_PASSWORD_ENV: SECRET})
        assert setup.describe() == (
            "tafel 3 van zaal 'club' op mqtt://h:1883 als table-3 (onversleutelde MQTT: het "
            "wachtwoord gaat onversleuteld over het netwerk)"
        )
    with language("sv"):
        assert choose_movement(8, 3)[1] == (
            "lottning med klubbarnas rotation: den lottar 8 spelare i 3 omgångar utan "
            "returmöte (upp till 4)"
        )


def test_without_a_terminal_nothing_is_read_from_an_echoing_input() -> None:
    if sys.stdin.isatty():
        pytest.skip("this test needs an input that is not a terminal")
    with pytest.raises(HallSetupError, match="no terminal to ask"):
        ask_secret("MQTT password for table-3: ")


def run_cli(*words: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *words],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_the_command_line_says_what_is_wrong_in_one_line_and_never_the_password() -> None:
    env = {k: v for k, v in os.environ.items() if k not in (MQTT_PASSWORD_ENV, WIFI_PASSWORD_ENV)}
    for words, says in (
        (["deploy", "--table", "3"], "go with --broker"),
        (["deploy", "--broker", "mqtt://127.0.0.1:1"], "needs --table"),
        (["deploy", "--broker", "mqtts://h", "--table", "3"], "needs --cafile"),
        (["deploy", "--cafile", "ca.pem"], "go with --broker"),
        (["deploy", "--broker", "mqtt://h", "--table", "3"], "no terminal to ask"),
    ):
        result = run_cli("--port", "/nonexistent/tty", *words, env=env)
        assert result.returncode == 2, (words, result.stderr)
        assert len(result.stderr.splitlines()) == 1 and says in result.stderr, result.stderr
    env[MQTT_PASSWORD_ENV] = SECRET
    env[WIFI_PASSWORD_ENV] = WIFI_SECRET
    result = run_cli(
        "--port",
        "/nonexistent/tty",
        "deploy",
        "--broker",
        "mqtt://127.0.0.1:1",
        "--table",
        "3",
        "--wifi",
        "clubwifi",
        env=env,
    )
    assert result.returncode != 0 and len(result.stderr.splitlines()) == 1
    assert SECRET not in result.stdout + result.stderr
    assert WIFI_SECRET not in result.stdout + result.stderr


def test_a_board_whose_ca_mbedtls_cannot_read_plays_alone() -> None:
    """On MicroPython's unix port (its `tls` is mbedTLS, as a Pico W's): a hall configuration
    whose CA is not a certificate leaves the board playing alone instead of stopping it."""
    from cribboard.virtual.interpreter import find_micropython

    firmware = Path(__file__).resolve().parents[2] / "firmware"
    config = {"hall": "club", "table": 1, "host": "127.0.0.1", "port": 8883}
    config.update(user="table-1", password="x", ca="bm90IGEgY2VydA==")  # "not a cert"
    code = f"""
import sys
sys.path[:0] = [{str(firmware)!r}]
from cribfw import hallconfig, hallstart
hallconfig.load = lambda: hallconfig.parse({config!r})
class App:
    pass
app = App()
app.ctx = None
app.tasks = []
app.hall = None
hallstart.join_hall(app)
print("alone", app.hall is None, len(app.tasks))
"""
    done = subprocess.run(
        [find_micropython(), "-c", code], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "alone True 0", done.stdout + done.stderr
