"""What a power cut took, the host puts back; what it did not take, the host does not apply again.

Through real power cuts of the virtual board (its interpreter killed, as VirtualBoard.reset()
does), aimed with the side channel's flash break (the board stopped at the first step of the
save that would have kept a change): the library (cribboard.client) resends a request whose
reply it never saw after the board's `! hello`, and the board applies it once whether or not its
change came back with the game; changes the host saw acknowledged and the cut took are put back
(cribboard.journal), and its subscribers get one `restored` event, which `watch` tells in one
line. docs/protocol.md, section 7.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cribboard.api import Board
from cribboard.events import RestoredEvent
from cribboard.play.scorekeeper import Scorekeeper
from cribboard.transport import DataCallback, LostCallback, SerialTransport
from cribboard.virtual import VirtualBoard, VirtualControl
from cribboard.watchwords import ChangeTeller
from powercut import SHORT, to_the_entrys_end

WAIT_S = 10.0


@pytest.fixture
def slow_store(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SHORT.env().items():
        monkeypatch.setenv(name, value)


class LossyTransport(SerialTransport):
    """A serial transport that loses the board's reply to one request id (a reply in the air
    when the link failed): the client never sees it."""

    def __init__(self, port: str, lose: list[bytes]) -> None:
        super().__init__(port)
        self._lose = lose  # reply prefixes (b"#id "), each lost once
        self._partial = bytearray()

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        def filtered(data: bytes) -> None:
            self._partial += data
            end = self._partial.rfind(b"\n") + 1
            lines, self._partial[:end] = bytes(self._partial[:end]), b""
            kept = []
            for line in lines.splitlines(keepends=True):
                lost = [p for p in self._lose if line.startswith(p)]
                if lost:
                    self._lose.remove(lost[0])
                else:
                    kept.append(line)
            if kept:
                on_data(b"".join(kept))

        await super().open(filtered, on_lost)


async def open_board(port: str, lose: list[bytes] | None = None) -> Board:
    lose = [] if lose is None else lose
    return await Board.open_transport(lambda: LossyTransport(port, lose), timeout=WAIT_S)


async def until_saved(sim: VirtualControl, image: Path) -> None:
    """The board is stopped at the first step of a save: run it to the save's end and on."""
    stop = await asyncio.to_thread(sim.wait_flash_stop, WAIT_S)
    while stop.kind != "program":
        sim.break_at_flash_point(stop.total - stop.index if stop.index < stop.total else 1)
        stop = await asyncio.to_thread(sim.wait_flash_stop, WAIT_S)
    if stop.index < stop.total:
        sim.break_at_flash_point(stop.total - stop.index)
        stop = await asyncio.to_thread(sim.wait_flash_stop, WAIT_S)
    await asyncio.to_thread(to_the_entrys_end, sim, stop, image, WAIT_S)
    sim.break_at_flash_point(-1)


def restored_events(board: Board) -> list[RestoredEvent]:
    events: list[RestoredEvent] = []
    board.subscribe(lambda e: events.append(e) if isinstance(e, RestoredEvent) else None)
    return events


async def test_changes_acknowledged_and_lost_in_a_cut_are_put_back_in_order(
    tmp_path: Path, slow_store: None
) -> None:
    image = tmp_path / "flash.img"
    with VirtualBoard(flash=image) as vboard, VirtualControl(vboard.control) as sim:
        board = await open_board(vboard.port)
        try:
            restored = restored_events(board)
            told: list[str] = []
            Scorekeeper(board, output=told.append)  # `keep` on this board says it too
            sim.break_at_flash_point(0)
            await board.peg(0, 7)
            await until_saved(sim, image)  # on the flash: a cut keeps it
            sim.break_at_flash_point(0)  # the next save stops at its first step: nothing kept
            await board.peg(0, 5)
            await board.peg(1, 3)
            await board.set_dealer(1)
            await board.brightness(90)
            await board.peg(0, 2, if_front=12)  # (its condition held: put back as it was)
            await asyncio.to_thread(sim.wait_flash_stop, WAIT_S)  # (stopped: it answers nothing)
            vboard.reset()  # the power cut
            async with asyncio.timeout(WAIT_S):
                while not restored:
                    await asyncio.sleep(0.01)
            assert restored[0].fields == {"lost": "5", "back": "5", "refused": "0"}
            after = await board.state()
            assert (after.front, after.back, after.dealer, after.undo) == ([14, 3], [12, 0], 1, 5)
            assert await board.brightness() == 90
            line = "the board came back from a power cut without 5 changes made here: put back"
            assert ChangeTeller().tell(restored[0]) == [line] and told == [line]
        finally:
            await board.close()


async def test_a_match_started_and_lost_in_a_cut_is_put_back(
    tmp_path: Path, slow_store: None
) -> None:
    """A match is saved with the game (protocol 1.4): one this host started and saw
    acknowledged, then lost in a cut, is put back with the pegs after it."""
    image = tmp_path / "flash.img"
    with VirtualBoard(flash=image) as vboard, VirtualControl(vboard.control) as sim:
        board = await open_board(vboard.port)
        try:
            restored = restored_events(board)
            sim.break_at_flash_point(0)
            await board.peg(0, 7)
            await until_saved(sim, image)
            sim.break_at_flash_point(0)  # the next save stops at its first step: nothing kept
            await board.start_match(3)
            await board.peg(1, 4)
            await asyncio.to_thread(sim.wait_flash_stop, WAIT_S)
            vboard.reset()  # the power cut
            async with asyncio.timeout(WAIT_S):
                while not restored:
                    await asyncio.sleep(0.01)
            assert restored[0].fields == {"lost": "2", "back": "2", "refused": "0"}
            after = await board.state()
            assert after.match is not None and (after.match.kind, after.match.length) == (
                "best_of",
                3,
            )
            assert (after.front, after.match.game) == ([0, 4], 1)
        finally:
            await board.close()


async def test_a_request_whose_reply_was_lost_is_applied_once_across_a_cut(
    tmp_path: Path, slow_store: None
) -> None:
    """Its change saved (its id with it) or not: the library sends it again after the board's
    `! hello`, and the board applies it once either way."""
    image = tmp_path / "flash.img"
    with VirtualBoard(flash=image) as vboard, VirtualControl(vboard.control) as sim:
        for saved in (True, False):
            lose: list[bytes] = []
            board = await open_board(vboard.port, lose)
            try:
                restored = restored_events(board)
                front = (await board.state()).front[0]
                lose.append(b"#")  # the reply to the next request with an id is lost
                sim.break_at_flash_point(0)
                peg = asyncio.ensure_future(board.peg(0, 4))
                if saved:
                    await until_saved(sim, image)
                else:
                    await asyncio.to_thread(sim.wait_flash_stop, WAIT_S)
                assert not peg.done()
                vboard.reset()
                await asyncio.wait_for(peg, WAIT_S)
                state = await board.state()
                assert state.front[0] == front + 4, (saved, state)
                assert not restored  # nothing acknowledged was lost
            finally:
                await board.close()
                sim.break_at_flash_point(-1)


async def test_a_board_back_at_a_game_this_host_never_saw_gets_nothing_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another host's change, then this host's, neither saved yet (the store waits a minute
    here); the cut takes both: the board comes back at a game this host never saw. It cannot
    tell what its change was made on, so it puts nothing back (never a guess) and says so."""
    monkeypatch.setenv("CRIBBOARD_SIM_STORE_MS", "60000,120000")
    with VirtualBoard(flash=tmp_path / "flash.img") as vboard:
        other = await open_board(vboard.port)
        await other.peg(1, 6)
        await other.close()
        board = await open_board(vboard.port)
        try:
            restored = restored_events(board)
            await board.peg(0, 1)
            vboard.reset()
            async with asyncio.timeout(WAIT_S):
                while not restored:
                    await asyncio.sleep(0.01)
            assert restored[0].fields == {"unknown": "1"}
            assert (await board.state()).front == [0, 0]
            assert ChangeTeller().tell(restored[0]) == [
                "the board came back at a game this program never saw: check the score"
            ]
        finally:
            await board.close()
