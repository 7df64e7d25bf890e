"""`hall players list` and `hall export`: the store read out as it is, a player a line or the
standings and games as CSV. No director is asked, so nothing of the network is imported: these
start as fast as the store opens."""

from __future__ import annotations

import sys
from pathlib import Path

from cribboard.cmdline.rows import UsageError
from cribboard.errors import HallError
from cribboard.hall.home import open_store
from cribboard.i18n import _
from cribboard.plaintext import inert


def players_list(hall_dir: Path) -> int:
    """`hall players list`: the players registered, one a line."""
    with open_store(hall_dir) as store:
        for player in store.tournament.players.values():
            print(inert(player.name))
    return 0


def export(hall_dir: Path, standings: Path | None, games: Path | None) -> int:
    """`hall export`: the standings and the games as CSV files ('-': stdout)."""
    if standings is None and games is None:
        raise UsageError(_("export needs --standings FILE and/or --games FILE"))
    with open_store(hall_dir) as store:
        for path, write in (
            (standings, store.export_standings_csv),
            (games, store.export_games_csv),
        ):
            if path is None:
                continue
            if str(path) == "-":
                write(sys.stdout)
                continue
            try:
                with path.open("w", newline="") as out:
                    write(out)
            except OSError as err:
                raise HallError(
                    _("cannot write %(path)s: %(error)s", path=path, error=err.strerror)
                )
            print(_("wrote %(path)s", path=path), file=sys.stderr)
    return 0
