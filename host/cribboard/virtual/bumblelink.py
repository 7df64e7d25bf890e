"""Bumble's virtual radio, as the BlueZ front (:mod:`cribboard.virtual.fakebluez`) uses it: one
``LocalLink`` with Bumble controllers on it, each driven by Bumble's own host stack.

Everything on the link is Bumble's (controllers, HCI, L2CAP, ATT, GATT). One fault of Bumble
0.0.236's controller is corrected here because a central meets it at once: a scanner's
scan-response reports carry the advertising data again instead of the advertiser's scan response,
so a name the board puts in its scan response (the firmware does) is never seen.
:class:`ScanningController` puts the advertiser's real scan response in those reports.
Recheck on each Bumble upgrade: drop the class when ``Controller.on_ll_advertising_pdu`` sends
the scan response it was given.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bumble import hci
from bumble.controller import Controller
from bumble.device import Device
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport.common import AsyncPipeSink

ADVERTISING_INTERVAL = 100.0  # ms, as the firmware asks (Bumble's own default is a second)

__all__ = ["ADVERTISING_INTERVAL", "LocalLink", "ScanningController", "new_device", "remove_device"]


def _scan_response_of(link: LocalLink, address: hci.Address) -> bytes | None:
    """The scan response the controller advertising from `address` would send, or None."""
    for controller in link.controllers:
        legacy = controller.le_legacy_advertiser
        if legacy.enabled and legacy.address == address:
            return bytes(legacy.scan_response_data)
        for adv_set in controller.advertising_sets.values():
            if adv_set.enabled and adv_set.address == address:
                return bytes(adv_set.scan_response_data)
    return None


class ScanningController(Controller):
    """Bumble's controller, with the advertiser's own scan response in scan-response reports."""

    def send_hci_packet(self, packet: Any) -> None:
        legacy = hci.HCI_LE_Advertising_Report_Event
        extended = hci.HCI_LE_Extended_Advertising_Report_Event
        if isinstance(packet, legacy):
            packet = legacy(
                [
                    self._answered(r, r.event_type == legacy.EventType.SCAN_RSP)
                    for r in packet.reports
                ]
            )
        elif isinstance(packet, extended):
            kind = extended.EventType.SCAN_RESPONSE
            packet = extended(
                [self._answered(r, bool(r.event_type & kind)) for r in packet.reports]
            )
        super().send_hci_packet(packet)

    def _answered(self, report: Any, scan_response: bool) -> Any:
        if not scan_response:
            return report
        data = _scan_response_of(self.link, report.address) or b""
        return dataclasses.replace(report, data=data)


def new_device(link: LocalLink, name: str, address: str) -> Device:
    """A Bumble device (host stack and controller) on `link`, with this random static address;
    call ``await device.power_on()`` next."""
    controller = ScanningController(name, link=link)
    return Device(
        name=name, address=hci.Address(address), host=Host(controller, AsyncPipeSink(controller))
    )


def remove_device(link: LocalLink, device: Device) -> None:
    """Take a powered-off device's controller off `link`."""
    for controller in list(link.controllers):
        if controller.random_address == device.random_address:
            link.remove_controller(controller)
