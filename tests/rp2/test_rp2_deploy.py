"""Putting the firmware on a Raspberry Pi Pico with `cribboard deploy`: the image with the firmware
frozen in copied onto a board held in BOOTSEL mode (a folder stands in for its USB drive, with
INFO_UF2.TXT as the boot ROMs write it), and that copy booted on the emulated RP2040. (The
firmware copied over USB onto stock MicroPython: tests/rp2/test_rp2_stock.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cribboard import bootsel, uf2
from cribboard.cli import main as cli_main
from cribboard.virtual.rp2board import FLASH_SIZE, FlashSymbols, images_dir
from rp2support import BoardFactory, ProtocolLink, fields, needs_emulator, rp2_boards

__all__ = ["rp2_boards"]  # fixtures from rp2support

# INFO_UF2.TXT as the boot ROMs serve it: the RP2040's (pico-bootrom-rp2040,
# bootrom/info_uf2.txt) and the RP2350's (as Pico 2 boards show it).
INFO_RP2040 = "UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n"
INFO_RP2350 = "UF2 Bootloader v1.0\nModel: Raspberry Pi RP2350\nBoard-ID: RP2350\n"


def bootsel_drive(path: Path, info: str) -> Path:
    """A folder laid out as a Pico's BOOTSEL drive (the boot ROM also serves INDEX.HTM)."""
    path.mkdir()
    (path / "INFO_UF2.TXT").write_text(info)
    (path / "INDEX.HTM").write_text("<html><head><meta http-equiv='refresh'></head></html>\n")
    return path


@pytest.mark.parametrize(
    "info, image",
    [(INFO_RP2040, "cribboard-RPI_PICO.uf2"), (INFO_RP2350, "cribboard-RPI_PICO2_W.uf2")],
)
def test_deploy_copies_the_image_for_the_drives_chip_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], info: str, image: str
) -> None:
    drive = bootsel_drive(tmp_path / "RPI-RP2", info)
    assert cli_main(["deploy", "--drive", str(drive)]) == 0
    copied = drive / image
    assert copied.read_bytes() == (images_dir() / image).read_bytes()
    said = capsys.readouterr().out
    assert f"copying {image}" in said and f"flashed {image}" in said
    assert sorted(p.name for p in drive.iterdir()) == sorted(["INFO_UF2.TXT", "INDEX.HTM", image])


def test_deploy_takes_the_image_named_and_refuses_one_for_another_chip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drive = bootsel_drive(tmp_path / "RPI-RP2", INFO_RP2040)
    assert cli_main(["deploy", "--drive", str(drive), "--image", "cribboard-RPI_PICO_W.uf2"]) == 0
    assert (drive / "cribboard-RPI_PICO_W.uf2").read_bytes() == (
        images_dir() / "cribboard-RPI_PICO_W.uf2"
    ).read_bytes()
    capsys.readouterr()

    rp2350 = bootsel_drive(tmp_path / "RP2350", INFO_RP2350)
    assert cli_main(["deploy", "--drive", str(rp2350), "--image", "cribboard-RPI_PICO.uf2"]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("cribboard: cribboard-RPI_PICO.uf2 is for UF2 family 0xe48bff56")
    assert "RP2350" in error and len(error.splitlines()) == 1
    assert not (rp2350 / "cribboard-RPI_PICO.uf2").exists()


@pytest.mark.parametrize(
    "info, problem",
    [(None, "is not a BOOTSEL drive"), ("UF2 Bootloader v1.0\nBoard-ID: SAMD21\n", "SAMD21")],
)
def test_a_folder_that_is_not_a_picos_drive_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], info: str | None, problem: str
) -> None:
    folder = tmp_path / "USBSTICK"
    folder.mkdir()
    if info is not None:
        (folder / "INFO_UF2.TXT").write_text(info)
    assert cli_main(["deploy", "--drive", str(folder)]) == 2
    error = capsys.readouterr().err
    assert problem in error and len(error.splitlines()) == 1
    assert [p.name for p in folder.iterdir()] == ([] if info is None else ["INFO_UF2.TXT"])


def test_deploy_finds_the_only_bootsel_drive_among_the_mounted_volumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "data"
    other.mkdir()
    drive = bootsel_drive(tmp_path / "RPI RP2", INFO_RP2040)  # a space, escaped in mounts
    mounts = (
        "proc /proc proc rw 0 0\n"
        f"/dev/sda1 {other} ext4 rw 0 0\n"
        f"/dev/sdb1 {str(drive).replace(' ', chr(92) + '040')} vfat rw 0 0\n"
    )
    volumes = bootsel.mounted_volumes(mounts)
    assert volumes == [Path("/proc"), other, drive]
    monkeypatch.setattr(bootsel, "mounted_volumes", lambda: volumes)
    monkeypatch.delenv("CRIBBOARD_PORT", raising=False)
    assert [d.path for d in bootsel.find_drives()] == [drive]
    assert cli_main(["deploy"]) == 0
    assert (drive / "cribboard-RPI_PICO.uf2").is_file()
    assert "Pico or Pico W restarts" in capsys.readouterr().out

    second = bootsel_drive(tmp_path / "RP2350", INFO_RP2350)
    monkeypatch.setattr(bootsel, "mounted_volumes", lambda: [drive, second])
    assert cli_main(["deploy"]) == 2
    assert "several boards in BOOTSEL mode" in capsys.readouterr().err
    assert cli_main(["--port", "/dev/null", "deploy", "--image", "cribboard-RPI_PICO.uf2"]) == 2
    assert "--image is for a board in BOOTSEL mode" in capsys.readouterr().err


def flash_from_uf2(image: Path, flash: Path) -> None:
    """What a boot ROM does with a UF2 file: its blocks written into an erased flash."""
    data = bytearray(b"\xff" * FLASH_SIZE)
    for address, payload in uf2.decode(image.read_bytes(), uf2.RP2040_FAMILY_ID):
        offset = address - uf2.FLASH_BASE
        data[offset : offset + len(payload)] = payload
    flash.write_bytes(bytes(data))


@needs_emulator
def test_the_copied_image_boots_into_the_app_on_the_emulated_pico(
    tmp_path: Path, rp2_boards: BoardFactory
) -> None:
    drive = bootsel_drive(tmp_path / "RPI-RP2", INFO_RP2040)
    assert cli_main(["deploy", "--drive", str(drive)]) == 0
    flash = tmp_path / "pico.flash"
    copied = drive / "cribboard-RPI_PICO.uf2"
    flash_from_uf2(copied, flash)
    symbols = FlashSymbols.for_image(images_dir() / copied.name)
    pico = rp2_boards(image=None, flash=flash, symbols=symbols)  # the flash alone
    link = ProtocolLink(pico.port)
    try:
        hello = fields(link.wait_up())
        assert hello["board"] == "pico" and hello["store"] == "fresh"
        assert hello["fs"] == "formatted"  # a fresh flash: the first boot makes the file system
        assert link.request(b"peg 0 5\n") == b"ok r=1\n"
    finally:
        link.close()
