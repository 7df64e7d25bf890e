"""The hall's answers as a person reads them in a terminal: the standings and what they count,
the results held for the director, a round's report (each table's new game), a correction.

Text only: the commands that print them are :mod:`cribboard.hall.actions`; the same answers as
JSON are the director's (:mod:`cribboard.hall.control`) and the standings topic's
(:mod:`cribboard.hallwire.messages`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cribboard.i18n import N_, _, n_
from cribboard.plaintext import inert

if TYPE_CHECKING:
    from cribboard.tournament import Standing, Tournament


def format_standings(standings: Sequence[Standing]) -> str:
    """The standings as a table for the terminal."""
    # Translators: the standings table's column headings (a column is as wide as its heading).
    player = _("player")
    # Translators: the standings' columns: points, games played, games won, skunks given, and
    # the spread (points scored minus points conceded).
    headings = (_("points"), _("played"), _("won"), _("skunks"), _("spread"))
    names = [inert(s.player.name) for s in standings]
    width = max([len(player)] + [len(name) for name in names])
    widths = [max(len(h), w) for h, w in zip(headings, (6, 6, 3, 6, 6), strict=True)]
    lines = [
        f"{'#':>3}  {player:<{width}}  "
        + "  ".join(f"{h:>{w}}" for h, w in zip(headings, widths, strict=True))
    ]
    for s, name in zip(standings, names, strict=True):
        cells = (s.points, s.played, s.won, s.skunks, f"{s.spread:+}" if s.spread else "0")
        lines.append(
            f"{s.rank:>3}  {name:<{width}}  "
            + "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))
        )
    return "\n".join(lines)


def standings_heading(tournament: Tournament) -> str:
    """What the standings count: ``standings after round 2``, or, while a round is being
    played, ``standings during round 3: 2 of 5 games finished``."""
    if not tournament.rounds:
        return _("no round played yet")
    current = tournament.rounds[-1]
    finished = sum(1 for t in current.tables if (current.number, t.number) in tournament.results)
    if finished == len(current.tables):
        return _("standings after round %(round)d", round=current.number)
    return n_(
        "standings during round %(round)d: %(finished)d of %(count)d game finished",
        "standings during round %(round)d: %(finished)d of %(count)d games finished",
        len(current.tables),
        round=current.number,
        finished=finished,
    )


def format_held(held: Sequence[Mapping[str, Any]]) -> str:
    """The results held for the director, one a line, with the reason."""
    return "\n".join(
        _(
            "  round %(round)s table %(table)s: %(result)s (%(reason)s)",
            round=h["round"],
            table=h["table"],
            result=h["result"],
            reason=h["reason"],
        )
        for h in held
    )


def format_verdict(answer: Mapping[str, Any], verdict: str) -> str:
    """A held result accepted (`verdict` "accept") or rejected, as the director answered."""
    said = (
        N_("round %(round)s table %(table)s: %(result)s (accepted); by %(who)s: %(why)s")
        if verdict == "accept"
        else N_("round %(round)s table %(table)s: %(result)s (rejected); by %(who)s: %(why)s")
    )
    return _(
        said,
        round=answer["round"],
        table=answer["table"],
        result=answer["new"] or _("no result"),
        who=answer["who"],
        why=answer["why"],
    )


def format_correction(answer: Mapping[str, Any]) -> str:
    """A result replaced or struck, with what it was, as the director answered."""
    return _(
        "round %(round)s table %(table)s: %(result)s (was: %(old)s); by %(who)s: %(why)s",
        round=answer["round"],
        table=answer["table"],
        result=answer["new"] or _("no result"),
        old=answer["old"] or _("no result"),
        who=answer["who"],
        why=answer["why"],
    )


def format_report(report: Mapping[str, Any]) -> str:
    """A round report (the director's answer to `round next` / `resend`) for the terminal."""
    lines = []
    if report.get("movement_note"):
        lines.append(report["movement_note"])
    lines.append(_("round %(round)s:", round=report["round"]))
    for row in report["tables"]:
        blue, orange = row["players"]
        if row["ok"]:
            status = _("new game started")
        elif row["ok"] is None:
            status = _("no answer yet (the table is away: it starts when it comes back)")
        else:
            error = row["error"] + (f" ({row['message']})" if row.get("message") else "")
            status = _(
                "refused: %(error)s; `cribboard hall round resend %(table)s` when it is free",
                error=error,
                table=row["table"],
            )
        lines.append(
            _(
                "  table %(table)3s: %(blue)s (blue) v %(orange)s (orange): %(status)s",
                table=row["table"],
                blue=inert(blue),
                orange=inert(orange),
                status=status,
            )
        )
    if report.get("bye"):
        # Translators: the player who sits out this round.
        lines.append(_("  bye: %(player)s", player=inert(report["bye"])))
    return "\n".join(lines)
