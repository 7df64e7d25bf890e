"""The command line's one-shot path (cribboard.oneshot): a board reached without asyncio keeps
what the asyncio client does for a command that asks a few things and exits. It rides a port
another process owns (and serves the processes riding on it while it owns the port); a request
whose reply it never saw is sent again with its id after the owner left, and the board applies
it once; after a power cut it puts back the changes it saw acknowledged (cribboard.journal).
The command line's own output is tests/host/test_cli*.py's; that `peg` loads no asyncio,
tests/host/test_cli_imports.py's."""

from __future__ import annotations

import asyncio
import fcntl
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from cribboard import clientcore, portshare
from cribboard.api import Board
from cribboard.errors import LinkError, ProtocolMismatch
from cribboard.oneshot import NotAtOnce, OneShot
from cribboard.sharing import SharedTransport
from cribboard.virtual import VirtualBoard, VirtualControl
from cribcore import protocol
from powercut import SHORT

WAIT_S = 10.0
T = TypeVar("T")


def peg_at_once(port: str, player: int, points: int) -> tuple[OneShot, int, list[int]]:
    """`cribboard peg` as the one-shot path runs it: the board, the revision, the fronts after."""
    with OneShot(port, timeout=WAIT_S) as board:
        board.open()
        rev = board.peg(player, points)
        return board, rev, board.state().front


async def test_it_rides_an_open_board_and_a_request_the_owner_dropped_counts_once(
    vboard: VirtualBoard,
) -> None:
    """An open Board owns the port: the one-shot path rides on it. The owner passes its peg to
    the board and leaves before the reply comes back: the one-shot path claims the port, sends
    the same line (the same id) again and gets the board's remembered reply; the peg counts
    once."""
    owner = await Board.open(vboard.port, reconnect=False)
    transport = owner._client._transport
    assert isinstance(transport, SharedTransport) and transport._server is not None
    server = transport._server
    forward = server._write_line
    rode: list[bytes] = []

    def forward_then_leave(line: bytes) -> None:
        rode.append(line)
        forward(line)
        if b" peg " in line:
            server.broadcast = lambda data: None  # type: ignore[method-assign]  # reply lost
            asyncio.get_running_loop().create_task(owner.close())

    server._write_line = forward_then_leave
    try:
        board, rev, front = await asyncio.to_thread(peg_at_once, vboard.port, 0, 5)
        assert [line.split()[1] for line in rode] == [b"hello", b"st", b"peg"]
        assert (rev, front) == (1, [5, 0])
        assert board.journal.lost({"r": "0"}, {}) is None  # (a state it never saw)
    finally:
        await owner.close()
    assert portshare.holder_of(vboard.port) is None  # it owned the port, then let it go


def test_a_port_whose_owner_is_leaving_is_claimed_again(
    vboard: VirtualBoard, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its owner holds the port's lock and has closed its socket (it is leaving): the one-shot
    path, refused a ride, claims the port again once the owner is gone (many `cribboard peg`s
    at once take the port from each other this way)."""
    lock, _setup, _socket = portshare._paths(vboard.port)
    held = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)
    os.pwrite(held, b"4242\ncribboard peg\n", 0)
    claim = portshare.claim
    refused: list[str] = []

    def refused_while_it_leaves(url: str, open_port: Callable[[], T]) -> object:
        try:
            return claim(url, open_port)
        except LinkError as err:
            refused.append(str(err))
            os.close(held)  # it has left
            raise

    monkeypatch.setattr(portshare, "claim", refused_while_it_leaves)
    _board, rev, front = peg_at_once(vboard.port, 1, 2)
    assert len(refused) == 1 and "in use by cribboard peg (pid 4242)" in refused[0]
    assert (rev, front) == (1, [0, 2])


def test_it_serves_a_rider_while_it_owns_the_port(vboard: VirtualBoard) -> None:
    with OneShot(vboard.port, timeout=WAIT_S) as board:
        board.open()
        _lock, _setup, path = portshare._paths(vboard.port)
        rider = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        rider.connect(str(path))
        rider.settimeout(WAIT_S)
        # Ctrl-C, a line longer than the board takes, a line that is no request: none of them
        # reaches the board; a request does, and its reply comes back to the rider, as the
        # board's events do.
        rider.sendall(b"\x03\r\n" + b"peg 1 9" * 100 + b"\nhello there\n#zz peg 1 4\n")
        for _ in range(100):  # (each request reads what arrived, the rider's line too)
            if board.state().front == [0, 4]:
                break
        assert board.state().front == [0, 4]
        seen = b""
        while b"#zz ok" not in seen and (chunk := rider.recv(4096)):
            seen += chunk
        assert b"#zz ok" in seen
        assert b"\x03" not in seen
    assert rider.recv(4096) == b""  # it closed: the rider's link drops, to claim the port
    rider.close()


def test_changes_it_saw_acknowledged_and_a_power_cut_took_are_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SHORT.env().items():
        monkeypatch.setenv(name, value)
    with (
        VirtualBoard(flash=tmp_path / "flash.img") as vboard,
        VirtualControl(vboard.control) as sim,
    ):
        with OneShot(vboard.port, timeout=WAIT_S) as board:
            board.open()
            sim.break_at_flash_point(0)  # the save stops at its first step: the cut keeps nothing
            board.peg(0, 5)
            board.set_dealer(1)
            sim.wait_flash_stop(WAIT_S)  # (stopped: it answers nothing)
            vboard.reset()  # the power cut
            after = board.state()  # the board's `! hello` comes first: both are put back
            assert (after.front, after.dealer) == ([5, 0], 1)
            assert after.undo == 2  # each applied once


def test_a_url_it_does_not_take_goes_to_the_asyncio_path() -> None:
    with pytest.raises(NotAtOnce), OneShot("loop://", timeout=WAIT_S) as board:
        board.open()


def test_a_board_of_another_protocol_major_is_refused(
    vboard: VirtualBoard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clientcore, "SUPPORTED_MAJOR", protocol.PROTOCOL_MAJOR + 1)
    with pytest.raises(ProtocolMismatch, match="update"), OneShot(vboard.port) as board:
        board.open()
    assert portshare.holder_of(vboard.port) is None  # a connect that fails leaves nothing open
