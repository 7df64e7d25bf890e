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
            print(json.dumps({"type": "state", "state": (await board.state()).to_json()}))
            print("subscribed", file=sys.stderr, flush=True)
            changes = 0
            async for event in events:
                print(json.dumps(event.to_json()), flush=True)
                if isinstance(event, StateEvent):
                    changes += 1
                    if changes >= count:
                        return


try:
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else float("inf")))
except KeyboardInterrupt:
    pass
