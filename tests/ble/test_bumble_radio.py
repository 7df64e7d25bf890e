"""The virtual radio's corrections of Bumble's controller (cribdev.bumbleradio), each
against what the Bluetooth Core specification says a controller does, and each checked to be
still needed: when a test named `test_bumble_still_...` fails after a Bumble upgrade, Bumble has
fixed that fault and its correction can go (see the module's documentation)."""

from __future__ import annotations

import asyncio

import pytest
from bumble import hci

from cribdev.bumbleradio import CorrectedController, CorrectedLink

VENDOR_FC09 = bytes([0x01, 0x09, 0xFC, 0x00])  # btstack's Zephyr start-up: a vendor command
UNKNOWN_HCI_COMMAND = 0x01
# FIPS-197 appendix C.1: AES-128 of 00112233..ff under the key 00010203..0f.
KEY = bytes(range(16))
PLAIN = bytes.fromhex("00112233445566778899aabbccddeeff")
CIPHER = bytes.fromhex("69c4e0d86a7b0430d8cdb78070b4c55a")


class Host:
    """What the controller sends its host, as bytes."""

    def __init__(self) -> None:
        self.packets: asyncio.Queue[bytes] = asyncio.Queue()

    def on_packet(self, packet: bytes) -> None:
        self.packets.put_nowait(bytes(packet))


def _controller(host: Host) -> CorrectedController:
    return CorrectedController("under-test", link=CorrectedLink(), host_sink=host)


def _command(opcode: int, parameters: bytes = b"") -> bytes:
    return bytes([0x01, opcode & 0xFF, opcode >> 8, len(parameters)]) + parameters


def _complete(packet: bytes) -> tuple[int, bytes]:
    """(opcode, return parameters) of a Command Complete event."""
    assert packet[:2] == b"\x04\x0e" and packet[2] == len(packet) - 3, packet.hex()
    return packet[4] | packet[5] << 8, packet[6:]


async def test_an_unknown_vendor_command_is_answered_unknown_hci_command() -> None:
    host = Host()
    controller = _controller(host)
    controller.on_packet(VENDOR_FC09)
    assert _complete(await host.packets.get()) == (0xFC09, bytes([UNKNOWN_HCI_COMMAND]))
    # The controller goes on answering: the host's command queue is not stalled.
    controller.on_packet(_command(hci.HCI_READ_LOCAL_VERSION_INFORMATION_COMMAND))
    opcode, parameters = _complete(await host.packets.get())
    assert opcode == hci.HCI_READ_LOCAL_VERSION_INFORMATION_COMMAND and parameters[0] == 0


async def test_bumble_still_fails_on_the_vendor_command() -> None:
    host = Host()
    controller = _controller(host)
    controller.corrections.discard("unknown_command")
    with pytest.raises(IndexError):
        controller.on_packet(VENDOR_FC09)
    assert host.packets.empty()


async def test_le_encrypt_answers_aes_128_of_key_and_plaintext() -> None:
    host = Host()
    controller = _controller(host)
    # HCI carries both least significant octet first (Vol 4, Part E, 7.8.22), the result too.
    controller.on_packet(_command(hci.HCI_LE_ENCRYPT_COMMAND, KEY[::-1] + PLAIN[::-1]))
    assert _complete(await host.packets.get()) == (
        hci.HCI_LE_ENCRYPT_COMMAND,
        b"\x00" + CIPHER[::-1],
    )


async def test_bumble_still_leaves_le_encrypt_unanswered() -> None:
    host = Host()
    controller = _controller(host)
    controller.corrections.discard("le_encrypt")
    controller.corrections.discard("unknown_command")
    controller.on_packet(_command(hci.HCI_LE_ENCRYPT_COMMAND, KEY[::-1] + PLAIN[::-1]))
    # Anything answered after LE Encrypt would come after its reply: a later command's reply
    # arriving first shows LE Encrypt got none.
    controller.on_packet(_command(hci.HCI_READ_LOCAL_VERSION_INFORMATION_COMMAND))
    opcode, _ = _complete(await host.packets.get())
    assert opcode == hci.HCI_READ_LOCAL_VERSION_INFORMATION_COMMAND
    assert host.packets.empty()


async def test_le_data_goes_out_from_the_connections_own_address() -> None:
    link = CorrectedLink()
    sender = CorrectedController("board", link=link, public_address="28:CD:C1:00:00:01")
    receiver = CorrectedController("central", link=link)
    receiver.random_address = hci.Address("C1:22:33:44:55:66", hci.Address.RANDOM_DEVICE_ADDRESS)
    seen: asyncio.Queue[hci.Address] = asyncio.Queue()
    receiver.on_link_acl_data = lambda source, transport, data: seen.put_nowait(source)  # type: ignore[method-assign]

    class Link:
        self_address = sender.public_address
        peer_address = receiver.random_address

    sender.le_connections[receiver.random_address] = Link()  # type: ignore[assignment]
    for correct in (True, False):
        link.correct = correct
        link.send_acl_data(sender, receiver.random_address, hci.PhysicalTransport.LE, b"x")
        source = await seen.get()
        if correct:
            assert source == sender.public_address
        else:  # Bumble: the sender's random address, which no connection has
            assert source == sender.random_address != sender.public_address
