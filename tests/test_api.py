"""The library's face without a board: SyncBoard offers all of Board, and a board state follows
the protocol's partial state events. (The API against the firmware: tests/test_host_e2e.py.)"""

from __future__ import annotations

import inspect

from cribboard.api import Board, BoardState, SyncBoard
from cribboard.virtual import VirtualBoard

# What Board has that SyncBoard cannot offer under the same name, each with its counterpart.
# Empty: Board's async iterators (events(), states()) are blocking iterators of the same name on
# SyncBoard, and everything else runs on its loop.
NOT_SYNCHRONOUS: dict[str, str] = {}


def public(cls: type) -> dict[str, object]:
    return {name: value for name, value in vars(cls).items() if not name.startswith("_")}


def parameters(function: object) -> list[tuple[str, object, object]]:
    """(name, kind, default) of each parameter but self/cls."""
    if isinstance(function, (classmethod, staticmethod)):
        function = function.__func__
    if isinstance(function, property):
        return []
    signature = inspect.signature(function)  # type: ignore[arg-type]
    return [
        (p.name, p.kind, p.default)
        for p in signature.parameters.values()
        if p.name not in ("self", "cls")
    ]


def test_sync_board_offers_everything_board_does() -> None:
    board, sync = public(Board), public(SyncBoard)
    missing = sorted(set(board) - set(sync) - set(NOT_SYNCHRONOUS))
    assert not missing, f"SyncBoard lacks {missing}"
    for name, counterpart in NOT_SYNCHRONOUS.items():
        assert counterpart in sync, f"{name}: SyncBoard lacks its counterpart {counterpart}"
    for name, member in board.items():
        if name in NOT_SYNCHRONOUS:
            continue
        same = sync[name]
        assert type(same) is type(member), f"{name}: {type(member)} on Board, {type(same)}"
        assert parameters(same) == parameters(member), f"{name} takes other arguments"
        if not isinstance(same, property):
            function = same.__func__ if isinstance(same, classmethod) else same
            assert not inspect.iscoroutinefunction(function), f"SyncBoard.{name} is async"


FULL = {
    "r": "4",
    "t": "121",
    "n": "2",
    "d": "0",
    "w": "-1",
    "x": "0",
    "f": "12,7",
    "b": "5,0",
    "g": "1,0",
    "q": "0,0",
    "u": "3",
    "x2": "0",
}


def test_a_partial_state_event_changes_only_what_it_carries() -> None:
    state = BoardState.from_fields(FULL)
    assert (state.front, state.back, state.dealer, state.winner) == ([12, 7], [5, 0], 0, None)
    later = state.updated({"r": "5", "d": "1", "q": "0,6"})
    assert (later.rev, later.dealer, later.pending) == (5, 1, [0, 6])
    assert later.front == state.front and later.games == state.games
    won = later.updated({"r": "6", "w": "1", "x": "2", "f": "12,121", "x2": "1"})
    assert (won.winner, won.result, won.skunk_double) == (1, "skunk", True)
    assert won.updated({}) == won


def test_closing_a_sync_board_twice_does_nothing_the_second_time(vboard: VirtualBoard) -> None:
    board = SyncBoard.open(vboard.port)
    board.close()
    board.close()  # (it used to wait for ever on the stopped loop)
