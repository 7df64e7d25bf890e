"""Waiting with a time limit, without losing a cancellation.

On Python 3.11, :func:`asyncio.wait_for` swallows a cancellation that arrives in the same loop
turn as the awaited thing completes: it returns the result and the caller runs on as if never
cancelled (CPython gh-86296, fixed in 3.12). A task stopped that way never stops: the hall's
director kept running after Ctrl-C, and whoever awaited it waited for ever. Every time-limited
wait in cribboard goes through :func:`within`, built on :func:`asyncio.timeout`, which keeps
the cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def within(awaitable: Awaitable[T], timeout: float | None) -> T:
    """`await awaitable`; TimeoutError after `timeout` seconds (None: no limit). A
    cancellation always reaches the caller, even one that meets the awaitable's completion."""
    async with asyncio.timeout(timeout):
        return await awaitable
