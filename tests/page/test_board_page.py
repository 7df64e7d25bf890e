"""The page a board with Wi-Fi serves itself (docs/protocol.md, "WebSocket"): the firmware's own
server on the virtual board (the real MicroPython, on the host's loopback), driven by headless
Chromium at a phone's size: a whole game scored on the page, admission by the board's deal
button, a change over USB on the page at once, a reload and a power cut keeping the admission,
a dropped WebSocket whose request is resent and not applied twice, two phones at once, the
set-up page; and everything a hostile client can send (oversized or endless heads, bad frames
of every kind, too many sockets, a client that stops reading) answered with a clear close while
USB and the other phones play on. The axe audit runs on the page the board serves."""

from __future__ import annotations

import asyncio
import contextlib
import os
import struct
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from browsersupport import chromium, needs_chromium
from cribboard.api import Board
from cribboard.bridge import boardpage
from cribboard.virtual import VirtualBoard, VirtualControl
from cribboard.wifisetup import describe_page
from cribcore.profiles import PROFILES
from support import WAIT_S

DEAL = PROFILES["sim"].buttons["deal"]
PHONE = (412, 915)
AXE = os.path.join(
    os.path.dirname(os.path.dirname(__file__)), "a11y", "node_modules", "axe-core", "axe.min.js"
)
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

ASYNC = pytest.mark.asyncio(loop_scope="module")


# --- the page's files ------------------------------------------------------------------------


def test_the_boards_page_files_are_up_to_date() -> None:
    assert boardpage.stale() == [], "firmware/web is stale: make mip"


def test_the_generator_writes_them_and_its_check_finds_them_stale(tmp_path: Any) -> None:
    assert boardpage.stale(tmp_path) != []
    boardpage.write(tmp_path)
    assert boardpage.stale(tmp_path) == []
    (tmp_path / "web" / "static" / "app.js.gz").write_bytes(boardpage.compress(b"old"))
    assert boardpage.stale(tmp_path) == ["/static/app.js"]
    from cribboard.frozen import page_module

    source = page_module(tmp_path)
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # noqa: S102 (our own generated module)
    assert [path for path, _, _ in namespace["FILES"]][:2] == [
        b"/board/board.js",
        b"/board/icon.svg",
    ]


def test_a_language_keeps_only_the_pages_own_sentences() -> None:
    files = boardpage.page_files()
    import json

    sv = json.loads(files["/i18n/sv.json"])
    assert sv["messages"]["Undo"] and sv["messages"]["blue"]  # the page's, a player's colour
    assert "the board's firmware is up to date" not in sv["messages"]  # the command line's


# --- one board serving its page, one phone-sized browser --------------------------------------


@pytest.fixture(scope="module")
def web_board() -> Iterator[VirtualBoard]:
    # The unix port keeps the firmware's bytecode in its heap, where a cribboard image keeps it
    # frozen in the flash: the page's modules take about 16 KB of it here and none on a Pico W
    # (make bench: web_heap). The default heap then leaves too little for four sockets at once.
    with VirtualBoard(web_port=0, heap="144wK") as board:
        yield board


async def wait_served(board: VirtualBoard) -> str:
    """The board's page URL once its server answers (it starts after the board's boot)."""
    url = board.web_url
    assert url is not None
    async with aiohttp.ClientSession() as session:
        for _ in range(200):
            try:
                async with session.get(url + "link.json") as response:
                    if response.status == 200:
                        return url
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise AssertionError("the board's page never answered")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def url(web_board: VirtualBoard) -> str:
    return await wait_served(web_board)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def phone() -> AsyncIterator[Any]:
    async with chromium(*PHONE) as context:
        yield context


@pytest_asyncio.fixture(loop_scope="module")
async def usb(web_board: VirtualBoard) -> AsyncIterator[Board]:
    async with await Board.open(web_board.port, timeout=3.0) as board:
        yield board


async def open_page(context: Any, url: str) -> Any:
    page = await context.new_page()
    page.set_default_timeout(20000)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.errors = errors
    await page.goto(url)
    await page.wait_for_selector("#score-0")
    await page.wait_for_function("document.body.dataset.rev !== undefined")
    await page.wait_for_function("document.querySelector('#status').classList.contains('live')")
    return page


async def wait_score(page: Any, player: int, value: int) -> None:
    await page.wait_for_function(
        f"document.querySelector('#score-{player}').textContent == '{value}'"
    )


async def peg_with_count(page: Any, player: int, points: int) -> None:
    card = f'.player[data-player="{player}"]'
    await page.fill(f"{card} input", str(points))
    await page.click(f"{card} .more button")


def tap_deal(board: VirtualBoard) -> None:
    with VirtualControl(board.control) as sim:
        sim.press(DEAL)


@ASYNC
@needs_chromium
async def test_a_phone_scores_a_whole_game_once_admitted_by_the_deal_button(
    web_board: VirtualBoard, url: str, phone: Any, usb: Board
) -> None:
    await usb.set_open(False)
    await usb.clear_admitted()
    await usb.new_game(121, 2)
    page = await open_page(phone, url)
    assert page.viewport_size == {"width": PHONE[0], "height": PHONE[1]}
    # A board keeps no record of games: no names, no history (a bridge's page has them).
    assert await page.is_hidden("#history-box") and await page.is_hidden("#names-box")
    # Not admitted: the board is read at once, a change is refused and the page says why.
    await page.click('button[data-player="0"][data-points="3"]')
    await page.wait_for_function("document.querySelector('#log .error')")
    assert "deal button" in await page.inner_text("#log .error")
    assert (await usb.state()).front == [0, 0]
    tap_deal(web_board)
    await page.wait_for_function("document.querySelector('#log').textContent.includes('deal')")
    while not (await usb.admission()).admitted:
        await asyncio.sleep(0.02)
    # Admitted: a whole game, the +N buttons and the Count box, undo on the way.
    await page.click('button[data-player="0"][data-points="3"]')
    await wait_score(page, 0, 3)
    await page.click('button[data-player="1"][data-points="6"]')
    await wait_score(page, 1, 6)
    await page.click("#undo")
    await wait_score(page, 1, 0)
    dealer = (await usb.state()).dealer
    await page.click("#deal")
    await page.wait_for_function(
        f"!document.querySelector('.player[data-player=\"{1 - dealer}\"] .crib').hidden"
    )
    for total in (32, 61, 90, 119):
        await peg_with_count(page, 0, 29)
        await wait_score(page, 0, total)
    await peg_with_count(page, 1, 20)
    await wait_score(page, 1, 20)
    await peg_with_count(page, 0, 2)
    await wait_score(page, 0, 121)
    await page.wait_for_function(
        "!document.querySelector('.player[data-player=\"0\"] .winner').hidden"
    )
    assert "double skunk" in await page.inner_text('.player[data-player="0"] .winner')
    state = await usb.state()
    assert state.front == [121, 20] and state.winner == 0
    await page.select_option("#target", "61")
    await page.click("#new")
    await wait_score(page, 0, 0)
    assert (await usb.state()).target == 61
    if os.environ.get("CRIBBOARD_SHOT"):  # a picture to look at: CRIBBOARD_SHOT=page.png
        await page.screenshot(path=os.environ["CRIBBOARD_SHOT"], full_page=True)
    assert not page.errors
    await page.close()


@ASYNC
@needs_chromium
async def test_usb_changes_show_at_once_and_two_phones_play_together(
    url: str, phone: Any, usb: Board
) -> None:
    await usb.set_open(True)  # open mode: every phone may change the board
    await usb.new_game(121, 2)
    first = await open_page(phone, url)
    async with chromium(*PHONE) as other_phone:  # its own storage: another phone, another token
        second = await open_page(other_phone, url)
        token = "localStorage.getItem('cribboard.token')"
        assert await first.evaluate(token) != await second.evaluate(token)
        await usb.peg(1, 7)
        await wait_score(first, 1, 7)
        await wait_score(second, 1, 7)
        await second.click('button[data-player="0"][data-points="4"]')
        await wait_score(first, 0, 4)
        await first.click('button[data-player="1"][data-points="2"]')
        await wait_score(second, 1, 9)
        assert (await usb.state()).front == [4, 9]
        health = await usb.health()  # what `cribboard status` and the scorekeeper say
        assert health is not None and health.page == url and health.page_sockets == 2
        assert describe_page(health) == f"page: {url}"
        from cribboard.play.scorekeeper import Scorekeeper

        keeper = Scorekeeper(usb, output=lambda text: None)
        await keeper.start()  # `cribboard keep`'s first lines: where the phones find the page
        assert f"page: {url}" in keeper.messages
        await second.close()
    await first.close()
    await usb.set_open(False)


@ASYNC
@needs_chromium
async def test_a_reload_and_a_power_cut_keep_the_admission(
    web_board: VirtualBoard, url: str, phone: Any, usb: Board
) -> None:
    await usb.set_open(False)
    page = await open_page(phone, url)
    if not (await page.evaluate("window.cribboard.link.request('admit')"))["fields"]["you"] == "1":
        await page.click('button[data-player="0"][data-points="1"]')
        await page.wait_for_function("document.querySelector('#log .error')")
        tap_deal(web_board)
        while (await page.evaluate("window.cribboard.link.request('admit')"))["fields"][
            "you"
        ] != "1":
            await asyncio.sleep(0.05)
    before = (await usb.state()).front[0]
    await page.reload()
    await page.wait_for_function("document.querySelector('#status').classList.contains('live')")
    await page.click('button[data-player="0"][data-points="1"]')
    await wait_score(page, 0, before + 1)
    # A power cut: the board restarts, the page reconnects with its token, still admitted.
    web_board.reset()
    await page.wait_for_function(
        "!document.querySelector('#status').classList.contains('live')", timeout=WAIT_S * 1000
    )
    await page.wait_for_function("document.querySelector('#status').classList.contains('live')")
    restored = (await usb.state()).front[0]  # (the last save before the cut)
    await page.click('button[data-player="0"][data-points="2"]')
    await wait_score(page, 0, restored + 2)
    await page.close()


@ASYNC
@needs_chromium
async def test_a_request_resent_after_a_dropped_socket_is_applied_once(
    web_board: VirtualBoard, url: str, phone: Any, usb: Board
) -> None:
    await usb.set_open(True)
    page = await open_page(phone, url)
    before = (await usb.state()).front[1]
    # The reply is lost with the socket: replies on it go nowhere, then it drops.
    await page.evaluate(
        """() => {
        const link = window.cribboard.link;
        link.ws.onmessage = () => {};
        window.resent = link.peg(1, 5).then((r) => r.fields.r);
    }"""
    )
    while (await usb.state()).front[1] != before + 5:  # applied once, the reply lost
        await asyncio.sleep(0.02)
    rev = (await usb.state()).rev
    await page.evaluate("window.cribboard.link.ws.close()")
    # The page opens a new socket and resends the same line: the board answers from memory.
    assert await page.evaluate("window.resent") == str(rev)
    state = await usb.state()
    assert state.front[1] == before + 5 and state.rev == rev
    await wait_score(page, 1, before + 5)
    await page.close()
    await usb.set_open(False)


@ASYNC
@needs_chromium
@pytest.mark.skipif(not os.path.exists(AXE), reason="no axe-core: `make a11y` installs it")
async def test_the_board_served_page_passes_the_axe_audit(url: str, phone: Any) -> None:
    page = await open_page(phone, url)
    await page.add_script_tag(path=AXE)
    result = await page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", WCAG_21_AA
    )
    assert result["passes"], "axe checked nothing"
    assert [v["id"] for v in result["violations"]] == []
    await page.goto(url + "setup")  # the set-up page too (the board's own HTML)
    await page.add_script_tag(path=AXE)
    result = await page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", WCAG_21_AA
    )
    assert result["passes"] and [v["id"] for v in result["violations"]] == []
    await page.close()


# --- the set-up page ---------------------------------------------------------------------------


@ASYNC
async def test_the_setup_page_saves_a_network_only_after_the_deal_button(
    web_board: VirtualBoard, url: str, usb: Board
) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(url + "setup") as response:
            assert response.status == 200
            assert "Join a Wi-Fi network" in await response.text()
        form = {"ssid": "Home net", "password": "short"}
        async with session.post(url + "setup", data=form) as response:
            assert "8 to 63" in await response.text()  # refused, nothing waits
        form = {"ssid": "Home net", "password": "a long secret"}
        async with session.post(url + "setup", data=form) as response:
            assert "Tap the deal button" in await response.text()
        tap_deal(web_board)
        for _ in range(100):
            async with session.get(url + "setup") as response:
                text = await response.text()
            if "Saved" in text:
                break
            await asyncio.sleep(0.05)
        assert "Saved. The board joins Home net" in text
    health = await usb.health()
    assert health is not None


# --- hostile clients ---------------------------------------------------------------------------


def _port(url: str) -> int:
    return int(url.rstrip("/").rsplit(":", 1)[1])


@contextlib.asynccontextmanager
async def raw(url: str) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", _port(url))
    try:
        yield reader, writer
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


HANDSHAKE = (
    b"GET /ws%s HTTP/1.1\r\nHost: board\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


async def websocket(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, query: bytes = b""
) -> bytes:
    writer.write(HANDSHAKE % query)
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT_S)
    return head.split(b"\r\n")[0]


def frame(op: int, payload: bytes, fin: bool = True, masked: bool = True) -> bytes:
    first = (0x80 if fin else 0) | op
    n = len(payload)
    head = (
        bytes((first, (0x80 if masked else 0) | n))
        if n < 126
        else bytes((first, (0x80 if masked else 0) | 126)) + struct.pack(">H", n)
    )
    if not masked:
        return head + payload
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    first, second = await asyncio.wait_for(reader.readexactly(2), WAIT_S)
    n = second & 0x7F
    if n == 126:
        n = struct.unpack(">H", await reader.readexactly(2))[0]
    return first & 0x0F, await reader.readexactly(n)


async def closed_with(reader: asyncio.StreamReader) -> int:
    """The status of the close frame the board sends next (text frames before it skipped)."""
    while True:
        op, payload = await read_frame(reader)
        if op == 8:
            return struct.unpack(">H", payload[:2])[0] if payload else 0


async def http_status(url: str, request: bytes) -> bytes:
    async with raw(url) as (reader, writer):
        writer.write(request)
        line = await asyncio.wait_for(reader.readline(), WAIT_S)
        return line.split(b" ")[1] if line else b"closed"


async def still_playing(usb: Board) -> None:
    """USB answers at once: nothing a browser sent stopped the board."""
    await asyncio.wait_for(usb.ping(), 2.0)


@ASYNC
async def test_hostile_heads_get_a_clear_answer_and_change_nothing(url: str, usb: Board) -> None:
    before = await usb.state()
    assert await http_status(url, b"GET /" + b"a" * 2000 + b" HTTP/1.1\r\n\r\n") == b"431"
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(40))
    assert await http_status(url, b"GET / HTTP/1.1\r\n" + many + b"\r\n") == b"431"
    assert await http_status(url, b"BREW / HTTP/1.1\r\n\r\n") == b"405"
    assert await http_status(url, b"nonsense\r\n\r\n") == b"400"
    assert await http_status(url, b"GET /../main.py HTTP/1.1\r\n\r\n") == b"404"
    big = b"POST /setup HTTP/1.1\r\nContent-Length: 100000\r\n\r\n"
    assert await http_status(url, big) == b"413"
    assert await http_status(url, b"GET /ws HTTP/1.1\r\n\r\n") == b"426"
    # A head that never ends is cut off by the board (HEAD_MS), not waited for.
    async with raw(url) as (reader, writer):
        writer.write(b"GET / HTTP/1.1\r\nX-Slow: ")
        assert await asyncio.wait_for(reader.read(), WAIT_S + 6) == b""
    await still_playing(usb)
    assert await usb.state() == before


@ASYNC
async def test_hostile_frames_close_the_socket_with_the_right_status(url: str, usb: Board) -> None:
    cases = [
        (frame(2, b"peg 0 1\n"), 1003),  # binary
        (frame(1, b"ping\n", masked=False), 1002),  # not masked
        (frame(0, b"ping\n"), 1002),  # a continuation that continues nothing
        (frame(1, b"x" * 300), 1009),  # bigger than MAX_PAYLOAD
        (bytes((0x81, 0xFF)) + bytes(8), 1009),  # a 64-bit length
        (frame(9, b"x", fin=False), 1002),  # a fragmented control frame
        (frame(5, b""), 1002),  # an unknown opcode
        (bytes((0xC1, 0x80)) + bytes(4), 1002),  # a reserved bit
    ]
    before = await usb.state()
    for data, status in cases:
        async with raw(url) as (reader, writer):
            assert await websocket(reader, writer) == b"HTTP/1.1 101 Switching Protocols"
            writer.write(data)
            assert await closed_with(reader) == status, data[:2]
    await still_playing(usb)
    assert await usb.state() == before


@ASYNC
async def test_frames_ping_close_and_lines_split_across_continuations(url: str) -> None:
    async with raw(url) as (reader, writer):
        await websocket(reader, writer)
        writer.write(frame(9, b"hi"))
        assert await read_frame(reader) == (10, b"hi")
        # One line in three frames: a text frame and two continuations.
        writer.write(frame(1, b"#c1 pi", fin=False) + frame(0, b"n", fin=False) + frame(0, b"g\n"))
        assert await read_frame(reader) == (1, b"#c1 ok\n")
        writer.write(frame(8, struct.pack(">H", 1000)))
        assert await read_frame(reader) == (8, struct.pack(">H", 1000))


@ASYNC
async def test_too_many_sockets_and_connections_are_refused_and_others_play_on(
    url: str, usb: Board
) -> None:
    from cribfw.webserver import MAX_CONNS, MAX_SOCKETS

    async with contextlib.AsyncExitStack() as stack:
        sockets = []
        for _ in range(MAX_SOCKETS):
            reader, writer = await stack.enter_async_context(raw(url))
            assert await websocket(reader, writer) == b"HTTP/1.1 101 Switching Protocols"
            sockets.append((reader, writer))
        extra_reader, extra_writer = await stack.enter_async_context(raw(url))
        assert await websocket(extra_reader, extra_writer) == b"HTTP/1.1 503 Service Unavailable"
        # Idle connections beyond the board's count are closed at once.
        idle = [await stack.enter_async_context(raw(url)) for _ in range(MAX_CONNS)]
        assert await asyncio.wait_for(idle[-1][0].read(), WAIT_S) == b""
        # The sockets that got in still work, and so does USB.
        reader, writer = sockets[0]
        writer.write(frame(1, b"#s1 ping\n"))
        assert await read_frame(reader) == (1, b"#s1 ok\n")
        await still_playing(usb)


@ASYNC
async def test_a_page_that_stops_reading_is_closed_and_the_board_plays_on(
    url: str, usb: Board
) -> None:
    async with raw(url) as (reader, writer):
        await websocket(reader, writer)
        # Asks for the frame (760 bytes) two thousand times and never reads a byte: the
        # replies fill what the sockets hold, the board's write stalls, and the board ends
        # the connection (STALL_MS) instead of waiting for it or holding more.
        writer.write(frame(1, b"frame\n" * 40) * 50)
        for points in (1, 2, 3):  # meanwhile USB plays on, promptly
            await asyncio.wait_for(usb.peg(0, points), 2.0)
        received = 0
        with contextlib.suppress(ConnectionError):
            while chunk := await asyncio.wait_for(reader.read(65536), WAIT_S + 6):
                received += len(chunk)
        assert received < 2000 * 760  # cut off before it had every reply
    await still_playing(usb)


# --- deploy --wifi -----------------------------------------------------------------------------


def test_deploy_wifi_puts_the_network_on_the_board_and_its_firmware_reads_it() -> None:
    from cribboard.deploy import _mpremote
    from cribboard.wifisetup import WifiSetup, write_wifi

    secret = "a long secret"
    said: list[str] = []
    with VirtualBoard() as board:
        write_wifi(board.port, WifiSetup("Home net", secret), reset=False, progress=said.append)
        read = _mpremote(
            board.port,
            [
                "exec",
                "from cribfw import wificonfig\nc = wificonfig.load()\nprint(c.ssid, '|', c.password == %r)"
                % secret,
            ],
            30,
        )
    assert read.stdout.strip() == "Home net | True"
    assert said and secret not in said[0] and "Home net" in said[0]


@pytest.mark.parametrize(
    ("words", "error"),
    [
        (["deploy", "--wifi", "home"], "8 to 63"),  # the password from the environment: short
        (["deploy", "--wifi", "x" * 33], "1 to 32 bytes"),
    ],
)
def test_deploy_wifi_refuses_a_bad_network_in_one_line(words: list[str], error: str) -> None:
    import subprocess
    import sys

    env = dict(os.environ, CRIBBOARD_WIFI_PASSWORD="short", LANGUAGE="en")
    result = subprocess.run(
        [sys.executable, "-m", "cribboard", "--port", "/nonexistent/tty", *words],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode != 0 and len(result.stderr.splitlines()) == 1, result.stderr
    assert error in result.stderr and "short" not in result.stderr


# --- the access point's parts, on MicroPython ------------------------------------------------


def run_on_micropython(code: str) -> str:
    import subprocess

    from cribboard.virtual.interpreter import find_micropython

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    firmware = os.path.join(root, "firmware")
    done = subprocess.run(
        [find_micropython(), "-c", f"import sys\nsys.path[:0] = [{firmware!r}]\n{code}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def dns_query(name: str, qtype: int = 1) -> bytes:
    labels = b"".join(bytes((len(p),)) + p.encode() for p in name.split(".")) + b"\0"
    return (
        b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + labels + struct.pack(">HH", qtype, 1)
    )


def test_the_access_points_dns_answers_every_name_with_the_board_and_drops_the_rest() -> None:
    import socket

    queries = {
        "a": dns_query("connectivitycheck.gstatic.com"),
        "aaaa": dns_query("captive.apple.com", 28),  # not an A query: no answer
        "short": b"\x12\x34\x01",
        "response": bytes([0x12, 0x34, 0x81]) + dns_query("x.y")[3:],
    }
    out = run_on_micropython(
        "from cribfw.captivedns import answer\n"
        + "".join(
            f"r = answer({q!r}, {len(q)}, bytes((192, 168, 4, 1)))\n"
            f"print({k!r}, None if r is None else bytes(r).hex())\n"
            for k, q in queries.items()
        )
    )
    replies = dict(line.split(" ", 1) for line in out.splitlines())
    assert replies["aaaa"] == replies["short"] == replies["response"] == "None"
    reply = bytes.fromhex(replies["a"])
    assert reply[:2] == b"\x12\x34" and reply[2] & 0x80 and reply[6:8] == b"\x00\x01"
    assert reply[-4:] == socket.inet_aton("192.168.4.1")


def test_in_access_point_mode_every_site_leads_to_the_setup_page() -> None:
    out = run_on_micropython(
        """
from cribfw.setuppage import Setup
from cribfw.webserver import Request
from cribfw.admission import Admission
class Net:
    mode = b"ap"
    ip = b"192.168.4.1"
    port = 80
    name = b"cribboard"
    ap_ssid = b"Cribboard-1A2B"
    ssid = b""
    config = None
setup = Setup(Net(), Admission())
for host in (b"connectivitycheck.gstatic.com", b"captive.apple.com", b"192.168.4.1"):
    answer = setup.route(Request(b"GET", b"/generate_204", {b"host": host}, b""))
    print(host.decode(), None if answer is None else (answer[0], answer[3]))
page = setup.route(Request(b"GET", b"/setup", {b"host": b"192.168.4.1"}, b""))
print("setup", page[0], b"Cribboard-1A2B" in page[2], b"<script" in page[2])
"""
    )
    lines = out.splitlines()
    assert lines[0] == lines[1].replace("captive.apple.com", "connectivitycheck.gstatic.com")
    assert "302" in lines[0] and "http://192.168.4.1/setup" in lines[0]
    assert lines[2] == "192.168.4.1 None"  # the board's own address: its page, not a redirect
    assert lines[3] == "setup 200 True False"  # no script: a sign-in window shows it as it is
