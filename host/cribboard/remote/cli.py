"""``cribboard remote --broker URL --game NAME --secret-env VAR [--port P | --ble NAME]``: run at
each of two places with the same game name and secret,
it joins their boards into one game through the broker (docs/mqtt.md, "Remote games"). It
runs until Ctrl-C (or SIGTERM), one line for each thing worth knowing. The command rows hold
:data:`REMOTE`; the remote game's modules are imported when it runs."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cribboard.cmdline.rows import Command, UsageError, arg
from cribboard.i18n import N_, _

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from cribboard.api import Board
    from cribboard.recorder import Recording


def _row() -> Command:
    """The ``remote`` row (``link`` its old name), made once below as :data:`REMOTE`."""
    return Command(
        "remote",
        N_("two boards far apart, one game, through an MQTT broker (docs/mqtt.md)"),
        _run,
        (
            arg("--broker", required=True, metavar="URL", help=N_("mqtt://HOST:PORT or mqtts://")),
            arg(
                "--game",
                required=True,
                metavar="NAME",
                help=N_("the remote game's name, the same at both ends (a-z, 0-9, _ and -)"),
            ),
            arg(
                "--port",
                dest="link_port",
                metavar="PORT",
                help=N_(
                    "this end's board: a serial port or pyserial URL (default: the only board)"
                ),
            ),
            arg(
                "--ble",
                dest="link_ble",
                nargs="?",
                const="",
                metavar="NAME",
                help=N_(
                    "this end's board over Bluetooth LE: its name or address, or alone for "
                    "the only board advertising"
                ),
            ),
            arg(
                "--virtual",
                dest="link_virtual",
                action="store_true",
                help=N_(
                    "this end's board: a virtual board started here (the firmware on "
                    "MicroPython; try a remote game with two of these on one computer)"
                ),
            ),
            arg(
                "--user",
                help=N_("the broker user (none by default; a hall's private broker has `link`)"),
            ),
            arg(
                "--cafile",
                metavar="PEM",
                help=N_(
                    "the CA that signed the mqtts:// broker's certificate (a hall's ca.pem; "
                    "default: the system's CAs)"
                ),
            ),
            arg(
                "--password-env",
                metavar="VAR",
                help=N_(
                    "the environment variable that holds the broker password (default: asked "
                    "for on a terminal when --user is given)"
                ),
            ),
            arg(
                "--secret-env",
                metavar="VAR",
                help=N_(
                    "the environment variable that holds the game's secret, the same at both "
                    "ends (default: asked for on a terminal); it names the game's topics and signs "
                    "every move"
                ),
            ),
            arg(
                "--state",
                type=Path,
                metavar="FILE",
                help=N_(
                    "where this end keeps its moves (default $XDG_STATE_HOME/cribboard/"
                    "remote-NAME.json): the same file picks the game up after a restart"
                ),
            ),
        ),
        description=N_(
            "Join this board and a board elsewhere into one game: a peg at either "
            "end shows on both, pegs made at both ends at once both count, and an end that was "
            "away catches up when it comes back."
        ),
        old_names=("link",),
    )


def _run(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from cribboard.api import Board
    from cribboard.discovery import resolve_port
    from cribboard.mqtt import AddressError
    from cribboard.mqtt.address import BrokerAddress, ask_password
    from cribboard.remote import RemoteGameError
    from cribboard.remote.end import RemoteEnd, default_state_file
    from cribboard.remote.secret import game_secret
    from cribboard.remote.topics import check_game

    port = args.link_port or args.port
    ble = args.link_ble if args.link_ble is not None else args.ble
    if sum((bool(port), ble is not None, bool(args.link_virtual))) > 1:
        raise UsageError(_("name the board with one of --port, --ble or --virtual"))
    try:
        check_game(args.game)
        state = args.state or default_state_file(args.game)
        address = BrokerAddress.parse(args.broker, username=args.user, cafile=args.cafile)
        address.tls_context()  # a CA file that cannot be read: said now, in one line
        password = (
            ask_password(
                args.password_env,
                _("password for %(user)s at %(url)s: ", user=args.user, url=address.url),
            )
            if args.user or args.password_env
            else None
        )
        secret = game_secret(args.secret_env, args.game)
    except (AddressError, RemoteGameError) as err:
        raise UsageError(str(err)) from None
    address = address.with_login(args.user, password)

    def say(text: str) -> None:
        print(text, flush=True)

    async def main() -> None:
        if ble is not None:
            name = ble or None

            async def open_board() -> Board:
                return await Board.open_ble(name, timeout=args.timeout)

            where = (
                _("Bluetooth %(name)s", name=ble)
                if ble
                else _("Bluetooth (the only board advertising)")
            )
        elif virtual is not None:

            async def open_board() -> Board:
                assert virtual is not None
                return await Board.open(virtual.port, timeout=args.timeout)

            where = _("virtual %(port)s", port=virtual.port)
        else:
            chosen = (await resolve_port(port)).port

            async def open_board() -> Board:
                return await Board.open(chosen, timeout=args.timeout)

            where = chosen
        recorded = _recorded(open_board, virtual, say)
        end = RemoteEnd(address, args.game, recorded.open, state, secret=secret, say=say)
        say(
            _(
                "remote game %(game)s: this end is %(side)s, board %(board)s, broker %(url)s",
                game=args.game,
                side=end.side,
                board=where,
                url=address.url,
            )
        )
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await end.run()
        finally:
            await recorded.close()
        print(_("cribboard remote: stopped"), file=sys.stderr, flush=True)

    virtual = None
    with contextlib.ExitStack() as stack:
        if args.link_virtual:
            from cribboard.virtual import VirtualBoard

            virtual = stack.enter_context(VirtualBoard())
        asyncio.run(main())
    return 0


class _Recorded:
    """The board of a remote game, opened as `open_board` opens it, its games recorded
    (cribboard.recorder) from each opening on."""

    def __init__(
        self,
        open_board: Callable[[], Awaitable[Board]],
        flash: Path | None,
        say: Callable[[str], None],
    ) -> None:
        self._open_board = open_board
        self._flash = flash
        self._say = say
        self._recording: Recording | None = None
        self._tried = False

    async def open(self) -> Board:
        from cribboard.boardid import board_identity
        from cribboard.recorder import Recording

        board = await self._open_board()
        if not self._tried:
            self._tried = True
            identity = board_identity(board.name, board.hello, self._flash)
            self._recording = Recording.open(identity, "link", say=self._say)
        if self._recording is not None:
            await self._recording.follow(board)  # (the board before it is closed)
        return board

    async def close(self) -> None:
        if self._recording is not None:
            await self._recording.close()


def _recorded(
    open_board: Callable[[], Awaitable[Board]], virtual: Any, say: Callable[[str], None]
) -> _Recorded:
    return _Recorded(open_board, None if virtual is None else virtual.flash_path, say)


REMOTE = _row()
"""The ``remote`` row of the command rows."""
