"""Making the pictures: the scene on a fresh virtual board, the terminal's screen drawn, then
the page through a bridge on the same board."""

from __future__ import annotations

import io
from pathlib import Path

from cribboard.api import Board
from cribdev.screenshots.ansi import draw_terminal, last_screen
from cribdev.screenshots.page import page_picture
from cribdev.screenshots.scene import COLUMNS, keeper_screen

TERMINAL_PNG = "terminal.png"
PAGE_PNG = "page.png"
PAGE_RECORD = "page.txt"


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
    picture when `png` is given."""
    from cribboard.bridge.server import Bridge

    async with Bridge([port], http_port=0) as bridge:
        await bridge.registry.wait_connected(10.0)
        return await page_picture(bridge.url, png, front)


async def make_pictures(folder: Path) -> list[Path]:
    """Write the pictures and the page's record into `folder`; returns the files written."""
    from cribboard.virtual import VirtualBoard

    with VirtualBoard() as board:
        png, front = await terminal_png(board.port)
        (folder / TERMINAL_PNG).write_bytes(png)
        record = await page_record(board.port, front, folder / PAGE_PNG)
        (folder / PAGE_RECORD).write_text(record)
    return [folder / TERMINAL_PNG, folder / PAGE_PNG, folder / PAGE_RECORD]
