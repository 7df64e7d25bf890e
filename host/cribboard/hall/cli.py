"""`cribboard hall ...`: a club night from the command line.

    cribboard hall start                 the broker (a private mosquitto), the director, the page
    cribboard hall players add NAME...   register players (before round 1)
    cribboard hall round next            pair the next round; the tables get their new games
    cribboard hall round resend [TABLE]  send a table its new game again (it was busy, or away)
    cribboard hall standings             the standings in the terminal
    cribboard hall correct R T ...       replace (or strike) a result, with a reason
    cribboard hall held [accept|reject R T --why W]   the results held for the director
    cribboard hall export --standings F --games F    CSV
    cribboard hall page                  the projector page alone (another computer, a second
                                         screen): it follows the broker as a viewer

Everything of a hall lives in one directory (``--dir``, default ``$CRIBBOARD_HALL_DIR`` or
``./hall``): the store ``hall.sqlite``, the settings ``director.json``, the private broker's
``broker/`` and, while ``start`` runs, the director's socket. The commands that change the
tournament ask the running director; without one, those that need no table (players,
corrections) change the store themselves.

The main command line's table holds :data:`HALL`, the group of these commands."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cribboard.cmdline.rows import Arg, Command, OneOf, UsageError, arg, int_in
from cribboard.errors import HallError
from cribboard.i18n import L_, N_, _, n_
from cribboard.plaintext import inert
from cribcore.hall import MAX_TABLES

if TYPE_CHECKING:
    import asyncio

DIR_ENV = "CRIBBOARD_HALL_DIR"
PASSWORD_ENV = "CRIBBOARD_HALL_PASSWORD"
DEFAULT_DIR = "hall"
DEFAULT_TABLES = 10
SETTINGS = "director.json"
STORE = "hall.sqlite"
BROKER_DIR = "broker"
PRIVATE = "private"
PID_FILE = "mosquitto.pid"  # in the broker's directory: a restarted director stops it on exit


def _hall_dir(args: argparse.Namespace) -> Path:
    """--dir, else $CRIBBOARD_HALL_DIR, else ./hall."""
    given: Path | None = args.dir
    return given or Path(os.environ.get(DIR_ENV) or DEFAULT_DIR)


def _round_next(args: argparse.Namespace) -> int:
    print(format_report(_ask(_hall_dir(args), "POST", "/round/next", {})))
    return 0


def _round_resend(args: argparse.Namespace) -> int:
    print(format_report(_ask(_hall_dir(args), "POST", "/round/resend", {"tables": args.tables})))
    return 0


def _ask(hall_dir: Path, method: str, route: str, body: object = None) -> dict[str, Any]:
    import asyncio

    from cribboard.hall.control import DirectorNotRunning, call

    try:
        return asyncio.run(call(hall_dir, method, route, body))
    except DirectorNotRunning:
        start = "cribboard hall start" + (
            "" if hall_dir == Path(DEFAULT_DIR) else f" --dir {hall_dir}"
        )
        raise HallError(
            _(
                "no director is running on %(dir)s: start it with `%(command)s`",
                dir=hall_dir,
                command=start,
            )
        )


def _director_running(hall_dir: Path) -> bool:
    import asyncio

    from cribboard.hall.control import DirectorNotRunning, call

    try:
        asyncio.run(call(hall_dir, "GET", "/status"))
    except DirectorNotRunning:
        return False
    return True


def _open_store(hall_dir: Path, *, create: bool = False) -> Any:
    from cribboard.hall.store import Store

    path = hall_dir / STORE
    if not path.exists() and not create:
        raise HallError(
            _("%(dir)s holds no hall yet: `cribboard hall players add` or `start`", dir=hall_dir)
        )
    from cribboard.hall.broker import private_dir

    private_dir(hall_dir)  # the store, the broker's passwords and keys: the director's alone
    return Store.open(path)


def _settings(hall_dir: Path) -> dict[str, Any]:
    path = hall_dir / SETTINGS
    if not path.exists():
        return {}
    try:
        settings: dict[str, Any] = json.loads(path.read_text())
    except ValueError as err:
        raise HallError(f"{path}: {err}")
    return settings


def _players_add(hall_dir: Path, names: list[str]) -> int:
    if _director_running(hall_dir):
        answer = _ask(hall_dir, "POST", "/players", {"names": names})
        added, count = answer["players"], answer["count"]
    else:
        from cribboard.hall.director import register_players

        with _open_store(hall_dir, create=True) as store:
            added = [p.name for p in register_players(store, names)]
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


def _players_list(hall_dir: Path) -> int:
    with _open_store(hall_dir) as store:
        for player in store.tournament.players.values():
            print(inert(player.name))
    return 0


def format_standings(standings: Sequence[Any]) -> str:
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


def _standings(hall_dir: Path, as_json: bool) -> int:
    from cribboard.hall.director import held_json
    from cribboard.hallwire import messages

    with _open_store(hall_dir) as store:
        standings = store.standings()
        rounds = len(store.tournament.rounds)
        held = held_json(store)
        if as_json:
            print(messages.encode_standings(rounds, standings, held).decode())
            return 0
        print(standings_heading(store.tournament))
        print(format_standings(standings))
        if held:
            print(_("held for the director, not counted (`cribboard hall held`):"))
            print(format_held(held))
    return 0


def standings_heading(tournament: Any) -> str:
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


def format_held(held: Sequence[dict[str, Any]]) -> str:
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


def _held(hall_dir: Path, verdict: str | None, args: argparse.Namespace) -> int:
    """The results held (`verdict` None), or one accepted or rejected."""
    running = _director_running(hall_dir)
    if verdict is None:
        if running:
            held = _ask(hall_dir, "GET", "/held")["held"]
        else:
            from cribboard.hall.director import held_json

            with _open_store(hall_dir) as store:
                held = held_json(store)
        if not held:
            print(_("no result is held"))
            return 0
        print(format_held(held))
        print(
            _(
                "`cribboard hall held accept ROUND TABLE --why ...` counts one, "
                "`reject` drops it (both kept in the audit trail)"
            )
        )
        return 0
    body = {"round": args.round, "table": args.table, "who": args.who, "why": args.why}
    if running:
        answer = _ask(hall_dir, "POST", f"/held/{verdict}", body)
    else:
        from cribboard.hall import director
        from cribboard.hall.control import correction_json

        decide = director.accept_held if verdict == "accept" else director.reject_held
        with _open_store(hall_dir) as store:
            correction = decide(store, args.round, args.table, who=args.who, why=args.why)
            answer = correction_json(store, correction)
    said = (
        N_("round %(round)s table %(table)s: %(result)s (accepted); by %(who)s: %(why)s")
        if verdict == "accept"
        else N_("round %(round)s table %(table)s: %(result)s (rejected); by %(who)s: %(why)s")
    )
    print(
        _(
            said,
            round=answer["round"],
            table=answer["table"],
            result=answer["new"] or _("no result"),
            who=answer["who"],
            why=answer["why"],
        )
    )
    return 0


def _correct(hall_dir: Path, args: argparse.Namespace) -> int:
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
    if _director_running(hall_dir):
        answer = _ask(hall_dir, "POST", "/correct", body)
    else:
        from cribboard.hall.control import correction_json
        from cribboard.hall.director import correct_result

        with _open_store(hall_dir) as store:
            correction = correct_result(
                store,
                args.round,
                args.table,
                winner=args.winner,
                loser_score=args.loser_score,
                target=args.target or _settings(hall_dir).get("target", 121),
                who=args.who,
                why=args.why,
            )
            answer = correction_json(store, correction)
    print(
        _(
            "round %(round)s table %(table)s: %(result)s (was: %(old)s); by %(who)s: %(why)s",
            round=answer["round"],
            table=answer["table"],
            result=answer["new"] or _("no result"),
            old=answer["old"] or _("no result"),
            who=answer["who"],
            why=answer["why"],
        )
    )
    return 0


def _export(hall_dir: Path, standings: Path | None, games: Path | None) -> int:
    if standings is None and games is None:
        raise UsageError(_("export needs --standings FILE and/or --games FILE"))
    with _open_store(hall_dir) as store:
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


def format_report(report: dict[str, Any]) -> str:
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


# --- start and serve ---------------------------------------------------------------------------


def _password(args: argparse.Namespace, user: str) -> str | None:
    """The broker password: from the variable --password-env names, else
    $CRIBBOARD_HALL_PASSWORD, else asked for on a terminal; never from the command line."""
    from cribboard.mqtt.address import ask_password

    variable = args.password_env or (PASSWORD_ENV if os.environ.get(PASSWORD_ENV) else None)
    return ask_password(variable, _("broker password for %(user)s: ", user=user))


def _no_password_on_the_line(args: argparse.Namespace) -> None:
    if args.password is not None:
        raise UsageError(
            _(
                "--password would show the password to every user of this computer (ps): put "
                "it in an environment variable and name it with --password-env VAR (or set "
                "$%(env)s)",
                env=PASSWORD_ENV,
            )
        )


def _start(hall_dir: Path, args: argparse.Namespace) -> int:
    _no_password_on_the_line(args)
    from cribboard.fdlimit import raise_fd_limit

    raise_fd_limit()  # strangers' idle connections must not run the hall out of descriptors
    from cribboard.hall.lifecycle import HallLock

    # SIGTERM as Ctrl-C from the first moment: whatever was started is stopped on the way out.
    # While the event loop is made, only noted (an interrupt inside asyncio's set-up would leave
    # a half-made loop behind); the loop then takes both signals over.
    _stop_asked.clear()
    previous = (
        signal.signal(signal.SIGTERM, _interrupt),
        signal.signal(signal.SIGINT, _interrupt),
    )
    try:
        with HallLock(hall_dir):
            return _start_locked(hall_dir, args)
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])


_stop_asked = threading.Event()
"""A stop was asked for before the event loop took the signals over: the loop, once it runs,
stops at once. (Python also drops a KeyboardInterrupt that lands in a finalizer, such as an
earlier event loop's __del__.)"""


def _interrupt(signum: int, frame: object) -> None:
    _stop_asked.set()
    raise KeyboardInterrupt


def _note_stop(signum: int, frame: object) -> None:
    _stop_asked.set()


def _start_locked(hall_dir: Path, args: argparse.Namespace) -> int:
    import asyncio

    from cribboard.hall.broker import Broker
    from cribboard.hallwire import topics
    from cribboard.mqtt.address import BrokerAddress

    saved = _settings(hall_dir)
    hall = topics.check_hall(args.hall or saved.get("hall") or "club")
    if saved and args.hall and args.hall != saved.get("hall"):
        raise UsageError(
            _(
                "%(dir)s is the hall %(hall)r, not %(given)r",
                dir=hall_dir,
                hall=saved.get("hall"),
                given=args.hall,
            )
        )
    settings: dict[str, Any] = {
        "hall": hall,
        "target": args.target or saved.get("target") or 121,
        "rounds": args.rounds or saved.get("rounds") or 9,
        "broker": args.broker or saved.get("broker") or PRIVATE,
    }
    cafile = args.cafile or saved.get("cafile")
    if cafile:
        settings["cafile"] = cafile  # kept: the next start verifies the broker the same way
    if args.broker and saved.get("broker", PRIVATE) == PRIVATE and (hall_dir / BROKER_DIR).exists():
        raise UsageError(_("%(dir)s runs its own broker: leave out --broker", dir=hall_dir))
    store = _open_store(hall_dir, create=True)
    broker: Broker | None = None
    adopted: int | None = None
    # The signal handlers this process had: given back once the hall has stopped (a caller in
    # the same process, and every process it starts later, must not inherit ignored signals).
    previous = (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT))
    try:
        if settings["broker"] == PRIVATE:
            if args.user or args.password_env or args.cafile:
                raise UsageError(_("--user, --password-env and --cafile go with --broker"))
            broker_dir = hall_dir / BROKER_DIR
            if (broker_dir / "hall.json").exists():
                broker = Broker.open(broker_dir)
            else:
                tables = args.tables or max(
                    DEFAULT_TABLES, math.ceil(len(store.tournament.players) / 2)
                )
                broker = Broker.create(
                    broker_dir,
                    hall,
                    tables,
                    host=args.mqtt_host,
                    port=args.mqtt_port,
                    viewer=True,
                    tls=not args.plain,
                )
            if args.plain and broker.tls:
                raise UsageError(
                    _("%(dir)s was made with TLS: it keeps it (leave out --plain)", dir=broker_dir)
                )
            if not broker.tls:
                print(_(_PLAIN_WARNING), file=sys.stderr, flush=True)
                if args.renew_ca:
                    raise UsageError(_("--renew-ca is for a broker with TLS"))
            elif args.renew_ca:
                broker.certificates.renew_ca()
                print(
                    _(
                        "broker: a new CA, %(ca)s: give every table this ca.pem (`cribboard "
                        "deploy --cafile`, `serve --broker --cafile`)",
                        ca=broker.ca_file,
                    ),
                    flush=True,
                )
            else:
                _warn_of_the_ca(broker)
            director_address = _local_address(broker, topics.DIRECTOR_USER)
            _not_a_copy_of_a_running_hall(broker)
            if asyncio.run(_answers(director_address)):
                # A director that was killed leaves its broker running (its own session): it
                # is this hall's (the director's password works), so take it up as it is.
                print(
                    _(
                        "broker: this hall's broker is still running on port %(port)s: using it",
                        port=broker.port,
                    ),
                    flush=True,
                )
                adopted = _recorded_pid(broker_dir)
            else:
                broker.start()
                (broker_dir / PID_FILE).write_text(f"{broker.pid}\n")
        else:
            if args.plain:
                raise UsageError(_("--plain is for the private broker: leave out --broker"))
            director_address = BrokerAddress.parse(
                settings["broker"],
                args.user or topics.DIRECTOR_USER,
                _password(args, args.user or topics.DIRECTOR_USER),
                _cafile(cafile),
            )
        (hall_dir / SETTINGS).write_text(json.dumps(settings, indent=1) + "\n")
        if broker is not None:
            _tell_tables(broker, hall, args.credentials)
        running = _Running(store, director_address, broker, adopted, settings)
        signal.signal(signal.SIGTERM, _note_stop)
        signal.signal(signal.SIGINT, _note_stop)
        return asyncio.run(_run_hall(hall_dir, running, args))
    finally:
        # Stopping: a second signal must not cut it short and leave the broker running.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            store.close()
            if broker is not None:
                broker.stop()  # the one this process started (at first, or again)
            if adopted is not None and _recorded_pid(hall_dir / BROKER_DIR) == adopted:
                with contextlib.suppress(OSError):
                    os.kill(adopted, signal.SIGTERM)  # a clean stop: it saves its state
        finally:
            signal.signal(signal.SIGTERM, previous[0])
            signal.signal(signal.SIGINT, previous[1])


@dataclass
class _Running:
    """What `hall start` runs: the store, the director's broker address, the private broker
    (None: an existing one, --broker) and the pid of a broker taken up from a killed director."""

    store: Any
    address: Any
    broker: Any
    adopted: int | None
    settings: dict[str, Any]


_PLAIN_WARNING = N_(
    "broker: WARNING: plain MQTT (--plain): the tables' passwords cross the network in the "
    "clear; anyone on the club's network can read them and pose as a table"
)


def _cafile(cafile: str | None) -> str | None:
    """--cafile, checked: a readable file."""
    if cafile is not None and not Path(cafile).is_file():
        raise UsageError(_("--cafile %(file)s: no such file", file=cafile))
    return cafile


def _local_address(broker: Any, user: str) -> Any:
    """How `user` reaches the hall's private broker from this computer."""
    from cribboard.mqtt.address import BrokerAddress

    ca = broker.ca_file
    return BrokerAddress.parse(
        broker.url, user, broker.credentials(user).password, None if ca is None else str(ca)
    )


def _recorded_pid(broker_dir: Path) -> int | None:
    """The pid of the broker a killed director left running, if it is still that mosquitto
    (its command line names this state directory's config)."""
    try:
        pid = int((broker_dir / PID_FILE).read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if str(broker_dir / "mosquitto.conf").encode() in cmdline else None


async def _answers(address: Any) -> bool:
    """Whether a broker at `address` lets the director in now, asked without touching the
    director's session: what the broker keeps for it stays (HallError: it answers, but
    refuses its certificate)."""
    from cribboard.hallwire import topics
    from cribboard.mqtt.address import refusal
    from cribboard.mqtt.probe import CertificateRefused, lets_in

    try:
        return await lets_in(address, topics.DIRECTOR_USER)
    except CertificateRefused as err:
        raise HallError(refusal(err, address) or str(err)) from None


def _warn_of_the_ca(broker: Any) -> None:
    """Say so when the hall's CA expires soon (an expired one stops the start, saying what to
    run: cribboard.hall.certs.CAExpired)."""
    import datetime

    from cribboard.hall.certs import CA_WARNING_DAYS, renew_command

    certificates = broker.certificates
    if not certificates.ca_file.exists():
        return
    expires = certificates.ca_expires
    left = expires - datetime.datetime.now(datetime.UTC)
    if datetime.timedelta(0) < left <= datetime.timedelta(days=CA_WARNING_DAYS):
        print(
            _(
                "broker: WARNING: the hall's CA expires on %(date)s; `%(command)s` makes a new "
                "one (then every table needs the new ca.pem)",
                date=expires.date().isoformat(),
                command=renew_command(),
            ),
            file=sys.stderr,
            flush=True,
        )


def _not_a_copy_of_a_running_hall(broker: Any) -> None:
    """HallError when the broker on this hall's port is another directory's: this one is a
    copy of a hall that runs (a backup restored beside it), whose director it would fight."""
    from cribboard.hall.lifecycle import config_of, listening_process

    pid = listening_process(broker.port)
    config = None if pid is None else config_of(pid)
    ours = broker.state_dir / "mosquitto.conf"
    if config is None or config.resolve() == ours.resolve():
        return
    other = config.parent.parent
    raise HallError(
        _(
            "%(dir)s is a copy of the hall in %(other)s, whose broker (pid %(pid)d) runs on this "
            "hall's port %(port)d: two directors would fight over the same tables; run the "
            "hall from %(other)s, or stop it first",
            dir=broker.state_dir.parent,
            other=other,
            pid=pid,
            port=broker.port,
        )
    )


def _tell_tables(broker: Any, hall: str, credentials: Path | None) -> None:
    from cribboard.hallwire import topics
    from cribboard.web.addresses import lan_address

    host = broker.host
    if host in ("0.0.0.0", "::"):
        host = lan_address() or "127.0.0.1"
    url = f"{'mqtts' if broker.tls else 'mqtt'}://{host}:{broker.port}"
    users = {
        topics.table_user(n): broker.credentials(topics.table_user(n)).password
        for n in range(1, broker.tables + 1)
    }
    print(
        _(
            "broker: %(url)s (a private mosquitto; its state in %(dir)s)",
            url=url,
            dir=broker.state_dir,
        ),
        flush=True,
    )
    ca = broker.ca_file
    if ca is not None:
        print(_("broker: TLS; the tables verify it with the hall's CA: %(ca)s", ca=ca), flush=True)
        print(
            _(
                "a Wi-Fi board: cribboard deploy --broker %(url)s --cafile %(ca)s --table N "
                "(its password from $CRIBBOARD_MQTT_PASSWORD)",
                url=url,
                ca=ca,
            ),
            flush=True,
        )
    if credentials is not None:
        found: dict[str, Any] = {"url": url, "hall": hall, "users": users}
        if ca is not None:
            found["cafile"] = str(ca)
        text = json.dumps(found, indent=1) + "\n"
        fd = os.open(credentials, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(text)
        print(
            _("how the tables connect (URL, users, passwords): %(file)s", file=credentials),
            flush=True,
        )
        return
    print(
        _(
            "tables connect to %(url)s, hall %(hall)s, as these users (client id = user):",
            url=url,
            hall=hall,
        ),
        flush=True,
    )
    for user, password in users.items():
        print(f"  {user}  {password}", flush=True)


async def _run_hall(hall_dir: Path, hall: _Running, args: argparse.Namespace) -> int:
    import asyncio

    from cribboard.hall.control import ControlServer
    from cribboard.hall.director import Director
    from cribboard.hall.page import Page

    store, address, settings = hall.store, hall.address, hall.settings
    director = Director(
        store,
        address,
        settings["hall"],
        target=settings["target"],
        rounds=settings["rounds"],
        max_tables=None if hall.broker is None else hall.broker.tables,
        say=lambda text: print(text, flush=True),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    _quiet_repeats(loop)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if _stop_asked.is_set():
        stop.set()  # asked before the handlers above (while the loop was made, or lost in a finalizer)
    running = asyncio.create_task(director.run())
    stopping = asyncio.create_task(stop.wait())
    watched: set[asyncio.Task[Any]] = {running, stopping}
    supervisor = _supervisor(hall_dir, hall)
    if supervisor is not None:
        watched.add(supervisor)
    status = 0
    try:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(ControlServer(director, hall_dir))
            if not args.no_page:
                page = await stack.enter_async_context(
                    Page(director.view, args.http_host, _http_port(args))
                )
                print(_("page: %(url)s", url=_page_url(page)), flush=True)
            connecting = asyncio.create_task(director.connected.wait())
            done, _pending = await asyncio.wait(
                watched | {connecting}, return_when=asyncio.FIRST_COMPLETED
            )
            connecting.cancel()
            if running in done:
                running.result()  # a refused login: HallError
            tournament = store.tournament
            if connecting in done:
                print(
                    n_(
                        "director: connected to %(url)s; %(count)d player, round %(round)d of "
                        "%(rounds)d (`cribboard hall round next` pairs the next one; Ctrl-C "
                        "stops)",
                        "director: connected to %(url)s; %(count)d players, round %(round)d of "
                        "%(rounds)d (`cribboard hall round next` pairs the next one; Ctrl-C "
                        "stops)",
                        len(tournament.players),
                        url=address.url,
                        round=len(tournament.rounds),
                        rounds=settings["rounds"],
                    ),
                    flush=True,
                )
                done, _pending = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
            if supervisor is not None and supervisor in done:
                print(
                    _("director: stopping: %(reason)s", reason=supervisor.result()),
                    file=sys.stderr,
                    flush=True,
                )
                status = 1
    finally:
        for task in watched:
            task.cancel()
        for task in watched:
            with contextlib.suppress(asyncio.CancelledError):
                await task
    print(_("director: stopped"), file=sys.stderr, flush=True)
    return status


def _quiet_repeats(loop: asyncio.AbstractEventLoop) -> None:
    """The event loop's own error reports (a failed accept, a task's unseen exception) a few a
    kind a minute: a stranger who makes them by the thousand cannot fill the terminal."""
    from cribboard.linelimit import LineLimiter

    limiter = LineLimiter(lambda text: print(text, file=sys.stderr, flush=True))

    def report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if limiter.allow(str(context.get("message", "error"))):
            loop.default_exception_handler(context)

    loop.set_exception_handler(report)


def _supervisor(hall_dir: Path, hall: _Running) -> asyncio.Task[str] | None:
    """Watch the private broker (ours, or the one taken up): started again when it dies."""
    import asyncio

    from cribboard.hall.lifecycle import supervise_broker

    if hall.broker is None or (hall.adopted is None and hall.broker.pid is None):
        return None

    def started(pid: int) -> None:
        (hall_dir / BROKER_DIR / PID_FILE).write_text(f"{pid}\n")
        hall.adopted = None  # the one taken up is gone: ours now

    return asyncio.create_task(
        supervise_broker(
            hall.broker,
            lambda text: print(text, flush=True),
            pid=hall.adopted,
            on_start=started,
        )
    )


def _http_port(args: argparse.Namespace) -> int:
    from cribboard.hall.page import DEFAULT_HTTP_PORT

    return DEFAULT_HTTP_PORT if args.http_port is None else int(args.http_port)


def _page_url(page: Any) -> str:
    from cribboard.web.addresses import lan_address

    if page.host in ("0.0.0.0", "::"):
        lan = lan_address()
        if lan:
            return _(
                "%(url)s (on the club's network: http://%(lan)s:%(port)s/)",
                url=page.url,
                lan=lan,
                port=page.bound_port,
            )
    return str(page.url)


def _page(hall_dir: Path, args: argparse.Namespace) -> int:
    import asyncio

    _no_password_on_the_line(args)
    from cribboard.fdlimit import raise_fd_limit

    raise_fd_limit()
    from cribboard.hall.broker import Broker
    from cribboard.hallwire import topics
    from cribboard.mqtt.address import BrokerAddress

    settings = _settings(hall_dir)
    if args.broker:
        address = BrokerAddress.parse(
            args.broker,
            args.user or topics.VIEWER_USER,
            _password(args, args.user or topics.VIEWER_USER),
            _cafile(args.cafile),
        )
        hall = settings.get("hall", "club")
    elif settings.get("broker", PRIVATE) == PRIVATE and (hall_dir / BROKER_DIR).exists():
        broker = Broker.open(hall_dir / BROKER_DIR)
        address = _local_address(broker, topics.VIEWER_USER)
        hall = broker.hall
    elif settings:
        address = BrokerAddress.parse(
            settings["broker"],
            args.user or topics.VIEWER_USER,
            _password(args, args.user or topics.VIEWER_USER),
            _cafile(args.cafile or settings.get("cafile")),
        )
        hall = settings["hall"]
    else:
        raise UsageError(_("%(dir)s holds no hall: name its broker with --broker", dir=hall_dir))
    return asyncio.run(_serve_page(address, hall, args))


async def _serve_page(address: Any, hall: str, args: argparse.Namespace) -> int:
    import asyncio

    from cribboard.hall.page import Page
    from cribboard.hall.view import HallView, follow

    view = HallView(hall)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    _quiet_repeats(loop)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    connected = asyncio.Event()
    following = asyncio.create_task(follow(view, address, connected))
    async with Page(view, args.http_host, _http_port(args)) as page:
        print(
            _(
                "page: %(url)s; following %(broker)s (Ctrl-C stops)",
                url=_page_url(page),
                broker=address.url,
            ),
            flush=True,
        )
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({following, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        following.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await following
    return 0


# --- the table -----------------------------------------------------------------------------------

_DIR = arg(
    "--dir",
    type=Path,
    default=None,
    help=L_(
        "the hall's directory (default $%(env)s, else ./%(dir)s)", env=DIR_ENV, dir=DEFAULT_DIR
    ),
)
_BROKER_ARGS: tuple[Arg, ...] = (
    arg(
        "--broker",
        metavar="URL",
        help=N_("an existing broker: mqtt://HOST:PORT or mqtts://HOST:PORT"),
    ),
    arg("--user", old_names=("--username",), help=N_("the broker user (with --broker)")),
    arg(
        "--password-env",
        metavar="VAR",
        help=L_(
            "the environment variable that holds the broker user's password (default $%(env)s "
            "when set, else asked for on a terminal)",
            env=PASSWORD_ENV,
        ),
    ),
    arg(
        "--cafile",
        metavar="PEM",
        help=N_(
            "the CA that signed an mqtts:// broker's certificate (with --broker; default: the "
            "system's CAs)"
        ),
    ),
    # A password on the command line is visible to every user of the computer (ps): refused,
    # with the way to give it (see _no_password_on_the_line).
    arg("--password", help=argparse.SUPPRESS),
)
# Translators: the names of numbers in "%(what)s must be 1..999, not 0".
_PORT = int_in(0, 65535, N_("a port"))
_TABLE = int_in(1, MAX_TABLES, N_("table"))
_ROUND = int_in(1, 99, N_("round"))
_PAGE_ARGS: tuple[Arg, ...] = (
    arg(
        "--http-host",
        default="0.0.0.0",
        help=N_(
            "the page's address (default 0.0.0.0: phones on the club's network see it too; the "
            "page only reads)"
        ),
    ),
    arg("--http-port", type=_PORT, default=None, help=N_("the page's TCP port (default 8322)")),
)
_WHY = arg("--why", required=True, help=N_("the reason, for the audit trail"))

_START = Command(
    "start",
    N_("run the hall: the broker (unless --broker), the director and the page"),
    lambda args: _start(_hall_dir(args), args),
    (
        _DIR,
        *_BROKER_ARGS,
        *_PAGE_ARGS,
        arg("--hall", help=N_("the hall's name in the topics (default club)")),
        arg(
            "--tables",
            type=int_in(1, MAX_TABLES, N_("tables")),
            help=L_(
                "boards the private broker makes users for (default %(tables)d, or enough for "
                "the players registered)",
                tables=DEFAULT_TABLES,
            ),
        ),
        arg("--target", type=int, choices=(61, 121), help=N_("games to 121 (default) or 61")),
        arg(
            "--rounds",
            type=int_in(1, 99, N_("rounds")),
            help=N_("rounds the evening plans (default 9)"),
        ),
        arg(
            "--mqtt-host",
            old_names=("--listen",),
            default="0.0.0.0",
            help=N_(
                "the private broker's address (default 0.0.0.0: the tables on the Wi-Fi reach it)"
            ),
        ),
        arg("--mqtt-port", type=_PORT, help=N_("the private broker's port (default: a free one)")),
        arg(
            "--credentials",
            type=Path,
            metavar="FILE",
            help=N_(
                "write how the tables connect (URL, users, passwords) to FILE instead of printing"
            ),
        ),
        arg("--no-page", action="store_true", help=N_("do not serve the page")),
        arg(
            "--renew-ca",
            action="store_true",
            help=N_(
                "give the private broker a new CA (the old one expired or soon will): every "
                "table then needs the new ca.pem"
            ),
        ),
        arg(
            "--plain",
            action="store_true",
            help=N_(
                "the private broker without TLS (made so once, kept): passwords cross the "
                "network in the clear"
            ),
        ),
    ),
)

_PLAYERS = Command(
    "players",
    N_("the players"),
    commands=(
        Command(
            "add",
            N_("register players (before round 1)"),
            lambda args: _players_add(_hall_dir(args), args.names),
            (_DIR, arg("names", nargs="+", metavar="NAME", help=N_("the players' names"))),
        ),
        Command(
            "list",
            N_("the players registered"),
            lambda args: _players_list(_hall_dir(args)),
            (_DIR,),
        ),
    ),
)

_ROUNDS = Command(
    "round",
    N_("the rounds"),
    commands=(
        Command(
            "next",
            N_("pair the next round and send every table its new game (needs `hall start`)"),
            _round_next,
            (_DIR,),
        ),
        Command(
            "resend",
            N_("send a table its new game again (it was busy, or away)"),
            _round_resend,
            (
                _DIR,
                arg(
                    "tables",
                    nargs="*",
                    type=_TABLE,
                    metavar="TABLE",
                    help=N_("the tables (default: every table that has not started its game)"),
                ),
            ),
        ),
    ),
)

_CORRECT = Command(
    "correct",
    N_("replace or strike a table's result; the audit trail keeps it"),
    lambda args: _correct(_hall_dir(args), args),
    (
        _DIR,
        arg("round", type=_ROUND, help=N_("the round")),
        arg("table", type=_TABLE, help=N_("the table")),
        OneOf(
            (
                arg("--winner", metavar="NAME", help=N_("the winner's name")),
                arg(
                    "--strike",
                    action="store_true",
                    help=N_("no result (the game is replayed)"),
                ),
            ),
            required=True,
        ),
        arg(
            "--loser-score",
            type=int_in(0, 120, N_("the loser's score")),
            help=N_("with --winner"),
        ),
        arg("--target", type=int, choices=(61, 121), help=N_("default: the hall's")),
        _WHY,
        arg("--who", default="director", help=N_("who corrects (default director)")),
    ),
)


def _verdict(name: str, help_text: str) -> Command:
    """`hall held accept` or `reject`: a held result counted or dropped."""
    return Command(
        name,
        help_text,
        lambda args: _held(_hall_dir(args), name, args),
        (
            _DIR,
            arg("round", type=_ROUND, help=N_("the round")),
            arg("table", type=_TABLE, help=N_("the table")),
            _WHY,
            arg("--who", default="director", help=N_("who decides (default director)")),
        ),
    )


_HELD = Command(
    "held",
    N_("the results held for the director (not counted: they were not consistent)"),
    lambda args: _held(_hall_dir(args), None, args),
    (_DIR,),
    commands=(
        _verdict("accept", N_("count a held result (the audit trail keeps it)")),
        _verdict("reject", N_("drop a held result (the audit trail keeps it)")),
    ),
)

HALL = Command(
    "hall",
    N_("a club night: the tournament director, its broker and projector page"),
    boardless=True,  # the tables' boards reach the hall through its broker
    description=L_(
        "A club night from the command line. Everything of a hall lives in one directory "
        "(--dir, default $%(env)s, else ./%(dir)s): its store, its settings, its private "
        "broker and, while `start` runs, the director's socket. The commands that change the "
        "tournament ask the running director; without one, those that need no table (players, "
        "corrections) change the store themselves.",
        env=DIR_ENV,
        dir=DEFAULT_DIR,
    ),
    commands=(
        _START,
        _PLAYERS,
        _ROUNDS,
        Command(
            "standings",
            N_("the standings"),
            lambda args: _standings(_hall_dir(args), args.json),
            (_DIR, arg("--json", action="store_true", help=N_("as the standings topic's JSON"))),
        ),
        _CORRECT,
        _HELD,
        Command(
            "export",
            N_("the standings and games as CSV"),
            lambda args: _export(_hall_dir(args), args.standings, args.games),
            (
                _DIR,
                arg("--standings", type=Path, metavar="FILE", help=N_("'-' for stdout")),
                arg("--games", type=Path, metavar="FILE", help=N_("'-' for stdout")),
            ),
        ),
        Command(
            "page",
            N_("the projector page alone, following the broker as a viewer"),
            lambda args: _page(_hall_dir(args), args),
            (_DIR, *_BROKER_ARGS, *_PAGE_ARGS),
            old_names=("serve",),
        ),
    ),
)
"""The ``hall`` group of the command line's table."""
