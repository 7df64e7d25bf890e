"""Power cuts on the virtual board: a game is played over the protocol while the interpreter is
killed at random moments and at chosen steps of the store's saves (the board stopped at a flash
point through the side channel); after each restart the board must show the last save that
completed on its flash, never a corrupted state, never one older than a save the host saw
completed, and never a fresh game it does not admit to. The machinery and the exact rule are in
tests/powercut.py (shared with `make soak`, which runs more cuts).
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from cribboard.virtual import VirtualBoard, VirtualControl
from powercut import (
    SEED,
    SHORT,
    Link,
    Tally,
    entry_progress,
    model_from,
    ring_view,
    run_cuts,
    to_the_entrys_end,
)

CUTS = 160  # every cut aimed at a save lands in it: fewer than 210 timed ones tore


@pytest.fixture
def slow_store(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SHORT.env().items():
        monkeypatch.setenv(name, value)


def test_power_cuts_never_lose_a_committed_state(
    tmp_path: Path,
    slow_store: None,
    capsys: pytest.CaptureFixture[str],
    record_property: pytest.RecordProperty,
) -> None:
    rng = random.Random(SEED)
    image = tmp_path / "flash.img"
    tally = Tally()
    started = time.monotonic()
    with VirtualBoard(flash=image) as vboard, VirtualControl(vboard.control) as sim:
        link = Link(vboard.port)
        try:
            run_cuts(rng, vboard, sim, link, image, tally, CUTS, SHORT)
        finally:
            link.close()
    tally.seconds = time.monotonic() - started
    report = tally.text()
    record_property("power_cut_tally", report)
    with capsys.disabled():
        print("\n" + report)
    assert tally.cuts >= CUTS, report
    # Aimed, not timed: how many cuts tear a save depends on the seed, not the machine's speed.
    assert tally.torn_aimed >= 20, "too few cuts tore a save: " + report


# Where a cut stops a new game's save: (operation, point): a point of the erase (of 16), or of
# the entry's program, a page per step: 0 before its first page, 1 after it (the header alone:
# torn), "end" after its last page.
NEW_GAME_CUTS = (("erase", 0), ("erase", 9), ("program", 0), ("program", 1), ("program", "end"))


def test_a_new_games_save_cut_at_each_step_keeps_the_last_save_that_completed(
    tmp_path: Path, slow_store: None
) -> None:
    """A game is won, then a new one started, and the power cut at exact steps of the new game's
    save (the first after a boot: an erase, then the program of its entry, a page per step):
    until the last page's end the finished game comes back, as saved (an erase torn) or as the
    backup (an entry torn); from the end on, the new game. The finished game coming back after a cut is the store's
    promise ("the last save that completed"), not a loss: the new game was never on the flash."""
    image = tmp_path / "flash.img"
    with VirtualBoard(flash=image) as vboard, VirtualControl(vboard.control) as sim:
        link = Link(vboard.port)
        try:
            for move in (b"new 121 2", *[b"peg 1 14"] * 7, *[b"peg 0 12"] * 9, b"peg 0 13"):
                assert link.exchange(move)[0].kind == "ok", move
            finished = link.exchange(b"st")[0].fields
            assert finished["w"] == "0", finished  # player 0 won: a finished game
            for kind, point in NEW_GAME_CUTS:
                saved_and_rebooted(vboard, sim, link, image)  # the next save erases a block
                sim.break_at_flash_point(0)
                assert link.exchange(b"new")[0].kind == "ok"
                stop = sim.wait_flash_stop(10)
                assert (stop.kind, stop.index) == ("erase", 0), stop  # the save's first step
                torn = False
                if kind == "erase":
                    if point:
                        sim.break_at_flash_point(int(point))
                        stop = sim.wait_flash_stop(10)
                else:  # the entry, a page per step: its first page's start, its end, the last's
                    sim.break_at_flash_point(stop.total + 1)
                    stop = sim.wait_flash_stop(10)
                    assert (stop.kind, stop.index) == ("program", 0), stop
                    if point != 0:
                        sim.break_at_flash_point(stop.total)
                        stop = sim.wait_flash_stop(10)  # the header's page programmed
                        pages, written = entry_progress(image, stop.block)
                        assert (pages, written) >= (2, 1), stop  # several pages: one can be torn
                        torn = point == 1
                        if point == "end":
                            stop = to_the_entrys_end(sim, stop, image, 10)
                vboard.reset()
                hello = link.wait_hello()
                st = link.exchange(b"st")[0].fields
                completed = kind == "program" and point == "end"
                expected = (
                    ("saved", "0,0")
                    if completed
                    else ("backup" if torn else "saved", finished["f"])
                )
                assert (hello.fields["store"], st["f"]) == expected, (kind, point, hello, st)
                if completed:
                    assert link.exchange(b"undo")[0].kind == "ok"  # back to the finished game
        finally:
            link.close()


def saved_and_rebooted(vboard: VirtualBoard, sim: VirtualControl, link: Link, image: Path) -> None:
    """Let the board's pending save complete (if one is coming), then cut: it boots with its
    state on the flash."""
    sim.break_at_flash_point(0)
    st = link.exchange(b"st")[0].fields
    if ring_view(image.read_bytes()).newest is None or not on_flash(image, st):
        stop = sim.wait_flash_stop(10)
        while stop.kind != "program":
            sim.break_at_flash_point(stop.total - stop.index if stop.index < stop.total else 1)
            stop = sim.wait_flash_stop(10)
        if stop.index < stop.total:
            sim.break_at_flash_point(stop.total - stop.index)
            stop = sim.wait_flash_stop(10)
        to_the_entrys_end(sim, stop, image, 10)
    vboard.reset()
    link.wait_hello()


def on_flash(image: Path, st: dict[str, str]) -> bool:
    newest = ring_view(image.read_bytes()).newest
    return newest is not None and model_from(newest).key()[5] == tuple(
        int(v) for v in st["f"].split(",")
    )


# Where a cut falls after a change was answered: (operation, point) of the change's save, as in
# NEW_GAME_CUTS; "reply" stops the board at the save's very first step: answered, not saved.
RESEND_CUTS = (
    ("reply", 0),
    ("erase", 1),
    ("erase", 8),
    ("erase", 16),
    ("program", 0),
    ("program", 1),
    ("program", "end"),
)


def test_a_request_resent_after_a_power_cut_is_applied_once_wherever_the_cut_fell(
    tmp_path: Path, slow_store: None
) -> None:
    """A peg is answered (the host missed the reply), and the power cut at each step between
    that change and the end of its save; after the restart the host sends the same line again.
    The board applies it exactly once in all: an id whose change came back with the game (in the
    same record) is answered from the board as it is now, not applied; an id whose change the
    cut took is applied. Never twice, never lost."""
    image = tmp_path / "flash.img"
    outcomes = set()
    with VirtualBoard(flash=image) as vboard, VirtualControl(vboard.control) as sim:
        link = Link(vboard.port)
        try:
            link.ask_every()
            for i in range(12):  # an undo history: the save's entry spans pages
                assert link.exchange(b"#s%d peg %d %d" % (i, i % 2, 1 + i % 5))[0].kind == "ok"
            for n, (kind, point) in enumerate(RESEND_CUTS):
                saved_and_rebooted(vboard, sim, link, image)  # the next save erases a block
                front = link.exchange(b"st")[0].fields["f"].split(",")
                line = b"#k%d peg 0 3" % n
                sim.break_at_flash_point(0)
                assert link.exchange(line)[0].kind == "ok", line  # (a reply the host missed)
                stop = sim.wait_flash_stop(10)
                assert (stop.kind, stop.index) == ("erase", 0), stop  # the save's first step
                if kind == "erase":
                    sim.break_at_flash_point(int(point))
                    stop = sim.wait_flash_stop(10)
                elif kind == "program":
                    sim.break_at_flash_point(stop.total + 1)
                    stop = sim.wait_flash_stop(10)
                    assert (stop.kind, stop.index) == ("program", 0), stop
                    if point != 0:
                        sim.break_at_flash_point(stop.total)
                        stop = sim.wait_flash_stop(10)
                        assert entry_progress(image, stop.block) >= (2, 1), stop
                        if point == "end":
                            stop = to_the_entrys_end(sim, stop, image, 10)
                vboard.reset()
                link.wait_hello()
                shown = link.exchange(b"st")[0].fields
                came_back = int(shown["f"].split(",")[0]) == int(front[0]) + 3
                outcomes.add(came_back)
                assert came_back == (kind == "program" and point == "end"), (kind, point, shown)
                reply, events = link.exchange(line)  # the host sends it again
                if came_back:  # known: the board as it is now, nothing applied
                    assert (reply.fields, events) == ({"r": shown["r"]}, []), (kind, point)
                else:
                    assert reply.fields == {"r": str(int(shown["r"]) + 1)}, (kind, point)
                after = link.exchange(b"st")[0].fields
                assert int(after["f"].split(",")[0]) == int(front[0]) + 3, (kind, point, after)
                assert after["f"].split(",")[1] == front[1]
        finally:
            link.close()
    assert outcomes == {True, False}
