"""Which board a board is, across restarts of the programs and of the board: what the record of
games (cribboard.record) keeps a board's games under, the same for every program that follows it.

A board's identity, the first that applies:

* ``uid:UID``: a board that names itself in its hello (protocol 1.4, ``uid=``: the hex of its
  ``machine.unique_id()``, the virtual board's kept in its flash image), on any link;
* ``uid:SERIAL``: a board on USB whose port has a serial number (a Pico's is its flash chip's
  unique id, an ESP32-S3's its MAC address: the same as MicroPython's ``machine.unique_id()``
  in hex, the identity a board's own history would give);
* ``sim:PATH``: a virtual board that keeps its game in a flash image (the saved virtual board of
  `keep` and `play`, `cribboard virtual --flash`): that image, wherever its pty is this time;
* ``ble:NAME``: a board over Bluetooth LE, by the name it advertises (``Cribboard-71A3``), else
  its address;
* ``port:PATH``: anything else, by its port's real path (a board that may be another next time).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from cribboard.client import Hello
from cribboard.portshare import port_key
from cribboard.virtual.registry import running_sims

BLE_PORT = "ble:"
"""How a Board names a board reached over Bluetooth LE (cribboard.api.Board.name)."""


@dataclass(frozen=True)
class BoardIdentity:
    """A board's `key` in the record, and a `label` for people (its port, or its name)."""

    key: str
    label: str


def board_identity(
    port: str, hello: Hello | None = None, flash: Path | None = None
) -> BoardIdentity:
    """The identity of the board on `port` (a serial port, a pyserial URL, or ``ble:ADDRESS``)
    that said `hello`; `flash`: the image of a virtual board the caller runs (see the module)."""
    uid = hello.uid if hello is not None else None
    if uid:
        label = hello.fields.get("ble") if hello is not None and port.startswith(BLE_PORT) else None
        return BoardIdentity(f"uid:{uid.upper()}", label or port)
    if flash is not None:
        return BoardIdentity(f"sim:{os.path.realpath(flash)}", port)
    if port.startswith(BLE_PORT):
        name = hello.fields.get("ble") if hello is not None else None
        return BoardIdentity(f"ble:{name or port[len(BLE_PORT) :]}", name or port)
    serial = _usb_serial(port)
    if serial:
        return BoardIdentity(f"uid:{serial.upper()}", port)
    for sim in running_sims():
        if sim.flash and port_key(sim.port) == port_key(port):
            return BoardIdentity(f"sim:{os.path.realpath(sim.flash)}", port)
    return BoardIdentity(f"port:{port_key(port) if '://' not in port else port}", port)


def _usb_serial(port: str) -> str | None:
    """The USB serial number of the device behind `port`, when it has one."""
    if "://" in port:
        return None
    with contextlib.suppress(Exception):  # no USB to list here: a pty, a container
        from serial.tools import list_ports

        real = port_key(port)
        for info in list_ports.comports():
            if port_key(info.device) == real and info.serial_number:
                return str(info.serial_number)
    return None
