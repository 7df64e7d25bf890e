"""What the hall's commands that a running director answers do: ask it over its socket
(:mod:`cribboard.hall.control`), or, with none running, read or change the store themselves
where no table needs to hear of it (players added, standings, corrections, held results); the
rounds need the director. Each prints its answer (:mod:`cribboard.hall.reports`) and returns
the exit status; a refusal is a HallError, a bad combination of options a UsageError. (What
only reads the store, the players' list and the CSV export, is :mod:`cribboard.hall.readout`,
which starts without the network's libraries.)"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from cribboard.cmdline.rows import UsageError
from cribboard.errors import HallError
from cribboard.hall import director
from cribboard.hall.control import DirectorNotRunning, call, correction_json
from cribboard.hall.home import open_store, read_settings, start_command
from cribboard.hall.reports import (
    format_correction,
    format_held,
    format_report,
    format_standings,
    format_verdict,
    standings_heading,
)
from cribboard.hallwire import messages
from cribboard.i18n import _, n_


def ask(hall_dir: Path, method: str, route: str, body: object = None) -> dict[str, Any]:
    """The running director's answer; HallError saying how to start one when none runs."""
    try:
        return asyncio.run(call(hall_dir, method, route, body))
    except DirectorNotRunning:
        raise HallError(
            _(
                "no director is running on %(dir)s: start it with `%(command)s`",
                dir=hall_dir,
                command=start_command(hall_dir),
            )
        )


def director_running(hall_dir: Path) -> bool:
    """Whether a director answers on `hall_dir`'s socket."""
    try:
        asyncio.run(call(hall_dir, "GET", "/status"))
    except DirectorNotRunning:
        return False
    return True


def round_next(hall_dir: Path) -> int:
    """`hall round next`: the director pairs the next round and sends the tables their games."""
    print(format_report(ask(hall_dir, "POST", "/round/next", {})))
    return 0


def round_resend(hall_dir: Path, tables: list[int]) -> int:
    """`hall round resend`: the director sends `tables` (none: every table not started) their
    games again."""
    print(format_report(ask(hall_dir, "POST", "/round/resend", {"tables": tables})))
    return 0


def players_add(hall_dir: Path, names: list[str]) -> int:
    """`hall players add`: through the director when it runs, else into the store."""
    if director_running(hall_dir):
        answer = ask(hall_dir, "POST", "/players", {"names": names})
        added, count = answer["players"], answer["count"]
    else:
        with open_store(hall_dir, create=True) as store:
            added = [p.name for p in director.register_players(store, names)]
            count = len(store.tournament.players)
    print(
        n_(
            "registered %(names)s (%(count)d player)",
            "registered %(names)s (%(count)d players)",
            count,
            names=", ".join(added),
        )
    )
    return 0


def standings(hall_dir: Path, as_json: bool) -> int:
    """`hall standings`: the standings, what they count and the results held, from the store."""
    with open_store(hall_dir) as store:
        ranked = store.standings()
        rounds = len(store.tournament.rounds)
        found = director.held_json(store)
        if as_json:
            print(messages.encode_standings(rounds, ranked, found).decode())
            return 0
        print(standings_heading(store.tournament))
        print(format_standings(ranked))
        if found:
            print(_("held for the director, not counted (`cribboard hall held`):"))
            print(format_held(found))
    return 0


def held(hall_dir: Path, verdict: str | None, args: argparse.Namespace) -> int:
    """`hall held`: the results held (`verdict` None), or one accepted or rejected."""
    running = director_running(hall_dir)
    if verdict is None:
        if running:
            found = ask(hall_dir, "GET", "/held")["held"]
        else:
            with open_store(hall_dir) as store:
                found = director.held_json(store)
        if not found:
            print(_("no result is held"))
            return 0
        print(format_held(found))
        print(
            _(
                "`cribboard hall held accept ROUND TABLE --why ...` counts one, "
                "`reject` drops it (both kept in the audit trail)"
            )
        )
        return 0
    body = {"round": args.round, "table": args.table, "who": args.who, "why": args.why}
    if running:
        answer = ask(hall_dir, "POST", f"/held/{verdict}", body)
    else:
        decide = director.accept_held if verdict == "accept" else director.reject_held
        with open_store(hall_dir) as store:
            correction = decide(store, args.round, args.table, who=args.who, why=args.why)
            answer = correction_json(store, correction)
    print(format_verdict(answer, verdict))
    return 0


def correct(hall_dir: Path, args: argparse.Namespace) -> int:
    """`hall correct`: a table's result replaced or struck, through the director when it runs,
    else in the store."""
    if args.winner is not None and args.loser_score is None:
        raise UsageError(_("--winner needs --loser-score"))
    if args.strike and args.loser_score is not None:
        raise UsageError(_("--strike takes no --loser-score"))
    body = {
        "round": args.round,
        "table": args.table,
        "winner": args.winner,
        "loser_score": args.loser_score,
        "target": args.target,
        "who": args.who,
        "why": args.why,
    }
    if director_running(hall_dir):
        answer = ask(hall_dir, "POST", "/correct", body)
    else:
        with open_store(hall_dir) as store:
            correction = director.correct_result(
                store,
                args.round,
                args.table,
                winner=args.winner,
                loser_score=args.loser_score,
                target=args.target or read_settings(hall_dir).get("target", 121),
                who=args.who,
                why=args.why,
            )
            answer = correction_json(store, correction)
    print(format_correction(answer))
    return 0
