"""``cribboard sim``: run a virtual board until interrupted.

Prints the serial device path as the first line on stdout and ``control: ADDRESS`` (the unix-port
board's side channel) or ``flash: PATH`` (the emulated RP2040's flash file, ``--rp2``) as the
second, then runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from ..cliparse import OneLineParser
from .errors import VirtualBoardError
from .launcher import DEFAULT_HEAP, VirtualBoard
from .rp2board import FIRMWARE_IMAGE, RP2Board, images_dir
from .ws2812 import decode_ws2812, grb_to_rgb, split_complete

_SHOW_PERIOD = 0.1  # redraw the board at most ten times a second


def build_parser(prog: str = "cribboard sim") -> argparse.ArgumentParser:
    """The argument parser of ``cribboard sim``."""
    parser = OneLineParser(
        prog=prog,
        description="Run the firmware on a virtual board (MicroPython's unix port; with --rp2 an "
        "emulated RP2040 running an rp2 image) behind a pseudo-terminal that mpremote and the "
        "cribboard host open like a USB board.",
    )
    parser.add_argument(
        "--flash", metavar="PATH", help="flash image to use and keep (default: a temporary one)"
    )
    parser.add_argument(
        "--rp2",
        action="store_true",
        help="an emulated Raspberry Pi Pico (rp2040js; make emulator installs it) instead",
    )
    parser.add_argument(
        "--image",
        metavar="PATH",
        help=f"with --rp2: the UF2 or BIN image, with its provenance <image>.json beside it "
        f"(default: {FIRMWARE_IMAGE} in firmware/ports/rp2/images/)",
    )
    parser.add_argument(
        "--heap",
        metavar="SIZE",
        help=f"MicroPython heap, as -X heapsize= takes it (default {DEFAULT_HEAP})",
    )
    parser.add_argument(
        "--micropython",
        metavar="PATH",
        help="micropython executable (default: $CRIBBOARD_MICROPYTHON, PATH, or the venv's)",
    )
    parser.add_argument(
        "--firmware",
        metavar="DIR",
        help="the firmware tree the board's image holds (default: the package's)",
    )
    parser.add_argument(
        "--stock",
        action="store_true",
        help="a board with stock MicroPython instead (no firmware: cribboard deploy puts it on)",
    )
    parser.add_argument("--show", action="store_true", help="show the LEDs in the terminal")
    return parser


def board_picture(chain_rgb: bytes, color: bool) -> str:
    """The board as the LEDs show it: the strip's frame (chain order) drawn by hole."""
    from cribboard.terminal import draw_frame
    from cribcore.layout import HOLE_OF_LED

    by_hole = bytearray(len(chain_rgb))
    for led in range(min(len(chain_rgb) // 3, len(HOLE_OF_LED))):
        hole = HOLE_OF_LED[led]
        by_hole[3 * hole : 3 * hole + 3] = chain_rgb[3 * led : 3 * led + 3]
    return draw_frame(bytes(by_hole), color)


def main(argv: list[str] | None = None) -> int:
    """Run ``cribboard sim``; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.rp2:
        for option, value in (
            ("--heap", args.heap),
            ("--micropython", args.micropython),
            ("--firmware", args.firmware),
            ("--stock", args.stock or None),
        ):
            if value is not None:
                parser.error(f"{option} is for the unix-port board, not --rp2")
    elif args.image is not None:
        parser.error("--image needs --rp2")
    if args.stock and args.firmware is not None:
        parser.error("--stock has no firmware in its image: leave out --firmware")
    latest: list[bytes] = []
    changed = threading.Event()

    def remember(rgb: bytes) -> None:
        latest[:] = [rgb]
        changed.set()

    board: VirtualBoard | RP2Board
    try:
        if args.rp2:
            image = args.image if args.image is not None else images_dir() / FIRMWARE_IMAGE
            board = RP2Board(image, flash=args.flash).start()
        else:
            board = VirtualBoard(
                flash=args.flash,
                heap=args.heap if args.heap is not None else DEFAULT_HEAP,
                micropython=args.micropython,
                firmware=args.firmware,
                stock=args.stock,
                on_frame=remember if args.show else None,
            ).start()
    except (VirtualBoardError, ValueError) as err:
        print(f"cribboard sim: {err}", file=sys.stderr)
        return 1

    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(board.port, flush=True)
        if isinstance(board, RP2Board):
            print(f"flash: {board.flash_path}", flush=True)
        else:
            print(f"control: {board.control}", flush=True)
        color = sys.stdout.isatty()
        drawn_lines = 0
        sending: list[tuple[int, int]] = []  # edges of an LED frame still being sent
        while not stop.wait(_SHOW_PERIOD):
            if args.show and isinstance(board, RP2Board):
                now = board.clock().nanos
                done, sending = split_complete(sending + board.edges(clear=True).edges, now)
                frames = decode_ws2812(done)
                if frames:
                    remember(grb_to_rgb(frames[-1].data))
            if args.show and changed.is_set():
                changed.clear()
                picture = board_picture(latest[0], color)
                if color and drawn_lines:
                    print(f"\x1b[{drawn_lines}F", end="")  # redraw in place
                print(picture, flush=True)
                drawn_lines = picture.count("\n") + 1
    finally:
        board.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
