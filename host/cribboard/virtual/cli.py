"""``cribboard virtual``: run a virtual board until interrupted.

Prints the serial device path as the first line on stdout and ``control: ADDRESS`` (the unix-port
board's side channel) or ``flash: PATH`` (the emulated RP2040's flash file, ``--rp2``) as the
second, then runs until SIGINT or SIGTERM.

The row is read for every command line: the boards, the emulator and the LED decoding are
imported when `virtual` runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..cmdline.rows import PROG, Args, Command, UsageError, arg, parser_of
from ..errors import CribboardError
from ..i18n import L_, N_, _

if TYPE_CHECKING:
    from types import FrameType

    from .launcher import VirtualBoard
    from .rp2board import RP2Board

_SHOW_PERIOD = 0.1  # redraw the board at most ten times a second


def board_picture(chain_rgb: bytes, color: bool) -> str:
    """The board as the LEDs show it: the strip's frame (chain order) drawn by hole."""
    from cribboard.terminal import draw_frame
    from cribcore.layout import HOLE_OF_LED

    by_hole = bytearray(len(chain_rgb))
    for led in range(min(len(chain_rgb) // 3, len(HOLE_OF_LED))):
        hole = HOLE_OF_LED[led]
        by_hole[3 * hole : 3 * hole + 3] = chain_rgb[3 * led : 3 * led + 3]
    return draw_frame(bytes(by_hole), color)


def run(args: argparse.Namespace) -> int:
    """Run ``cribboard virtual`` with its parsed arguments; return the exit status (UsageError for
    options that do not go together)."""
    import signal
    import threading  # (here, as the rest: every command line reads this row)

    from .errors import VirtualBoardError
    from .registry import unregister
    from .rp2board import RP2Board
    from .ws2812 import decode_ws2812, grb_to_rgb, split_complete

    _check_options(args)
    show = _Show(sys.stdout.isatty()) if args.show else None
    try:
        board = _start_board(args, show)
    except (VirtualBoardError, ValueError) as err:
        print(f"{PROG} virtual: {err}", file=sys.stderr)
        return 1
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    registered = None
    try:
        registered = _register(board, args.flash)
        print(board.port, flush=True)
        if isinstance(board, RP2Board):
            print(f"flash: {board.flash_path}", flush=True)
        else:
            print(f"control: {board.control}", flush=True)
            if board.web_url is not None:
                print(f"page: {board.web_url}", flush=True)
        sending: list[tuple[int, int]] = []  # edges of an LED frame still being sent
        while not stop.wait(_SHOW_PERIOD):
            if show is None:
                continue
            if isinstance(board, RP2Board):
                now = board.clock().nanos
                done, sending = split_complete(sending + board.edges(clear=True).edges, now)
                frames = decode_ws2812(done)
                if frames:
                    show.remember(grb_to_rgb(frames[-1].data))
            show.draw()
    finally:
        if registered is not None:
            unregister(registered)
        board.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _register(board: VirtualBoard | RP2Board, kept: str | None) -> Path | None:
    """Tell `cribboard list` and the other commands about this board (`kept`: the flash image
    given, where it keeps its game); a runtime directory that cannot be used only means it is
    not listed."""
    from .registry import register
    from .rp2board import RP2Board

    flash = Path(kept).resolve() if kept is not None else None
    try:
        return register(
            board.port,
            "rp2" if isinstance(board, RP2Board) else "unix",
            "cribboard virtual",
            str(flash.resolve()) if flash is not None else "",
        )
    except (CribboardError, OSError) as err:
        print(
            _("cribboard virtual: not listed by cribboard list: %(error)s", error=err),
            file=sys.stderr,
        )
        return None


def _check_options(args: argparse.Namespace) -> None:
    """Options that do not go together: UsageError."""
    if args.rp2:
        for option, value in (
            ("--heap", args.heap),
            ("--micropython", args.micropython),
            ("--firmware", args.firmware),
            ("--stock", args.stock or None),
            ("--web", args.web),
        ):
            if value is not None:
                raise UsageError(
                    _("%(option)s is for the unix-port board, not --rp2", option=option)
                )
    elif args.image is not None:
        raise UsageError(_("%(option)s needs --rp2", option="--image"))
    elif args.install_emulator:
        raise UsageError(_("%(option)s needs --rp2", option="--install-emulator"))
    if args.stock and args.firmware is not None:
        raise UsageError(_("--stock has no firmware in its image: leave out --firmware"))


# With the page: the unix port keeps the bytecode of the page's server in its heap, where an
# image keeps it frozen in the flash (tests/page/test_board_page.py).
WEB_HEAP = "144wK"


def _start_board(args: argparse.Namespace, show: _Show | None) -> VirtualBoard | RP2Board:
    from .launcher import DEFAULT_HEAP, VirtualBoard
    from .rp2board import FIRMWARE_IMAGE, RP2Board, images_dir
    from .rp2install import install_emulator

    if args.rp2:
        if args.install_emulator:
            install_emulator(say=lambda line: print(line, file=sys.stderr, flush=True))
        image = args.image if args.image is not None else images_dir() / FIRMWARE_IMAGE
        return RP2Board(image, flash=args.flash).start()
    heap = args.heap if args.heap is not None else DEFAULT_HEAP
    if args.web is not None and args.heap is None:
        heap = WEB_HEAP
    return VirtualBoard(
        flash=args.flash,
        heap=heap,
        micropython=args.micropython,
        firmware=args.firmware,
        stock=args.stock,
        on_frame=show.remember if show is not None else None,
        save_on_stop=args.flash is not None,  # a Ctrl-C keeps the last second's change too
        web_port=args.web,
    ).start()


class _Show:
    """`--show`: the board drawn in the terminal, redrawn in place when its LEDs change."""

    def __init__(self, color: bool) -> None:
        import threading

        self.color = color
        self._latest: list[bytes] = []
        self._changed = threading.Event()
        self._drawn_lines = 0

    def remember(self, rgb: bytes) -> None:
        """A new LED frame (from the launcher's thread, or the RP2040's decoded wire)."""
        self._latest[:] = [rgb]
        self._changed.set()

    def draw(self) -> None:
        if not self._changed.is_set():
            return
        self._changed.clear()
        picture = board_picture(self._latest[0], self.color)
        if self.color and self._drawn_lines:
            print(f"\x1b[{self._drawn_lines}F", end="")  # redraw in place
        print(picture, flush=True)
        self._drawn_lines = picture.count("\n") + 1


def _sim_args() -> Args:
    from .launcher import DEFAULT_HEAP
    from .rp2board import FIRMWARE_IMAGE

    return (
        arg(
            "--flash",
            metavar="PATH",
            help=N_("flash image to use and keep (default: a temporary one)"),
        ),
        arg(
            "--rp2",
            action="store_true",
            help=N_("an emulated Raspberry Pi Pico (rp2040js under Node.js) instead"),
        ),
        arg(
            "--install-emulator",
            action="store_true",
            help=N_(
                "with --rp2: first install rp2040js, as its lock file pins it, into the user's "
                "cache with npm (nothing to do when it is there)"
            ),
        ),
        arg(
            "--image",
            metavar="PATH",
            help=L_(
                "with --rp2: the UF2 or BIN image, with its provenance <image>.json beside it "
                "(default: %(image)s in firmware/ports/rp2/images/)",
                image=FIRMWARE_IMAGE,
            ),
        ),
        arg(
            "--heap",
            metavar="SIZE",
            help=L_(
                "MicroPython heap, as -X heapsize= takes it (default %(heap)s)", heap=DEFAULT_HEAP
            ),
        ),
        arg(
            "--micropython",
            metavar="PATH",
            help=N_(
                "micropython executable (default: $CRIBBOARD_MICROPYTHON, PATH, or the venv's)"
            ),
        ),
        arg(
            "--firmware",
            metavar="DIR",
            help=N_("the firmware tree the board's image holds (default: the package's)"),
        ),
        arg(
            "--stock",
            action="store_true",
            help=N_(
                "a board with stock MicroPython instead (no firmware: cribboard deploy puts it on)"
            ),
        ),
        arg("--show", action="store_true", help=N_("show the LEDs in the terminal")),
        arg(
            "--web",
            metavar="PORT",
            type=int,
            help=N_(
                "serve the board's own page and WebSocket on this port of 127.0.0.1, as a board "
                "with Wi-Fi does (0: a free port; the address is printed)"
            ),
        ),
    )


VIRTUAL = Command(
    "virtual",
    N_("run the virtual board (see `cribboard virtual --help`)"),
    run,
    _sim_args,
    boardless=True,  # it is the board
    description=N_(
        "Run the firmware on a virtual board (MicroPython's unix port; with --rp2 an emulated "
        "RP2040 running an rp2 image) behind a pseudo-terminal that mpremote and the cribboard "
        "host open like a USB board."
    ),
    old_names=("sim",),
)
"""The ``virtual`` row of the command line's table (``sim`` its old name)."""


def main(argv: list[str] | None = None) -> int:
    """``cribboard virtual`` alone (``python -m cribboard.virtual.cli``): the row's arguments, a
    usage error as the command line gives it (exit status 2)."""
    parser = parser_of(VIRTUAL)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UsageError as err:
        parser.error(str(err))


if __name__ == "__main__":
    sys.exit(main())
