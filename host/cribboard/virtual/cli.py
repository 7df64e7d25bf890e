"""``cribboard sim``: run a virtual board until interrupted.

Prints the serial device path as the first line on stdout and ``control: ADDRESS`` as the
second, then runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from .errors import VirtualBoardError
from .launcher import DEFAULT_HEAP, VirtualBoard
from .sidechannel import FrameCallback

_SHOW_PERIOD = 0.1  # redraw the LED line at most ten times a second


def build_parser(prog: str = "cribboard sim") -> argparse.ArgumentParser:
    """The argument parser of ``cribboard sim``."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run the firmware on a virtual board (MicroPython's unix port) behind a "
        "pseudo-terminal that mpremote and the cribboard host open like a USB board.",
    )
    parser.add_argument(
        "--flash", metavar="PATH", help="flash image to use and keep (default: a temporary one)"
    )
    parser.add_argument(
        "--heap", metavar="SIZE", default=DEFAULT_HEAP,
        help=f"MicroPython heap, as -X heapsize= takes it (default {DEFAULT_HEAP})",
    )
    parser.add_argument(
        "--micropython", metavar="PATH",
        help="micropython executable (default: $CRIBBOARD_MICROPYTHON, PATH, or the venv's)",
    )
    parser.add_argument(
        "--firmware", metavar="DIR",
        help="firmware tree copied into a fresh flash image (default: the package's)",
    )
    parser.add_argument("--show", action="store_true", help="show the LEDs in the terminal")
    return parser


def led_line(rgb: bytes, color: bool) -> str:
    """A one-line picture of an LED frame: two LEDs per character cell in colour, or a
    count of lit LEDs when the output is not a terminal."""
    count = len(rgb) // 3
    if not color:
        lit = sum(1 for i in range(count) if any(rgb[3 * i : 3 * i + 3]))
        return f"LEDs: {lit}/{count} lit"
    cells = []
    for i in range(0, count, 2):
        left = rgb[3 * i : 3 * i + 3]
        right = rgb[3 * i + 3 : 3 * i + 6] or b"\0\0\0"
        cells.append(
            f"\x1b[38;2;{left[0]};{left[1]};{left[2]}m"
            f"\x1b[48;2;{right[0]};{right[1]};{right[2]}m\u258c"
        )
    return "".join(cells) + "\x1b[0m"


def main(argv: list[str] | None = None, on_frame: FrameCallback | None = None) -> int:
    """Run ``cribboard sim``; return the exit status.

    `on_frame`, if given, replaces the built-in LED line of ``--show``; it is called on the
    relay thread with each new frame (RGB, 3 bytes per LED) and must return quickly.
    """
    args = build_parser().parse_args(argv)
    latest: list[bytes] = []
    changed = threading.Event()

    def remember(rgb: bytes) -> None:
        latest[:] = [rgb]
        changed.set()

    frame_hook = (on_frame or remember) if args.show else None
    try:
        board = VirtualBoard(
            flash=args.flash,
            heap=args.heap,
            micropython=args.micropython,
            firmware=args.firmware,
            on_frame=frame_hook,
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
        print(f"control: {board.control}", flush=True)
        color = sys.stdout.isatty()
        while not stop.wait(_SHOW_PERIOD):
            if args.show and on_frame is None and changed.is_set():
                changed.clear()
                end = "\r" if color else "\n"
                print(led_line(latest[0], color), end=end, flush=True)
    finally:
        board.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if args.show and on_frame is None and sys.stdout.isatty():
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
