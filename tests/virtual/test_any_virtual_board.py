"""What every virtual board must do, written once (cribboard.virtual.AnyVirtualBoard) and run on
both: the firmware on MicroPython's unix port (VirtualBoard) and the cribboard image on the
emulated RP2040 (RP2Board). A peg shows on the LEDs, a button pegs, a power cut keeps what the
board saved, and a save stopped at a chosen flash operation and cut there keeps the state before.
The protocol is spoken over each board's own port, the way a host does."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cribboard.virtual import AnyVirtualBoard, VirtualBoard
from cribboard.virtual.rp2board import FIRMWARE_IMAGE
from cribcore.layout import LED_OF_HOLE, hole_for_score
from cribcore.profiles import PROFILES
from rp2support import (
    BoardFactory,
    ProtocolLink,
    RawRepl,
    emulator_missing,
    fields,
    frame_reply_on_the_wire,
    read_until,
    rp2_boards,
)

__all__ = ["rp2_boards"]  # fixtures from rp2support

KINDS = ("unix", "rp2")
PROFILE = {"unix": "sim", "rp2": "pico"}  # the firmware's profile on each: its button pins


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def board(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[AnyVirtualBoard]:
    """A virtual board of each kind with the cribboard firmware on a fresh flash."""
    if kind == "unix":
        with VirtualBoard(flash=tmp_path / "flash.img") as unix:
            yield unix
        return
    missing = emulator_missing()
    if missing is not None:
        pytest.skip(missing)
    boards: BoardFactory = request.getfixturevalue("rp2_boards")
    yield boards(FIRMWARE_IMAGE, pace=0)


@pytest.fixture
def link(board: AnyVirtualBoard) -> Iterator[ProtocolLink]:
    """The board's protocol over its port, once its app answers."""
    protocol = ProtocolLink(board.port)
    try:
        protocol.wait_up()
        yield protocol
    finally:
        protocol.close()


def led_of(player: int, score: int) -> int:
    """The LED that shows `player`'s front peg at `score` on a two-player board."""
    return LED_OF_HOLE[hole_for_score(2, player, score, 121)]


def lit(rgb: bytes, led: int) -> bool:
    return any(rgb[3 * led : 3 * led + 3])


def state(link: ProtocolLink) -> dict[str, str]:
    """The game's saved fields (the state reply's but its revision)."""
    return {k: v for k, v in fields(link.request(b"st\n")).items() if k != "r"}


def saves(link: ProtocolLink) -> int:
    return int(fields(link.request(b"health\n"))["saves"])


def test_a_peg_shows_on_the_leds(board: AnyVirtualBoard, link: ProtocolLink) -> None:
    led = led_of(0, 5)
    board.wait_frame(lambda rgb: not lit(rgb, led), timeout=30)  # (the LEDs are drawn)
    assert link.request(b"peg 0 5\n").startswith(b"ok")
    shown = frame_reply_on_the_wire(link)  # what the board says it shows, as its LEDs get it
    assert lit(shown, led)
    assert board.wait_frame(lambda rgb: rgb == shown, timeout=30) == board.frame() == shown


def test_the_board_s_buttons_peg(board: AnyVirtualBoard, link: ProtocolLink, kind: str) -> None:
    pins = PROFILES[PROFILE[kind]].buttons
    for name in ("A+", "A+", "deal"):  # a count of 2 for orange, pegged by the deal button
        board.press(pins[name])
        link.wait_event(lambda event: event == b"! btn n=%s a=tap\n" % name.encode())  # noqa: B023
    assert state(link)["f"] == "2,0"


def test_a_power_cut_keeps_what_the_board_saved(board: AnyVirtualBoard, link: ProtocolLink) -> None:
    board.break_on_flash("any")
    assert link.request(b"peg 1 7\n").startswith(b"ok")
    pegged = state(link)
    stop = board.wait_flash_stop(60)  # the save's first flash operation: the board waits there
    assert stop.kind in ("erase", "program") and stop.index == 0, stop
    board.resume()
    deadline = time.monotonic() + 60  # (a bound for a save that never ends, not a pause)
    while saves(link) == 0:  # (a request each: the save is written by the time one says so)
        assert time.monotonic() < deadline, "the save never finished"
    board.power_cut()
    board.power_on()
    link.events.clear()  # (the events of the board before the cut)
    link.wait_event(lambda event: event.startswith(b"! hello "))  # the app is up again
    assert state(link) == pegged


def test_a_save_cut_at_its_program_keeps_the_state_before(
    board: AnyVirtualBoard, link: ProtocolLink
) -> None:
    before = state(link)
    board.break_on_flash("program")
    assert link.request(b"peg 0 9\n").startswith(b"ok")
    assert state(link)["f"] == "9,0"
    stop = board.wait_flash_stop(60)
    assert (stop.kind, stop.index) == ("program", 0), stop
    board.power_cut()  # before the program's first byte: the record is not written
    board.power_on()
    link.events.clear()  # (the events of the board before the cut)
    link.wait_event(lambda event: event.startswith(b"! hello "))  # the app is up again
    assert state(link) == before
    board.wait_frame(lambda rgb: not lit(rgb, led_of(0, 9)), timeout=30)


# Reads the pin until it is at LEVEL (5 s at most, by the board's clock): a press, a hold or a
# release reaches the unix board's pin a moment after the call returns.
_LEVEL = (
    "t = time.ticks_ms()\n"
    "while button.value() != {level} and time.ticks_diff(time.ticks_ms(), t) < 5000: pass\n"
    "print(button.value())"
)


def test_a_press_lasts_its_time_at_the_pin_and_a_hold_outlasts_a_reset(
    board: AnyVirtualBoard, link: ProtocolLink, kind: str
) -> None:
    pin = PROFILES[PROFILE[kind]].buttons["B-"]
    link.close()
    repl = RawRepl(board.port)
    try:
        repl.enter()  # the app stopped: the pin read as the firmware reads it
        button = f"import time\nfrom machine import Pin\nbutton = Pin({pin}, Pin.IN, Pin.PULL_UP)\n"
        assert repl.exec(button + "print(button.value())").strip() == "1"
        board.hold(pin)
        assert repl.exec(_LEVEL.format(level=0)).strip() == "0"
        board.reset()
        read_until(repl.link, b"! hello ", timeout=60)  # the app up again: the board booted
        repl.enter()
        assert repl.exec(button + "print(button.value())").strip() == "0"  # still held
        board.release(pin)
        assert repl.exec(_LEVEL.format(level=1)).strip() == "1"

        # A timed press lasts its time at the pin (Python loops: USB output goes out between
        # bytecodes, so "ready" reaches the host while the board waits).
        repl.start(
            "print('ready')\nwhile button.value(): pass\nt = time.ticks_us()\n"
            "while not button.value(): pass\nprint(time.ticks_diff(time.ticks_us(), t))"
        )
        read_until(repl.link, b"ready")
        board.press(pin, ms=80)
        held_us = int(repl.finish())
    finally:
        repl.close()
    # The emulated chip times it in its own cycles; the unix board from the firmware's first
    # look at the pin, by the host's clock, give or take a busy machine's delays.
    low, high = {"rp2": (79_800, 80_200), "unix": (76_000, 300_000)}[kind]
    assert low <= held_us <= high, held_us
