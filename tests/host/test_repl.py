"""A board left at MicroPython's prompt (after mpremote, as makers use it): the host recognises
the friendly or the raw REPL when it opens the board, restarts the app with a soft reset, and
says so in one line. mpremote and the virtual board are the real ones."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
import serial

from cribboard.api import Board
from cribboard.client import Client
from cribboard.discovery import find_boards
from cribboard.errors import LinkError
from cribboard.repl import AtPrompt
from cribboard.transport import SerialTransport
from cribboard.virtual import VirtualBoard
from rp2support import read_until

MPREMOTE = Path(sys.executable).with_name("mpremote")
CLI = [sys.executable, "-m", "cribboard.cli"]


def mpremote(port: str, *args: str) -> str:
    done = subprocess.run(
        [str(MPREMOTE), "connect", port, *args], capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def leave_in_raw_repl(port: str) -> None:
    """What an mpremote killed halfway leaves: the board in the raw REPL. Each step waits for
    the board's prompt (a Ctrl-A sent while the app is still stopping would be lost)."""
    with serial.Serial(port, timeout=0.2) as board:
        # The app first: a Ctrl-C while it is still starting (its Bluetooth being set up) makes
        # MicroPython reboot into the app again, never to the REPL.
        board.write(b"#up ping\n")
        read_until(board, b"#up ok\n")
        board.write(b"\r\x03\x03")  # Ctrl-C: the app stops at the friendly REPL
        read_until(board, b">>> ")
        board.write(b"\r\x01")  # Ctrl-A: the raw REPL
        read_until(board, b"raw REPL; CTRL-B to exit\r\n>")


def status(port: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "--port", port, "status", "--no-color"], capture_output=True, text=True, timeout=30
    )


def test_status_after_mpremote_exec_restarts_the_app(vboard: VirtualBoard) -> None:
    assert mpremote(vboard.port, "exec", "print(6 * 7)").strip() == "42"
    result = status(vboard.port)
    assert result.returncode == 0, result.stderr
    assert "game to 121" in result.stdout
    assert result.stderr == (
        f"{vboard.port}: the board was at the MicroPython prompt (friendly REPL): "
        "a soft reset restarted its app\n"
    )
    again = status(vboard.port)  # the app runs: nothing more to say
    assert again.returncode == 0 and again.stderr == ""


async def test_a_board_left_in_the_raw_repl(
    vboard: VirtualBoard, caplog: pytest.LogCaptureFixture
) -> None:
    leave_in_raw_repl(vboard.port)
    with caplog.at_level(logging.WARNING, logger="cribboard.repl"):
        async with await Board.open(vboard.port) as board:
            await board.peg(0, 5)
            assert (await board.state()).front[0] == 5
    notes = [r.getMessage() for r in caplog.records if r.name == "cribboard.repl"]
    assert notes == [
        f"{vboard.port}: the board was at the MicroPython prompt (raw REPL): "
        "a soft reset restarted its app"
    ]


async def test_without_restart_the_prompt_is_reported_and_left_alone(
    vboard: VirtualBoard,
) -> None:
    """Discovery looks at every board on USB: it says a board is at the prompt, but restarts
    nothing (a board running something else than a cribboard is left as it is)."""
    mpremote(vboard.port, "exec", "x = 1")
    looking = Client(
        lambda: SerialTransport(vboard.port),
        timeout=1.0,
        heartbeat=0,
        reconnect=False,
        restart_at_prompt=False,
    )
    with pytest.raises(AtPrompt, match="at the MicroPython prompt"):
        await looking.connect()
    await looking.close()
    [found] = await find_boards([(vboard.port, "the virtual board")])
    assert found.hello is None and found.at_prompt and "--port" not in found.problem
    assert mpremote(vboard.port, "resume", "exec", "print(x)").strip() == "1"  # the same session


async def test_a_board_without_the_app_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "boot.py").write_text("")  # stock MicroPython: no main.py
    with VirtualBoard(firmware=str(tmp_path)) as bare:
        with pytest.raises(LinkError, match=r"no cribboard app answered .*cribboard deploy"):
            await Board.open(bare.port, timeout=1.0)


def test_an_app_stopped_with_ctrl_c_leaves_no_task_behind(vboard: VirtualBoard) -> None:
    """asyncio's queues outlive the app in the interpreter: after a Ctrl-C none of the stopped
    app's tasks is left in them, and `main()` run again from the REPL is the only app reading
    the link (each request answered once, in order)."""
    with serial.Serial(vboard.port, timeout=0.2) as board:
        board.write(b"#up ping\n")
        read_until(board, b"#up ok\n")
        board.write(b"\r\x03\x03")
        read_until(board, b">>> ")
        left = b"from asyncio import core; print('left' ':', core._task_queue.peek(), core._io_queue.map)"
        board.write(left + b"\r")
        read_until(board, b"left:")  # (the echo has 'left' ':')
        assert read_until(board, b"\n").strip() == b"None {}"
        board.write(b"import cribfw.app; cribfw.app.main()\r")
        board.write(b"#a ping\n")
        read_until(board, b"#a ok\n")
        for ident, request, reply in (
            (b"b", b"peg 0 5", b"ok r=1"),
            (b"c", b"peg 1 3", b"ok r=2"),
            (b"d", b"undo", b"ok r=3"),
            (b"e", b"undo", b"ok r=4"),
            (b"f", b"undo", b"err nothing_to_undo"),
        ):
            board.write(b"#%s %s\n" % (ident, request))
            answer = read_until(board, b"\n")
            while answer.startswith(b"! "):  # the change's event comes first
                answer = read_until(board, b"\n")
            assert answer.startswith(b"#%s %s" % (ident, reply)), answer
