"""`cribboard watch` says what changed, as a person reads it (cribboard.watchwords); `--raw` keeps
the protocol's lines. The sentences from states and events, then the command on the virtual
board with a peg riding on its connection."""

from __future__ import annotations

import signal
import subprocess
import sys

from cribboard.api import Admission, AdmitEvent, BoardState, ButtonEvent, LinkEvent
from cribboard.virtual import VirtualBoard
from cribboard.watchwords import ChangeTeller, changes
from support import Spawn

CLI = [sys.executable, "-m", "cribboard.cli"]
START = BoardState(
    rev=4, target=121, players=2, dealer=0, winner=None, result="playing",
    front=[12, 5], back=[8, 0], games=[0, 0], pending=[0, 0], undo=4, skunk_double=False,
)  # fmt: skip


def test_changes_are_told_in_sentences() -> None:
    pegged = START._replace(rev=5, front=[17, 5], back=[12, 0], undo=5)
    assert changes(START, pegged) == ["blue pegs 5: 17"]
    assert changes(pegged, START._replace(rev=6, undo=6)) == ["blue's pegs set: 12 (back 8)"]
    # Only what the undo moved, from where to where: "blue 12, orange 5" read as both undone.
    assert changes(pegged._replace(undo=6, rev=6), START._replace(rev=7, undo=4)) == [
        "undone: blue back from 17 to 12"
    ]
    first = START._replace(rev=1, front=[0, 12], back=[0, 0], undo=1)
    nothing = START._replace(rev=2, front=[0, 0], back=[0, 0], undo=0)
    assert changes(first, nothing) == ["undone: orange back from 12 to 0"]  # not a new game
    dealt = START._replace(rev=5, undo=5, dealer=1)
    assert changes(dealt, START._replace(rev=6)) == ["undone: the last change", "blue deals"]
    counting = START._replace(rev=5, pending=[0, 8])
    assert changes(START, counting) == ["orange: 8 pending"]
    assert changes(START, START._replace(rev=5, dealer=1)) == ["orange deals"]
    won = START._replace(rev=5, front=[121, 5], back=[110, 0], winner=0, result="double_skunk")
    assert changes(START._replace(front=[110, 5], back=[100, 0]), won) == [
        "blue pegs 11: 121",
        "blue wins with 121, a double skunk",
    ]
    fresh = START._replace(rev=9, front=[0, 0], back=[0, 0], target=61)
    assert changes(START, fresh) == ["new game: game to 61, two players"]
    assert changes(START, START) == []


def test_events_other_than_the_state() -> None:
    teller = ChangeTeller()
    assert teller.tell(LinkEvent("lost")) == ["the link to the board is lost: reconnecting…"]
    assert teller.tell(ButtonEvent("A+", "tap")) == ["the A+ button on the board was tapped"]
    admit = AdmitEvent(Admission(open=False, you=True, admitted=1))
    assert teller.tell(admit) == ["Bluetooth: 1 device admitted may change the board"]


def test_watch_says_a_peg_and_raw_gives_the_protocol(vboard: VirtualBoard, spawn: Spawn) -> None:
    for option, expected in (
        ((), "blue pegs 3: 3"),
        (
            ("--raw",),
            "st r=2 t=121 n=2 d=0 w=-1 x=0 f=6,0 b=3,0 g=0,0 q=0,0 u=2 x2=0 gn=1 m=0 mk=0 mg=0 mn=0",
        ),
    ):
        watcher = spawn(
            [*CLI, "--port", vboard.port, "watch", *option],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert watcher.stdout is not None and watcher.stderr is not None
            assert "watching" in watcher.stderr.readline()
            if not option:  # the game as it is, first
                assert [watcher.stdout.readline() for _ in range(3)][0].startswith("game to 121")
            pegged = subprocess.run(
                [*CLI, "--port", vboard.port, "peg", "blue", "3"], capture_output=True, timeout=30
            )
            assert pegged.returncode == 0, pegged.stderr
            assert watcher.stdout.readline().rstrip("\n") == expected
        finally:
            watcher.send_signal(signal.SIGINT)
            watcher.communicate(timeout=10)
