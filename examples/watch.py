"""python examples/watch.py [COUNT]: print the board's events as they happen, one JSON object a
line in the bridge's WebSocket shape ({"type": "state", "state": {...}}); stop after COUNT
changes of state, or run until Ctrl-C. The board on $CRIBBOARD_PORT, else the only one found."""

import asyncio
import json
import sys

from cribboard.api import Board, StateEvent


async def main(count: float) -> None:
    async with await Board.open() as board:
        with board.events() as events:
            state = await board.state()
            print(json.dumps({"type": "state", "state": state.to_json()}), flush=True)
            print("subscribed", file=sys.stderr, flush=True)
            rev, changes = state.rev, 0
            async for event in events:
                print(json.dumps(event.to_json()), flush=True)
                # A state read again (after a reconnect) is no change: its revision is the same.
                if isinstance(event, StateEvent) and event.state.rev != rev:
                    rev, changes = event.state.rev, changes + 1
                    if changes >= count:
                        return


try:
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else float("inf")))
except KeyboardInterrupt:
    pass
