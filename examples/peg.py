"""python examples/peg.py [PLAYER [POINTS]]: score points on the board with the Python library,
straight over its USB port (the board on $CRIBBOARD_PORT, else the only one found).

A player is 0, 1, 2 or a name (blue, orange, purple), as on the command line and the bridge."""

import sys

from cribboard.api import SyncBoard

args = sys.argv[1:]
player = args[0] if args else "blue"
points = int(args[1]) if len(args) > 1 else 5
with SyncBoard.open() as board:
    board.peg(player, points)
    state = board.state()
    print(
        f"front pegs: {' '.join(map(str, state.front))}  (back: {' '.join(map(str, state.back))})"
    )
