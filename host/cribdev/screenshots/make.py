"""Making the pictures: the scene on a fresh virtual board, the terminal's screen drawn, then
the page through a bridge on the same board."""

from __future__ import annotations

import io
import random
import tempfile
from pathlib import Path

from cribboard.api import Board
from cribdev.screenshots.ansi import draw_terminal, last_screen
from cribdev.screenshots.page import history_picture, page_picture
from cribdev.screenshots.scene import COLUMNS, keeper_screen

TERMINAL_PNG = "terminal.png"
PAGE_PNG = "page.png"
PAGE_RECORD = "page.txt"
HISTORY_PNG = "history.png"
HISTORY_RECORD = "history.txt"


async def terminal_png(port: str) -> tuple[bytes, list[int]]:
    """The scorekeeper's screen for the scene on the board at `port`, as PNG bytes; and the
    scores it leaves on the board."""
    async with await Board.open(port, timeout=3.0) as board:
        screen = await keeper_screen(board)
        front = (await board.state()).front
    buffer = io.BytesIO()
    draw_terminal(last_screen(screen), COLUMNS).save(buffer, "PNG", optimize=True)
    return buffer.getvalue(), front


async def page_record(port: str, front: list[int], png: Path | None) -> str:
    """The page through a bridge on `port` (already showing the scene): its record, and its
    picture when `png` is given. Its record of games is a file of its own, never the user's."""
    from cribboard.bridge.server import Bridge

    with tempfile.TemporaryDirectory(prefix="cribboard-shot-") as folder:
        record = Path(folder) / "record.sqlite"
        async with Bridge([port], http_port=0, record_path=record) as bridge:
            await bridge.registry.wait_connected(10.0)
            return await page_picture(bridge.url, png, front)


HISTORY_GAMES = 9
HISTORY_SEED = 38
HISTORY_CLOCK = "2026-06-20T19:30:00.000+00:00"
"""The history's games: made up (cribdev.recordgen), the same each time, at one time."""


async def history_record(port: str, png: Path | None) -> str:
    """The history on a phone, through a bridge on `port` with a record of made-up games: its
    record, and its picture when `png` is given."""
    from cribboard.bridge.server import Bridge
    from cribboard.record.store import Record
    from cribdev.recordgen import play_games

    with tempfile.TemporaryDirectory(prefix="cribboard-shot-") as folder:
        path = Path(folder) / "record.sqlite"
        rng = random.Random(HISTORY_SEED)
        with Record.open(path, clock=lambda: HISTORY_CLOCK) as record:
            # A best of 3 between Ann and Bob (to two wins), then anyone against anyone.
            wins = [0, 0]
            while max(wins) < 2:
                (game,) = play_games(record, 1, rng, people=("Ann", "Bob"), seated=True)
                if game.winner is not None:
                    wins[game.winner] += 1
            ids = [row[0] for row in record.db.execute("SELECT id FROM games ORDER BY id")]
            winner = wins.index(2)
            record.add_match("gen:board", 1, kind="best_of", length=3, games=ids, winner=winner)
            play_games(record, HISTORY_GAMES - len(ids), rng)
        async with Bridge([port], http_port=0, record_path=path) as bridge:
            await bridge.registry.wait_connected(10.0)
            return await history_picture(bridge.url, png)


async def make_pictures(folder: Path) -> list[Path]:
    """Write the pictures and the page's record into `folder`; returns the files written."""
    from cribboard.virtual import VirtualBoard

    with VirtualBoard() as board:
        png, front = await terminal_png(board.port)
        (folder / TERMINAL_PNG).write_bytes(png)
        record = await page_record(board.port, front, folder / PAGE_PNG)
        (folder / PAGE_RECORD).write_text(record)
        history = await history_record(board.port, folder / HISTORY_PNG)
        (folder / HISTORY_RECORD).write_text(history)
    return [
        folder / TERMINAL_PNG,
        folder / PAGE_PNG,
        folder / PAGE_RECORD,
        folder / HISTORY_PNG,
        folder / HISTORY_RECORD,
    ]
