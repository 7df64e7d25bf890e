"""A best-of-3 match on the virtual board as a table plays it: its first game typed at the
scorekeeper (`keep`), its second pegged with the board's buttons alone while no host follows the
board, the match decided on the board; then `cribboard history --port` reads the board's own
history into the record: both games and the match, once each, however often it is read and
after the board restarts."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cribboard.api import Board, HelloEvent
from cribboard.boardid import board_identity
from cribboard.play.scorekeeper import Scorekeeper
from cribboard.record.store import RECORD_FILE, Record
from cribboard.recorder import Recording
from cribboard.virtual import VirtualBoard, VirtualControl
from cribfw.panel import Panel
from support import EventLog, Presser, wait_saved, wait_state

CLI = [sys.executable, "-m", "cribboard.cli"]


async def history_json(vboard: VirtualBoard, data: Path) -> dict[str, Any]:
    """`cribboard history --port PORT --json` as a person runs it (the board read first)."""
    done = await asyncio.to_thread(
        subprocess.run,
        [*CLI, "history", "--port", vboard.port, "--json"],
        env={**os.environ, "XDG_DATA_HOME": str(data)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


async def test_a_match_half_typed_half_on_the_buttons_is_recorded_once(
    vboard: VirtualBoard, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    (data / "cribboard").mkdir(parents=True)
    async with await Board.open(vboard.port, timeout=3.0) as board:
        # Game 1, at the scorekeeper: it starts the match; blue wins 61 to 10.
        recording = Recording(
            Record.open(data / "cribboard" / RECORD_FILE),
            board_identity(vboard.port, board.hello),
            "keep",
            say=lambda text: None,
        )
        keeper = Scorekeeper(
            board,
            output=lambda text: None,
            target=61,
            recording=recording,
            names=["Ann", "Bob"],
            match=("best_of", 3),
        )
        await keeper.start()
        state = await board.state()
        assert state.match is not None and (state.match.kind, state.match.game) == ("best_of", 1)
        first = state.game
        for line in ("o10", "b20", "b20", "b20", "b1"):
            assert await keeper.handle(line)
        state = await wait_state(board, lambda s: s.winner is not None)
        assert (state.winner, state.games[:2]) == (0, [1, 0])
        await recording.close()  # the host goes: the board plays on by itself

        # Game 2, the board's buttons alone: a long hold of deal, blue pegs 61.
        with VirtualControl(vboard.control) as sim:
            fingers = Presser(sim, board)
            await fingers.hold("deal", Panel.NEW_GAME_MS + 300)
            state = await wait_state(board, lambda s: s.winner is None)
            assert state.match is not None and state.match.game == 2
            for points in (29, 29, 3):
                await fingers.count("A+", points)
                await fingers.tap("deal")
            state = await wait_state(board, lambda s: s.winner is not None)
            # Decided on the board: blue has won two games of three.
            assert state.match is not None and state.match.winner == 0
            assert state.games[:2] == [2, 0] and state.game == first + 1
            # The next game (of the next match): the board leaves game 2, into its history.
            await fingers.hold("deal", Panel.NEW_GAME_MS + 300)
            third = (await wait_state(board, lambda s: s.winner is None)).game

    def check(history: dict[str, Any]) -> None:
        games = sorted(history["games"], key=lambda g: g["id"])
        assert history["finished"] == 2
        assert [(g["source"], g["winner"], g["front"][0]) for g in games] == [
            ("keep", 0, 61),
            ("board", 0, 61),  # never seen by a host: from the board's history
        ]
        decided = [m for m in history["matches"] if m["winner"] is not None]
        assert [(m["kind"], m["length"], m["score"], m["winner"]) for m in decided] == [
            ("best_of", 3, [2, 0], 0)
        ]
        # The match going on on the board now (its first game just begun) is one more.
        assert len(history["matches"]) == 2
        ann = next(p for p in history["players"] if p["player"].get("name") == "Ann")
        assert (ann["games"], ann["won"]) == (1, 1)

    check(await history_json(vboard, data))
    check(await history_json(vboard, data))  # read again: nothing twice

    async with await Board.open(vboard.port, timeout=3.0) as board:
        events = EventLog.of(board)
        # The board restarts once it has saved the new game (and with it the history).
        await wait_saved(vboard.flash_path, lambda g: g.game_no == third)
        vboard.reset()
        await events.wait(lambda e: isinstance(e, HelloEvent), timeout=20)
    check(await history_json(vboard, data))
