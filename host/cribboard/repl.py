"""A board left at MicroPython's prompt: recognised when a link opens, and its app restarted.

After `mpremote exec` or `mpremote repl` (what makers do), a board sits at MicroPython's REPL:
the Ctrl-C that mpremote sent stopped the app, and nothing runs it again until the board is
reset. The host sees that while it says hello: the friendly REPL echoes the line and answers
with its `>>> ` prompt; the raw REPL (mpremote killed halfway) answers nothing, and a Ctrl-B
brings it back to the friendly REPL, which then prints its banner and prompt. A soft reset
(Ctrl-D at the friendly prompt) runs main.py again, as on power-up; from the raw REPL it would
not, hence the Ctrl-B first. The virtual board behaves the same (docs/virtual-board.md).

These control bytes are MicroPython's REPL keys, sent only here, on the way to a board that did
not answer as a cribboard; the protocol itself never carries them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from cribboard import wire
from cribboard.errors import LinkError
from cribboard.transport import DataCallback, Transport
from cribboard.waiting import within

log = logging.getLogger(__name__)

CTRL_B = b"\x02"  # leave the raw REPL for the friendly one (which prints its banner)
CTRL_C = b"\x03"  # at the friendly prompt: drop a half-typed line, prompt again
CTRL_D = b"\x04"  # at the friendly prompt, on an empty line: soft reset, main.py runs

FRIENDLY_PROMPTS = (b">>> ", b"\n... ")
RAW_BANNER = b"raw REPL; CTRL-B to exit"
PROMPT_WAIT = 0.5  # seconds for a prompt after a key, on a board already at the REPL
_KEEP = 256  # bytes of the link's latest output looked at


class AtPrompt(LinkError):
    """The board is at MicroPython's prompt, its app stopped (it was not restarted)."""


class PromptWatch:
    """Watches what a board sends while its link opens, for MicroPython's prompts."""

    def __init__(self) -> None:
        self.tail = b""
        self.watching = True
        self._arrived = asyncio.Event()

    def tap(self, on_data: DataCallback) -> DataCallback:
        """`on_data`, with this watch looking at the bytes first."""

        def data(chunk: bytes) -> None:
            if self.watching:
                self.tail = (self.tail + chunk)[-_KEEP:]
                self._arrived.set()
            on_data(chunk)

        return data

    def stop(self) -> None:
        """The link is open: stop looking."""
        self.watching = False
        self.tail = b""

    def prompt(self) -> str | None:
        """ "friendly" or "raw" when the board's latest output ends in that REPL's prompt."""
        if self.tail.endswith(FRIENDLY_PROMPTS):
            return "friendly"
        if self.tail.endswith(b">") and (RAW_BANNER in self.tail or self.tail.endswith(b"\x04>")):
            return "raw"
        return None

    async def wait_prompt(self, timeout: float | None) -> str | None:
        """The REPL whose prompt the board shows next (or shows now), None after `timeout`."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            found = self.prompt()
            if found is not None:
                return found
            self._arrived.clear()
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return None
            try:
                await within(self._arrived.wait(), remaining)
            except TimeoutError:
                return None

    async def key(self, transport: Transport, key: bytes) -> str | None:
        """Send a REPL key; the prompt the board answers with (None: none came)."""
        self.tail = b""
        await transport.write(key)
        return await self.wait_prompt(PROMPT_WAIT)


Hello = Callable[[], Awaitable[wire.Line]]


async def hello_or_restart(
    transport: Transport, watch: PromptWatch, hello: Hello, name: str, *, restart: bool = True
) -> wire.Line:
    """The board's reply to `hello()`. A board at MicroPython's prompt instead gets its app
    restarted with a soft reset (said in one line, a warning of this module's logger), then
    `hello()` again; with `restart` off it raises AtPrompt."""
    asking = asyncio.ensure_future(hello())
    prompted = asyncio.ensure_future(watch.wait_prompt(None))
    try:
        await asyncio.wait((asking, prompted), return_when=asyncio.FIRST_COMPLETED)
    finally:
        prompted.cancel()
    if asking.done():
        try:
            return asking.result()
        except LinkError as silence:
            # No answer at all: the raw REPL says nothing until Ctrl-B brings the friendly one
            # (an app ignores the byte).
            try:
                mode = await watch.key(transport, CTRL_B)
            except LinkError:
                mode = None
            if mode is None:
                raise silence
            mode = "raw"  # it was: the friendly REPL echoes, and answered at once
    else:
        asking.cancel()
        with contextlib.suppress(asyncio.CancelledError, LinkError):
            await asking
        mode = watch.prompt()
    assert mode is not None
    if not restart:
        raise AtPrompt(
            f"{name}: the board is at the MicroPython prompt, its app stopped "
            "(after mpremote?): open it by its port to restart the app"
        )
    if watch.prompt() == "raw":
        await watch.key(transport, CTRL_B)
    await watch.key(transport, CTRL_C)
    watch.tail = b""
    await transport.write(CTRL_D)
    try:
        reply = await hello()
    except LinkError:
        raise LinkError(
            f"{name}: the board was at the MicroPython prompt and no cribboard app answered "
            "after a soft reset: is the firmware on it? (cribboard deploy)"
        ) from None
    log.warning(
        "%s: the board was at the MicroPython prompt (%s REPL): a soft reset restarted its app",
        name,
        mode,
    )
    return reply
