"""A hall's directory: where each of its files is, the variables and defaults that name them, its
settings.

Everything of a hall lives in one directory (``--dir``, default ``$CRIBBOARD_HALL_DIR`` or
``./hall``): the store ``hall.sqlite``, the settings ``director.json``, the private broker's
``broker/`` (with the pid of the mosquitto a director started) and, while ``hall start`` runs,
the director's socket and lock.

The command rows quote these names in their help, so this module is read for every command
line: it imports the standard library and the base floor only; the store is imported when one
is opened."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cribboard.errors import HallError
from cribboard.i18n import _

if TYPE_CHECKING:
    from cribboard.hall.store import Store

DIR_ENV = "CRIBBOARD_HALL_DIR"
PASSWORD_ENV = "CRIBBOARD_HALL_PASSWORD"
DEFAULT_DIR = "hall"
DEFAULT_TABLES = 10
SETTINGS = "director.json"
STORE = "hall.sqlite"
BROKER_DIR = "broker"
PRIVATE = "private"  # the settings' broker when the hall runs its own
PID_FILE = "mosquitto.pid"  # in the broker's directory: a restarted director stops it on exit


def hall_dir(given: Path | None) -> Path:
    """--dir, else $CRIBBOARD_HALL_DIR, else ./hall."""
    return given or Path(os.environ.get(DIR_ENV) or DEFAULT_DIR)


def start_command(hall_dir: Path) -> str:
    """The command line that starts the hall in `hall_dir`."""
    return "cribboard hall start" + ("" if hall_dir == Path(DEFAULT_DIR) else f" --dir {hall_dir}")


def read_settings(hall_dir: Path) -> dict[str, Any]:
    """The settings the last `hall start` kept (the hall's name, target, rounds, broker), or {}
    before the first."""
    import json  # (here: every command line reads this module, for the hall's rows)

    path = hall_dir / SETTINGS
    if not path.exists():
        return {}
    try:
        settings: dict[str, Any] = json.loads(path.read_text())
    except ValueError as err:
        raise HallError(f"{path}: {err}")
    return settings


def write_settings(hall_dir: Path, settings: dict[str, Any]) -> None:
    """Keep the settings for the next start and for the commands that need no director."""
    import json  # (here: as in read_settings)

    (hall_dir / SETTINGS).write_text(json.dumps(settings, indent=1) + "\n")


def open_store(hall_dir: Path, *, create: bool = False) -> Store:
    """The hall's store; HallError when there is none and `create` is false. The directory is
    made its owner's alone: it holds the store, the broker's passwords and its keys."""
    path = hall_dir / STORE
    if not path.exists() and not create:
        raise HallError(
            _("%(dir)s holds no hall yet: `cribboard hall players add` or `start`", dir=hall_dir)
        )
    # Imported here: the command rows read this module for every command line.
    from cribboard.hall.broker import private_dir
    from cribboard.hall.store import Store

    private_dir(hall_dir)
    return Store.open(path)
