"""Debian's headless Chromium through Playwright, for the tests of the bridge's page, the hall's
page and the page in other languages (`make browser` installs it)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

needs_chromium = pytest.mark.skipif(
    not os.access(CHROMIUM, os.X_OK),
    reason=f"no {CHROMIUM}: `make browser` installs Debian's chromium",
)


@contextlib.asynccontextmanager
async def chromium(
    width: int, height: int, extra_args: tuple[str, ...] = (), **options: Any
) -> AsyncIterator[Any]:
    """A browser context of its own (a fresh profile) with a `width` x `height` window;
    `extra_args` go on Chromium's command line, `options` to Playwright's
    launch_persistent_context (`locale="nb-NO"`, `env=...`)."""
    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory(prefix="cribboard-chromium-") as profile:
        async with async_playwright() as p:
            context = await p.chromium.launch_persistent_context(
                profile,
                executable_path=CHROMIUM,
                headless=True,
                args=CHROMIUM_ARGS + list(extra_args),
                viewport={"width": width, "height": height},
                **options,
            )
            try:
                yield context
            finally:
                await context.close()
