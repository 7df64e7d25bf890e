"""A Bluetooth LE board at a club hall's table (`cribboard serve --ble NAME --broker ...`): the
BlueZ front on a private D-Bus reaches the firmware on btstack and on NimBLE through Bumble's
central, the real mosquitto carries the table's topics, the director runs in this process."""

from __future__ import annotations

from pathlib import Path

from blesupport import bluetooth, board_name, needs_dbus, on_stacks, vboard
from cribboard.api import Board
from cribboard.bridge.halltable import TableSettings
from cribboard.hall.store import Store
from cribboard.virtual import VirtualBoard
from hallsupport import HALL, WAIT_S, address, running_broker, running_director
from support import running_bridge

__all__ = ["bluetooth", "vboard"]  # fixtures from blesupport
pytestmark = needs_dbus


@on_stacks
async def test_a_bluetooth_board_sits_at_a_table(vboard: VirtualBoard, tmp_path: Path) -> None:
    async with await Board.open(vboard.port) as usb:
        await usb.set_open(True)  # the owner lets every device change the board
    with running_broker(tmp_path / "broker", tables=1) as broker:
        with Store.open(tmp_path / "hall.sqlite") as store:
            async with running_director(store, broker) as director:
                director.register(["Ann", "Bob"])
                settings = TableSettings(address(broker, "table-1"), HALL, 1, tmp_path / "m.json")
                async with running_bridge(ble=[board_name(vboard)], table=settings) as bridge:
                    await bridge.registry.wait_connected(WAIT_S)
                    entry = bridge.registry.get(None)
                    assert entry is not None and entry.kind == "ble"
                    view = director.view
                    await director.wait_until(
                        lambda: bool(view.tables.get(1) and view.tables[1].online), WAIT_S
                    )
                    report = await director.next_round()
                    assert report.answers[1] is not None and report.answers[1].ok
                    assert entry.board is not None
                    await entry.board.peg(1, 9)
                    await director.wait_until(lambda: director.latest[1].front == [0, 9], WAIT_S)
