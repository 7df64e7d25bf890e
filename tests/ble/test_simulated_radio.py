"""The virtual board's simulated Bluetooth radio (firmware/sim/bluetooth.py, the launcher's
cribboard.virtual.radio), driven through its side channel by a central of the tests' own
(modelcheck.RadioCentral): no D-Bus, no Bumble, no bleak. What it is kept for beside the real
stacks is in docs/virtual-board.md ("Why the simulated radio stays"); these are the parts of it
no real-stack test covers: its own report, and the firmware with Bluetooth in a 32-bit board's
heap on the stock interpreter."""

from __future__ import annotations

from pathlib import Path

from cribboard.deploy import deploy
from cribboard.virtual import VirtualBoard, VirtualControl
from modelcheck import RadioCentral
from support import raw_exchange

CENTRAL = "C2:00:00:00:00:01"  # a random static address


def board_name(vboard: VirtualBoard) -> str:
    return "Cribboard-" + vboard.ble_address.replace(":", "")[-4:]


def request(central: RadioCentral, line: bytes) -> bytes:
    """Write a request; its reply (events met on the way are skipped)."""
    central.write(line)
    while True:
        got = central.readline(10)
        assert got is not None, f"no reply to {line!r}"
        if not got.startswith(b"! "):
            return got


def test_the_radio_reports_what_it_advertises_and_sends(tmp_path: Path) -> None:
    """`ble-info`: the advertising data split in two (the 128-bit UUID, then the name in the scan
    response), and the notifications the board sent, after an MTU exchange, at most MTU - 3."""
    with VirtualBoard(flash=tmp_path / "flash.img") as vboard:
        raw_exchange(vboard.port, [b"admit open 1\n"])  # (the app is up: it advertises)
        with VirtualControl(vboard.control) as control:
            info = control.ble_info()
        adv, resp = bytes.fromhex(info["adv"]), bytes.fromhex(info["resp"])
        assert len(adv) <= 31 and len(resp) <= 31
        assert bytes.fromhex("9ecadc240ee5a9e093f3a3b50100406e") in adv
        assert board_name(vboard).encode() in resp
        central = RadioCentral(vboard.control, CENTRAL)
        try:
            assert central.exchange_mtu(185) == 185
            frame = request(central, b"#1 frame\n")
            assert frame.startswith(b"#1 ok ") and len(frame) > 750
            info = central.info()
            assert info["conns"] == "1" and info["longest"] == "182"
        finally:
            central.close()


def test_a_board_with_bluetooth_serves_a_game_in_a_108k_heap(tmp_path: Path) -> None:
    """The stock interpreter (the firmware deployed as bytecode, as a board holds it) in a small
    heap: the real stacks run in the project's own 64-bit unix builds, whose heap says nothing of
    a 32-bit board's (tests/rp2/test_rp2_memory.py measures a Pico's, without Bluetooth).

    With Bluetooth (the link, the centrals' bounded send queues, and the simulated radio's own module,
    about 4 KB of a 32-bit board's heap that a board's built-in `bluetooth` does not take)
    the firmware deployed as bytecode on stock MicroPython (frozen in a cribboard image, its
    modules take no heap) serves a game over USB and Bluetooth in a 108 KB heap (84 KB before the
    real-stack queues and the hot path's buffers, 88 KB before the hot path's last round, 92 KB
    before the resend memory's books by sender and the centrals' input read as it arrives, 96 KB
    before match play and the board's history (104 KB fails since); a 32-bit board's; without
    Bluetooth: 80 KB, tests/host/test_host_e2e.py)."""
    flash = tmp_path / "flash.img"
    with VirtualBoard(stock=True, flash=flash) as board:
        deploy(board.port, progress=lambda _line: None, reset=False)
    with VirtualBoard(stock=True, flash=flash, heap="108wK") as small:
        lines = [b"#h%d peg %d %d\n" % (i, i % 2, 1 + i % 9) for i in range(30)]
        replies = [r for r in raw_exchange(small.port, lines) if not r.startswith(b"!")]
        assert all(b" ok " in r for r in replies), replies
        raw_exchange(small.port, [b"admit open 1\n"])
        central = RadioCentral(small.control, CENTRAL)
        try:
            assert request(central, b"#b1 peg 1 3\n").startswith(b"#b1 ok ")
            assert request(central, b"#b2 frame\n").startswith(b"#b2 ok ")
            state = request(central, b"#b3 st\n")
        finally:
            central.close()
        front = [int(v) for v in state.split(b" f=")[1].split()[0].split(b",")]
        assert front[1] > 0
