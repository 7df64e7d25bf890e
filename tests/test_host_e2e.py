"""The host library end to end: the real firmware on the real MicroPython interpreter (the virtual
board), reached over its pty through pyserial, as a USB board would be."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
import serial

from cribboard.api import (
    Board,
    BoardState,
    HelloEvent,
    SettingsEvent,
    StateEvent,
    SyncBoard,
    key_id,
)
from cribboard.client import Client
from cribboard.deploy import deploy
from cribboard.errors import BoardRejected, CribboardError, KeyReused, LinkError
from cribboard.transport import DataCallback, LostCallback, SerialTransport
from cribboard.virtual import SimControl, VirtualBoard
from cribcore import protocol
from cribcore.layout import HOLES, hole_for_score
from cribcore.render import FRONT, PALETTE
from support import WAIT_S, EventLog, raw_exchange, wait_saved

# --- every command ------------------------------------------------------------------------------


async def test_hello_names_the_board_and_protocol(board: Board) -> None:
    hello = board.hello
    assert hello.protocol == (protocol.PROTOCOL_MAJOR, protocol.PROTOCOL_MINOR)
    assert hello.board == "sim"
    assert hello.layout == "crib121"
    assert {v.decode() for v in protocol.VERBS} <= set(hello.capabilities)
    await board.ping()


async def test_pegging_a_game_through_every_command(board: Board) -> None:
    state = await board.state()
    assert (state.front, state.back, state.target, state.winner) == ([0, 0], [0, 0], 121, None)
    await board.peg(0, 12)
    await board.peg(0, 4)
    await board.peg(1, 29)
    state = await board.state()
    assert state.front == [16, 29] and state.back == [12, 0]
    await board.undo()
    assert (await board.state()).front == [16, 0]
    await board.set_pegs(1, 100, 90)
    await board.set_pegs(1, 105)  # the back peg stays where it was
    state = await board.state()
    assert (state.front[1], state.back[1]) == (105, 90)
    assert await board.set_dealer(1) == 1
    assert await board.set_dealer() == 0
    await board.set_pending(0, 6)
    assert (await board.state()).pending == [6, 0]
    await board.set_skunk_double(True)
    await board.set_pegs(0, 115, 100)
    await board.set_pegs(1, 60, 50)
    await board.peg(0, 8)
    state = await board.state()
    assert state.winner == 0 and state.result == "double_skunk" and state.games == [2, 0]
    with pytest.raises(BoardRejected) as refused:
        await board.peg(1, 2)
    assert refused.value.code == "game_over"
    assert await board.games() == [2, 0]
    await board.clear_games()
    assert await board.games() == [0, 0]
    await board.new_game(61)
    state = await board.state()
    assert state.target == 61 and state.front == [0, 0] and state.winner is None
    await board.new_game(121, 3)
    assert (await board.state()).players == 3
    assert await board.brightness() == 128
    assert await board.brightness(40) == 40
    assert await board.budget(900) == 900
    assert await board.budget() == 900


async def test_frame_mirrors_the_leds(board: Board, vboard: VirtualBoard) -> None:
    await board.brightness(255)
    await board.peg(1, 7)
    frame = await board.frame()
    assert len(frame.rgb) == 3 * HOLES
    hole = hole_for_score(2, 1, 7, 121)
    colours = PALETTE[1]
    assert frame.hole(hole) == (colours[FRONT], colours[FRONT + 1], colours[FRONT + 2])
    assert frame.scale == 256 and frame.milliamps > HOLES
    # The simulated LED strip shows the same thing, in chain order and at the frame's scale.
    with SimControl(vboard.control) as sim:
        strip = sim.wait_frame(lambda rgb: sum(rgb) > 0)
    from cribcore.layout import LED_OF_HOLE

    led = LED_OF_HOLE[hole]
    assert strip[3 * led : 3 * led + 3] == bytes(frame.hole(hole))


async def test_sync_wrapper_for_scripts(vboard: VirtualBoard) -> None:
    def script() -> tuple[BoardState, list[BoardState], list[str]]:
        with SyncBoard.open(vboard.port) as b, b.states() as states:
            names: list[str] = []
            unsubscribe = b.subscribe(lambda event: names.append(event.type))
            # A request that reaches the board while it still reads the one before (a host that
            # answers that fast) shares its state event: every change, one event each, is asked.
            b.ask_every_change()
            b.peg(0, 5)
            b.peg(1, 3)
            b.undo()
            b.set_skunk_double(True)
            seen: list[BoardState] = []
            while len(seen) < 3:
                change = states.next_within(5)
                if change.rev > 0:  # not a resync of the fresh board (see the test below)
                    seen.append(change)
            unsubscribe()
            assert b.settings().brightness == b.brightness()
            return b.state(), seen, names

    state, seen, names = await asyncio.get_running_loop().run_in_executor(None, script)
    assert state.front == [5, 0] and state.skunk_double
    assert [s.front for s in seen] == [[5, 0], [5, 3], [5, 0]]  # every change, in order
    assert names.count("state") >= 3


# --- bad input ----------------------------------------------------------------------------------


def test_bad_input_gets_an_error_and_changes_nothing(vboard: VirtualBoard) -> None:
    before = raw_exchange(vboard.port, [b"#s1 peg 0 7\n", b"#s2 st\n"])[-1]
    bad = [
        (b"#b1 pge 0 1\n", b"#b1 err unknown"),
        (b"#b2 peg 0 x\n", b"#b2 err bad_arg"),
        (b"#b3 peg 0 99\n", b"#b3 err bad_points"),
        (b"#b4 peg 7 1\n", b"#b4 err bad_player"),
        (b"#b5 peg 0\n", b"#b5 err bad_arg"),
        (b"#b6 peg 0 1 2 3\n", b"#b6 err bad_arg"),
        (b"#b7 set 0 5 9\n", b"#b7 err bad_pegs"),
        (b"#b8 new 100\n", b"#b8 err bad_target"),
        (b"#b9 bright 999\n", b"#b9 err bad_value"),
        (b"#c1 peg 0 -3\n", b"#c1 err bad_points"),
        (b"#c2 peg 0 1\x7f\n", b"#c2 err bad_line"),
        (b"#c3 peg 0 " + b"1" * 80 + b"\n", b"#c3 err too_long"),
        (b"#c4 peg 0 99999999999\n", b"#c4 err bad_arg"),
        (b"peg\n", b"err bad_arg"),
        (b"#c5\n", b"#c5 err bad_line"),
    ]
    replies = raw_exchange(vboard.port, [line for line, _ in bad])
    assert len(replies) == len(bad)  # exactly one reply each, and no state event
    for (line, expected), reply in zip(bad, replies):
        assert reply.startswith(expected + b" "), (line, reply)
    after = raw_exchange(vboard.port, [b"#s2 st\n"])[-1]
    assert after == before


def test_a_resent_request_is_not_applied_twice(vboard: VirtualBoard) -> None:
    first = raw_exchange(vboard.port, [b"#r1 peg 0 5\n"])
    assert first[0] == b"#r1 ok r=1\n" and first[1].startswith(b"! st r=1 ")
    again = raw_exchange(vboard.port, [b"#r1 peg 0 5\n"])
    assert again == [b"#r1 ok r=1\n"]  # the same reply, no change, no event
    state = raw_exchange(vboard.port, [b"st\n"])[0]
    assert b" f=5,0 " in state


async def test_a_programs_key_makes_a_change_count_once(vboard: VirtualBoard) -> None:
    """A program repeats a score under its own key (a re-sent snapshot): it counts once, the
    repeat gets the first answer, from this Board or, through another connection (a program
    started again), from the board itself; the key for another change is refused."""
    async with await Board.open(vboard.port) as first:
        rev = await first.peg(0, 5, key="deal-3/hand-1")
        assert await first.peg(0, 5, key="deal-3/hand-1") == rev
        with pytest.raises(KeyReused):
            await first.peg(1, 5, key="deal-3/hand-1")
        both = await asyncio.gather(*(first.peg(1, 2, key="crib") for _ in range(3)))
        assert len(set(both)) == 1  # the same key three times at once: one change
    async with await Board.open(vboard.port) as again:
        assert await again.peg(0, 5, key="deal-3/hand-1") == rev  # the board's own memory
        state = await again.state()
        assert (state.front, state.rev) == ([5, 2], 2)
        with pytest.raises(CribboardError, match="key"):
            await again.peg(0, 1, key="two words")
    assert key_id("deal-3/hand-1") == key_id("deal-3/hand-1") != key_id("deal-3/hand-2")
    assert len(key_id("x")) == protocol.MAX_ID


async def test_a_conditional_change_is_refused_when_the_board_moved_on(board: Board) -> None:
    await board.peg(0, 4, if_front=0)
    with pytest.raises(BoardRejected) as refused:
        await board.peg(0, 4, if_front=0)  # the program's picture is out of date
    assert refused.value.code == "stale"
    state = await board.state()
    with pytest.raises(BoardRejected, match="stale"):
        await board.undo(if_rev=state.rev - 1)
    await board.undo(if_rev=state.rev)
    assert (await board.state()).front == [0, 0]


async def test_library_resends_with_the_same_id_after_a_lost_reply(vboard: VirtualBoard) -> None:
    """The reply to a peg is lost with the link; the client reconnects and resends the same
    line; the board answers from memory and the points are applied once."""

    class LosesFirstPegReply(SerialTransport):
        dropped = 0

        async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
            def filtered(data: bytes) -> None:
                if LosesFirstPegReply.dropped == 0 and b" ok r=" in data:
                    LosesFirstPegReply.dropped += 1
                    on_lost(LinkError("cable pulled"))  # the reply never arrives
                    return
                on_data(data)

            await super().open(filtered, on_lost)

    b = await Board.open_transport(lambda: LosesFirstPegReply(vboard.port))
    try:
        await b.peg(0, 9)
        assert LosesFirstPegReply.dropped == 1
        state = await b.state()
        assert state.front == [9, 0] and state.rev == 1
    finally:
        await b.close()


async def test_a_connect_that_fails_after_the_hello_leaves_the_port_free(
    vboard: VirtualBoard,
) -> None:
    """The link breaks as the client asks for brief events, right after the hello: the open
    fails, its link is closed, and the port is free again. (Seen once under load, when `brief`
    went unanswered: the failed open kept the port claimed, and every later open of it failed.)"""
    closed: list[SerialTransport] = []

    class BreaksAtBrief(SerialTransport):
        async def write(self, data: bytes) -> None:
            if b" brief " in data:
                raise LinkError("the link broke as brief was sent")
            await super().write(data)

        async def close(self) -> None:
            closed.append(self)
            await super().close()

    with pytest.raises(LinkError, match="as brief was sent"):
        await Board.open_transport(
            lambda: BreaksAtBrief(vboard.port), timeout=WAIT_S, reconnect=False
        )
    assert closed
    again = await Board.open(vboard.port, timeout=WAIT_S)  # owned by this program again
    try:
        assert (await again.state()).rev == 0
    finally:
        await again.close()


# --- events, restarts, reconnects -------------------------------------------------------------


async def test_every_change_is_pushed_to_subscribers(board: Board) -> None:
    seen = EventLog.of(board)
    await board.peg(1, 3)
    # (The client may also hand on a resync `st` of the fresh board: the board's `! hello` can
    # reach an open port while the client connects. Wait for the change itself.)
    event = await seen.wait(lambda e: isinstance(e, StateEvent) and e.state.rev == 1)
    assert event.state.front == [0, 3]
    await board.brightness(99)
    await seen.wait(lambda e: isinstance(e, SettingsEvent) and e.settings.brightness == 99)


async def test_resync_after_the_board_restarts(board: Board, vboard: VirtualBoard) -> None:
    seen = EventLog.of(board)
    await board.peg(0, 20)
    await wait_saved(vboard.flash_path, lambda game: game.front[:2] == [20, 0])
    boots = vboard.boots
    seen.events.clear()  # from here on: what the restarted board sent
    await asyncio.get_running_loop().run_in_executor(None, vboard.reset)
    hello = await seen.wait(lambda e: isinstance(e, HelloEvent))
    assert vboard.boots == boots + 1
    assert hello.fields["store"] == "saved"  # the board says where its state came from
    # The client read the state again by itself: the restarted board shows the saved game, with
    # `r` counting from 0 again.
    restored = await seen.wait(lambda e: isinstance(e, StateEvent) and e.state.rev == 0)
    assert restored.state.front == [20, 0]
    await board.peg(1, 2)  # the same open client carries on
    assert (await board.state()).front == [20, 2]


async def test_reconnect_after_the_link_drops(vboard: VirtualBoard) -> None:
    transports: list[SerialTransport] = []

    def factory() -> SerialTransport:
        transports.append(SerialTransport(vboard.port))
        return transports[-1]

    client = Client(factory, timeout=3.0, heartbeat=0)
    await client.connect()
    b = Board(client)
    seen = EventLog()
    client.subscribe(seen)
    try:
        await b.peg(0, 4)
        # Pull the cable: the port closes under the reader.
        await transports[0].close()
        client._on_lost(LinkError("unplugged"))  # what the reader thread reports
        await seen.wait(lambda e: e.name == "link" and e.fields["state"] == "back")
        resynced = await seen.wait(lambda e: e.name == "st" and e.fields.get("f") == "4,0")
        assert resynced.fields["r"] == "1"
        await b.peg(0, 2)
        assert (await b.state()).front == [6, 0]
        assert len(transports) == 2
    finally:
        await client.close()


async def test_heartbeat_notices_a_board_that_stopped_answering(vboard: VirtualBoard) -> None:
    with SimControl(vboard.control) as sim:
        pid = int(sim.info()["pid"])
    client = Client(lambda: SerialTransport(vboard.port), timeout=0.5, heartbeat=0.2)
    await client.connect()
    seen = EventLog()
    client.subscribe(seen)
    try:
        os.kill(pid, signal.SIGSTOP)  # the board hangs: the port stays open, nothing answers
        try:
            await seen.wait(lambda e: e.name == "link" and e.fields["state"] == "lost")
        finally:
            os.kill(pid, signal.SIGCONT)
        await seen.wait(lambda e: e.name == "link" and e.fields["state"] == "back")
        await client.request("ping")
    finally:
        await client.close()


async def test_a_request_during_a_dead_link_fails_clearly() -> None:
    client = Client(lambda: SerialTransport("/dev/nonexistent-cribboard"), reconnect=False)
    with pytest.raises(LinkError, match="cannot open"):
        await client.connect()


async def test_protocol_major_mismatch_is_refused(
    vboard: VirtualBoard, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cribboard import clientcore
    from cribboard.errors import ProtocolMismatch

    monkeypatch.setattr(clientcore, "SUPPORTED_MAJOR", protocol.PROTOCOL_MAJOR + 1)
    with pytest.raises(ProtocolMismatch, match="update"):
        await Board.open(vboard.port)


def test_board_is_usable_in_a_80k_heap(tmp_path: Path) -> None:
    """The firmware deployed as bytecode on stock MicroPython (where its modules take heap:
    frozen in a cribboard image they take none) serves a whole game in an 80 KB heap (a 32-bit
    board's, without Bluetooth; with it, see tests/test_ble.py). 68 KB before the round that
    put the USB link's lines in the scheduler's wait, the buttons on pin interrupts and the
    frame's drawing in one viper call (more code, native on the virtual board's x86-64); 72 KB
    before the resend memory kept by sender and saved with the game, and `frame` in viper; 76 KB
    before match play and the board's history (two modules more, the history's 896 bytes, a
    longer state)."""
    flash = tmp_path / "flash.img"
    with VirtualBoard(stock=True, flash=flash) as board:
        deploy(board.port, progress=lambda _line: None, reset=False)
    with VirtualBoard(stock=True, flash=flash, heap="80wK", ble=False) as small:
        lines = [b"#h%d peg %d %d\n" % (i, i % 2, 1 + i % 9) for i in range(40)]
        replies = [r for r in raw_exchange(small.port, lines) if not r.startswith(b"!")]
        assert all(b" ok " in r for r in replies), replies
        start = time.monotonic()
        frame = raw_exchange(small.port, [b"frame\n"])[0]
        assert frame.startswith(b"ok scale=") and time.monotonic() - start < 3


class _Recording(SerialTransport):
    """A serial transport that keeps every byte the board sends."""

    def __init__(self, port: str, received: bytearray) -> None:
        super().__init__(port)
        self._received = received

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        def keep(data: bytes) -> None:
            self._received.extend(data)
            on_data(data)

        await super().open(keep, on_lost)


async def _play_and_compare(board: Board) -> None:
    """Changes of every kind; after each, the state the library's subscribers got equals the
    board's own (`st`)."""
    with board.states() as states:
        steps = [
            lambda: board.peg(0, 5),
            lambda: board.set_pending(1, 3),
            lambda: board.peg(1, 3),  # also clears the preview
            lambda: board.set_pegs(0, 110, 100),
            lambda: board.peg(0, 12),  # the win: winner, result, games won
            lambda: board.undo(),
            lambda: board.new_game(61),
            lambda: board.peg(1, 29),
        ]
        for step in steps:
            await step()
            truth = await board.state()
            got = await asyncio.wait_for(states.__anext__(), WAIT_S)
            while got.rev < truth.rev:
                got = await asyncio.wait_for(states.__anext__(), WAIT_S)
            assert got == truth


async def test_brief_events_carry_a_peg_in_one_short_line(vboard: VirtualBoard) -> None:
    received = bytearray()
    board = await Board.open_transport(lambda: _Recording(vboard.port, received))
    try:
        await _play_and_compare(board)
    finally:
        await board.close()
    lines = bytes(received).split(b"\n")
    pegs = [line for line in lines if line.startswith(b"! p ")]
    # Four pegs, the win among them, came as brief lines of one Bluetooth packet each.
    assert len(pegs) == 4 and all(len(line) + 1 <= 20 for line in pegs), pegs
    assert any(line.startswith(b"! q ") for line in lines)
    assert any(line.startswith(b"! st ") for line in lines)  # undo, new game: whole states


async def test_a_host_without_brief_events_still_gets_every_state(vboard: VirtualBoard) -> None:
    """A protocol 1.1 host never asks for brief events: the board sends it `! st` as before."""
    received = bytearray()
    board = await Board.open_transport(lambda: _Recording(vboard.port, received), brief=False)
    try:
        await _play_and_compare(board)
    finally:
        await board.close()
    lines = bytes(received).split(b"\n")
    assert not [line for line in lines if line.startswith((b"! p ", b"! q "))]
    assert len([line for line in lines if line.startswith(b"! st ")]) >= 8


async def test_a_host_that_asks_gets_an_event_after_every_request_after_a_restart_too(
    vboard: VirtualBoard,
) -> None:
    """Board.ask_every_change (a linked game's side tells its own changes by them): requests
    that reach the board together still get an event each, and a board that restarted (and
    forgot) is asked again when the client reads its state back."""
    received = bytearray()
    client = Client(lambda: _Recording(vboard.port, received), timeout=3.0, brief=False)
    await client.connect()
    board = Board(client)
    seen = EventLog.of(board)
    try:
        await board.ask_every_change()
        for restart in (False, True):
            if restart:
                seen.events.clear()
                await asyncio.get_running_loop().run_in_executor(None, vboard.reset)
                await seen.wait(lambda e: isinstance(e, StateEvent) and e.state.rev == 0)
            assert (await client.request("every")).fields["every"] == "1"
            received.clear()
            revisions = await asyncio.gather(*(board.peg(i % 2, 1) for i in range(6)))
            await board.ping()  # its reply comes after every event of the pegs
            events = [line for line in bytes(received).split(b"\n") if line.startswith(b"! st ")]
            assert [int(line.split(b" r=")[1].split()[0]) for line in events] == sorted(revisions)
    finally:
        await board.close()


def test_a_change_just_before_a_ctrl_c_is_kept(vboard: VirtualBoard) -> None:
    """mpremote's Ctrl-C stops the app inside the second the store waits before saving: the app
    saves on its way out, so the soft reset that follows shows the change."""
    with serial.Serial(vboard.port, timeout=5) as link:
        link.write(b"#c1 peg 0 7\n")
        assert link.read_until(b"#c1 ok")
        link.write(b"\x03")  # at once: well inside the quiet second
        assert b">>> " in link.read_until(b">>> ")
        link.write(b"\x04")  # a soft reset: main.py runs again
        assert b"! hello " in link.read_until(b"! hello ")
        link.readline()
        link.write(b"#c2 st\n")
        reply = link.read_until(b"\n")
        while not reply.startswith(b"#c2 "):
            reply = link.read_until(b"\n")
    assert b" f=7,0 " in reply, reply
