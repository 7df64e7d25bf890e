"""Hardware-in-the-loop: the host library against a real board on a serial port.

These tests run only when a board is named, and are skipped (with the reason shown) otherwise:

    CRIBBOARD_HIL_PORT=/dev/ttyACM0 python -m pytest tests/hil
    python -m pytest tests/hil --hil-port /dev/ttyACM0

(`--hil-port` works when tests/hil is named on the command line; the variable works always.)
With CRIBBOARD_HIL_INTERACTIVE=1 a person presses the buttons when asked and confirms what the
self-test showed; run pytest with -s to see the prompts in order. The tests start new games and
put the game (target, players, pegs, dealer) back as they found it.

A virtual board is refused (the point is real hardware) unless CRIBBOARD_HIL_ALLOW_VIRTUAL=1,
which lets the suite itself be tried out against `cribboard virtual`.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cribboard.api import Board
from cribboard.transport import DataCallback, LostCallback, SerialTransport, Transport

PORT_ENV = "CRIBBOARD_HIL_PORT"
INTERACTIVE_ENV = "CRIBBOARD_HIL_INTERACTIVE"
ALLOW_VIRTUAL_ENV = "CRIBBOARD_HIL_ALLOW_VIRTUAL"


@pytest.fixture(scope="session")
def hil_port(request: pytest.FixtureRequest) -> str:
    port = request.config.getoption("--hil-port", default=None) or os.environ.get(PORT_ENV)
    if not port:
        pytest.skip(
            f"no real board named: set {PORT_ENV}=/dev/ttyACM0 (or run pytest tests/hil "
            "--hil-port PORT) to run the hardware-in-the-loop tests"
        )
    return str(port)


@pytest.fixture
def interactive() -> None:
    """Skips the test unless a person is at the board to press buttons."""
    if os.environ.get(INTERACTIVE_ENV) != "1":
        pytest.skip(
            f"needs a person at the board: set {INTERACTIVE_ENV}=1 (and run pytest with "
            "-s) to press the buttons when asked"
        )


class LineTap(Transport):
    """A serial transport that also keeps every line the board sends, as raw bytes, so tests
    can check the exact bytes and their order."""

    def __init__(self, port: str, lines: list[bytes], arrived: asyncio.Event) -> None:
        self._inner = SerialTransport(port)
        self.name = self._inner.name
        self._lines = lines
        self._arrived = arrived
        self._partial = bytearray()

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        def tap(data: bytes) -> None:
            self._partial += data
            while b"\n" in self._partial:
                end = self._partial.index(b"\n")
                self._lines.append(bytes(self._partial[:end]).rstrip(b"\r"))
                del self._partial[: end + 1]
                self._arrived.set()
            on_data(data)

        await self._inner.open(tap, on_lost)

    async def write(self, data: bytes) -> None:
        await self._inner.write(data)

    async def close(self) -> None:
        await self._inner.close()


class Lines:
    """The raw lines a board sent, and a way to wait for one."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.arrived = asyncio.Event()

    def mark(self) -> int:
        return len(self.lines)

    async def expect(self, pattern: str, timeout: float, start: int = 0) -> re.Match[bytes]:
        """The first line from index `start` on that matches `pattern` (a regex on the bytes);
        fails the test after `timeout` seconds."""
        regex = re.compile(pattern.encode())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        index = start
        while True:
            while index < len(self.lines):
                match = regex.search(self.lines[index])
                index += 1
                if match:
                    return match
            left = deadline - loop.time()
            if left <= 0:
                seen = b"\n".join(self.lines[start:][-12:]).decode(errors="replace")
                pytest.fail(
                    f"no line matching {pattern!r} within {timeout:g} s; last lines:\n{seen}"
                )
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), left)
            except TimeoutError:
                pass


@pytest.fixture
def lines() -> Lines:
    return Lines()


@pytest.fixture
async def board(hil_port: str, lines: Lines) -> AsyncIterator[Board]:
    b = await Board.open_transport(
        lambda: LineTap(hil_port, lines.lines, lines.arrived), timeout=5.0
    )
    allowed = {"pico2w", "picow", "pico", "esp32s3"} | (
        {"sim"} if os.environ.get(ALLOW_VIRTUAL_ENV) else set()
    )
    if b.hello.board not in allowed:
        await b.close()
        pytest.fail(
            f"{hil_port} is a {b.hello.board!r} board, not real hardware (set "
            f"{ALLOW_VIRTUAL_ENV}=1 to run these tests on the virtual board)"
        )
    before = await b.state()
    try:
        yield b
    finally:
        try:  # put the game back as it was
            await b.new_game(before.target, before.players)
            for p in range(before.players):
                if before.front[p]:
                    await b.set_pegs(p, before.front[p], before.back[p])
            await b.set_dealer(before.dealer)
        finally:
            await b.close()


class Person:
    """Talks to the person at the board (past pytest's output capture) and reads answers from
    the terminal, with a timeout."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self._capsys = capsys

    def say(self, text: str) -> None:
        with self._capsys.disabled():
            print(f"\n>>> {text}", flush=True)

    async def ask(self, question: str, timeout: float = 60.0) -> str | None:
        """The answer typed on the terminal, or None when there is no terminal or no answer."""
        tty = Path("/dev/tty")
        try:
            stream = tty.open("r")
        except OSError:
            return None
        self.say(question)
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()

        def read() -> None:
            text = stream.readline()
            loop.call_soon_threadsafe(lambda: answer.done() or answer.set_result(text))

        threading.Thread(target=read, daemon=True).start()
        try:
            return (await asyncio.wait_for(answer, timeout)).strip().lower()
        except TimeoutError:
            return None


@pytest.fixture
def person(capsys: pytest.CaptureFixture[str]) -> Person:
    return Person(capsys)
