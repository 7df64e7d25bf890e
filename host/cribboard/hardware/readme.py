"""The generated parts of hardware/README.md: each lies between `<!-- generated:NAME -->` and
`<!-- /generated:NAME -->` and is rewritten from the data (parts, joints, clearances, cut list,
the bench step, pins, power)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from cribboard.hardware.boards import BOARD_PROFILES, BUTTON_NAMES, pin_label, power_labels
from cribboard.hardware.bom import bom_markdown
from cribboard.hardware.case import CASE, Case
from cribboard.hardware.clearances import clearances_markdown
from cribboard.hardware.cutlist import cutlist_markdown
from cribboard.hardware.joints import effort_line, joints_markdown
from cribboard.hardware.power import (
    PowerFigures,
    board_draw_markdown,
    power_markdown,
    selftest_markdown,
)
from cribboard.hardware.shortchain import bench_markdown
from cribcore.profiles import PROFILES, Profile


def pin_table_markdown(profile: Profile) -> str:
    v5, gnd = power_labels(profile)
    rows = [
        ("LED data", pin_label(profile, profile.led_pin), "74AHCT125 pin 2 (1A)"),
        ("+5 V", v5, "+5 V rail: every LED's VDD, 74AHCT125 pins 14, 4, 10, 13, 1000 µF (+)"),
        ("GND", gnd, "GND rail: every LED's GND, 74AHCT125 pins 1, 7, 5, 9, 12, 1000 µF (-)"),
    ]
    for name in BUTTON_NAMES:
        gpio = profile.buttons.get(name)
        if gpio is not None:
            extra = " (three players only)" if name.startswith("C") else ""
            rows.append(
                (
                    f"button {name}{extra}",
                    pin_label(profile, gpio),
                    "one leg of the button; the other leg to GND",
                )
            )
    if profile.status_led == "LED":
        rows.append(("status LED", "on-board LED", "nothing to wire"))
    elif profile.status_led is not None:
        rows.append(
            (
                "status LED",
                pin_label(profile, int(profile.status_led)),
                "1 kΩ resistor, LED anode; LED cathode to GND",
            )
        )
    out = ["| function | board pin | wire to |", "| --- | --- | --- |"]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(out)


def readme_sections(
    bom: Sequence[Mapping[str, str]], power: PowerFigures, case: Case = CASE
) -> dict[str, str]:
    """The generated parts of hardware/README.md, by marker name."""
    sections = {
        "effort": effort_line(),
        "bom": bom_markdown(bom),
        "joints": joints_markdown(),
        "clearances": clearances_markdown(case),
        "cutlist": cutlist_markdown(case),
        "bench": bench_markdown(),
        "power": power_markdown(power),
        "selftest-power": selftest_markdown(power),
        "board-power": board_draw_markdown(power),
    }
    for name in BOARD_PROFILES:
        sections["pins-" + name] = pin_table_markdown(PROFILES[name])
    return sections


def fill_readme(text: str, sections: Mapping[str, str]) -> str:
    """Replace the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`."""
    for name, content in sections.items():
        pattern = re.compile(
            rf"(<!-- generated:{re.escape(name)} -->\n)(?:.*?\n)??"
            rf"(<!-- /generated:{re.escape(name)} -->)",
            re.S,
        )
        text, count = pattern.subn(
            lambda m: m.group(1) + content + "\n" + m.group(2),  # noqa: B023 (used at once)
            text,
        )
        if count != 1:
            raise ValueError(f"README needs one generated:{name} section (found {count})")
    return text
