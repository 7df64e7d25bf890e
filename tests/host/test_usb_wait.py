"""The USB link's wait on the real MicroPython interpreter (the unix port): its lines are handled
inside asyncio's own wait for I/O (cribfw/usblink.py SchedulerWait), and every other stream the
scheduler waits on still wakes its task, reading and writing; at the end of input the link
stops polling stdin rather than spinning. The same script runs with the link waiting as a task
(the path where asyncio's queue is not as SchedulerWait expects)."""

import os
import select
import socket
import subprocess
from pathlib import Path

import pytest

from cribboard.virtual.interpreter import find_micropython

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import asyncio, sys
from cribfw import usblink

if sys.argv[-2] == "task":
    usblink.SchedulerWait.attach = staticmethod(lambda asyncio, stdin, on_ready: None)
PORT = int(sys.argv[-1])


class Context:  # the board's part the link takes: the USB host's remembered replies
    def __init__(self):
        from cribfw.replies import Books

        self.books = Books()


class Recorder:  # the dispatcher's part the link calls
    def __init__(self):
        self.lines = []
        self.done = 0
        self.ctx = Context()

    def handle_line(self, link, line, n):
        self.lines.append(bytes(line[:n]))

    def line_too_long(self, link, request_id, id_len):
        self.lines.append(b"too long")

    def input_done(self):
        self.done += 1


def say(*words):
    print(*words)
    sys.stdout.flush() if hasattr(sys.stdout, "flush") else None


async def echo(reader, writer):
    while True:
        data = await reader.read(64)
        if not data:
            break
        writer.write(data)
        await writer.drain()  # waits for the socket to be writable: a writer in the poll
    writer.close()
    await writer.wait_closed()


async def main():
    recorder = Recorder()
    link = usblink.UsbLink(sys.stdin.buffer, sys.stdout.buffer, recorder)
    reads = [0, 0]  # reads of stdin, and those that found nothing (the end of input)

    def count(n):
        reads[0] += 1
        if not n:
            reads[1] += 1
        return n

    if sys.argv[-2] == "task":  # the task reads a byte through asyncio's stream, then drains
        readinto = asyncio.StreamReader.readinto

        async def counted_readinto(self, buf):
            return count(await readinto(self, buf))

        asyncio.StreamReader.readinto = counted_readinto
    else:  # the scheduler's wait drains stdin when the poll says it is readable
        drain = link.drain
        link.drain = lambda: count(drain())
    asyncio.create_task(link.run())
    server = await asyncio.start_server(echo, "127.0.0.1", PORT)
    reader, writer = await asyncio.open_connection("127.0.0.1", PORT)
    say("ready")
    rounds = 0
    while len(recorder.lines) < 3:  # a TCP round trip at a time while the lines come in
        message = b"round %d" % rounds
        writer.write(message)
        await writer.drain()
        got = b""
        while len(got) < len(message):
            got += await reader.read(64)
        assert got == message, (got, message)
        rounds += 1
    say("lines", b",".join(recorder.lines).decode(), "done", recorder.done > 0, "rounds", rounds > 0)
    while not reads[1]:  # the host closes stdin once it has read the lines
        await asyncio.sleep_ms(10)
    ticks = 0
    while ticks < 20:  # other tasks keep running; the ended input is read now and then only
        await asyncio.sleep_ms(10)
        ticks += 1
    say("ended", reads[1], "ticks", ticks)
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()


asyncio.run(main())
"""


def read_line(board: "subprocess.Popen[bytes]", timeout: float = 60) -> bytes:
    """The board's next line; fails (rather than hanging) when none comes within `timeout`:
    a task the scheduler never woke again."""
    assert board.stdout is not None
    ready, _, _ = select.select([board.stdout], [], [], timeout)
    assert ready, "the board went silent: " + repr(board.stderr.read() if board.stderr else b"")
    return board.stdout.readline()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("wait", ["scheduler", "task"])
def test_lines_and_other_streams_share_the_scheduler(wait: str) -> None:
    env = dict(os.environ, MICROPYPATH=".frozen:" + str(ROOT / "firmware"))  # (asyncio is frozen)
    board = subprocess.Popen(
        [find_micropython(), "-c", SCRIPT, wait, str(free_port())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    try:
        assert board.stdin is not None and board.stdout is not None
        assert read_line(board) == b"ready\n"
        board.stdin.write(b"#1 peg 0 5\nping\n")
        board.stdin.flush()
        board.stdin.write(b"#2 st\n")
        board.stdin.flush()
        assert read_line(board) == b"lines #1 peg 0 5,ping,#2 st done True rounds True\n"
        board.stdin.close()  # the end of input
        ended = read_line(board).split()
        assert ended[0] == b"ended" and ended[2:] == [b"ticks", b"20"], ended
        # 20 ticks of 10 ms: the ended input was polled again every 50 ms, not in a busy loop.
        assert 1 <= int(ended[1]) <= 10, ended
        assert board.wait(timeout=60) == 0, board.stderr.read() if board.stderr else b""
    finally:
        board.kill()
        board.wait()
