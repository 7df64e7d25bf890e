"""Playing at the table with the board's buttons alone: the firmware on the virtual board, presses
through the simulator's side channel, a host watching the events."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from cribboard.api import Board, BoardEvent, ButtonEvent, StateEvent
from cribboard.virtual import VirtualBoard, VirtualControl
from cribfw.panel import Panel
from support import Presser, wait_state


@pytest.fixture
def sim(vboard: VirtualBoard) -> Iterator[VirtualControl]:
    with VirtualControl(vboard.control) as control:
        yield control


@pytest.fixture
def host(board: Board) -> Board:
    """The host watching the table: conftest's board."""
    return board


async def test_a_count_entered_with_buttons_reaches_the_host(
    host: Board, sim: VirtualControl
) -> None:
    events: list[BoardEvent] = []
    host.subscribe(events.append)
    fingers = Presser(sim, host)
    await fingers.tap("A+", 3)
    state = await wait_state(host, lambda s: s.pending == [3, 0])
    assert state.front == [0, 0]
    await fingers.tap("deal")  # confirm at once
    state = await wait_state(host, lambda s: s.front == [3, 0])
    assert state.pending == [0, 0] and state.undo == 1
    assert ButtonEvent("A+", "tap") in events
    assert ButtonEvent("deal", "tap") in events
    previews = [
        e.state.pending for e in events if isinstance(e, StateEvent) and any(e.state.pending)
    ]
    assert previews[:3] == [[1, 0], [2, 0], [3, 0]]  # each press previewed


async def test_counts_commit_by_themselves_after_a_pause(host: Board, sim: VirtualControl) -> None:
    fingers = Presser(sim, host)
    await fingers.count("B+", 12)
    state = await wait_state(host, lambda s: s.pending == [0, 12])
    assert state.front == [0, 0]
    state = await wait_state(host, lambda s: s.front == [0, 12])  # after COMMIT_MS
    assert state.back == [0, 0]


async def test_cancel_undo_and_dealer_with_buttons(host: Board, sim: VirtualControl) -> None:
    fingers = Presser(sim, host)
    await host.peg(0, 7)
    await fingers.tap("A+", 4)
    await fingers.tap("A-")
    await wait_state(host, lambda s: s.pending == [3, 0])
    await fingers.hold("A-")  # a mistaken count, cancelled
    await wait_state(host, lambda s: s.pending == [0, 0])
    await fingers.hold("A-")  # nothing pending: undo the host's peg
    state = await wait_state(host, lambda s: s.front == [0, 0])
    assert state.undo == 0
    assert state.dealer == 0
    await fingers.tap("deal")
    await wait_state(host, lambda s: s.dealer == 1)


async def test_taps_in_quick_succession_on_a_resting_board_are_each_taken(
    host: Board, sim: VirtualControl
) -> None:
    """The board sleeps while its buttons rest (woken by a pin's edge): a tap sent as soon as the
    last was reported, before the button has been up long enough for the simulator to start it,
    still starts by itself and is taken."""
    fingers = Presser(sim, host)
    for dealer in (1, 0, 1):
        await fingers.tap("deal")  # nothing pending: passes the deal on
        await wait_state(host, lambda s, d=dealer: s.dealer == d)


async def test_new_game_needs_a_long_hold(host: Board, sim: VirtualControl) -> None:
    fingers = Presser(sim, host)
    await host.peg(1, 9)
    await fingers.hold("deal", 1500)  # not long enough: released before a new game
    assert (await host.state()).front == [0, 9]
    await fingers.hold("deal", Panel.NEW_GAME_MS + 300)
    state = await wait_state(host, lambda s: s.front == [0, 0])
    assert state.undo == 2  # the new game itself can be undone


async def test_a_whole_game_with_the_buttons_alone(host: Board, sim: VirtualControl) -> None:
    """A 61 game pegged, corrected and finished on the board's buttons; the host only reads."""
    await host.new_game(61)
    fingers = Presser(sim, host)
    moves = [("A+", 29), ("B+", 14), ("A+", 20), ("B+", 8)]
    for name, points in moves:
        await fingers.count(name, points)
        await fingers.tap("deal")
    state = await wait_state(host, lambda s: s.front == [49, 22])
    assert state.back == [29, 14]
    # a wrong count: orange enters 6, takes it back with a hold of "-" after it committed
    await fingers.count("B+", 6)
    await fingers.tap("deal")
    await wait_state(host, lambda s: s.front == [49, 28])
    await fingers.hold("B-")
    await wait_state(host, lambda s: s.front == [49, 22])
    await fingers.count("A+", 12)
    await fingers.tap("deal")
    state = await wait_state(host, lambda s: s.winner == 0)
    assert state.front == [61, 22] and state.result == "skunk" and state.games == [1, 0]
    # after the end "+" does nothing; a long hold of deal starts the next game
    await fingers.tap("B+", 2)  # each tap reported: the board has handled it
    assert (await host.state()).pending == [0, 0]
    await fingers.hold("deal", Panel.NEW_GAME_MS + 300)
    state = await wait_state(host, lambda s: s.winner is None)
    assert state.front == [0, 0] and state.games == [1, 0] and state.target == 61


async def test_the_self_test_walks_the_chain_and_leaves_the_game(
    host: Board, sim: VirtualControl
) -> None:
    def lit_leds(rgb: bytes) -> list[int]:
        return [i for i in range(len(rgb) // 3) if any(rgb[3 * i : 3 * i + 3])]

    await host.peg(0, 5)
    before = await host.state()
    game_frame = sim.wait_frame(lambda rgb: len(lit_leds(rgb)) == 2)  # the peg, the dealer lamp
    lit: list[int] = []

    def sweep_over(rgb: bytes) -> bool:
        """Notes the LED lit alone in each frame; True once the game's frame is back."""
        on = lit_leds(rgb)
        if len(on) == 1 and (not lit or lit[-1] != on[0]):
            lit.append(on[0])
        return rgb == game_frame and bool(lit)

    await host.self_test()  # answered at once; the sweep takes about 3 s
    await asyncio.to_thread(sim.wait_frame, sweep_over, 10)  # every frame from now on
    assert lit == sorted(lit) and len(lit) > 40 and lit[0] < 5 and lit[-1] > 115
    assert sim.frame() == game_frame
    assert await host.state() == before
