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

from cribboard.virtual import SimControl, VirtualBoard
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
    with VirtualBoard(flash=image) as vboard, SimControl(vboard.control) as sim:
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
    with VirtualBoard(flash=image) as vboard, SimControl(vboard.control) as sim:
        link = Link(vboard.port)
        try:
            for move in (b"new 121 2", *[b"peg 1 14"] * 7, *[b"peg 0 12"] * 9, b"peg 0 13"):
                assert link.exchange(move)[0].kind == "ok", move
            finished = link.exchange(b"st")[0].fields
            assert finished["w"] == "0", finished  # player 0 won: a finished game
            for kind, point in NEW_GAME_CUTS:
                saved_and_rebooted(vboard, sim, link, image)  # the next save erases a block
                sim.break_on_flash(0)
                assert link.exchange(b"new")[0].kind == "ok"
                stop = sim.wait_flash_stop(10)
                assert (stop.kind, stop.index) == ("erase", 0), stop  # the save's first step
                torn = False
                if kind == "erase":
                    if point:
                        sim.break_on_flash(int(point))
                        stop = sim.wait_flash_stop(10)
                else:  # the entry, a page per step: its first page's start, its end, the last's
                    sim.break_on_flash(stop.total + 1)
                    stop = sim.wait_flash_stop(10)
                    assert (stop.kind, stop.index) == ("program", 0), stop
                    if point != 0:
                        sim.break_on_flash(stop.total)
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


def saved_and_rebooted(vboard: VirtualBoard, sim: SimControl, link: Link, image: Path) -> None:
    """Let the board's pending save complete (if one is coming), then cut: it boots with its
    state on the flash."""
    sim.break_on_flash(0)
    st = link.exchange(b"st")[0].fields
    if ring_view(image.read_bytes()).newest is None or not on_flash(image, st):
        stop = sim.wait_flash_stop(10)
        while stop.kind != "program":
            sim.break_on_flash(stop.total - stop.index if stop.index < stop.total else 1)
            stop = sim.wait_flash_stop(10)
        if stop.index < stop.total:
            sim.break_on_flash(stop.total - stop.index)
            stop = sim.wait_flash_stop(10)
        to_the_entrys_end(sim, stop, image, 10)
    vboard.reset()
    link.wait_hello()


def on_flash(image: Path, st: dict[str, str]) -> bool:
    newest = ring_view(image.read_bytes()).newest
    return newest is not None and model_from(newest).key()[5] == tuple(
        int(v) for v in st["f"].split(",")
    )
