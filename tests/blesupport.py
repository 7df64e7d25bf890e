"""Fixtures and helpers of the Bluetooth LE tests: a private D-Bus with the BlueZ front on it
(cribdev.fakebluez: bleak's own BlueZ backend drives a Bumble central on a virtual
radio), the boards on that radio, and a bare NUS client on bleak for what a phone app sends (plain
lines, Bluefruit control pad packets).

A test parametrised with ``@on_stacks`` runs once on each real stack: the unchanged firmware on
MicroPython's own `bluetooth` module over btstack and over NimBLE (cribdev.bumbleradio), behind
the same front. (A virtual board's simulated radio is not on this link: tests of it speak to it
through its side channel, tests/modelcheck.py's RadioCentral.)"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from cribboard.virtual import VirtualBoard
from cribcore.protocol import NUS_RX, NUS_SERVICE, NUS_TX
from cribdev.fakebluez import FakeBluetooth, fake_bluetooth

needs_dbus = pytest.mark.skipif(
    shutil.which("dbus-daemon") is None,
    reason="dbus-daemon not installed (Debian package dbus: make dbus)",
)


def board_name(vboard: VirtualBoard) -> str:
    """The name the virtual board advertises: Cribboard- and the end of its address."""
    return "Cribboard-" + vboard.ble_address.replace(":", "")[-4:]


def pad_packet(button: int, pressed: bool) -> bytes:
    """A Bluefruit Connect control pad packet."""
    data = bytearray(b"!B%d%d" % (button, 1 if pressed else 0))
    data.append(~sum(data) & 0xFF)
    return bytes(data)


@pytest.fixture(scope="module")
def bluetooth() -> Iterator[FakeBluetooth]:
    """A private bus, the fake BlueZ (adapters hci0 and hci1: two centrals; bleak's default
    is either) and the bluetoothctl stub; this process's DBUS_SYSTEM_BUS_ADDRESS and PATH
    point at them."""
    with fake_bluetooth(adapters=2) as bt:
        yield bt


STACKS = ("btstack", "nimble")
on_stacks = pytest.mark.parametrize("vboard", STACKS, indirect=True)
"""Run a test on both real stacks (one test body, two radios)."""


class StackBoard:
    """A board on a real stack (cribdev.bumbleradio.RadioBoard), with what the tests
    use of a VirtualBoard: its USB console, its side channel, its Bluetooth address, reset()."""

    def __init__(self, bluetooth: FakeBluetooth, board: Any) -> None:
        self._bluetooth = bluetooth
        self.board = board
        self.stack: str = board.stack

    @property
    def port(self) -> str:
        return str(self.board.virtual.port)

    @property
    def control(self) -> str:
        return str(self.board.control)

    @property
    def ble_address(self) -> str:
        return str(self.board.address).split("/")[0].upper()

    def reset(self) -> None:
        """A power cut: the interpreter killed and started again (returns at once)."""
        self._bluetooth.bluez.power_cut(self.board)


@pytest.fixture
def vboard(
    bluetooth: FakeBluetooth, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Any]:
    """A board on the radio, with ``@on_stacks``: the firmware on btstack and on NimBLE."""
    real = bluetooth.bluez.start_board(request.param, tmp_path)
    try:
        yield StackBoard(bluetooth, real)
    finally:
        bluetooth.bluez.stop_board(real)
        bluetooth.bluez.mtu = 23


class Nus:
    """A bare Nordic UART client on bleak, as a phone's UART terminal is: writes bytes as
    given, collects the notifications."""

    def __init__(self) -> None:
        self.client: object = None
        self.packets: list[bytes] = []
        self._data = bytearray()
        self._changed = asyncio.Event()

    @classmethod
    async def connect(cls, name: str, adapter: str | None = None) -> Nus:
        from bleak import BleakClient, BleakScanner

        nus = cls()
        args = {"bluez": {"adapter": adapter}} if adapter else {}
        device = await BleakScanner.find_device_by_filter(
            lambda d, a: a.local_name == name and NUS_SERVICE in a.service_uuids, timeout=5, **args
        )  # type: ignore[arg-type]
        assert device is not None, f"{name} not found"
        client = BleakClient(device, **args)  # type: ignore[arg-type]
        await client.connect()
        await client.start_notify(NUS_TX, nus._notified)
        nus.client = client
        return nus

    def _notified(self, _char: object, data: bytearray) -> None:
        self.packets.append(bytes(data))
        self._data += data
        self._changed.set()

    async def write(self, data: bytes, response: bool = False) -> None:
        from bleak import BleakClient

        assert isinstance(self.client, BleakClient)
        await self.client.write_gatt_char(NUS_RX, data, response=response)

    async def lines(self, count: int, timeout: float = 3.0) -> list[bytes]:
        """The next `count` whole lines notified (events included)."""

        async def wait() -> list[bytes]:
            while self._data.count(b"\n") < count:
                self._changed.clear()
                await self._changed.wait()
            out = []
            for _ in range(count):
                line, _, rest = bytes(self._data).partition(b"\n")
                self._data[:] = rest
                out.append(line + b"\n")
            return out

        return await asyncio.wait_for(wait(), timeout)

    async def close(self) -> None:
        from bleak import BleakClient

        if isinstance(self.client, BleakClient):
            await self.client.disconnect()


@pytest.fixture
async def nus(vboard: VirtualBoard) -> AsyncIterator[Nus]:
    client = await Nus.connect(board_name(vboard))
    try:
        yield client
    finally:
        await client.close()
