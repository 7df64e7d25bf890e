"""The board's own page (docs/protocol.md, section 12): figures, never asserted.

1. The page's bytes on the wire, in headless Chromium at a phone's size on the virtual board's
   own server: the first load (every file, gzip-compressed) and a reload (revalidated: 304s).
2. Time from a peg to the board's reply over the WebSocket on the virtual board: a raw client
   (one request at a time) and the page itself (a click's request, link.peg(), in Chromium).
3. The heap the server and each page connected cost, on MicroPython's unix port (the firmware
   as deployed: .mpy, its bytecode in the heap) and on the emulated Pico W image (frozen: the
   modules' globals only, bytecode in flash; the image must be one built with the page).

    python bench/web_bench.py   (make bench runs it)
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

import aiohttp  # noqa: E402

from cribboard.paths import PAGE_DIR, firmware_dir  # noqa: E402
from cribboard.virtual import VirtualBoard  # noqa: E402
from cribboard.virtual.interpreter import find_micropython  # noqa: E402
from link_bench import mp_env  # noqa: E402  (bench/link_bench.py)

HEAP = "144wK"  # as tests/page/test_board_page.py: the unix port holds the bytecode in its heap
PEGS = 200
PAGE_PEGS = 50
SOCKETS = 4


async def wait_served(url: str) -> None:
    async with aiohttp.ClientSession() as session:
        for _ in range(400):
            try:
                async with session.get(url + "link.json") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise SystemExit("the board's page never answered")


async def page_figures(url: str, port: str) -> None:
    from browsersupport import CHROMIUM, chromium  # tests/browsersupport.py

    if not os.access(CHROMIUM, os.X_OK):
        print(f"   skipped: no {CHROMIUM} (make browser)")
        return
    from cribboard.api import Board

    async with await Board.open(port) as usb:
        await usb.set_open(True)  # open mode: the page changes the board unadmitted
    async with chromium(412, 915) as context:
        page = await context.new_page()
        responses: list[Any] = []
        page.on("response", lambda response: responses.append(response))

        async def load(go: Any) -> tuple[int, int, int]:
            responses.clear()
            await go()
            await page.wait_for_function(
                "document.querySelector('#status').classList.contains('live')"
            )
            await page.wait_for_load_state("networkidle")
            sent = received = 0
            for response in responses:
                sizes = await response.request.sizes()
                sent += sizes["requestHeadersSize"] + sizes["requestBodySize"]
                received += sizes["responseHeadersSize"] + sizes["responseBodySize"]
            return len(responses), sent, received

        first = await load(lambda: page.goto(url))
        again = await load(page.reload)
        for name, (count, sent, received) in (("first load", first), ("reload", again)):
            print(
                f"   {name:<10}: {count} requests, {received:,} B received (headers and gzip "
                f"bodies), {sent:,} B sent"
            )
        await page.evaluate("() => window.cribboard.link.request('new', 121, 2).then(() => null)")
        times = await page.evaluate(
            """async (n) => {
            const link = window.cribboard.link; const out = [];
            for (let i = 0; i < n; i++) {
              const t = performance.now(); await link.peg(i % 2, 1); out.push(performance.now() - t);
            }
            return out; }""",
            PAGE_PEGS,
        )
        print(
            f"   a peg from the page (link.peg, WebSocket, to its reply): median "
            f"{statistics.median(times):.2f} ms, max {max(times):.2f} ms ({PAGE_PEGS} pegs)"
        )
        await usb_to_page(page, port)


async def usb_to_page(page: Any, port: str) -> None:
    """A peg over USB until the page shows it (with the DevTools round trip to ask the page)."""
    from cribboard.api import Board

    times = []
    async with await Board.open(port) as usb:
        await usb.new_game(121, 2)
        for i in range(1, 21):
            shown = page.wait_for_function(
                f"document.querySelector('#score-1').textContent == '{i}'"
            )
            start = time.perf_counter()
            await usb.peg(1, 1)
            await shown
            times.append((time.perf_counter() - start) * 1000)
    print(
        f"   a peg over USB until the page shows it: median {statistics.median(times):.1f} ms, "
        f"max {max(times):.1f} ms (20 pegs; the page asks for the frame after each)"
    )


async def raw_figures(url: str, port: str) -> None:
    from cribboard.api import Board

    async with await Board.open(port) as usb:
        await usb.set_open(True)  # open mode: the client changes the board unadmitted
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url + "ws?t=0123456789ab") as ws:
            times = []
            for i in range(PEGS):
                if i % 100 == 0:
                    await ws.send_str(f"#n{i} new 121 2\n")
                    while not (await ws.receive()).data.startswith(f"#n{i} "):
                        pass
                start = time.perf_counter()
                await ws.send_str(f"#p{i} peg {i % 2} 1\n")
                while not (await ws.receive()).data.startswith(f"#p{i} "):
                    pass
                times.append((time.perf_counter() - start) * 1000)
    times.sort()
    print(
        f"   a peg to its reply (raw WebSocket client, one at a time): median "
        f"{statistics.median(times):.2f} ms, 90% {times[int(len(times) * 0.9)]:.2f} ms, "
        f"max {times[-1]:.2f} ms ({PEGS} pegs)"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def handshake(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(
        b"GET /ws HTTP/1.1\r\nHost: b\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1024)
    return sock


def heap_unix() -> None:
    port = free_port()
    process = subprocess.Popen(
        [str(find_micropython()), "-X", f"heapsize={HEAP}", str(ROOT / "bench" / "web_heap_mp.py")]
        + [str(port), str(firmware_dir() / PAGE_DIR)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=mp_env(),
    )
    assert process.stdin is not None and process.stdout is not None
    lines: list[list[str]] = []
    sockets: list[socket.socket] = []
    try:
        while True:
            line = process.stdout.readline().split()
            if not line:
                raise SystemExit(f"web_heap_mp.py failed: {process.stderr.read()}")  # type: ignore[union-attr]
            lines.append(line)
            if line[0] == "server":
                break
        for _ in range(SOCKETS):
            sockets.append(handshake(port))
            process.stdin.write("m\n")
            process.stdin.flush()
            lines.append(process.stdout.readline().split())
    finally:
        for sock in sockets:
            sock.close()
        process.kill()
        process.wait()
    base = int(lines[0][1])
    parts, previous = [], base
    for line in lines:
        if line[0] == "module":
            parts.append(f"{line[1].split('.')[-1]} {int(line[2]) - previous:,}")
            previous = int(line[2])
    server = int(next(line for line in lines if line[0] == "server")[1])
    print(f"   modules (.mpy, bytecode in the heap): {'; '.join(parts)} B")
    print(f"   the server (listening, its watch, no page): {server - previous:,} B")
    counts = [(int(line[1]), int(line[3])) for line in lines if line[0] == "sockets"]
    steps = [b - a for (_, a), (_, b) in zip([(0, server), *counts], counts, strict=False)]
    print(
        f"   each WebSocket: {', '.join(f'{s:,}' for s in steps)} B (sockets 1..{len(steps)}; "
        f"64-bit port: pointers are 8 bytes, about twice a 32-bit board's)"
    )


PICO_PROBE = """import gc
gc.collect()
free = gc.mem_free()
import asyncio
asyncio.Event
from cribfw.dispatch import Dispatcher
from cribfw.replies import RecentReplies
from cribfw.context import Context
from cribfw.linebuffer import LineAssembler
from cribcore.state import GameState
from cribcore.render import Renderer
class Pixels:
    def __init__(self):
        self.buf = bytearray(363)
    def write(self):
        pass
ctx = Context(GameState(), Renderer(Pixels()), 'pico', '0')
dispatcher = Dispatcher(ctx)
gc.collect()
base = gc.mem_alloc()
from cribfw.webserver import WebServer
from cribfw.weblink import WebLink
from cribfw import pagefiles
gc.collect()
modules = gc.mem_alloc()
files = pagefiles.load()
server = WebServer(dispatcher, ctx.admission, files)
gc.collect()
built = gc.mem_alloc()
link = WebLink(dispatcher, None, RecentReplies(b"\x00" * 7), asyncio)
gc.collect()
one = gc.mem_alloc()
print(free, modules - base, built - modules, one - built, 0 if files is None else len(files.entries))
"""


def heap_pico() -> None:
    from cribboard.virtual.rp2board import RP2Board, emulator_missing, images_dir
    from rp2support import RawRepl  # tests/rp2support.py

    missing = emulator_missing()
    if missing:
        print(f"   skipped: {missing}")
        return
    image = images_dir() / "cribboard-RPI_PICO_W.uf2"
    with tempfile.TemporaryDirectory() as scratch:
        with RP2Board(image, flash=Path(scratch) / "f", pace=0) as pico:
            repl = RawRepl(pico.port)
            repl.enter()  # stops the app (the emulator has no Wi-Fi chip)
            try:
                output = repl.exec(PICO_PROBE, timeout=120)
            except AssertionError as err:  # an image built before the page: no such module
                output = str(err)
            finally:
                repl.close()
    try:
        free, modules, server, link, files = (int(v) for v in output.split())
    except ValueError:
        print(
            f"   not measured: {output.strip().splitlines()[-1:]} (an image built with the page?)"
        )
        return
    print(
        f"   frozen modules (globals only; bytecode in flash): {modules:,} B; the server: "
        f"{server:,} B ({files} page files frozen); a WebSocket's link (queue, replies, lines): "
        f"{link:,} B; {free:,} B were free (the app stopped)"
    )


def main() -> None:
    print("\nThe board's own page (the virtual board's server, headless Chromium at 412x915)")
    with VirtualBoard(web_port=0, heap=HEAP) as board:
        url = board.web_url
        assert url is not None
        asyncio.run(wait_served(url))
        asyncio.run(raw_figures(url, board.port))
        asyncio.run(page_figures(url, board.port))
    print("\n   heap on MicroPython's unix port:")
    heap_unix()
    print("\n   heap on the emulated Pico W (cribboard-RPI_PICO_W.uf2):")
    heap_pico()


if __name__ == "__main__":
    main()
