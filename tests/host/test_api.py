"""The library's face without a board: SyncBoard offers all of Board, a board state follows
the protocol's partial state events, and the API's own words (players by name, typed events, an
old name's warning) on a fake transport (cribboard.testing, the tiny board of
tests/fakeboard.py). (The API against the firmware: tests/host/test_host_e2e.py.)"""

from __future__ import annotations

import asyncio
import inspect
import threading
import typing
from collections.abc import AsyncIterator
from unittest.mock import AsyncMock

import pytest

from cribboard import api
from cribboard.api import (
    Board,
    BoardState,
    SettingsEvent,
    StateEvent,
    Subscription,
    SyncBoard,
    SyncSubscription,
)
from cribboard.errors import BoardRejected, CribboardError
from fakeboard import TinyBoard


@pytest.fixture
async def board() -> AsyncIterator[Board]:
    """A Board on the tiny fake board (no virtual board: the board is not what these test)."""
    async with await Board.open_transport(TinyBoard().transport) as opened:
        yield opened


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


def test_a_state_kept_as_json_comes_back_with_its_match() -> None:
    """What a remote game and the hall's director keep in their files: to_json() read back
    (from_json), the match too; a state kept before protocol 1.4 has neither."""
    state = BoardState.from_fields(
        {
            **FULL,
            "g": "2,0",
            "w": "0",
            "x": "1",
            "gn": "7",
            "m": "3",
            "mk": "0",
            "mg": "2",
            "mn": "4",
        }
    )
    assert state.match is not None and (state.match.number, state.match.winner) == (4, 0)
    assert BoardState.from_json(state.to_json()) == state
    old = {k: v for k, v in state.to_json().items() if k not in ("game", "match")}
    assert BoardState.from_json(old) == state._replace(
        game=None, match_length=0, match_kind=0, match_game=0, match_number=0
    )


def test_closing_a_sync_board_twice_does_nothing_the_second_time() -> None:
    tiny = TinyBoard()
    board = SyncBoard.open_transport(tiny.transport)
    board.close()
    board.close()  # (it used to wait for ever on the stopped loop)
    assert not tiny.links[0].is_open


# Where SyncBoard's types differ from Board's, by design: its own class, and blocking iterators.
SYNC_NAMES = {"Board": SyncBoard, "Subscription": SyncSubscription}
# The blocking side's name for each of Board's and Subscription's protocol methods.
SYNC_DUNDERS = {
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "__aiter__": "__iter__",
    "__anext__": "__next__",
    "__enter__": "__enter__",
    "__exit__": "__exit__",
}


def types(function: object, *, as_sync: bool = False) -> dict[str, object]:
    """Each parameter's type and the return's, resolved (an async method's return is the type
    its await gives); `as_sync`: Board's own names read as SyncBoard's."""
    if isinstance(function, (classmethod, staticmethod)):
        function = function.__func__
    if isinstance(function, property):
        function = function.fget
    names = dict(vars(api), **SYNC_NAMES) if as_sync else vars(api)
    return typing.get_type_hints(function, globalns=names)


def counterparts(async_class: type, sync_class: type) -> list[tuple[str, object, object]]:
    """(name, member, its blocking counterpart) for each public member and protocol method."""
    members = public(async_class) | {
        name: vars(async_class)[name] for name in SYNC_DUNDERS if name in vars(async_class)
    }
    return [
        (name, member, vars(sync_class)[SYNC_DUNDERS.get(name, name)])
        for name, member in members.items()
        if name not in NOT_SYNCHRONOUS
    ]


@pytest.mark.parametrize(
    ("async_class", "sync_class"), [(Board, SyncBoard), (Subscription, SyncSubscription)]
)
def test_sync_board_takes_and_returns_what_board_does(async_class: type, sync_class: type) -> None:
    """Every parameter's type and every return type, resolved, not only the names: SyncBoard's
    method returns what Board's gives once awaited (SyncBoard.preview once returned None where
    Board.preview returns the revision); the same for a subscription and its blocking twin. A
    renamed method's old name is held too while it is kept (`preview`, now `set_pending`)."""
    pairs = counterparts(async_class, sync_class)
    names = {name for name, _member, _twin in pairs}
    assert "close" in names and {"__aexit__", "__exit__"} & names  # (what it compares)
    if async_class is Board:
        assert {"set_pending", "preview"} <= names
    for name, member, twin in pairs:
        assert types(twin) == types(member, as_sync=True), f"{sync_class.__name__}.{name} drifted"


def test_sync_board_hands_on_each_call_and_its_result() -> None:
    """Each blocking method calls Board's of the same name with the same arguments and returns
    its result as it is (a fake Board: no board needed)."""
    board = AsyncMock(spec=Board)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    sync = SyncBoard(board, loop, thread)
    try:
        for name, member in public(Board).items():
            if not inspect.iscoroutinefunction(member) or name == "close":
                continue
            # Every parameter given, defaults too: the positional ones in order, the
            # keyword-only ones (a change's key and conditions) by name.
            args, kwargs = [], {}
            for parameter, kind, _default in parameters(member):
                if kind is inspect.Parameter.KEYWORD_ONLY:
                    kwargs[parameter] = object()
                else:
                    args.append(object())
            result = object()
            getattr(board, name).return_value = result
            assert getattr(sync, name)(*args, **kwargs) is result, f"SyncBoard.{name}'s result"
            called = getattr(board, name).await_args
            assert called is not None, f"SyncBoard.{name} did not call Board.{name}"
            given = inspect.signature(member).bind(board, *called.args, **called.kwargs)
            assert list(given.arguments.values())[1:] == [*args, *kwargs.values()], (
                f"SyncBoard.{name}'s arguments"
            )
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()


async def test_players_by_name_and_the_players_a_game_has(board: Board) -> None:
    """One set of player words: the API takes the command line's and the bridge's names."""
    await board.new_game(121, 2)
    await board.peg("orange", 3)
    await board.peg("A", 2)
    await board.set_pending("Blue", 4)
    await board.set_pegs("1", 9)
    assert await board.set_dealer("orange") == 1
    state = await board.state()
    assert (state.front, state.pending) == ([2, 9], [4, 0])
    with pytest.raises(CribboardError, match=r"unknown player 'green': use 0, 1, 2 or blue"):
        await board.peg("green", 3)
    # A player the game does not have: the refusal says which players it has.
    with pytest.raises(BoardRejected, match=r"this game has players 0 \(blue\) and 1 \(orange\)"):
        await board.peg("purple", 3)
    await board.new_game(121, 3)
    with pytest.raises(BoardRejected, match=r"players 0 \(blue\), 1 \(orange\) and 2 \(purple\)"):
        await board.peg(3, 1)


async def test_preview_is_set_pending_by_its_old_name_with_a_warning(board: Board) -> None:
    """`Board.preview`, kept for one release, does what `set_pending` does and returns the
    same (the board's revision), and says it is deprecated at the caller's line."""
    await board.new_game(121, 2)
    with pytest.warns(DeprecationWarning, match="Board.set_pending") as warned:
        rev = await board.preview("orange", 5)
    assert warned[0].filename == __file__
    state = await board.state()
    assert (rev, state.pending) == (state.rev, [0, 5])
    assert await board.set_pending("orange", 0) == state.rev + 1


async def test_events_are_typed_in_the_bridges_shape(board: Board) -> None:
    await board.new_game(121, 2)
    with board.events() as events:
        await board.peg(0, 19)
        await board.peg(1, 11)
        await board.brightness(77)
        # Two pegs read together may arrive as one state event (coalesced by design), so
        # read until the settings' event that must follow them.
        seen = []
        while not seen or not isinstance(seen[-1], SettingsEvent):
            seen.append(await anext(events))
    states, settings = seen[:-1], seen[-1]
    assert states and all(isinstance(e, StateEvent) for e in states)
    last = states[-1]
    assert isinstance(last, StateEvent) and last.state.front == [19, 11]
    state = last.to_json()
    assert state["type"] == "state" and state["state"]["front"] == [19, 11]
    assert isinstance(settings, SettingsEvent)
    assert settings.to_json() == {"type": "cfg", "bright": 77, "budget": settings.settings.budget}
