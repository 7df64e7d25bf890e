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
#                 at the end: pulses in the winner's colour
#   calling       a Bluetooth device asks to be admitted (cribfw/admission.py): the win hole
#                 double-blinks white, twice a second-and-a-half, until the deal button is tapped
# Palette: blue, orange and reddish purple (Okabe-Ito hues), safe for the common colour-vision
# deficiencies; front and back pegs also differ by brightness, which every eye sees.
#
# The frame is drawn in the strip's own layout (chain order by the layout's LED_OF_HOLE, the
# strip's byte order, before brightness), so output only adds up the channels (for the current
# limiter) and applies brightness: one table lookup per byte, both loops native code (viper) on a
# board, whose source is also their plain twin (cribcore/twins.py). `frame` gives
# it in hole order, RGB, 3 bytes per hole (what hosts and tests read), worked out when asked.
# Rendering allocates nothing on the MicroPython heap.

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython
    from cribcore.nomicropython import const

from cribcore.layout import (
    COLS,
    HOLE_OF_LED,
    HOLES,
    LAP_GAUGE_LEN,
    LED_OF_HOLE,
    OFF_BOARD,
    TRACK_ROWS_2P,
    WIN_HOLE,
    hole_for_score,
    lap_gauge_hole,
    lap_length,
    skunk_lines,
)
from cribcore.state import NO_WINNER
from cribcore.twins import ptr8

FRONT_RGB = ((0, 90, 255), (255, 100, 0), (220, 0, 190))  # blue, orange, reddish purple
BACK_LEVEL = const(64)  # of 256: a quarter of the front peg
GLOW_LEVEL = const(12)
LINE_RGB = (40, 40, 40)
PREVIEW_RGB = (200, 200, 200)
BLINK_MS = const(250)  # pending preview: on/off half period
PULSE_MS = const(1200)  # win hole pulse period
PULSE_MIN = const(128)  # of 256
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
        self._buf = buf = getattr(pixels, "buf", None)
        bpp = getattr(pixels, "bpp", 3)
        order = getattr(pixels, "ORDER", (1, 0, 2, 3))  # NeoPixel's default: GRB
        # The frame in the strip's layout, the brightness scale as a table, and the second lap's
        # glow as whole rows (a two-player track is two rows: two slice copies, not 60 puts).
        self._bpp = bpp
        self._order_r = order[0]
        self._order_g = order[1]
        self._order_b = order[2]
        self._chain = bytearray(HOLES * bpp)
        self._dark_chain = _DARK if bpp == 3 else bytes(HOLES * bpp)
        self._table = bytearray(256)
        self._table_scale = -1
        self._glow = tuple(self._glow_rows(p, bpp, order) for p in range(2))
        if buf is not None and len(buf) != len(self._chain):
            self._buf = None  # (not a strip of HOLES pixels of bpp bytes: set pixel by pixel)

    def _glow_rows(self, p, bpp, order):
        """(chain start, bytes) of each row of player p's two-player track, in the strip's
        layout, all in the player's glow colour; the rows share one bytes object."""
        rgb = PALETTE[p][GLOW : GLOW + 3]
        pixel = bytearray(bpp)
        for c in range(3):
            pixel[order[c]] = rgb[c]
        glow = bytes(pixel) * COLS
        rows = []
        for row in TRACK_ROWS_2P[p]:
            first = min(LED_OF_HOLE[row * COLS + col] for col in range(COLS))
            rows.append((bpp * first, glow))
        return tuple(rows)

    @property
    def frame(self):
        """The frame in hole order: 3 bytes (RGB, before brightness) per hole, hole ids of
        cribcore/layout.py. Worked out from the strip's layout into one buffer, each time."""
        frame = self._frame
        if frame is None:
            frame = self._frame = bytearray(3 * HOLES)
        chain = self._chain
        bpp = self._bpp
        for hole in range(HOLES):
            d = LED_OF_HOLE[hole] * bpp
            i = 3 * hole
            frame[i] = chain[d + self._order_r]
            frame[i + 1] = chain[d + self._order_g]
            frame[i + 2] = chain[d + self._order_b]
        return frame

    # --- drawing -----------------------------------------------------------------------------

    @micropython.native
    def render(self, board, t_ms=0):
        """Draw `board` at animation time `t_ms` into the frame, then write the pixels."""
        self.draw(board, t_ms)
        self.show()

    def draw(self, board, t_ms=0):
        """Compute the frame (hole order, full brightness) for `board` at time `t_ms`."""
        # (Bytecode, as _draw_glow: the slice store. The work is in the native methods.)
        self._chain[:] = self._dark_chain
        self.animating = False
        players = board.players
        leader = 0
        for p in range(players):
            if board.front[p] > leader:
                leader = board.front[p]
        for p in range(players):
            self._draw_player(board, p, leader, t_ms)
        winner = board.winner
        if winner != NO_WINNER:
            # Triangle wave between PULSE_MIN and 256: the winner's colour breathes.
            phase = t_ms % PULSE_MS
            half = PULSE_MS // 2
            wave = phase if phase < half else PULSE_MS - phase
            self._put_scaled(
                WIN_HOLE, PALETTE[winner], FRONT, PULSE_MIN + (256 - PULSE_MIN) * wave // half
            )
            self.animating = True
        elif self._get_sum(WIN_HOLE) == 0:
            self._put(WIN_HOLE, PALETTE[board.dealer], GLOW)
        if self.calling:
            # Two short white flashes, then a pause: unlike any game pattern.
            self.animating = True
            phase = t_ms % CALL_MS
            if phase < CALL_FLASH_MS or 2 * CALL_FLASH_MS <= phase < 3 * CALL_FLASH_MS:
                self._put(WIN_HOLE, CALL, 0)
            else:
                self._put(WIN_HOLE, _DARK, 0)

    @micropython.native
    def _draw_player(self, board, p, leader, t_ms):
        players = board.players
        target = board.target
        front = board.front[p]
        back = board.back[p]
        colours = PALETTE[p]
        lap = 0 if front == 0 else (front - 1) // lap_length(players)
        if players == 2:
            if lap >= 1:
                self._draw_glow(p)
        else:
            for i in range(lap + 1 if front > 0 else 0):
                if i < LAP_GAUGE_LEN:
                    self._put(lap_gauge_hole(p, i), colours, BACK)
        lines = skunk_lines(target)
        for i in range(2):
            line = lines[i]
            if line and front < line <= leader:
                self._put(hole_for_score(players, p, line, target), LINE, 0)
        if back > 0 and back != front:
            self._put(hole_for_score(players, p, back, target), colours, BACK)
        if front > 0:
            hole = hole_for_score(players, p, front, target)
            if hole != WIN_HOLE:  # the win hole is drawn for the winner in draw()
                self._put(hole, colours, BOTH if back == front else FRONT)
        pending = board.pending[p]
        if pending:
            self.animating = True
            if (t_ms // BLINK_MS) % 2 == 0:
                hole = hole_for_score(players, p, front + pending, target)
                if hole != OFF_BOARD:
                    self._put(hole, PREVIEW, 0)

    def _draw_glow(self, p):
        # Bytecode, not native: the VM stores a slice without making a slice object, native
        # code makes one on the heap (and nothing may allocate while drawing).
        chain = self._chain
        for start, glow in self._glow[p]:
            chain[start : start + len(glow)] = glow

    def draw_chain_test(self, led):
        """Self-test frame: only the `led`-th LED of the chain lit, white. Stepping `led` from 0
        shows a maker the wiring order hole by hole."""
        self._chain[:] = self._dark_chain
        self.animating = True
        self._set(HOLE_OF_LED[led], 255, 255, 255)

    @micropython.native
    def _put(self, hole, colours, offset):
        d = LED_OF_HOLE[hole] * self._bpp  # (as _set, without a second call per hole)
        chain = self._chain
        chain[d + self._order_r] = colours[offset]
        chain[d + self._order_g] = colours[offset + 1]
        chain[d + self._order_b] = colours[offset + 2]

    @micropython.native
    def _put_scaled(self, hole, colours, offset, level):
        self._set(
            hole,
            (colours[offset] * level) >> 8,
            (colours[offset + 1] * level) >> 8,
            (colours[offset + 2] * level) >> 8,
        )

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
        for hole in range(HOLES):
            i = 3 * hole
            self._set(hole, rgb[i], rgb[i + 1], rgb[i + 2])

    @micropython.native
    def _get_sum(self, hole):
        d = LED_OF_HOLE[hole] * self._bpp
        chain = self._chain
        return chain[d + self._order_r] + chain[d + self._order_g] + chain[d + self._order_b]

    # --- output ------------------------------------------------------------------------------

    @micropython.native
    def limit_scale(self, channel_sum):
        """Brightness scale (of 256) for a frame whose channel values add up to `channel_sum`:
        the user's brightness, lowered when needed to keep the estimate within the budget."""
        scale = self.brightness + (self.brightness >> 7)  # 0..255 -> 0..256
        if channel_sum == 0:
            return scale
        allowed = (self.budget_ma - self.idle_ma * HOLES) * 765 // self.ma_per_led
        if allowed <= 0:
            return 0
        if channel_sum * scale > allowed * 256:
            scale = allowed * 256 // channel_sum
        return scale

    @micropython.native
    def show(self):
        """Write the frame to the pixels in chain order, with brightness and limiter applied."""
        chain = self._chain
        table = self._table
        buf = self._buf
        # One pass adds the channels up and applies the last frame's scale; a second one only
        # when the scale moved (the brightness, or the limiter).
        total = _channel_sum(chain) if buf is None else _scaled_sum_into(buf, chain, table)
        scale = self.limit_scale(total)
        self.scale = scale
        self.estimated_ma = (total * scale >> 8) * self.ma_per_led // 765 + self.idle_ma * HOLES
        if scale != self._table_scale:
            self._table_scale = scale
            for v in range(256):
                table[v] = v * scale >> 8
            if buf is not None:
                _scaled_sum_into(buf, chain, table)
        if buf is None:
            frame = self.frame  # (no buffer to write: slow, and not allocation-free)
            for hole in range(HOLES):
                i = 3 * hole
                self.pixels[LED_OF_HOLE[hole]] = (
                    table[frame[i]],
                    table[frame[i + 1]],
                    table[frame[i + 2]],
                )
        self.pixels.write()


@micropython.viper
def _channel_sum(chain) -> int:
    """The sum of the frame's channel values (for the current limiter)."""
    c = ptr8(chain)
    total = 0
    for i in range(int(len(chain))):
        total += c[i]
    return total


@micropython.viper
def _scaled_sum_into(buf, chain, table) -> int:
    """buf[i] = table[chain[i]] for every byte (the frame with brightness applied); returns the
    sum of the frame's channel values."""
    b = ptr8(buf)
    c = ptr8(chain)
    t = ptr8(table)
    total = 0
    for i in range(int(len(chain))):
        v = c[i]
        total += v
        b[i] = t[v]
    return total
