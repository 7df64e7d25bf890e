"""Flashing a cribboard image onto a Raspberry Pi Pico held in BOOTSEL mode.

A Pico plugged in with its BOOTSEL button held (or sent there by ``machine.bootloader()``) shows
up as a small USB drive served by its boot ROM: ``RPI-RP2`` for an RP2040 (Pico, Pico W),
``RP2350`` for an RP2350 (Pico 2 W). The drive holds ``INFO_UF2.TXT``, whose ``Board-ID`` line
names the chip, for example::

    UF2 Bootloader v3.0
    Model: Raspberry Pi RP2
    Board-ID: RPI-RP2

A UF2 file copied onto the drive is written to the flash block by block; once the last block is
in, the boot ROM restarts the chip into the new image and the drive goes away.

The images are those in ``firmware/ports/rp2/images/`` (MicroPython with the cribboard firmware
frozen in, see that folder's README).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from cribboard import uf2
from cribboard.errors import CribboardError

INFO_FILE = "INFO_UF2.TXT"


@dataclass(frozen=True)
class Chip:
    """What a BOOTSEL drive's Board-ID says about the board behind it."""

    board_id: str
    """The Board-ID line of INFO_UF2.TXT."""
    name: str
    family_id: int
    """The UF2 family the boot ROM accepts."""
    image: str
    """The cribboard image it gets unless told otherwise."""
    boards: str
    """The boards with this chip, for messages."""


CHIPS = (
    Chip("RPI-RP2", "RP2040", uf2.RP2040_FAMILY_ID, "cribboard-RPI_PICO.uf2", "Pico or Pico W"),
    Chip("RP2350", "RP2350", uf2.RP2350_ARM_S_FAMILY_ID, "cribboard-RPI_PICO2_W.uf2", "Pico 2 W"),
)
CHIP_BY_ID = {chip.board_id: chip for chip in CHIPS}


class BootselError(CribboardError):
    """No usable BOOTSEL drive, or an image that does not fit the board on it."""


@dataclass(frozen=True)
class BootselDrive:
    """A mounted BOOTSEL drive."""

    path: Path
    chip: Chip
    model: str
    """The Model line of INFO_UF2.TXT (``Raspberry Pi RP2``)."""


def parse_info(text: str) -> dict[str, str]:
    """The ``Key: value`` lines of an INFO_UF2.TXT (the first line, ``UF2 Bootloader v3.0``,
    has no colon and is kept as ``Bootloader``)."""
    fields: dict[str, str] = {}
    for number, line in enumerate(text.splitlines()):
        key, colon, value = line.partition(":")
        if colon:
            fields[key.strip()] = value.strip()
        elif number == 0 and line.strip():
            fields["Bootloader"] = line.strip()
    return fields


def read_drive(path: str | os.PathLike[str]) -> BootselDrive:
    """The BOOTSEL drive mounted at `path`; BootselError when it is not one."""
    where = Path(path)
    try:
        text = (where / INFO_FILE).read_text(encoding="ascii", errors="replace")
    except OSError:
        raise BootselError(f"{where} is not a BOOTSEL drive (no {INFO_FILE})") from None
    fields = parse_info(text)
    board_id = fields.get("Board-ID", "")
    chip = CHIP_BY_ID.get(board_id)
    if chip is None:
        known = ", ".join(CHIP_BY_ID)
        raise BootselError(
            f"{where}: Board-ID {board_id or '(none)'!r} is not a Raspberry Pi Pico's ({known})"
        )
    return BootselDrive(where, chip, fields.get("Model", ""))


def mounted_volumes(mounts: str | None = None) -> list[Path]:
    """Where removable drives may be mounted: every mount point of this system (Linux: from
    /proc/self/mounts, or `mounts` given as that file's text; macOS: /Volumes/*; Windows:
    the drive letters)."""
    if sys.platform == "win32":
        return [Path(f"{letter}:\\") for letter in "DEFGHIJKLMNOPQRSTUVWXYZ"]
    if sys.platform == "darwin":
        volumes = Path("/Volumes")
        return sorted(volumes.iterdir()) if volumes.is_dir() else []
    if mounts is None:
        try:
            mounts = Path("/proc/self/mounts").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
    found = []
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            found.append(Path(_unescape_mount(fields[1])))
    return found


def _unescape_mount(text: str) -> str:
    """/proc/self/mounts writes a space as \\040 (and tab, newline, backslash likewise)."""
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and text[i + 1 : i + 4].isdigit():
            out.append(chr(int(text[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def find_drives(volumes: Iterable[Path] | None = None) -> list[BootselDrive]:
    """The BOOTSEL drives among `volumes` (default: every mounted volume)."""
    drives = []
    for volume in mounted_volumes() if volumes is None else volumes:
        try:
            if (volume / INFO_FILE).is_file():
                drives.append(read_drive(volume))
        except (OSError, BootselError):
            continue
    return drives


def choose_image(drive: BootselDrive, image: str | os.PathLike[str] | None, images: Path) -> Path:
    """The image to flash: `image` (a path, or a name in `images`) or the drive's chip's
    default; BootselError when it is missing or built for another chip."""
    if image is None:
        path = images / drive.chip.image
    else:
        path = Path(image)
        if not path.is_file() and not path.is_absolute() and (images / path).is_file():
            path = images / path
    if not path.is_file():
        raise BootselError(f"no image {path}")
    family = uf2_family(path)
    if family != drive.chip.family_id:
        raise BootselError(
            f"{path.name} is for UF2 family {family:#010x}; the board on {drive.path} is an "
            f"{drive.chip.name} ({drive.chip.family_id:#010x}): its boot ROM would ignore it"
        )
    return path


def uf2_family(path: Path) -> int:
    """The family id of a UF2 file (every block checked)."""
    data = path.read_bytes()
    try:
        uf2.decode(data)
    except uf2.UF2Error as err:
        raise BootselError(f"{path.name} is not a usable UF2 file: {err}") from None
    return int.from_bytes(data[28:32], "little")


def flash(drive: BootselDrive, image: Path, progress: Callable[[str], None] = print) -> Path:
    """Copy `image` onto the drive (the boot ROM writes it to the flash and restarts the
    board into it); returns the file written."""
    data = image.read_bytes()
    target = drive.path / image.name
    progress(f"copying {image.name} ({len(data) // 1024} KiB) to {drive.path} ({drive.model})")
    try:
        with open(target, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
    except OSError as err:
        # The boot ROM restarts the chip as soon as the last block is in: the drive may go
        # away under the closing file. Only an error before every byte was handed over counts.
        if not _handed_over(target, len(data)):
            raise BootselError(f"could not copy {image.name} to {drive.path}: {err}") from err
    progress(
        f"flashed {image.name}: the {drive.chip.boards} restarts into the cribboard firmware "
        "(its serial port appears in a few seconds)"
    )
    return target


def _handed_over(target: Path, size: int) -> bool:
    try:
        return target.stat().st_size == size
    except OSError:
        return not target.parent.exists()  # the drive went away: the board took the image
