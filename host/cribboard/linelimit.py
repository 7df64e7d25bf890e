"""A cap on the lines one source may write: what a stranger sends can fill no terminal or log.

A hall's director says a line for a table's refused message, a remote game for an unknown end,
a page for a failed accept. A table (or a stranger) that sends ten thousand of them gets the first
few lines of each window, and one line at the window's end saying how many more there were.

    limiter = LineLimiter(print)                  # BURST lines a key within WINDOW_S
    limiter.say("table 3", "table 3: state: not JSON")

The key names the source (a table, the unknown sides together); the summary line starts with
it. Without a running event loop the summary is said with the next line of that key instead of
at the window's end.

    quiet_loop_errors(asyncio.get_running_loop())   # the loop's own error reports, capped too"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cribboard.i18n import n_

BURST = 5  # lines a key may say within one window
WINDOW_S = 60.0
MAX_KEYS = 1024  # keys kept at once: a stranger's made-up keys cannot grow the table for ever


@dataclass
class _Window:
    started: float
    said: int = 0
    held_back: int = 0


class LineLimiter:
    """Says at most `burst` lines a key within `window_s` seconds; the rest are counted and told
    in one line when the window ends."""

    def __init__(
        self,
        say: Callable[[str], None],
        *,
        burst: int = BURST,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._say = say
        self.burst = burst
        self.window_s = window_s
        self._clock = clock
        self._windows: dict[str, _Window] = {}
        self.held_back = 0  # lines not said so far, every key together (tests, figures)

    def say(self, key: str, text: str) -> bool:
        """Say `text` unless `key` has said its lines in this window; True when said."""
        if self.allow(key):
            self._say(text)
            return True
        return False

    def allow(self, key: str) -> bool:
        """Whether `key` may say a line now (counted as said; when not, as held back)."""
        now = self._clock()
        window = self._windows.get(key)
        if window is not None and now - window.started >= self.window_s:
            self._close(key)
            window = None
        if window is None:
            if len(self._windows) >= MAX_KEYS:
                self._close(next(iter(self._windows)))
            window = self._windows[key] = _Window(now)
        if window.said < self.burst:
            window.said += 1
            return True
        if window.held_back == 0:
            self._close_later(key, window)
        window.held_back += 1
        self.held_back += 1
        return False

    def flush(self) -> None:
        """Tell every key's lines held back now (when stopping)."""
        for key in list(self._windows):
            self._close(key)

    def _close_later(self, key: str, window: _Window) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # told with the key's next line
        delay = max(0.0, window.started + self.window_s - self._clock())

        def close() -> None:
            if self._windows.get(key) is window:
                self._close(key)

        loop.call_later(delay, close)

    def _close(self, key: str) -> None:
        window = self._windows.pop(key)
        if window.held_back:
            self._say(
                n_(
                    "%(key)s: %(count)d more line like these in %(seconds)d s, not shown",
                    "%(key)s: %(count)d more lines like these in %(seconds)d s, not shown",
                    window.held_back,
                    key=key,
                    seconds=round(self.window_s),
                )
            )


def quiet_loop_errors(loop: asyncio.AbstractEventLoop) -> None:
    """The event loop's own error reports (a failed accept, a task's unseen exception) a few a
    kind a minute, on stderr: a stranger who makes them by the thousand cannot fill the
    terminal of a process that serves others."""
    limiter = LineLimiter(lambda text: print(text, file=sys.stderr, flush=True))

    def report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if limiter.allow(str(context.get("message", "error"))):
            loop.default_exception_handler(context)

    loop.set_exception_handler(report)
