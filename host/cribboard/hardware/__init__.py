"""The hardware package's generator: the drilling template, the wiring diagrams, the picture of
the finished board, and the generated parts of hardware/README.md (parts table, pin tables, power
figures), all from the data the firmware itself uses: `cribcore.layout` (holes, millimetres, LED
chain order) and `cribcore.profiles` (pins, USB ids, current budget).

    python -m cribboard.hardware              # regenerate hardware/ (in a source checkout)
    python -m cribboard.hardware --out DIR    # write somewhere else
    python -m cribboard.hardware --check      # exit 1 when a generated file is out of date
    python -m cribboard.hardware --power      # print the power figures

One module per job: `boards` (each chip's pins and the check of a board profile against them),
`case` (the physical board in millimetres), `clearances` (the buttons' room from the frame),
`svg` (drawing helpers), `template` (the drilling template), `section` (the side section),
`cutlist` (the wood), `wiring` (the wiring diagrams), `joints` (the solder joints), `shortchain`
(the bench step with the first LEDs), `power` (the power budget), `bom` (the parts list),
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
from cribboard.hardware.clearances import (
    BESIDE_USB_CLEARANCE_MM,
    BUTTON_CLEARANCE_MM,
    Clearance,
    clearance_problems,
    clearances,
)
from cribboard.hardware.cutlist import Piece, frame_pieces, panels, stock_length_mm
from cribboard.hardware.generate import GENERATED, default_out, generate, main
from cribboard.hardware.joints import Joints, joint_rows, total_joints
from cribboard.hardware.picture import PNG_PX_PER_MM, board_png, sample_game
from cribboard.hardware.power import NullPixels, PowerFigures, power_figures, power_markdown
from cribboard.hardware.readme import fill_readme, pin_table_markdown, readme_sections
from cribboard.hardware.section import section_svg
from cribboard.hardware.shortchain import BENCH_LEDS, ShortChain, bench_steps
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
    "BESIDE_USB_CLEARANCE_MM",
    "BUTTON_CLEARANCE_MM",
    "Clearance",
    "clearance_problems",
    "clearances",
    "Piece",
    "frame_pieces",
    "panels",
    "stock_length_mm",
    "Joints",
    "joint_rows",
    "total_joints",
    "section_svg",
    "BENCH_LEDS",
    "ShortChain",
    "bench_steps",
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
