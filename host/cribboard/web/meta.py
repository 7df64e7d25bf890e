"""The board's fixed data as JSON for the web page and other clients, generated from the one
source (`cribcore`): the hole layout (GET /layout.json) and the protocol's constants
(GET /protocol.json, which the page's JavaScript codec reads instead of keeping a copy)."""

from __future__ import annotations

from typing import Any

from cribboard import wire
from cribboard.boarddata import MATCH_KINDS
from cribboard.names import PLAYER_NAMES, colour_hex
from cribcore import layout, limits, protocol, render


def layout_json() -> dict[str, Any]:
    """Every hole with its centre in millimetres (origin: the board's top-left corner), its row,
    column and LED; the tracks; the players' colours."""
    holes = []
    for hole in range(layout.HOLES):
        x, y = layout.hole_xy_mm(hole)
        holes.append(
            {
                "id": hole,
                "x": x,
                "y": y,
                "row": layout.hole_row(hole),
                "col": layout.hole_col(hole),
                "led": layout.LED_OF_HOLE[hole],
            }
        )
    return {
        "layout": "crib121",
        "width_mm": layout.BOARD_WIDTH_MM,
        "height_mm": layout.BOARD_HEIGHT_MM,
        "hole_diameter_mm": layout.LED_HOLE_DIAMETER_MM,
        "holes": holes,
        "win_hole": layout.WIN_HOLE,
        "targets": list(limits.TARGETS),
        # tracks[players][player]: hole ids of track positions 1, 2, ... (one lap)
        "tracks": {str(n): [list(layout.track(n, p)) for p in range(n)] for n in (2, 3)},
        "skunk_lines": {str(t): list(layout.skunk_lines(t)) for t in limits.TARGETS},
        "players": [
            {"name": PLAYER_NAMES[p], "color": colour_hex(p)} for p in range(limits.MAX_PLAYERS)
        ],
        # How the renderer dims a player's colour (of 256) and the skunk line's white: the
        # page's legend shows the same lights.
        "levels": {"back": render.BACK_LEVEL, "glow": render.GLOW_LEVEL},
        "line_rgb": list(render.LINE_RGB),
        "lap_gauge_row": layout.LAP_GAUGE_ROW,
    }


def protocol_json() -> dict[str, Any]:
    """What a codec needs to know besides its algorithm (docs/protocol.md)."""
    return {
        "major": protocol.PROTOCOL_MAJOR,
        "minor": protocol.PROTOCOL_MINOR,
        "max_line": protocol.MAX_LINE,
        "max_id": protocol.MAX_ID,
        "rev_digits": protocol.REV_DIGITS,  # a condition's revision, `@REV` (since 1.3)
        "verbs": [v.decode() for v in protocol.VERBS],
        "state_keys": dict(wire.STATE_KEYS),
        "list_keys": list(wire.LIST_KEYS),
        "result_names": list(wire.RESULT_NAMES),
        "match_kinds": list(MATCH_KINDS),  # by `mk` (since 1.4)
        "error_codes": list(protocol.ERROR_CODES),
        # The values the board accepts (cribcore/limits.py): the page's controls offer these.
        "limits": {
            "max_points": limits.MAX_POINTS,
            "targets": list(limits.TARGETS),
            "player_counts": list(limits.PLAYER_COUNTS),
            "max_brightness": limits.MAX_BRIGHTNESS,
            "min_budget_ma": limits.MIN_BUDGET_MA,
            "max_budget_ma": limits.MAX_BUDGET_MA,
            "match_most": limits.MATCH_MOST,  # best of 3, 5, .. this; first to 2..this
        },
        # The Nordic UART Service the board offers over Bluetooth LE (the page's Web Bluetooth).
        "nus": {"service": protocol.NUS_SERVICE, "rx": protocol.NUS_RX, "tx": protocol.NUS_TX},
    }
