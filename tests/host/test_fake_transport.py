"""The fake transport for tests (cribboard.testing) keeps the contract of the real ones
(cribboard.transport.Transport): data from the event loop, never from inside `write`, in the
pieces asked for; `on_lost` once, never after `close()`; a write to a lost or closed link
fails. A test on it can then trust what the client sees."""

from __future__ import annotations

import asyncio

import pytest

from cribboard.errors import LinkError
from cribboard.testing import FakeTransport, Request


def answers(request: Request) -> list[bytes]:
    return [request.ok(verb=request.verb, n=len(request.args))]


class Ends:
    def __init__(self) -> None:
        self.data: list[bytes] = []
        self.lost: list[Exception | None] = []

    def on_data(self, chunk: bytes) -> None:
        self.data.append(chunk)

    def on_lost(self, error: Exception | None) -> None:
        self.lost.append(error)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_replies_come_later_from_the_loop_in_the_pieces_asked_for() -> None:
    link, ends = FakeTransport(answers, chunk=4), Ends()
    await link.open(ends.on_data, ends.on_lost)
    await link.write(b"#a1 @7 peg 0 ")
    await link.write(b"5\n\n")  # a line in two writes; a blank line is no request
    assert ends.data == []  # not from inside write
    await settle()
    assert b"".join(ends.data) == b"#a1 ok verb=peg n=2\n" and {len(c) for c in ends.data} == {4}
    (request,) = link.requests
    assert (request.id, request.if_rev, request.verb, request.args) == ("a1", 7, "peg", ("0", "5"))
    assert request.err("bad_arg", "no") == b"#a1 err bad_arg no"


async def test_a_stalled_board_answers_what_it_kept_when_it_resumes() -> None:
    link, ends = FakeTransport(answers), Ends()
    await link.open(ends.on_data, ends.on_lost)
    link.stall()
    await link.write(b"ping\n")
    await settle()
    assert ends.data == [] and len(link.requests) == 1
    link.resume()
    await settle()
    assert ends.data == [b"ok verb=ping n=0\n"]


async def test_a_lost_link_is_told_once_and_says_nothing_more() -> None:
    link, ends = FakeTransport(answers), Ends()
    await link.open(ends.on_data, ends.on_lost)
    await link.write(b"ping\n")  # its reply is on its way when the link goes
    link.drop(LinkError("unplugged"))
    link.drop()
    link.push(b"! st r=1")
    await settle()
    assert ends.data == [] and [str(e) for e in ends.lost] == ["unplugged"]
    with pytest.raises(LinkError):
        await link.write(b"ping\n")


async def test_nothing_is_told_after_close() -> None:
    link, ends = FakeTransport(answers), Ends()
    await link.open(ends.on_data, ends.on_lost)
    link.drop()
    await link.close()  # before the loss was told
    await settle()
    assert ends.lost == [] and not link.is_open
    with pytest.raises(LinkError):
        await link.write(b"ping\n")
    with pytest.raises(LinkError, match="opened once"):
        await link.open(ends.on_data, ends.on_lost)
