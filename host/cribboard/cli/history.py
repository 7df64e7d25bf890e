"""`cribboard history`: what the record of games (cribboard.record) tells, as a table for people
or JSON for programs: each player's games won and lost, skunks given and taken, matches, hands
and cribs (average and best), pegging points per deal and muggins; head to head; the matches;
the last games; one game's scores deal by deal (`--game`)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from cribboard.cmdline.rows import Command, UsageError, arg
from cribboard.i18n import N_, _, n_
from cribboard.names import player_name
from cribboard.plaintext import inert

if TYPE_CHECKING:  # (the record is read when the command runs: the row is read every time)
    from cribboard.record.stats import (
        GameGraph,
        GameSummary,
        MatchSummary,
        PlayerStats,
        Statistics,
        Who,
    )

LAST_GAMES = 10
"""Games listed under the statistics (--games changes it)."""
MOST_GAMES = 10000


def who_text(who: Who) -> str:
    """A player as the table shows them: the name, or a seat without one by its colour in
    brackets (`(blue)`), never taken for a person called Blue."""
    if who.name is not None:
        return inert(who.name)  # checked when it was typed; a file edited by hand is text too
    return f"({player_name(who.side or 0)})"


def side_text(side: tuple[Who, ...], number: int) -> str:
    """The players of a side (partners joined with &), or its colour."""
    return " & ".join(who_text(w) for w in side) if side else f"({player_name(number)})"


def _average(value: float | None, best: int | None) -> str:
    if value is None:
        return "–"
    return f"{value:.1f} ({best})"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Columns as wide as their widest cell; the first one left, the others right."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    lines = []
    for row in [header, *rows]:
        cells = [
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def players_lines(stats: list[PlayerStats]) -> list[str]:
    header = [
        _("player"),
        _("won"),
        _("lost"),
        # Translators: skunks given / taken (double skunks counted in them too).
        _("skunks +/-"),
        _("matches"),
        _("hand (best)"),
        _("crib (best)"),
        # Translators: the play's pegs, per deal.
        _("pegging/deal"),
        _("muggins"),
    ]
    rows = []
    for p in stats:
        per_deal = p.pegging_per_deal
        rows.append(
            [
                who_text(p.who),
                str(p.won),
                str(p.lost),
                f"{p.skunks_given}/{p.skunks_taken}",
                f"{p.matches_won}-{p.matches - p.matches_won}",
                _average(p.hands.average, p.hands.best),
                _average(p.cribs.average, p.cribs.best),
                "–" if per_deal is None else f"{per_deal:.1f}",
                f"{p.muggins} ({p.muggins_points})",
            ]
        )
    return _table(header, rows)


def game_line(game: GameSummary) -> str:
    """`#12  2026-05-01  Ann 121 · Bob 87: Ann won, a skunk`."""
    scores = " · ".join(
        f"{side_text(side, n)} {game.front[n]}" for n, side in enumerate(game.sides)
    )
    when = (game.ended or game.started)[:10]
    line = f"#{game.id}  {when}  {scores}"
    if game.winner is None:
        return line
    winner = side_text(game.sides[game.winner], game.winner)
    if game.result == "skunk":
        return line + ": " + _("%(winner)s won, a skunk", winner=winner)
    if game.result == "double_skunk":
        return line + ": " + _("%(winner)s won, a double skunk", winner=winner)
    return line + ": " + _("%(winner)s won", winner=winner)


def match_line(match: MatchSummary) -> str:
    score = "-".join(str(s) for s in match.score)
    sides = " v ".join(side_text(side, n) for n, side in enumerate(match.sides))
    if match.kind == "best_of":
        kind = _("best of %(games)d", games=match.length)
    else:
        kind = _("first to %(games)d", games=match.length)
    if match.winner is None:
        return _("%(sides)s, %(kind)s: %(score)s, going on", sides=sides, kind=kind, score=score)
    return _(
        "%(sides)s, %(kind)s: %(score)s, won by %(winner)s",
        sides=sides,
        kind=kind,
        score=score,
        winner=side_text(match.sides[match.winner], match.winner),
    )


def report(stats: Statistics, games: list[GameSummary]) -> str:
    """The whole table for people."""
    from cribboard.record.stats import sort_key

    if not stats.finished and not stats.unfinished:
        return _(
            "No games recorded yet: keep, play, the bridge and remote games record the games "
            "they drive."
        )
    lines = [
        n_(
            "%(count)d game finished",
            "%(count)d games finished",
            stats.finished,
        )
        + ", "
        + n_("%(count)d left unfinished", "%(count)d left unfinished", stats.unfinished),
        "",
    ]
    lines += players_lines(stats.players)
    if stats.head_to_head:
        lines += ["", _("head to head (won-lost)")]
        for pair in stats.head_to_head:  # each pair once, the first in order first
            if sort_key(pair.player) < sort_key(pair.opponent):
                players = f"{who_text(pair.player)} v {who_text(pair.opponent)}"
                lines.append(f"  {players}  {pair.won}-{pair.lost}")
    if stats.matches:
        lines += ["", _("matches")]
        lines += [f"  {match_line(m)}" for m in stats.matches]
    if games:
        lines += ["", _("last games")]
        lines += [f"  {game_line(g)}" for g in games]
    return "\n".join(lines)


def graph_lines(graph: GameGraph) -> str:
    """A game's scores deal by deal, a row a deal."""
    sides = graph.game.sides
    header = [_("deal")] + [side_text(side, n) for n, side in enumerate(sides)]
    rows = []
    for n, scores in enumerate(graph.scores):
        label = str(n + 1) if n < len(graph.dealers) else _("end")
        rows.append([label] + [str(score) for score in scores])
    return "\n".join([game_line(graph.game), "", *_table(header, rows)])


def _read_board(args: argparse.Namespace) -> None:
    """The board named by --port or --ble: its own history merged into the record, and the game
    it shows (cribboard.recorder, as every program that follows a board does)."""
    import asyncio

    from cribboard.api import Board
    from cribboard.boardid import board_identity
    from cribboard.discovery import resolve_port
    from cribboard.recorder import Recording

    async def read() -> int:
        if args.ble is not None:
            board = await Board.open_ble(args.ble or None, timeout=args.timeout)
        else:
            board = await Board.open((await resolve_port(args.port)).port, timeout=args.timeout)
        async with board:
            recording = Recording.open(board_identity(board.name, board.hello), "board", say=_say)
            if recording is None:
                return 0
            try:
                recording.take(await board.state(), gap=True)
                return await recording.merge(board)
            finally:
                await recording.close()

    count = asyncio.run(read())
    _say(
        n_(
            "the board's own history: %(count)d finished game",
            "the board's own history: %(count)d finished games",
            count,
        )
    )


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def _history(args: argparse.Namespace) -> int:
    import json  # (here: most command lines print no JSON)

    from cribboard.record.stats import finished_games, game_graph, statistics
    from cribboard.record.store import Record, default_path

    if not 1 <= args.games <= MOST_GAMES:
        raise UsageError(_("--games takes 1 to %(most)d", most=MOST_GAMES))
    if args.port is not None or args.ble is not None:
        _read_board(args)
    with Record.open(default_path()) as record:
        if args.game is not None:
            graph = game_graph(record, args.game)
            if graph is None:
                raise UsageError(_("no game %(game)d in the record", game=args.game))
            print(json.dumps(graph.to_json()) if args.json else graph_lines(graph))
            return 0
        stats = statistics(record)
        games = finished_games(record, args.games, args.player)
        if args.json:
            out: dict[str, Any] = {**stats.to_json(), "games": [g.to_json() for g in games]}
            print(json.dumps(out))
        else:
            print(report(stats, games))
    return 0


HISTORY = Command(
    "history",
    N_("what the record of games tells: players' wins and losses, skunks, hands, pegging"),
    _history,
    (
        arg("--json", action="store_true", help=N_("print it as JSON")),
        arg(
            "--games",
            type=int,
            default=LAST_GAMES,
            metavar="N",
            help=N_("how many of the last games to list (default 10)"),
        ),
        arg("--player", metavar="NAME", help=N_("list only the games of this player")),
        arg(
            "--game",
            type=int,
            metavar="ID",
            help=N_("one game's scores deal by deal (its id as the list shows it: #12)"),
        ),
    ),
    description=N_(
        "The games keep, play, the bridge and remote games recorded (in the user's data "
        "directory: $XDG_DATA_HOME/cribboard/record.sqlite): each player's games won and "
        "lost, skunks given and taken, matches, hands and cribs, pegging points per deal and "
        "muggins taken; head to head; the last games. With --port or --ble, the board's own "
        "history of finished games (its buttons' too) is read into the record first."
    ),
)
