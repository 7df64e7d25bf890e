"""Whole games into the record (cribboard.record) as people play them: typed at the scorekeeper,
played by the computer, across a restart of the host and power cuts of the virtual board. Each
lands once, with what was counted in it, whatever happened on the way."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from cribboard.api import Board, HelloEvent, StateEvent
from cribboard.boardid import board_identity
from cribboard.play.driver import GameDriver
from cribboard.play.players import Computer
from cribboard.play.scorekeeper import Scorekeeper
from cribboard.record.stats import Who, game_graph, hand_counts, statistics
from cribboard.record.store import Record
from cribboard.recorder import Recording
from cribboard.rules.game import Reason, ScoreEvent
from cribboard.virtual import VirtualBoard
from support import EventLog, wait_saved


def recording_for(vboard: VirtualBoard, board: Board, path: Path, source: str) -> Recording:
    recording = Recording(
        Record.open(path),
        board_identity(vboard.port, board.hello, vboard.flash_path),
        source,
        say=pytest.fail,  # a record that cannot be written fails the test
    )
    return recording


def live_steps(record: Record, game: int) -> list[tuple[int, int, int, str, int | None]]:
    return record.db.execute(
        "SELECT side, before, after, kind, seat FROM events WHERE game = ? AND live = 1"
        " ORDER BY side, before",
        (game,),
    ).fetchall()


def chain_ends(steps: list[tuple[int, int, int, str, int | None]], sides: int) -> list[int]:
    """Where each side's live steps lead from 0, checking they join up (no step twice, none
    missing)."""
    ends = []
    for side in range(sides):
        score = 0
        for step in (s for s in steps if s[0] == side and s[2] > s[1]):
            assert step[1] == score, f"side {side}: a step from {step[1]} after {score}"
            score = step[2]
        ends.append(score)
    return ends


async def cut_power(vboard: VirtualBoard, board: Board, saved: bool) -> None:
    """A power cut of the virtual board (SIGKILL); `saved`: once the store has saved the
    board's state (nothing lost), else at once (the last changes may be lost)."""
    state = await board.state()
    if saved:
        await wait_saved(vboard.flash_path, lambda g: list(g.front[:2]) == state.front[:2])
    events = EventLog.of(board)
    vboard.reset()
    await events.wait(lambda e: isinstance(e, HelloEvent), timeout=20)  # it restarted
    await events.wait(lambda e: isinstance(e, StateEvent))  # and the host resynchronised


# One deal typed at the table: the play's pegs, the pone's hand, the dealer's hand, the crib.
# Blue deals first (the pone, orange, counts first); some hands counted with their cards.
DEALS = [
    ["o2", "b1", "12", "8", "4"],
    ["b3", "o 2", "c 5H 5S 5C JD 5D", "6", "0"],  # blue's hand: the 29, counted
    ["o1", "b2", "7", "4 2H 3H 4H 6D 5C", "m", "5"],  # orange claims 4 of 12: muggins
    ["s JS", "b2", "10", "9", "2"],  # the starter a jack: heels for blue (dealer)
]


async def test_a_game_typed_at_the_scorekeeper_lands_once(
    vboard: VirtualBoard, tmp_path: Path
) -> None:
    """A whole game typed at `keep`, the host restarted between deals, the virtual board cut
    twice (once after its save, once losing the peg just made, which the host puts back as the
    restore after a power cut does): one game in the record, finished, each step once, its
    hands with their cards, its muggins and heels, and the players named."""
    path = tmp_path / "record.sqlite"
    lines_per_deal = [list(d) for d in DEALS]
    async with await Board.open(vboard.port, timeout=3.0) as board:
        await board.new_game(121, 2)
        await board.set_dealer(0)
        recording = recording_for(vboard, board, path, "keep")
        keeper = Scorekeeper(
            board, output=lambda text: None, recording=recording, names=["Ann", "Bob"]
        )
        await keeper.start()
        deal = 0
        cuts: list[str] = []
        while (await board.state()).winner is None:
            lines = lines_per_deal[deal % len(lines_per_deal)]
            if deal == 3:
                # Host restarted between deals: a new app, a new connection to the record.
                await recording.close()
                recording = recording_for(vboard, board, path, "keep")
                keeper = Scorekeeper(board, output=lambda text: None, recording=recording)
                await keeper.start()
            for line in lines:
                if deal == 6 and line == "o1":  # all saved but the peg about to be made
                    now = await board.state()
                    await wait_saved(
                        vboard.flash_path, lambda g: list(g.front[:2]) == now.front[:2]
                    )
                assert await keeper.handle(line)
                if deal == 1 and line == "b3":
                    await cut_power(vboard, board, saved=True)
                    cuts.append("saved")
                if deal == 6 and line == "o1":
                    before = await board.state()
                    await cut_power(vboard, board, saved=False)
                    after = await board.state()
                    if after.front[1] != before.front[1]:  # lost: the host puts it back
                        await board.peg(1, 1)
                        cuts.append("put back")
                    else:
                        cuts.append("kept")
                if (await board.state()).winner is not None:
                    break
            deal += 1
        await recording.flush()
        final = await board.state()
        await recording.close()
    assert final.winner is not None and cuts[0] == "saved" and len(cuts) == 2, cuts
    with Record.open(path) as record:
        rows = record.db.execute("SELECT id, winner, front, source FROM games").fetchall()
        assert len(rows) == 1
        game, winner, front, source = rows[0]
        assert (winner, json.loads(front), source) == (final.winner, final.front[:2], "keep")
        steps = live_steps(record, game)
        assert chain_ends(steps, 2) == final.front[:2]
        assert record.seat_names(game) == ["Ann", "Bob"]
        kinds = Counter(step[3] for step in steps)
        assert kinds["muggins"] >= 1 and kinds["heels"] >= 1 and kinds["peg"] == 0
        hands = record.db.execute(
            "SELECT cards FROM events WHERE game = ? AND live = 1 AND kind = 'hand'"
            " AND cards IS NOT NULL",
            (game,),
        ).fetchall()
        assert ("5H 5S 5C JD 5D",) in hands
        ann = next(p for p in statistics(record).players if p.who == Who("Ann"))
        assert ann.hands.best == 29 and ann.games == 1


async def test_computer_games_land_once_across_restarts_and_a_power_cut(
    vboard: VirtualBoard, tmp_path: Path
) -> None:
    """Two games of the computer against itself: the first stopped in the middle (the host
    killed) and played on by a new host after a power cut of the board. Each game is one row,
    its live steps are the scores the engine pegged, by kind, and its graph ends at the board's
    final score."""
    path = tmp_path / "record.sqlite"
    pegged: list[ScoreEvent] = []
    finals = []

    class Stop(Exception):
        pass

    async with await Board.open(vboard.port, timeout=3.0) as board:
        recording = recording_for(vboard, board, path, "play")
        stop_following = await recording.follow(board)
        for game_no in range(2):
            rng = random.Random(game_no)
            driver = GameDriver(
                board,
                [Computer("a"), Computer("b")],
                rng=rng,
                say=lambda text: None,
                recording=recording,
                seat_names=["Ann", "computer"],
            )
            original = driver.peg

            async def peg(
                event: ScoreEvent | None, *, told: bool = False, cards: str | None = None
            ) -> None:
                await original(event, told=told, cards=cards)
                if event is not None:
                    pegged.append(event)
                    if game_no == 0 and len(pegged) == 25:
                        raise Stop

            driver.peg = peg  # type: ignore[method-assign]
            try:
                game = await driver.play_game()
            except Stop:
                # The host is gone: a new one, after the board lost its power and came back.
                stop_following()
                await recording.close()
                await cut_power(vboard, board, saved=True)
                recording = recording_for(vboard, board, path, "play")
                stop_following = await recording.follow(board)
                driver.recording = recording
                game = await driver.play_game(go_on=True)
            assert game.winner is not None
            await recording.flush()
            finals.append((await board.state()).front[:2])
        stop_following()
        await recording.close()
    with Record.open(path) as record:
        rows = record.db.execute("SELECT id, winner, front FROM games ORDER BY id").fetchall()
        assert [json.loads(front) for _id, _winner, front in rows] == finals
        by_kind: Counter[tuple[str, int]] = Counter()
        for game_id, _winner, _front in rows:
            steps = live_steps(record, game_id)
            assert chain_ends(steps, 2) == json.loads(_front)
            for _side, before, after, kind, seat in steps:
                assert seat is not None
                by_kind[(kind, seat)] += after - before
            graph = game_graph(record, game_id)
            assert graph is not None and list(graph.scores[-1]) == json.loads(_front)
        expected: Counter[tuple[str, int]] = Counter()
        kinds = {
            Reason.PLAY: "play",
            Reason.HAND: "hand",
            Reason.CRIB: "crib",
            Reason.HEELS: "heels",
        }
        for event in pegged:
            expected[(kinds[event.reason], event.seat)] += event.after - event.before
        assert by_kind == expected
        ann = hand_counts(record, Who("Ann"))
        assert sum(ann.hands) >= 10  # every hand of Ann's, nothing counted too


async def test_a_new_game_undone_goes_back_to_the_game_it_left(
    vboard: VirtualBoard, tmp_path: Path
) -> None:
    """A won game, a new game, the new game undone (the board shows the won game again, its
    number back), a correction of the won game, then the new game again and played: two games
    in the record, each once by the board's number, the first with its corrected pegs."""
    path = tmp_path / "record.sqlite"
    async with await Board.open(vboard.port, timeout=3.0) as board:
        recording = recording_for(vboard, board, path, "bridge")
        stop = await recording.follow(board)
        await board.new_game(61, 2)
        await board.set_pegs(1, 50, 40)
        await board.set_pegs(0, 59, 50)
        await board.peg(0, 2)
        won = await board.state()
        await board.new_game()
        await recording.flush()
        await board.undo()
        back = await board.state()
        assert back.game == won.game and back.winner == 0
        await board.set_pegs(1, 52, 50)  # a correction of the won game's loser
        await recording.flush()
        await board.new_game()
        await board.peg(1, 7)
        await recording.flush()
        stop()
        await recording.close()
    with Record.open(path) as record:
        rows = record.db.execute(
            "SELECT board_game, winner, front FROM games ORDER BY board_game"
        ).fetchall()
    assert rows == [(won.game, 0, "[61,52]"), (won.game + 1, None, "[0,7]")]
