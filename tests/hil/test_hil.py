"""Hardware-in-the-loop tests (see conftest.py): hello, pegging and state, the self-test, and the
buttons, on a real board through the host library."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from serial.tools import list_ports

from cribboard.api import Board, BoardState
from cribcore import protocol
from cribcore.layout import HOLE_OF_LED, HOLES, LED_OF_HOLE, hole_for_score
from cribcore.profiles import PROFILES
from cribcore.render import BACK, FRONT, PALETTE

SELF_TEST_S = 60.0  # the sweep lights 121 holes one at a time; generous
BUTTON_S = 30.0  # time a person gets to press a button


async def test_hello_names_a_supported_board(board: Board) -> None:
    hello = board.hello
    assert hello.protocol[0] == protocol.PROTOCOL_MAJOR
    assert hello.board in PROFILES
    assert hello.firmware not in ("", "?")
    for verb in ("peg", "st", "frame"):
        assert verb in hello.capabilities, hello.capabilities


async def test_usb_ids_are_the_profiles(hil_port: str, board: Board) -> None:
    """The board shows up with the USB ids host discovery looks for."""
    port = next((p for p in list_ports.comports() if p.device == hil_port), None)
    if port is None or port.vid is None:
        pytest.skip(f"{hil_port} is not a USB serial port (a virtual board?)")
    assert (port.vid, port.pid) in PROFILES[board.hello.board].usb_ids, (
        f"{port.vid:04x}:{port.pid:04x} is not in the {board.hello.board} profile's usb_ids"
    )


async def test_peg_changes_state_frame_and_pushes_st(board: Board, lines: Any) -> None:
    await board.new_game(121, 2)
    mark = lines.mark()
    rev = await board.peg(0, 12)
    await lines.expect(rf"^! st r={rev} .*f=12,0 ", 3.0, mark)
    await board.peg(1, 5)
    await board.peg(0, 4)
    state = await board.state()
    assert (state.front[:2], state.back[:2]) == ([16, 5], [12, 0])
    frame = await board.frame()
    assert frame.hole(hole_for_score(2, 0, 16, 121)) == tuple(PALETTE[0][FRONT : FRONT + 3])
    assert frame.hole(hole_for_score(2, 0, 12, 121)) == tuple(PALETTE[0][BACK : BACK + 3])
    assert frame.hole(hole_for_score(2, 1, 5, 121)) == tuple(PALETTE[1][FRONT : FRONT + 3])
    assert 0 < frame.milliamps <= PROFILES[board.hello.board].budget_ma
    await board.undo()
    assert (await board.state()).front[:2] == [12, 5]


async def test_self_test_lights_every_hole_in_chain_order(
    board: Board, lines: Any, person: Any
) -> None:
    if "test" not in board.hello.capabilities:
        pytest.fail(
            f"the board's firmware has no self-test (`test` is not among its verbs "
            f"{board.hello.capabilities}): deploy the current firmware"
        )
    await board.new_game(121, 2)
    await board.peg(0, 7)
    await board.peg(1, 9)
    before = await board.state()
    frame_before = await board.frame()
    if os.environ.get("CRIBBOARD_HIL_INTERACTIVE") == "1":
        person.say(
            "Self-test: watch the board. One light should run along row A outer from "
            "left to right, back along A inner, along B inner, back along B outer, then "
            "the win hole."
        )
    loop = asyncio.get_running_loop()
    request = asyncio.create_task(board.self_test(timeout=SELF_TEST_S))
    seen: list[int] = []  # LEDs seen lit alone while the test ran (if frames show the sweep)
    deadline = loop.time() + SELF_TEST_S
    back = False
    while loop.time() < deadline:
        await asyncio.sleep(0.05)
        try:
            frame = await board.frame()
        except Exception:  # the board may answer slowly while it sweeps
            continue
        lit = [h for h in range(HOLES) if frame.hole(h) != (0, 0, 0)]
        if len(lit) == 1 and (not seen or seen[-1] != LED_OF_HOLE[lit[0]]):
            seen.append(LED_OF_HOLE[lit[0]])
        if request.done() and frame.rgb == frame_before.rgb:
            back = True
            break
    await request  # the board's `ok` (an `err` reply raises BoardRejected)
    assert back, "the board did not return to the game's frame after the self-test"
    assert seen == sorted(seen), f"the lights ran out of chain order: LEDs {seen}"
    after = await board.state()
    assert after == before, "the self-test changed the game"
    if os.environ.get("CRIBBOARD_HIL_INTERACTIVE") == "1":
        answer = await person.ask("Did every hole light, one at a time, in that order? [y/n]")
        if answer is None:
            pytest.skip("no answer from the terminal (run pytest with -s)")
        assert answer.startswith("y"), (
            "the self-test did not look right: see hardware/README.md, Troubleshooting "
            f"(first LED: hole {HOLE_OF_LED[0]}, last: hole {HOLE_OF_LED[HOLES - 1]})"
        )


async def test_buttons_report_presses_and_change_the_state(
    board: Board, lines: Any, person: Any, interactive: None
) -> None:
    """A person presses each two-player button when asked: the board reports `! btn n=NAME a=tap`
    to the host, and the press changes the state (`! st`)."""
    await board.new_game(121, 2)
    await asyncio.sleep(0.2)

    async def press(name: str) -> int:
        mark = lines.mark()
        person.say(f"Press and release {name} (within {BUTTON_S:g} s).")
        await lines.expect(rf"^! btn n={name.replace('+', '[+]')} a=tap$", BUTTON_S, mark)
        return mark

    # "+" counts one on the press (the count pending, its hole blinking); "-" takes it back if
    # it is still pending; a count commits by itself 2.5 s after its player's last press.
    mark = await press("A+")
    await lines.expect(r"^! st .* q=1,0 ", 5.0, mark)
    await press("A-")
    mark = await press("B+")
    await lines.expect(r"^! st .* q=0,1 ", 5.0, mark)
    await press("B-")
    await asyncio.sleep(3.0)  # any count still pending commits (Panel.COMMIT_MS)
    state: BoardState = await board.state()
    assert state.pending[:2] == [0, 0]
    mark = await press("deal")  # nothing pending: the deal passes on
    await lines.expect(rf"^! st .*d={(state.dealer + 1) % 2} ", 5.0, mark)
    person.say("Thank you: the buttons work.")
