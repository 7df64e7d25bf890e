# A reader of LED frames: recovers each player's front and back peg from what the LEDs show,
# knowing only the layout and the palette. Used to prove that frames are unambiguous.
from cribcore.layout import (
    HOLES,
    LAP_GAUGE_LEN,
    LED_OF_HOLE,
    WIN_HOLE,
    lap_gauge_hole,
    lap_length,
    track,
)
from cribcore.render import BACK, BOTH, FRONT, GLOW, PALETTE, PULSE_MIN

_SOURCES = {}  # bpp -> for each byte of the hole-order RGB, its byte in the GRB buffer


def holes_from_pixels(pixels):
    """Hole-order RGB bytes from a NeoPixel-like object's GRB buffer."""
    sources = _SOURCES.get(pixels.bpp)
    if sources is None:
        sources = _SOURCES[pixels.bpp] = []
        for hole in range(HOLES):
            d = LED_OF_HOLE[hole] * pixels.bpp
            sources += [d + 1, d, d + 2]
    buf = pixels.buf
    return bytearray([buf[i] for i in sources])


def _scaled(colours, offset, scale):
    return (
        colours[offset] * scale >> 8,
        colours[offset + 1] * scale >> 8,
        colours[offset + 2] * scale >> 8,
    )


_WIN_COLOURS = {}  # (player, scale) -> every colour of the winner's win hole: worked out once


def _win_colours(player, scale):
    """The winner's colour at PULSE_MIN..256 of full (a game won: its pulse, a match's count)
    and washed with white (a match won: its sparkle)."""
    key = (player, scale)
    found = _WIN_COLOURS.get(key)
    if found is None:
        colours = PALETTE[player]
        found = _WIN_COLOURS[key] = set(
            _scaled(_scaled(colours, FRONT, level), 0, scale) for level in range(PULSE_MIN, 257)
        )
        found.add(_scaled(colours, BOTH, scale))
    return found


def win_hole_story(samples, player, scale):
    """What the win hole of a game `player` won tells over time, from `samples`: the win hole's
    (r, g, b) at times 50 ms apart, over at least two of its periods (about 8 s for game 7 of a
    match). ("match",) the match is won (it sparkles: the colour washed with white at times);
    ("game", N) game N of a match (N flashes at full between pauses at PULSE_MIN); ("won",) a
    game won outside a match (the pulse: more than two levels)."""
    colours = PALETTE[player]
    full = _scaled(colours, FRONT, scale)
    low = _scaled(_scaled(colours, FRONT, PULSE_MIN), 0, scale)
    if _scaled(colours, BOTH, scale) in samples:
        return ("match",)
    if set(samples) - {full, low}:
        return ("won",)
    # The samples as runs of one colour, then the flashes between two pauses (PULSE_MIN for
    # longer than a flash's dip, 250 ms).
    runs = []
    for sample in samples:
        if runs and runs[-1][0] == sample:
            runs[-1][1] += 50
        else:
            runs.append([sample, 50])
    counts = []
    count = -1  # -1: before the first pause
    for colour, ms in runs:
        if colour == low and ms > 250:
            if count >= 0:
                counts.append(count)
            count = 0
        elif colour == full and count >= 0:
            count += 1
    assert counts and len(set(counts)) == 1, counts
    return ("game", counts[0])


def decode_player(rgb, players, target, player, scale):
    """(front, back) of `player` read from hole-order RGB `rgb` shown at brightness `scale`."""
    colours = PALETTE[player]
    want = {}
    for offset in (FRONT, BACK, GLOW, BOTH):
        want[_scaled(colours, offset, scale)] = offset
    lap = lap_length(players)
    front_pos = back_pos = 0
    both = False
    glow = False
    holes = track(players, player)
    for i in range(len(holes)):
        h = holes[i]
        kind = want.get((rgb[3 * h], rgb[3 * h + 1], rgb[3 * h + 2]))
        if kind == FRONT or kind == BOTH:
            assert front_pos == 0, "two front pegs"
            front_pos = i + 1
            both = kind == BOTH
        elif kind == BACK:
            assert back_pos == 0, "two back pegs"
            back_pos = i + 1
        elif kind == GLOW:
            glow = True
    if players == 2:
        laps_done = 1 if glow else 0
    else:
        laps_done = -1
        for i in range(LAP_GAUGE_LEN):
            h = lap_gauge_hole(player, i)
            if (rgb[3 * h], rgb[3 * h + 1], rgb[3 * h + 2]) == _scaled(colours, BACK, scale):
                laps_done = i
    # the win hole: the winner's colour pulsing at PULSE_MIN..256 of full
    w = (rgb[3 * WIN_HOLE], rgb[3 * WIN_HOLE + 1], rgb[3 * WIN_HOLE + 2])
    won = w in _win_colours(player, scale)
    if won:
        assert front_pos == 0
        front = target
    elif front_pos:
        front = laps_done * lap + front_pos
    else:
        assert back_pos == 0, "back peg without front peg"
        return (0, 0)
    if both:
        return (front, front)
    if back_pos == 0:
        return (front, 0)
    back = back_pos
    while back + lap <= front:  # the back peg is less than a lap behind
        back += lap
    return (front, back)
