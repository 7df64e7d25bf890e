"""`python -m cribboard.hardware`: write every generated file into hardware/ (or check that the
committed ones are up to date)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from cribboard.hardware.boards import BOARD_PROFILES
from cribboard.hardware.bom import read_bom
from cribboard.hardware.picture import board_png
from cribboard.hardware.power import power_figures, power_markdown
from cribboard.hardware.readme import fill_readme, readme_sections
from cribboard.hardware.section import section_svg
from cribboard.hardware.template import template_sheet_svg, template_svg
from cribboard.hardware.wiring import wiring_svg
from cribcore.profiles import PROFILES

GENERATED = (
    "template.svg",
    "template-sheet1.svg",
    "template-sheet2.svg",
    "section.svg",
    "wiring-pico2w.svg",
    "wiring-esp32s3.svg",
    "board.png",
)


def default_out() -> Path:
    """hardware/ of the source checkout this module runs from."""
    here = Path(__file__).resolve().parents[3] / "hardware"
    if not (here / "bom.csv").is_file():
        raise SystemExit(
            "cribboard.hardware: no hardware/ folder beside this package (an "
            "installed copy?); give --out DIR with a bom.csv and README.md in it"
        )
    return here


def generate(
    out: Path, *, png: bool = True, progress: Callable[[str], None] | None = None
) -> list[Path]:
    """Write every generated file into `out` (which holds bom.csv and README.md)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def write_text(name: str, text: str) -> None:
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
        if progress:
            progress(str(path))

    write_text("template.svg", template_svg())
    write_text("template-sheet1.svg", template_sheet_svg(1))
    write_text("template-sheet2.svg", template_sheet_svg(2))
    write_text("section.svg", section_svg())
    for name in BOARD_PROFILES:
        write_text(f"wiring-{name}.svg", wiring_svg(PROFILES[name]))
    if png:
        board_png(out / "board.png")
        written.append(out / "board.png")
        if progress:
            progress(str(out / "board.png"))
    readme = out / "README.md"
    bom = out / "bom.csv"
    if readme.is_file() and bom.is_file():
        text = readme.read_text(encoding="utf-8")
        new = fill_readme(text, readme_sections(read_bom(bom), power_figures()))
        if new != text:
            write_text("README.md", new)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cribboard.hardware",
        description=__doc__,
    )
    parser.add_argument("--out", type=Path, help="folder to write (default: hardware/)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="regenerate into a temporary folder and compare; exit 1 if stale",
    )
    parser.add_argument("--power", action="store_true", help="print the power figures")
    args = parser.parse_args(argv)
    if args.power:
        print(power_markdown(power_figures()))
        return 0
    out = args.out or default_out()
    if args.check:
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            for name in ("bom.csv", "README.md"):
                shutil.copy(out / name, Path(tmp) / name)
            generate(Path(tmp), png=False)
            stale = [
                name
                for name in (*GENERATED[:-1], "README.md")
                if (Path(tmp) / name).read_bytes() != (out / name).read_bytes()
            ]
        if stale:
            print("out of date: " + ", ".join(stale) + " (run: make hardware)", file=sys.stderr)
            return 1
        print("hardware/ is up to date (board.png not compared)")
        return 0
    generate(out, progress=lambda p: print("wrote", p))
    return 0
