# Renderer: board state (plus animation time) -> LED frame. Pure function of its inputs; the pixel
# object is passed in and only needs what `neopixel.NeoPixel` has (`buf`, `bpp`, `ORDER`,
# `write()`; objects without `buf` get `pixels[i] = (r, g, b)`, slower and not allocation-free).
#
# What the players see (two-player board; the three-player mapping is in layout.py):
#   front peg     the player's colour, full          back peg   the same colour, about a quarter
#   both pegs in one hole: the colour washed with white
#   second lap    the player's whole track glows faintly: "home stretch" at a glance
#   skunk lines   once the leader has passed a line (61 double skunk, 91 skunk in the 121 game,
#                 31 in the 61 game), that hole glows neutral white on the track of every player
#                 still behind it
#   pending count the hole the front peg would reach blinks white (the win hole if it would win)
#   win hole      before the game ends: the dealer's colour, faint (who owns the crib);
#                 at the end: pulses in the winner's colour; in a match, flashes in it as many
#                 times as the game's number in the match (game 2: two flashes, a pause), never
#                 darker than the pulse; the match won: sparkles, the winner's colour and the
#                 same washed with white, by turns
#   calling       a Bluetooth device asks to be admitted (cribfw/admission.py): the win hole
#                 double-blinks white, twice a second-and-a-half, until the deal button is tapped
# Palette: blue, orange and reddish purple (Okabe-Ito hues), safe for the common colour-vision
# deficiencies; front and back pegs also differ by brightness, which every eye sees.
#
# The frame is drawn in the strip's own layout (chain order by the layout's LED_OF_HOLE, the
# strip's byte order) twice at once: before brightness (the chain: what `frame` reads) and with the
# last frame's brightness scale applied, straight into the strip's buffer, while the draw keeps
# the sum of the channel values (for the current limiter). So a frame costs one viper call that
# lights a handful of pixels, and output only works out the scale: a pass over every byte only
# when the scale moved (the brightness, the limiter) or the frame came from elsewhere. The viper
# functions' source is also their plain twin (cribcore/twins.py). `frame` gives the frame in hole
# order, RGB, 3 bytes per hole (what hosts and tests read), worked out when asked.
# Rendering allocates nothing on the MicroPython heap.

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

    def const(value):  # type: ignore[no-redef]
        return value


from cribcore.layout import (
    HOLE_OF_LED,
    HOLES,
    LAP_2P,
    LAP_3P,
    LAP_GAUGE_LEN,
    LED_OF_HOLE,
    TRACK_2P,
    TRACK_3P,
    WIN_HOLE,
    lap_gauge_hole,
    skunk_lines,
)
from cribcore.limits import MAX_PLAYERS, TARGETS
from cribcore.twins import ptr8

# The layout's and the limits' numbers the viper code needs as constants (a name imported from
# another module is not one there): checked against them when the module loads.
_HOLES = const(121)
_LAP_2P = const(60)
_LAP_3P = const(30)
_GAUGE_LEN = const(10)
_PLAYERS = const(3)  # at most
_TARGET_COUNT = const(2)
if (_HOLES, _LAP_2P, _LAP_3P, _GAUGE_LEN, _PLAYERS, _TARGET_COUNT) != (
    HOLES,
    LAP_2P,
    LAP_3P,
    LAP_GAUGE_LEN,
    MAX_PLAYERS,
    len(TARGETS),
):
    raise ImportError("render.py's copies of the layout's numbers differ from layout.py's")

FRONT_RGB = ((0, 90, 255), (255, 100, 0), (220, 0, 190))  # blue, orange, reddish purple
BACK_LEVEL = const(64)  # of 256: a quarter of the front peg
GLOW_LEVEL = const(12)
LINE_RGB = (40, 40, 40)
PREVIEW_RGB = (200, 200, 200)
BLINK_MS = const(250)  # pending preview: on/off half period
PULSE_MS = const(1200)  # win hole pulse period
PULSE_MIN = const(128)  # of 256
COUNT_MS = const(250)  # a game of a match won: each flash of its number, and the dip after it
COUNT_PAUSE_MS = const(1500)  # after the flashes: the number's end
SPARKLE_MS = const(150)  # the match won: the winner's colour, then washed with white
CALL_MS = const(1500)  # admission call: two 150 ms flashes of the win hole per period
CALL_FLASH_MS = const(150)
CALL_RGB = (255, 255, 255)


def _scaled(rgb, level):
    return bytes((c * level) >> 8 for c in rgb)


def _washed(rgb):
    return bytes(c + ((255 - c) * 5 >> 3) for c in rgb)


# PALETTE[player]: front, back, glow, both-pegs-in-one-hole; 3 bytes each.
FRONT = const(0)
BACK = const(3)
GLOW = const(6)
BOTH = const(9)
PALETTE = tuple(
    bytes(rgb) + _scaled(rgb, BACK_LEVEL) + _scaled(rgb, GLOW_LEVEL) + _washed(rgb)
    for rgb in FRONT_RGB
)
LINE = bytes(LINE_RGB)
_DARK = bytes(3 * HOLES)
PREVIEW = bytes(PREVIEW_RGB)
CALL = bytes(CALL_RGB)

# The colours a frame is drawn with, numbered: player p's FRONT, BACK, GLOW and BOTH are
# 4 * p + 0..3, then the neutral ones. (Each renderer keeps them in its strip's byte order.)
_C_LINE = const(12)
_C_PREVIEW = const(13)
_C_CALL = const(14)
_C_DARK = const(15)
_COLOURS = b"".join(PALETTE) + LINE + PREVIEW + CALL + bytes(3)  # 3 bytes each

# Where things show, for the viper code: the LED of each player's track position, then of the
# lap gauges and the win hole, then the skunk lines of each target.
_AT_2P = const(0)  # 2 players x LAP_2P positions
_AT_3P = const(120)  # 3 players x LAP_3P positions
_AT_GAUGE = const(210)  # 3 players x LAP_GAUGE_LEN
_AT_WIN = const(240)
_AT_LINES = const(241)  # (target, double skunk line, skunk line) for each of TARGETS
_AT_LEN = const(_AT_LINES + 3 * _TARGET_COUNT)


def _at_table():
    at = bytearray(_AT_LEN)
    for p in range(2):
        for pos in range(LAP_2P):
            at[_AT_2P + p * LAP_2P + pos] = LED_OF_HOLE[TRACK_2P[p][pos]]
    for p in range(3):
        for pos in range(LAP_3P):
            at[_AT_3P + p * LAP_3P + pos] = LED_OF_HOLE[TRACK_3P[p][pos]]
        for i in range(LAP_GAUGE_LEN):
            at[_AT_GAUGE + p * LAP_GAUGE_LEN + i] = LED_OF_HOLE[lap_gauge_hole(p, i)]
    at[_AT_WIN] = LED_OF_HOLE[WIN_HOLE]
    for i, target in enumerate(TARGETS):
        at[_AT_LINES + 3 * i] = target
        at[_AT_LINES + 3 * i + 1] = skunk_lines(target)[0]
        at[_AT_LINES + 3 * i + 2] = skunk_lines(target)[1]
    return bytes(at)


_AT = _at_table()
del _at_table  # (its code is not needed again)

# A renderer's working numbers, in one buffer (Renderer._work: one lookup for the viper code,
# where an attribute costs more than the work it is looked up for):
_W_BPP = const(0)  # bytes a pixel
_W_SCALE = const(1)  # 2 bytes: the scale the strip's buffer holds the chain at
_W_TOTAL = const(3)  # 3 bytes: the chain's channel sum (at most HOLES x 4 x 255 < 2**24)
_W_KNOWN = const(6)  # 1: the sum is the chain's and the strip's buffer holds it (a drawn frame)
_W_PAL = const(8)  # the colours in the strip's byte order (bpp bytes each, at most 4)
# The pixels a frame lights, listed before they are written: index in _AT, colour number, level
# of 256 less one. At most LAP_GAUGE_LEN + 5 a player (gauges, two lines, back, front, preview)
# and the win hole: viper code does not check the bounds.
_W_OPS = const(_W_PAL + 16 * 4)
_MAX_OPS = const(_PLAYERS * (_GAUGE_LEN + 5) + 1)
_W_FRONT = const(_W_OPS + 3 * _MAX_OPS)  # then each player's front peg, read once
_W_LEN = const(_W_FRONT + _PLAYERS)
# The most a limiter's `allowed` can usefully be: beyond every frame's channel sum times a
# scale (HOLES x 4 bytes x 255 x 256 < 2**17 x 256), so the comparison stays in 32 bits.
_ALLOWED_MAX = const(1 << 17)

# Current estimate, as in WLED's limiter: mA = sum of channel values * mA per LED / (3 * 255)
# + an idle draw per LED. Defaults fit a 500 mA USB port with the controller's own draw removed.
DEFAULT_BUDGET_MA = const(400)
DEFAULT_MA_PER_LED = const(55)  # a WS2812B at full white
DEFAULT_IDLE_MA = const(1)
DEFAULT_BRIGHTNESS = const(128)


class Renderer:
    def __init__(
        self,
        pixels,
        budget_ma=DEFAULT_BUDGET_MA,
        brightness=DEFAULT_BRIGHTNESS,
        ma_per_led=DEFAULT_MA_PER_LED,
        idle_ma=DEFAULT_IDLE_MA,
    ):
        self.pixels = pixels
        self._frame = None  # `frame`'s buffer, made the first time it is asked for
        self.budget_ma = budget_ma
        self.brightness = brightness
        self.ma_per_led = ma_per_led
        self.idle_ma = idle_ma
        self.scale = 0  # of 256, applied to the last frame (brightness and limiter)
        self.estimated_ma = 0  # the last frame's estimated draw
        self.animating = False  # the last frame changes with time (blink, pulse)
        self.calling = False  # a Bluetooth device waits to be admitted: the win hole calls
        buf = getattr(pixels, "buf", None)
        bpp = getattr(pixels, "bpp", 3)
        order = getattr(pixels, "ORDER", (1, 0, 2, 3))  # NeoPixel's default: GRB
        if buf is not None and len(buf) != HOLES * bpp:
            buf = None  # (not a strip of HOLES pixels of bpp bytes: set pixel by pixel)
        self._buf = buf
        self._bpp = bpp  # (for the Python methods; the viper code reads _work)
        self._order_r = order[0]
        self._order_g = order[1]
        self._order_b = order[2]
        # The frame in the strip's layout before brightness (the chain), and with the scale
        # applied (the strip's own buffer, or one of ours for pixels without one).
        self._chain = bytearray(HOLES * bpp)
        self._out = buf if buf is not None else bytearray(HOLES * bpp)
        self._dark_chain = _DARK if bpp == 3 else bytes(HOLES * bpp)
        work = self._work = bytearray(_W_LEN)
        work[_W_BPP] = bpp
        work[_W_KNOWN] = 1  # (dark, at scale 0)
        for i in range(len(_COLOURS) // 3):
            for c in range(3):
                work[_W_PAL + i * bpp + order[c]] = _COLOURS[3 * i + c]
        self._glow = tuple(self._glow_runs(p) for p in range(2))

    def _glow_runs(self, p):
        """(chain start, glow, glow scaled) of each run of consecutive LEDs of player p's
        two-player track, whose whole track glows on the second lap: the serpentine wiring makes
        a track one run (one slice store a buffer, not 60 pixels)."""
        bpp = self._bpp
        leds = sorted(LED_OF_HOLE[h] for h in TRACK_2P[p])
        colour = self._work[_W_PAL + (4 * p + GLOW // 3) * bpp :][:bpp]
        runs = []
        first = 0
        for i in range(1, len(leds) + 1):
            if i == len(leds) or leds[i] != leds[i - 1] + 1:
                glow = bytes(colour) * (i - first)
                runs.append((bpp * leds[first], glow, bytearray(len(glow))))
                first = i
        return tuple(runs)

    @property
    @micropython.viper
    def frame(self):
        """The frame in hole order: 3 bytes (RGB, before brightness) per hole, hole ids of
        cribcore/layout.py. Worked out from the strip's layout into one buffer, each time (a
        host's `frame` request: as bytecode, about 550,000 cycles on an RP2040)."""
        frame_buf = self._frame
        if not frame_buf:  # (None: the first time; viper before MicroPython 1.29 has no `is None`)
            frame_buf = bytearray(3 * _HOLES)
            self._frame = frame_buf
        frame = ptr8(frame_buf)
        chain = ptr8(self._chain)
        led_of = ptr8(LED_OF_HOLE)
        bpp = int(self._bpp)
        r = int(self._order_r)
        g = int(self._order_g)
        b = int(self._order_b)
        i = 0
        for hole in range(_HOLES):
            d = led_of[hole] * bpp
            frame[i] = chain[d + r]
            frame[i + 1] = chain[d + g]
            frame[i + 2] = chain[d + b]
            i += 3
        return frame_buf

    # --- drawing -----------------------------------------------------------------------------

    @micropython.native
    def render(self, board, t_ms=0):
        """Draw `board` at animation time `t_ms` into the frame, then write the pixels."""
        self.draw(board, t_ms)
        self.show()

    def draw(self, board, t_ms=0):
        """Compute the frame (hole order, full brightness) for `board` at time `t_ms`."""
        # Bytecode for the slice stores (the VM stores a slice without making a slice object,
        # native code makes one on the heap, and nothing may allocate while drawing): the dark
        # frame, and on the second lap of a two-player game the whole track glowing. The pegs,
        # lines and lamps are one viper call.
        chain = self._chain
        out = self._out
        dark = self._dark_chain
        chain[:] = dark
        out[:] = dark
        players = board.players
        fronts = board.front
        if players == 2:
            for p in range(2):
                if fronts[p] > LAP_2P:
                    for start, glow, glow_out in self._glow[p]:
                        chain[start : start + len(glow)] = glow
                        out[start : start + len(glow)] = glow_out
        _draw_pegs(self, board, t_ms, chain, out, players, fronts)

    def draw_chain_test(self, led):
        """Self-test frame: only the `led`-th LED of the chain lit, white. Stepping `led` from 0
        shows a maker the wiring order hole by hole."""
        self._chain[:] = self._dark_chain
        self._work[_W_KNOWN] = 0  # (show works out the rest)
        self.animating = True
        self._set(HOLE_OF_LED[led], 255, 255, 255)

    @micropython.native
    def _set(self, hole, r, g, b):
        d = LED_OF_HOLE[hole] * self._bpp
        chain = self._chain
        chain[d + self._order_r] = r
        chain[d + self._order_g] = g
        chain[d + self._order_b] = b

    def load_frame(self, rgb):
        """Show a frame made elsewhere (hole order, RGB): show() writes it next."""
        self._chain[:] = self._dark_chain
        self._work[_W_KNOWN] = 0
        for hole in range(HOLES):
            i = 3 * hole
            self._set(hole, rgb[i], rgb[i + 1], rgb[i + 2])

    # --- output ------------------------------------------------------------------------------

    @micropython.native
    def show(self):
        """Write the frame to the pixels in chain order, with brightness and limiter applied."""
        _settle(self)
        if self._buf is None:
            out = self._out  # (no buffer to write: slow, and not allocation-free)
            bpp = self._bpp
            for led in range(HOLES):
                d = led * bpp
                self.pixels[led] = (
                    out[d + self._order_r],
                    out[d + self._order_g],
                    out[d + self._order_b],
                )
        self.pixels.write()


@micropython.viper
def _draw_pegs(r, board, t_ms: int, chain_buf, out_buf, players: int, fronts):
    """Light the pegs, skunk lines, lap gauges, previews and the win hole of `board` at time
    `t_ms` into the renderer's chain and its scaled twin (on the glowing tracks draw() laid),
    keeping the chain's channel sum; sets r.animating. (draw() passes what it looked up.)"""
    chain = ptr8(chain_buf)
    out = ptr8(out_buf)
    at = ptr8(_AT)
    work = ptr8(r._work)
    bpp = work[_W_BPP]
    scale = work[_W_SCALE] | work[_W_SCALE + 1] << 8
    target = int(board.target)
    backs = board.back
    pendings = board.pending
    lap = _LAP_2P
    track = _AT_2P
    if players != 2:
        lap = _LAP_3P
        track = _AT_3P
    line_a = 0
    line_b = 0
    k = _AT_LINES
    while k < _AT_LEN:
        if at[k] == target:
            line_a = at[k + 1]
            line_b = at[k + 2]
        k += 3
    leader = 0
    for p in range(players):
        front = int(fronts[p])
        work[_W_FRONT + p] = front
        if front > leader:
            leader = front
    blink_on = (t_ms // BLINK_MS) % 2 == 0
    animating = False
    total = 0
    n = _W_OPS  # (the end of the pixels listed)
    for p in range(players):
        front = work[_W_FRONT + p]
        back = int(backs[p])
        pending = int(pendings[p])
        colour = 4 * p  # the player's FRONT; BACK, GLOW, BOTH follow
        if players == 2:
            if front > _LAP_2P:  # (draw() made the track glow)
                for i in range(bpp):
                    total += work[_W_PAL + (colour + 2) * bpp + i] * _LAP_2P
        elif front > 0:
            gauges = (front - 1) // lap + 1
            if gauges > _GAUGE_LEN:
                gauges = _GAUGE_LEN
            for i in range(gauges):
                work[n] = _AT_GAUGE + p * _GAUGE_LEN + i
                work[n + 1] = colour + 1
                work[n + 2] = 255
                n += 3
        line = line_a
        for _line in range(2):
            if line and front < line and line <= leader:
                work[n] = _AT_WIN if line >= target else track + p * lap + (line - 1) % lap
                work[n + 1] = _C_LINE
                work[n + 2] = 255
                n += 3
            line = line_b
        if back > 0 and back != front:
            work[n] = _AT_WIN if back >= target else track + p * lap + (back - 1) % lap
            work[n + 1] = colour + 1
            work[n + 2] = 255
            n += 3
        if front > 0 and front < target:  # (the win hole is drawn for the winner below)
            work[n] = track + p * lap + (front - 1) % lap
            work[n + 1] = colour + 3 if back == front else colour
            work[n + 2] = 255
            n += 3
        if pending:
            animating = True
            if blink_on:
                score = front + pending
                work[n] = _AT_WIN if score >= target else track + p * lap + (score - 1) % lap
                work[n + 1] = _C_PREVIEW
                work[n + 2] = 255
                n += 3
    # The listed pixels, then (once they are in) the win hole's, in one loop.
    done = _W_OPS
    for rounds in range(2):
        while done < n:
            d = at[work[done]] * bpp
            c = _W_PAL + work[done + 1] * bpp
            level = work[done + 2] + 1
            done += 3
            for i in range(bpp):
                v = (work[c + i] * level) >> 8
                total += v - chain[d + i]
                chain[d + i] = v
                out[d + i] = (v * scale) >> 8
        if rounds == 0:
            win = at[_AT_WIN] * bpp
            winner = int(board.winner)
            c = -1
            level = 256
            if winner >= 0:
                c = 4 * winner
                animating = True
                match_len = int(board.match_len)
                if match_len == 0:
                    # Triangle wave between PULSE_MIN and 256: the winner's colour breathes.
                    phase = t_ms % PULSE_MS
                    wave = phase if phase < PULSE_MS // 2 else PULSE_MS - phase
                    level = PULSE_MIN + (256 - PULSE_MIN) * wave // (PULSE_MS // 2)
                else:
                    need = match_len  # (limits.wins_needed: first to N, best of N)
                    if int(board.match_kind) == 0:
                        need = (match_len >> 1) + 1
                    games = board.games
                    if int(games[winner]) >= need:
                        # The match won: the winner's colour sparkles with white.
                        if (t_ms // SPARKLE_MS) % 2:
                            c += 3  # (BOTH: the colour washed with white)
                    else:
                        # Game N of the match: N flashes, then a pause, at PULSE_MIN between.
                        flashes = 2 * COUNT_MS * int(board.match_game)
                        phase = t_ms % (flashes + COUNT_PAUSE_MS)
                        if phase >= flashes or (phase // COUNT_MS) % 2:
                            level = PULSE_MIN
            else:
                lit = 0
                for i in range(bpp):
                    lit += chain[win + i]
                if lit == 0:  # the dealer's lamp, faint
                    c = 4 * int(board.dealer) + 2
            if r.calling:
                # Two short white flashes, then a pause: unlike any game pattern.
                animating = True
                phase = t_ms % CALL_MS
                level = 256
                c = _C_DARK
                if phase < CALL_FLASH_MS or (
                    2 * CALL_FLASH_MS <= phase and phase < 3 * CALL_FLASH_MS
                ):
                    c = _C_CALL
            if c >= 0:
                work[n] = _AT_WIN
                work[n + 1] = c
                work[n + 2] = level - 1
                n += 3
    work[_W_TOTAL] = total & 255
    work[_W_TOTAL + 1] = (total >> 8) & 255
    work[_W_TOTAL + 2] = total >> 16
    work[_W_KNOWN] = 1
    r.animating = animating


@micropython.viper
def _limit_scale(brightness: int, budget_ma: int, idle_ma: int, ma_per_led: int, total: int) -> int:
    """The brightness scale (of 256) for a frame whose channel values add up to `total`: the
    user's brightness, lowered when needed to keep the estimate within the budget."""
    scale = brightness + (brightness >> 7)  # 0..255 -> 0..256
    if total == 0:
        return scale
    allowed = (budget_ma - idle_ma * _HOLES) * 765 // ma_per_led
    if allowed <= 0:
        return 0
    if allowed > _ALLOWED_MAX:
        allowed = _ALLOWED_MAX
    if total * scale > allowed * 256:
        scale = allowed * 256 // total
    return scale


@micropython.viper
def _settle(r):
    """The last frame's scale and estimated draw from its channel sum (added up here when the
    draw did not keep it), and the strip's buffer brought to that scale when it holds another."""
    chain = r._chain
    work = ptr8(r._work)
    known = work[_W_KNOWN]
    total = work[_W_TOTAL] | work[_W_TOTAL + 1] << 8 | work[_W_TOTAL + 2] << 16
    if not known:
        total = int(_channel_sum(chain))
    ma_per_led = int(r.ma_per_led)
    idle_ma = int(r.idle_ma)
    scale = int(_limit_scale(int(r.brightness), int(r.budget_ma), idle_ma, ma_per_led, total))
    r.scale = scale
    r.estimated_ma = ((total * scale) >> 8) * ma_per_led // 765 + idle_ma * _HOLES
    out_scale = work[_W_SCALE] | work[_W_SCALE + 1] << 8
    if scale == out_scale and known:
        return
    _scale_into(r._out, chain, scale)
    if scale != out_scale:
        for p in range(2):
            for run in r._glow[p]:
                _scale_into(run[2], run[1], scale)
        work[_W_SCALE] = scale & 255
        work[_W_SCALE + 1] = scale >> 8
    work[_W_TOTAL] = total & 255
    work[_W_TOTAL + 1] = (total >> 8) & 255
    work[_W_TOTAL + 2] = total >> 16
    work[_W_KNOWN] = 1


@micropython.viper
def _channel_sum(chain) -> int:
    """The sum of the frame's channel values (for the current limiter)."""
    c = ptr8(chain)
    total = 0
    for i in range(int(len(chain))):
        total += c[i]
    return total


@micropython.viper
def _scale_into(out, chain, scale: int):
    """out[i] = chain[i] * scale >> 8 for every byte of chain (brightness applied)."""
    o = ptr8(out)
    c = ptr8(chain)
    for i in range(int(len(chain))):
        o[i] = (c[i] * scale) >> 8
