"""The hardware package: board profiles against their chips, the drilling template against the
layout, the parts list, the power figures, and the generated files being up to date."""

from __future__ import annotations

import csv
import os
import random
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from cribboard import hardware as hw
from cribboard.discovery import known_usb_ids
from cribboard.hardware import svg
from cribboard.hardware.cutlist import cutlist_markdown
from cribboard.virtual.interpreter import find_micropython
from cribcore import layout as L
from cribcore import profiles as P
from cribcore.limits import MAX_BUDGET_MA, MIN_BUDGET_MA
from cribcore.render import DEFAULT_BUDGET_MA, Renderer
from cribcore.state import GameState
from cribfw.panel import PLAYER_KEYS

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "hardware"
SVG = "{http://www.w3.org/2000/svg}"
BOARDS = ("pico2w", "esp32s3", "picow", "pico")  # every board profile
DRAWN = ("pico2w", "esp32s3")  # the maker's guide draws these; the other Picos are wired alike


# --- board profiles ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", BOARDS)
def test_profile_pins_exist_are_free_and_used_once(name: str) -> None:
    assert hw.profile_problems(P.PROFILES[name]) == []


def test_every_board_profile_has_its_chip_and_drawings() -> None:
    assert set(hw.BOARD_INFO) == set(P.PROFILES) - {"sim"} == set(BOARDS)
    assert all(info.chip in hw.CHIPS for info in hw.BOARD_INFO.values())
    assert hw.profile_problems(P.PROFILES["sim"]) == []  # names and reuse only: no chip
    assert hw.BOARD_PROFILES == DRAWN


@pytest.mark.parametrize("name", ["picow", "pico"])
def test_a_board_wired_as_another_has_exactly_its_pins(name: str) -> None:
    """The Pico and Pico W are built from the Pico 2 W's drawing and pin table."""
    drawn = hw.BOARD_INFO[name].wired_as
    assert drawn in hw.BOARD_PROFILES
    mine, theirs = P.PROFILES[name], P.PROFILES[drawn]
    assert (mine.led_pin, mine.buttons, mine.status_led) == (
        theirs.led_pin,
        theirs.buttons,
        theirs.status_led,
    )


def test_the_pico_without_wireless_keeps_off_its_own_board_pins() -> None:
    pico = hw.CHIPS["pico"]
    assert set(pico.reserved) == {23, 24, 25, 29}
    assert "LED" in pico.reserved[25]


def test_the_platform_facts_are_in_the_chip_data() -> None:
    """DESIGN.md section 5, literally: the pins no profile may use."""
    pico = hw.CHIPS["pico-w"]
    assert {23, 24, 25, 29} <= set(pico.reserved)
    assert pico.gpios == frozenset(range(30))
    s3 = hw.CHIPS["esp32s3"]
    assert {0, 3, 45, 46} <= set(s3.reserved)  # strapping
    assert {19, 20} <= set(s3.reserved)  # USB
    assert set(range(26, 38)) <= set(s3.reserved)  # module flash and (octal) PSRAM
    assert not {22, 23, 24, 25} & s3.gpios  # do not exist on the S3


@pytest.mark.parametrize(
    "change, problem",
    [
        (dict(led_pin=25), "reserved"),  # the Pico W's wireless chip select
        (dict(buttons={"A+": 2, "A-": 2, "B+": 4, "B-": 5, "deal": 6}), "used twice"),
        (dict(led_pin=30), "does not exist"),
        (dict(buttons={"A+": 2, "A-": 3, "B+": 4, "B-": 5, "deal": 6, "new": 7}), "unknown button"),
        (dict(buttons={"A+": 2, "A-": 3, "B+": 4, "B-": 5}), "no deal button"),
        (dict(usb_ids=((0x303A, 0x4001),)), "vendor id"),
        (dict(status_led="LED_BUILTIN"), "status LED"),
    ],
)
def test_a_bad_pico_profile_is_caught(change: dict[str, object], problem: str) -> None:
    base = P.PROFILES["pico2w"]
    fields: dict[str, object] = dict(
        name="bad",
        led_pin=base.led_pin,
        buttons=base.buttons,
        budget_ma=base.budget_ma,
        usb_ids=base.usb_ids,
        status_led=base.status_led,
    )
    fields.update(change)
    problems = hw.profile_problems(P.Profile(**fields), "pico-w")
    assert any(problem in p for p in problems), problems


@pytest.mark.parametrize(
    "gpio, problem",
    [
        (0, "strapping"),
        (19, "USB"),
        (20, "USB"),
        (26, "flash"),
        (35, "PSRAM"),
        (46, "strapping"),
        (22, "does not exist"),
        (43, "UART"),
    ],
)
def test_a_bad_esp32s3_pin_is_caught(gpio: int, problem: str) -> None:
    base = P.PROFILES["esp32s3"]
    bad = P.Profile("bad", gpio, base.buttons, base.budget_ma, base.usb_ids)
    problems = hw.profile_problems(bad, "esp32s3")
    assert any(problem in p for p in problems), problems


def test_usb_ids_are_micropythons() -> None:
    """rp2 port: 2E8A:0005 on every Pico build; esp32 port on the S3's native USB (TinyUSB CDC):
    303A:4001, and 303A:1001 when the REPL is on the chip's USB-Serial/JTAG."""
    for name in ("pico2w", "picow", "pico"):
        assert P.PROFILES[name].usb_ids == ((0x2E8A, 0x0005),)
    assert P.PROFILES["esp32s3"].usb_ids == ((0x303A, 0x4001), (0x303A, 0x1001))
    assert known_usb_ids() == {
        (0x2E8A, 0x0005): "pico2w/picow/pico",
        (0x303A, 0x4001): "esp32s3",
        (0x303A, 0x1001): "esp32s3",
    }


def test_button_names_are_the_panels() -> None:
    panel_names = {k + s for k in PLAYER_KEYS for s in "+-"} | {"deal"}
    assert set(hw.BUTTON_NAMES) == panel_names
    for profile in P.PROFILES.values():
        assert set(profile.buttons) <= panel_names
        assert len(set(profile.buttons.values())) == len(profile.buttons), profile.name
        assert profile.led_pin not in profile.buttons.values(), profile.name


def test_budgets_fit_a_usb_port_and_the_protocol() -> None:
    for profile in P.PROFILES.values():
        assert 150 <= profile.budget_ma <= 450, profile.name  # 500 mA port less the controller
        assert profile.budget_ma <= MAX_BUDGET_MA
    assert P.PROFILES["pico2w"].budget_ma == DEFAULT_BUDGET_MA


@pytest.mark.parametrize(
    "platform, name", [("rp2", "pico"), ("esp32", "esp32s3"), ("linux", "sim")]
)
def test_detect_picks_the_profile_by_platform(
    monkeypatch: pytest.MonkeyPatch, platform: str, name: str
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    if platform == "rp2":
        monkeypatch.setattr(
            sys.implementation, "_machine", "Raspberry Pi Pico with RP2040", raising=False
        )
    assert P.detect().name == name


@pytest.mark.parametrize(
    "machine, name",
    [  # sys.implementation._machine as MicroPython v1.28.0's rp2 builds report it
        ("Raspberry Pi Pico with RP2040", "pico"),
        ("Raspberry Pi Pico W with RP2040", "picow"),
        ("Raspberry Pi Pico 2 W with RP2350", "pico2w"),
        ("Raspberry Pi Pico 2 with RP2350", "pico"),  # no wireless: the Pico's profile
        ("Pimoroni Tiny 2040 with RP2040", "pico"),  # another rp2 board
    ],
)
def test_an_rp2_board_gets_the_profile_of_its_name(
    monkeypatch: pytest.MonkeyPatch, machine: str, name: str
) -> None:
    monkeypatch.setattr(sys, "platform", "rp2")
    monkeypatch.setattr(sys.implementation, "_machine", machine, raising=False)
    assert P.rp2_profile_name(machine) == name
    assert P.detect().name == name


def test_profiles_load_on_micropython() -> None:
    result = subprocess.run(
        [
            str(find_micropython()),
            "-c",
            "import cribcore.profiles as p; print(p.detect().name, sorted(p.PROFILES), "
            "p.PROFILES['pico2w'].status_led)",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env=dict(os.environ, MICROPYPATH=f"{ROOT / 'firmware'}:.frozen"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "sim",
        "['esp32s3',",
        "'pico',",
        "'pico2w',",
        "'picow',",
        "'sim']",
        "LED",
    ]


# --- the drilling template -----------------------------------------------------------------------


def _svg(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


def _mm(root: ET.Element) -> tuple[float, float, float, float]:
    """The viewBox, after checking that one user unit is one millimetre."""
    vb = [float(v) for v in root.attrib["viewBox"].split()]
    assert root.attrib["width"] == f"{svg.number(vb[2])}mm"
    assert root.attrib["height"] == f"{svg.number(vb[3])}mm"
    return vb[0], vb[1], vb[2], vb[3]


def _holes(root: ET.Element) -> dict[int, tuple[float, float, float, int]]:
    board = root.find(f".//{SVG}g[@id='board']")
    assert board is not None and "transform" not in board.attrib
    holes = {}
    for c in board.iter(f"{SVG}circle"):
        if c.attrib.get("class") == "hole":
            holes[int(c.attrib["data-hole"])] = (
                float(c.attrib["cx"]),
                float(c.attrib["cy"]),
                float(c.attrib["r"]),
                int(c.attrib["data-led"]),
            )
    return holes


def test_template_holes_are_the_layouts_holes() -> None:
    root = _svg(HARDWARE / "template.svg")
    _mm(root)
    holes = _holes(root)
    assert sorted(holes) == list(range(L.HOLES))
    for hole, (x, y, r, led) in holes.items():
        assert (x, y) == L.hole_xy_mm(hole)
        assert 2 * r == L.LED_HOLE_DIAMETER_MM
        assert led == L.LED_OF_HOLE[hole]
        assert 0 < x - r and x + r < L.BOARD_WIDTH_MM and 0 < y - r and y + r < L.BOARD_HEIGHT_MM


def test_template_has_four_rows_of_thirty_in_groups_of_five_and_the_win_hole() -> None:
    holes = _holes(_svg(HARDWARE / "template.svg"))
    rows: dict[float, list[float]] = {}
    for hole, (x, y, _r, _led) in holes.items():
        if hole != L.WIN_HOLE:
            rows.setdefault(y, []).append(x)
    assert len(rows) == 4 and all(len(xs) == 30 for xs in rows.values())
    for xs in rows.values():
        gaps = [b - a for a, b in zip(sorted(xs), sorted(xs)[1:])]
        assert gaps.count(L.PITCH_MM) == 24 and gaps.count(L.PITCH_MM + L.GROUP_GAP_MM) == 5
    wx, wy = holes[L.WIN_HOLE][:2]
    assert wx < min(min(xs) for xs in rows.values())  # at the start end
    ys = sorted(rows)
    assert ys[1] < wy < ys[2]  # between the two players' rows


def test_template_outline_scale_bar_buttons_and_connector() -> None:
    root = _svg(HARDWARE / "template.svg")
    board = root.find(f".//{SVG}g[@id='board']")
    assert board is not None
    cut = [r for r in board.iter(f"{SVG}rect") if r.attrib.get("class") == "cut"]
    assert [(float(r.attrib["width"]), float(r.attrib["height"])) for r in cut] == [
        (L.BOARD_WIDTH_MM, L.BOARD_HEIGHT_MM)
    ]
    bar = [r for r in root.iter(f"{SVG}rect") if r.attrib.get("width") == "100"]
    assert bar, "no 100 mm scale bar"
    buttons = {
        c.attrib["data-button"]: (
            float(c.attrib["cx"]),
            float(c.attrib["cy"]),
            float(c.attrib["r"]),
        )
        for c in board.iter(f"{SVG}circle")
        if c.attrib.get("class") == "button"
    }
    assert set(buttons) == set(hw.BUTTON_NAMES)
    frame = hw.CASE.frame_mm  # the case's side walls sit under the panel's edges
    for name, (x, y, r) in buttons.items():
        assert 2 * r == hw.CASE.button_hole_mm
        assert x - r - 1.5 > frame and y - r - 1.5 > frame, name  # 1.5: the nut's overhang
        assert x + r + 1.5 < L.BOARD_WIDTH_MM - frame and y + r + 1.5 < L.BOARD_HEIGHT_MM - frame
        for hole in range(L.HOLES):
            hx, hy = L.hole_xy_mm(hole)
            # room for the button's nut (10 mm) beside an LED's flange (5.8 mm) under the panel
            assert ((hx - x) ** 2 + (hy - y) ** 2) ** 0.5 >= 5 + 2.9 + 2, (name, hole)
    assert any(r.attrib.get("class") == "connector" for r in board.iter(f"{SVG}rect"))


@pytest.mark.parametrize("sheet", [1, 2])
def test_template_sheets_fit_a4_and_letter(sheet: int) -> None:
    _x, _y, width, height = _mm(_svg(HARDWARE / f"template-sheet{sheet}.svg"))
    # US Letter landscape less 6.35 mm margins is the smaller of the two: 266.7 x 203.2 mm
    assert width <= 266.7 and height <= 203.2


def test_template_sheets_show_every_hole_and_overlap() -> None:
    seen: set[int] = set()
    spans = []
    for sheet in (1, 2):
        root = _svg(HARDWARE / f"template-sheet{sheet}.svg")
        x0, _y0, width, _h = _mm(root)
        spans.append((x0, x0 + width))
        for hole, (x, _y, r, _led) in _holes(root).items():
            if x0 <= x - r and x + r <= x0 + width:
                seen.add(hole)
    assert seen == set(range(L.HOLES))
    assert spans[1][0] + hw.SHEET_OVERLAP_MM <= spans[0][1]


# --- the parts list ------------------------------------------------------------------------------


def _bom() -> list[dict[str, str]]:
    with (HARDWARE / "bom.csv").open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == hw.BOM_COLUMNS
        return list(reader)


def _rows(bom: list[dict[str, str]], pattern: str) -> list[dict[str, str]]:
    return [r for r in bom if re.search(pattern, r["part"] + " " + r["order"], re.I)]


def test_bom_rows_are_numbered_and_counted() -> None:
    bom = _bom()
    assert [int(r["item"]) for r in bom] == list(range(1, len(bom) + 1))
    for row in bom:
        assert int(row["qty"]) > 0, row
        assert row["build"] in {"all", "optional", "3-player", *BOARDS}, row
        assert row["part"] and row["order"], row


def test_bom_has_what_the_board_needs() -> None:
    bom = _bom()
    leds = _rows(bom, r"addressable RGB LED")
    assert len(leds) == 1 and int(leds[0]["qty"]) == L.HOLES
    assert f"{L.LED_HOLE_DIAMETER_MM} mm" in leds[0]["part"]  # the holes the template drills
    assert "WS2812" in leds[0]["order"]
    caps = _rows(bom, r"100 nF")
    assert int(caps[0]["qty"]) == L.HOLES + 1  # one per LED, one at the buffer
    assert _rows(bom, r"74AHCT125") and _rows(bom, r"330 Ω") and _rows(bom, r"1000 µF")
    buttons = _rows(bom, r"push button")
    assert sum(int(r["qty"]) for r in buttons if r["build"] == "all") == 5
    assert sum(int(r["qty"]) for r in buttons) == len(hw.BUTTON_NAMES)
    for name in DRAWN:
        assert [r for r in bom if r["build"] == name and "microcontroller" in r["part"]], name
    assert _rows(bom, r"USB-C")
    size = f"{L.BOARD_WIDTH_MM} x {L.BOARD_HEIGHT_MM} mm"
    panels = {r["part"]: r["order"] for r in bom if r["part"].endswith("panel")}
    assert size in panels["top panel"] and size in panels["back panel"]


# --- power ---------------------------------------------------------------------------------------


def test_the_limiter_keeps_any_frame_within_the_budget() -> None:
    rng = random.Random(6)
    renderer = Renderer(hw.NullPixels(), brightness=255)
    for _ in range(300):
        lit = rng.randint(0, L.HOLES)
        frame = bytearray(3 * L.HOLES)
        for hole in rng.sample(range(L.HOLES), lit):
            frame[3 * hole : 3 * hole + 3] = bytes(rng.randint(0, 255) for _ in range(3))
        renderer.load_frame(frame)
        renderer.show()
        assert renderer.estimated_ma <= DEFAULT_BUDGET_MA


def test_power_figures() -> None:
    p = hw.power_figures()
    assert p.idle_ma == L.HOLES
    assert p.default_ma < p.budget_ma  # the default brightness needs no limiting
    assert p.full_natural_ma > p.budget_ma >= p.full_ma  # full brightness does
    assert p.white_natural_ma == 55 * L.HOLES + L.HOLES and p.white_ma <= p.budget_ma
    assert p.budget_ma + 100 <= 500  # leaves the controller 100 mA of a 500 mA port


def test_the_self_test_reading_is_the_power_tables_own() -> None:
    """Step 8's expected reading on a USB power meter comes from the same figures as the power
    table: the LEDs' idle draw, the one lit LED and the controller, never less than the LEDs
    alone draw (the guide once said "well under 100 mA" beside a table giving 121 mA idle)."""
    from cribboard.hardware.boards import BOARD_INFO

    p = hw.power_figures()
    lit = p.selftest_ma - p.idle_ma
    assert p.idle_ma == L.HOLES and 20 <= lit <= 55 // 2 + 1  # one LED white, default brightness
    text = (HARDWARE / "README.md").read_text(encoding="utf-8")
    section = text.split("<!-- generated:selftest-power -->")[1].split("<!-- /generated")[0]
    low, high = map(int, re.search(r"should read about (\d+)-(\d+) mA", section).groups())
    draws = [info.draw.running for info in BOARD_INFO.values()]
    assert (low, high) == (p.selftest_ma + min(draws), p.selftest_ma + max(draws))
    assert low > p.selftest_ma and f"{p.idle_ma} mA" in section and f"{lit} mA" in section
    assert "well under 100 mA" not in text


def test_the_whole_board_on_usb_with_wifi() -> None:
    """Every controller's row adds its own draw to the LEDs'; a Wi-Fi board's club-hall draw
    is there, and where it passes a USB port's 500 mA the note gives a budget that fits."""
    from cribboard.hardware.boards import BOARD_INFO
    from cribboard.hardware.power import USB_PORT_MA, board_draw_markdown

    p = hw.power_figures()
    table = board_draw_markdown(p)
    text = (HARDWARE / "README.md").read_text(encoding="utf-8")
    assert table in text
    for info in BOARD_INFO.values():
        draw = info.draw
        row = next(line for line in table.splitlines() if line.startswith(f"| {info.title} |"))
        assert f"| {draw.running} mA | {draw.running + p.default_ma} mA |" in row
        assert f"| {draw.running + p.budget_ma} mA |" in row
        if not draw.wifi:
            assert row.endswith("| no Wi-Fi |")
            continue
        worst = draw.running + p.budget_ma + draw.wifi
        assert f"+{draw.wifi} mA" in row and f"{worst} mA at worst" in row
        if worst > USB_PORT_MA:
            note = re.search(rf"- {re.escape(info.title)}: .*`cribboard budget (\d+)`", table)
            assert note is not None
            fits = int(note.group(1))
            assert MIN_BUDGET_MA <= fits and draw.running + draw.wifi + fits <= USB_PORT_MA


# --- the generated files -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hardware")
    for name in ("bom.csv", "README.md"):
        shutil.copy(HARDWARE / name, out / name)
    assert hw.main(["--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("name", [n for n in hw.GENERATED if n.endswith(".svg")] + ["README.md"])
def test_generated_file_is_up_to_date(regenerated: Path, name: str) -> None:
    assert (regenerated / name).read_text(encoding="utf-8") == (HARDWARE / name).read_text(
        encoding="utf-8"
    ), f"hardware/{name} is stale: make hardware"


def test_board_picture_is_up_to_date(regenerated: Path) -> None:
    """Compared by pixels, with a little slack: another Pillow or zlib may differ by a shade."""
    from PIL import Image, ImageChops, ImageStat

    new = Image.open(regenerated / "board.png").convert("RGB")
    old = Image.open(HARDWARE / "board.png").convert("RGB")
    assert new.size == old.size
    diff = ImageChops.difference(new, old)
    assert max(ImageStat.Stat(diff).mean) < 1.0, "hardware/board.png is stale: make hardware"
    assert new.size == (
        (L.BOARD_WIDTH_MM + 20) * hw.PNG_PX_PER_MM,
        (L.BOARD_HEIGHT_MM + 20) * hw.PNG_PX_PER_MM,
    )


def test_check_reports_a_stale_file(tmp_path: Path) -> None:
    for name in ("bom.csv", "README.md", *hw.GENERATED):
        shutil.copy(HARDWARE / name, tmp_path / name)
    assert hw.main(["--out", str(tmp_path), "--check"]) == 0
    text = (tmp_path / "template.svg").read_text(encoding="utf-8")
    (tmp_path / "template.svg").write_text(text.replace('r="2.5"', 'r="2.4"', 1), encoding="utf-8")
    assert hw.main(["--out", str(tmp_path), "--check"]) == 1


def test_readme_sections_are_filled_from_the_data() -> None:
    text = (HARDWARE / "README.md").read_text(encoding="utf-8")
    for name in DRAWN:
        section = text.split(f"<!-- generated:pins-{name} -->")[1].split("<!-- /generated")[0]
        profile = P.PROFILES[name]
        assert hw.pin_label(profile, profile.led_pin) in section
        for gpio in profile.buttons.values():
            assert hw.pin_label(profile, gpio) in section
    assert "| 3 | 121 | all |" in text  # the parts table
    p = hw.power_figures()
    assert f"**{p.default_ma} mA**" in text and f"**{p.full_ma} mA**" in text


def test_readme_tells_a_maker_how_to_bring_the_board_up() -> None:
    text = (HARDWARE / "README.md").read_text(encoding="utf-8")
    for needle in (
        "100 %",
        "scale bar",
        "BOOTSEL",
        "RPI_PICO2_W",
        "ESP32_GENERIC_S3",
        "esptool --chip esp32s3 --port",
        "erase-flash",
        "write-flash -z 0",
        "cribboard deploy",
        "cribboard test",
        "74AHCT125",
        "330 Ω",
        "1000 µF",
        "500 mA",
        "CRIBBOARD_HIL_PORT",
        "make hardware",
    ):
        assert needle in text, needle
    for name in (
        "board.png",
        "template.svg",
        "template-sheet1.svg",
        "template-sheet2.svg",
        "wiring-pico2w.svg",
        "wiring-esp32s3.svg",
        "section.svg",
        "bom.csv",
    ):
        assert f"({name})" in text, name


def test_wiring_diagrams_name_every_profile_pin() -> None:
    for name in DRAWN:
        text = (HARDWARE / f"wiring-{name}.svg").read_text(encoding="utf-8")
        ET.fromstring(text)  # well-formed
        profile = P.PROFILES[name]
        assert hw.pin_label(profile, profile.led_pin) in text
        for gpio in profile.buttons.values():
            assert hw.pin_label(profile, gpio) in text
        for line in hw.chain_description():
            assert line in text


# --- the maker's guide: clearances, cut list, section, joints, bench step ------------------------


def test_every_button_has_its_room_from_the_frame() -> None:
    """7 mm from a button's centre to the frame's inside face; 6 mm for the three-player buttons
    beside the USB-C socket (at the left end). Worked out here from the positions alone."""
    assert (hw.BUTTON_CLEARANCE_MM, hw.BESIDE_USB_CLEARANCE_MM) == (7, 6)
    case = hw.CASE
    inside = (case.frame_mm, case.width_mm - case.frame_mm)  # x of the left and right faces
    for name, (x, y) in case.button_positions().items():
        room = min(
            x - inside[0], inside[1] - x, y - case.frame_mm, case.height_mm - case.frame_mm - y
        )
        assert room >= (6 if name in ("C+", "C-") else 7), name
    assert hw.clearance_problems(case) == []
    by_name = {c.button: c for c in hw.clearances(case)}
    assert {n: c.required_mm for n, c in by_name.items() if c.required_mm == 6} == {
        "C+": 6,
        "C-": 6,
    }
    assert by_name["A+"].faces == ("right", "top") and by_name["C-"].faces == ("left",)


@pytest.mark.parametrize(
    "change, too_close",
    [
        (dict(frame_mm=10), {"A+", "A-", "deal", "B-", "B+", "C-", "C+"}),
        (dict(button_inset_mm=15), {"A+", "A-", "deal", "B-", "B+"}),
        (dict(margin_x_mm=28), {"C-", "C+"}),
        (dict(button_pitch_mm=15), {"A+", "B+", "C+"}),
    ],
)
def test_a_button_too_close_to_the_frame_is_caught(
    change: dict[str, float], too_close: set[str]
) -> None:
    case = replace(hw.CASE, **change)  # type: ignore[arg-type]
    problems = hw.clearance_problems(case)
    assert {p.split(":")[0].removeprefix("button ") for p in problems} == too_close, problems


def test_the_template_shows_the_frame_and_each_buttons_room() -> None:
    def marks(text: str) -> tuple[ET.Element, dict[tuple[str, str], float]]:
        root = ET.fromstring(text)
        found = {
            (g.attrib["data-button"], g.attrib["data-face"]): float(g.attrib["data-mm"])
            for g in root.iter(f"{SVG}g")
            if g.attrib.get("class") == "clearance"
        }
        return root, found

    root, found = marks((HARDWARE / "template.svg").read_text(encoding="utf-8"))
    expected = {(c.button, f): c.distance_mm for c in hw.clearances(hw.CASE) for f in c.faces}
    assert found == expected and len(found) == 9  # A+ and B+ sit in corners: two faces each
    frame = [r for r in root.iter(f"{SVG}rect") if r.attrib.get("class") == "frame"]
    assert [(float(r.attrib["x"]), float(r.attrib["width"])) for r in frame] == [
        (hw.CASE.frame_mm, hw.CASE.width_mm - 2 * hw.CASE.frame_mm)
    ]
    _, moved = marks(hw.template_svg(replace(hw.CASE, frame_mm=8)))
    assert moved[("deal", "right")] == 8 and moved[("C-", "left")] == 7


def test_the_cut_list_follows_the_board() -> None:
    case = hw.CASE
    butt = {p.name: p for p in hw.frame_pieces(case, "butt")}
    mitre = {p.name: p for p in hw.frame_pieces(case, "mitre")}
    assert (butt["side"].length_mm, butt["end"].length_mm) == (380, 88 - 2 * 9)
    assert (mitre["side"].length_mm, mitre["end"].length_mm) == (380, 88)
    for piece in [*butt.values(), *mitre.values()]:
        assert piece.qty == 2
        assert (piece.width_mm, piece.thickness_mm) == (case.frame_height_mm, case.frame_mm)
    # the frame's outside is the top panel's outline, either way
    assert butt["side"].length_mm == case.width_mm == mitre["side"].length_mm
    assert butt["end"].length_mm + 2 * case.frame_mm == case.height_mm == mitre["end"].length_mm
    assert hw.stock_length_mm(case, "butt") == 2 * 380 + 2 * 70 + 5 * case.kerf_mm
    assert {p.name: p.thickness_mm for p in hw.panels(case)} == {"top panel": 6, "back panel": 3}
    wider = replace(case, width_mm=400, frame_mm=12)
    assert [p.length_mm for p in hw.frame_pieces(wider, "butt")] == [400, 88 - 24]
    assert "| butt | end | 2 | 64 mm |" in cutlist_markdown(wider)
    with pytest.raises(ValueError, match="joint"):
        hw.frame_pieces(case, "dovetail")


def _section(text: str) -> dict[str, object]:
    root = ET.fromstring(text)
    dims = {
        g.attrib["data-what"]: float(g.attrib["data-mm"])
        for g in root.iter(f"{SVG}g")
        if g.attrib.get("class") == "dimension"
    }
    rects: dict[str, list[tuple[float, float, float, float]]] = {}
    for r in root.iter(f"{SVG}rect"):
        kind = r.attrib.get("class")
        if kind:
            box = tuple(float(r.attrib[k]) for k in ("x", "y", "width", "height"))
            rects.setdefault(kind, []).append(box)  # type: ignore[arg-type]
    leds = [p for p in root.iter(f"{SVG}path") if p.attrib.get("class") == "led"]
    return {"dims": dims, "rects": rects, "leds": len(leds)}


def test_the_side_section_is_drawn_from_the_case() -> None:
    case = hw.CASE
    drawn = _section((HARDWARE / "section.svg").read_text(encoding="utf-8"))
    assert drawn["dims"] == {
        "hole depth": case.panel_mm,
        "proud": round(case.led_height_mm - case.led_flange_thickness_mm - case.panel_mm, 2),
        "panel": 6,
        "frame height": 34,
        "back": 3,
        "depth": 43,
        "frame thickness": 9,
        "width": L.BOARD_HEIGHT_MM,
    }
    rects = drawn["rects"]
    assert isinstance(rects, dict)
    # the panel is cut through at each row's hole, the holes where the layout has them
    panel = sorted(rects["panel"])
    gaps = [(a[0] + a[2], b[0]) for a, b in zip(panel, panel[1:])]
    rows = [L.hole_xy_mm(row * L.COLS)[1] for row in range(L.ROWS)]
    assert gaps == [(y - 2.5, y + 2.5) for y in rows]
    assert all(box[3] == case.panel_mm for box in panel)
    assert sorted(box[0] for box in rects["frame"]) == [0, case.height_mm - case.frame_mm]
    assert rects["back"] == [(0, case.panel_mm + case.frame_height_mm, case.height_mm, 3)]
    assert len(rects["flange"]) == L.ROWS == drawn["leds"]
    assert {box[1] for box in rects["flange"]} == {case.panel_mm}  # flange against the underside
    # another panel: deeper holes, the LEDs less proud, the case taller
    thinner = _section(hw.section_svg(replace(case, panel_mm=5, frame_height_mm=30)))
    assert thinner["dims"] == {
        **drawn["dims"],  # type: ignore[dict-item]
        "hole depth": 5,
        "panel": 5,
        "proud": 2.6,
        "frame height": 30,
        "depth": 38,
    }


def test_the_joint_count_comes_from_the_parts() -> None:
    pico, s3 = P.PROFILES["pico2w"], P.PROFILES["esp32s3"]
    rows = {row.what.split(",")[0].split(" (")[0]: row for row in hw.joint_rows(pico)}
    bom = _bom()
    assert rows["addressable LED"].count == int(_rows(bom, r"addressable RGB LED")[0]["qty"])
    caps = (
        rows["100 nF capacitor beside each LED"].count
        + rows["100 nF capacitor at the 74AHCT125"].count
    )
    assert caps == int(_rows(bom, r"100 nF")[0]["qty"])
    buttons = {r["build"]: int(r["qty"]) for r in _rows(bom, r"push button")}
    assert rows["push button"].count == buttons["all"] == 5
    two = hw.total_joints(pico)
    assert two == 121 * 4 + 121 * 2 + 2 + 14 + 2 + 2 + 5 * 2 + 40 + 11 * 2 + 4 + 5 == 827
    assert hw.total_joints(pico, players=3) == two + buttons["3-player"] * 3  # 2 lugs, 1 wire
    assert hw.total_joints(s3) == two + 4  # the DevKitC's 2 x 22 header sockets
    assert hw.total_joints(pico, leds=120) == two - 6  # 4 leads, a capacitor's 2
    fewer = P.Profile("pico2w", 16, {k: v for k, v in pico.buttons.items() if k != "deal"}, 400, ())
    assert hw.total_joints(fewer) == two - 3
    text = (HARDWARE / "README.md").read_text(encoding="utf-8")
    assert f"**{two} joints**" in text and "about 600" not in text


def test_a_short_chain_shows_what_the_full_chain_shows_on_its_leds() -> None:
    """The bench step's model: the firmware's whole frame sent down five LEDs shows, on those
    five, exactly what a full chain shows on its first five; the rest runs off the end."""
    rng = random.Random(7)
    short, full = hw.ShortChain(5), hw.ShortChain(L.HOLES)
    for _ in range(50):
        board = GameState()
        board.peg(0, rng.randint(1, 29))
        board.peg(1, rng.randint(1, 29))
        for chain in (short, full):
            Renderer(chain).render(board, rng.randrange(2000))
        assert short.shown == full.shown[:5]


def test_the_firmware_drives_the_whole_chain_whatever_is_connected() -> None:
    """What the guide says of a short chain: the app makes its NeoPixel for all the holes."""
    import ast

    tree = ast.parse((ROOT / "firmware" / "cribfw" / "app.py").read_text(encoding="utf-8"))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "NeoPixel"
    ]
    assert len(calls) == 1 and ast.unparse(calls[0].args[1]) == "HOLES" and L.HOLES == 121


def test_the_bench_step_says_what_five_leds_show() -> None:
    steps = dict(hw.bench_steps())
    assert steps["cribboard test"].startswith(
        "LED 1, LED 2, LED 3, LED 4, LED 5 light white one after another; then 116 steps"
    )
    # blue pegs 3 then 2: where the layout puts those scores, and back peg dimmer than front
    third = L.LED_OF_HOLE[L.hole_for_score(2, 0, 3, 121)] + 1
    fifth = L.LED_OF_HOLE[L.hole_for_score(2, 0, 5, 121)] + 1
    assert steps["cribboard peg blue 3"].startswith(f"LED {third} blue")
    assert steps["cribboard peg blue 2"].startswith(f"LED {third} dim blue, LED {fifth} blue")
    orange = L.LED_OF_HOLE[L.hole_for_score(2, 1, 4, 121)] + 1
    assert f"also lights LED {orange}, LED 121" in steps["cribboard peg orange 4"]
    assert dict(hw.bench_steps(leds=10))["cribboard test"].startswith(
        "LED 1, LED 2, LED 3, LED 4, LED 5, LED 6, LED 7, LED 8, LED 9, LED 10 light"
    )
    text = (HARDWARE / "README.md").read_text(encoding="utf-8")
    bench = text.split("## 6. Bench test")[1].split("## 7.")[0]
    for needle in ("cribboard test", "cribboard peg blue 3", "neopixel.NeoPixel(pin, 121)", "DOUT"):
        assert needle in bench, needle
    assert text.index("## 6. Bench test") < text.index("## 7. Seat and chain the LEDs")
    assert "(section.svg)" in text
