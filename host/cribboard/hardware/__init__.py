"""The hardware package's generator: the drilling template, the wiring diagrams, the picture of
the finished board, and the generated parts of hardware/README.md (parts table, pin tables, power
figures), all from the data the firmware itself uses: `cribcore.layout` (holes, millimetres, LED
chain order) and `cribcore.profiles` (pins, USB ids, current budget).

    python -m cribboard.hardware              # regenerate hardware/ (in a source checkout)
    python -m cribboard.hardware --out DIR    # write somewhere else
    python -m cribboard.hardware --check      # exit 1 when a generated file is out of date
    python -m cribboard.hardware --power      # print the power figures

One module per job: `boards` (each chip's pins and the check of a board profile against them),
`case` (the physical board in millimetres), `svg` (drawing helpers), `template` (the drilling
template), `wiring` (the wiring diagrams), `power` (the power budget), `bom` (the parts list),
`picture` (the board picture), `readme` (the README's generated tables), `generate` (the
command). The names below are the package's public face.
"""

from __future__ import annotations

from cribboard.hardware.boards import (
    BOARD_INFO,
    BOARD_PROFILES,
    BUTTON_NAMES,
    CHIPS,
    PICO_HEADER,
    BoardInfo,
    Chip,
    chip_of,
    pin_label,
    power_labels,
    profile_problems,
    title_of,
    usb_port_name,
)
from cribboard.hardware.bom import BOM_COLUMNS, bom_markdown, read_bom
from cribboard.hardware.case import CASE, Case
from cribboard.hardware.generate import GENERATED, default_out, generate, main
from cribboard.hardware.picture import PNG_PX_PER_MM, board_png, sample_game
from cribboard.hardware.power import NullPixels, PowerFigures, power_figures, power_markdown
from cribboard.hardware.readme import fill_readme, pin_table_markdown, readme_sections
from cribboard.hardware.template import SHEET_OVERLAP_MM, template_sheet_svg, template_svg
from cribboard.hardware.wiring import chain_description, wiring_svg

__all__ = [
    "BOM_COLUMNS",
    "bom_markdown",
    "read_bom",
    "BOARD_INFO",
    "BOARD_PROFILES",
    "BUTTON_NAMES",
    "CHIPS",
    "PICO_HEADER",
    "BoardInfo",
    "Chip",
    "chip_of",
    "pin_label",
    "power_labels",
    "profile_problems",
    "title_of",
    "usb_port_name",
    "CASE",
    "Case",
    "GENERATED",
    "default_out",
    "generate",
    "main",
    "PNG_PX_PER_MM",
    "board_png",
    "sample_game",
    "NullPixels",
    "PowerFigures",
    "power_figures",
    "power_markdown",
    "fill_readme",
    "pin_table_markdown",
    "readme_sections",
    "SHEET_OVERLAP_MM",
    "template_sheet_svg",
    "template_svg",
    "chain_description",
    "wiring_svg",
]
