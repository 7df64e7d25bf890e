# One dispatcher serves every link: it parses a request line, applies it to the board (or the
# renderer's settings), writes exactly one reply to the asking link and pushes every change as an
# event to all links. Handling a score command allocates nothing.
#
# A link is any object with `send(buf, n)` (write buf[:n], a whole line), `recent`, a
# RecentReplies for that link, `trusted` (it may change the board: USB always, a Bluetooth central
# once admitted) and `address` (None for USB; a central's 7 address bytes). See cribfw/admission.py.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


from cribcore import protocol as P
from cribcore.layout import HOLES
from cribcore.limits import MAX_BRIGHTNESS, MAX_BUDGET_MA, MIN_BUDGET_MA
from cribcore.state import GameError
from cribfw.admission import Admission

RECENT = const(8)  # replies remembered per link for resent requests
RECENT_REPLY = const(96)  # longest reply remembered (state-changing replies are short)
OUT_SIZE = 6 * HOLES + 64  # room for the frame reply in hex
DENIED = b"tap the deal button on the board to admit this device"


class RecentReplies:
    """The last few (id, reply) pairs on one link, so a request resent after a lost reply gets
    the same reply again instead of being applied twice. Ids are given as (buffer, start, end)."""

    def __init__(self):
        self.ids = bytearray(RECENT * P.MAX_ID)
        self.id_len = bytearray(RECENT)
        self.replies = bytearray(RECENT * RECENT_REPLY)
        self.reply_len = bytearray(RECENT)
        self.next = 0

    def find(self, line, start, end):
        """The slot remembering the id line[start:end], or -1."""
        n = end - start
        ids = self.ids
        for slot in range(RECENT):
            if self.id_len[slot] != n or n == 0:
                continue
            base = slot * P.MAX_ID
            same = True
            for i in range(n):
                if ids[base + i] != line[start + i]:
                    same = False
                    break
            if same:
                return slot
        return -1

    def remember(self, line, start, end, out):
        """Remember `out` as the reply to the id line[start:end]."""
        if out.n > RECENT_REPLY:
            return
        slot = self.next
        self.next = (slot + 1) % RECENT
        base = slot * P.MAX_ID
        j = 0
        for i in range(start, end):
            self.ids[base + j] = line[i]
            j += 1
        self.id_len[slot] = j
        base = slot * RECENT_REPLY
        for i in range(out.n):
            self.replies[base + i] = out.buf[i]
        self.reply_len[slot] = out.n

    def replay(self, slot, out):
        out.reset()
        base = slot * RECENT_REPLY
        out.copy(self.replies, base, base + self.reply_len[slot])

    def clear(self):
        for slot in range(RECENT):
            self.id_len[slot] = 0


class Dispatcher:
    def __init__(self, board, renderer, profile_name, firmware_version, admission=None):
        self.board = board
        self.renderer = renderer
        # Kept as bytes so writing the hello allocates nothing.
        self.profile_name = profile_name.encode()
        self.firmware_version = firmware_version.encode()
        self.links = []
        self._link = None  # the link whose request is being handled
        self.req = P.Request()
        self.out = P.LineWriter(OUT_SIZE)
        self.event = P.LineWriter(200)
        self.settings_rev = 0  # bumped when brightness or budget change
        self._published_rev = board.rev
        self._published_settings = 0
        self.t_ms = 0  # animation time for frame replies, kept by the app
        self.selftest_requested = False  # set by `test`, taken up by the render task
        self.store = b""  # where the state came from at boot (cribfw.store), set by the app
        self.ble_name = b""  # the name the board advertises over Bluetooth, set by the BLE link
        self.admission = admission if admission is not None else Admission()
        self._published_admission = self.admission.rev

    def add_link(self, link):
        self.links.append(link)

    def remove_link(self, link):
        if link in self.links:
            self.links.remove(link)

    # --- requests ------------------------------------------------------------------------------

    def handle_line(self, link, line, n):
        """Handle one request line (line[:n], newline removed) from `link`."""
        req = self.req
        req.line = line
        self._link = link
        code = P.parse_request(req, n)
        out = self.out
        if code == P.E_EMPTY:
            return  # a blank line is not a request
        # Every reply to a line with an id is remembered, errors included, except replies to
        # reading requests (they simply run again) and `denied` (see below).
        remembered = req.has_id() and not P.is_reading(req, code)
        slot = link.recent.find(line, req.id_start, req.id_end) if remembered else -1
        if slot >= 0:
            link.recent.replay(slot, out)  # a resend: same reply, nothing applied again
            remembered = False
        elif code != P.E_OK:
            err = P.PARSE_ERRORS[code]
            P.write_error(out, req, err[0], err[1])
        elif not self._allowed(link, req):
            # Not remembered: nothing was applied, so once admitted the same request (same
            # id) may be sent again and is applied then.
            P.write_error(out, req, b"denied", DENIED)
            self.admission.request(link)
            remembered = False
        else:
            self._execute(req, out)
        if remembered:
            link.recent.remember(line, req.id_start, req.id_end, out)
        link.send(out.buf, out.n)
        self.publish_if_changed()

    def _allowed(self, link, req):
        return link.trusted or self.admission.open or P.is_reading(req, P.E_OK)

    def deny(self, link):
        """`link` tried to change the board without a request line (a phone's control pad):
        the same refusal as a request gets, without an id."""
        self.send_error(link, b"denied", DENIED)
        self.admission.request(link)

    def send_error(self, link, code, text):
        """An error reply without an id to `link` (for input that is not a request line)."""
        req = self.req
        req.id_start = req.id_end = 0
        P.write_error(self.out, req, code, text)
        link.send(self.out.buf, self.out.n)

    def line_too_long(self, link, request_id, id_len):
        """A link discarded an over-long line whose id (read whole) is request_id[:id_len]
        (id_len 0: none): tell the sender, remembered like any reply to a line with an id."""
        req = self.req
        req.line = request_id
        req.id_start = 0
        req.id_end = id_len
        out = self.out
        slot = link.recent.find(request_id, 0, id_len) if id_len else -1
        if slot >= 0:
            link.recent.replay(slot, out)
        else:
            err = P.PARSE_ERRORS[P.E_TOO_LONG]
            P.write_error(out, req, err[0], err[1])
            if id_len:
                link.recent.remember(request_id, 0, id_len, out)
        link.send(out.buf, out.n)

    def _execute(self, req, out):
        try:
            self._apply(req, out)
        except GameError as err:
            P.write_error(out, req, err.code.encode(), err.text.encode())

    def _arg(self, req, i, default):
        value = req.int_arg(i, default)
        if value is None:
            raise GameError("bad_arg", "expected a number")
        return value

    def _arity(self, req, low, high):
        if req.argc < low or req.argc > high:
            raise GameError("bad_arg", "wrong number of arguments")

    def _apply(self, req, out):
        board = self.board
        verb = req.verb
        if verb == P.V_PEG:
            self._arity(req, 2, 2)
            board.peg(self._arg(req, 0, 0), self._arg(req, 1, 0))
            self._ok_rev(req, out)
        elif verb == P.V_SET:
            self._arity(req, 2, 3)
            player = self._arg(req, 0, 0)
            if player < 0 or player >= board.players:
                raise GameError("bad_player", "no such player")
            board.set_pegs(player, self._arg(req, 1, 0), self._arg(req, 2, board.back[player]))
            self._ok_rev(req, out)
        elif verb == P.V_UNDO:
            self._arity(req, 0, 0)
            board.undo()
            self._ok_rev(req, out)
        elif verb == P.V_NEW:
            self._arity(req, 0, 2)
            board.new_game(self._arg(req, 0, 0), self._arg(req, 1, 0))
            self._ok_rev(req, out)
        elif verb == P.V_DEAL:
            self._arity(req, 0, 1)
            if req.argc:
                board.set_dealer(self._arg(req, 0, 0))
            else:
                board.next_dealer()
            P.begin_reply(out, req, True)
            out.key(b"d")
            out.number(board.dealer)
            out.end()
        elif verb == P.V_PEND:
            self._arity(req, 2, 2)
            board.set_pending(self._arg(req, 0, 0), self._arg(req, 1, 0))
            self._ok_rev(req, out)
        elif verb == P.V_GAMES:
            self._games(req, out)
        elif verb == P.V_STATE:
            self._arity(req, 0, 0)
            P.begin_reply(out, req, True)
            P.write_state_fields(out, board)
            out.end()
        elif verb == P.V_PING:
            self._arity(req, 0, 0)
            P.begin_reply(out, req, True)
            out.end()
        elif verb == P.V_HELLO:
            self._arity(req, 0, 0)
            P.begin_reply(out, req, True)
            self.write_hello_fields(out)
            out.end()
        elif verb == P.V_BRIGHT:
            self._arity(req, 0, 1)
            if req.argc:
                value = self._arg(req, 0, 0)
                if value < 0 or value > MAX_BRIGHTNESS:
                    raise GameError("bad_value", "brightness must be 0..255")
                if value != self.renderer.brightness:
                    self.renderer.brightness = value
                    self.settings_rev += 1
            self._ok_settings(req, out)
        elif verb == P.V_BUDGET:
            self._arity(req, 0, 1)
            if req.argc:
                value = self._arg(req, 0, 0)
                if value < MIN_BUDGET_MA or value > MAX_BUDGET_MA:
                    raise GameError("bad_value", "budget must be 150..10000 mA")
                if value != self.renderer.budget_ma:
                    self.renderer.budget_ma = value
                    self.settings_rev += 1
            self._ok_settings(req, out)
        elif verb == P.V_TEST:
            self._arity(req, 0, 0)
            self.selftest_requested = True  # the render task runs it; the game is untouched
            P.begin_reply(out, req, True)
            out.end()
        elif verb == P.V_ADMIT:
            self._admit(req, out)
        elif verb == P.V_FRAME:
            self._arity(req, 0, 0)
            renderer = self.renderer
            renderer.draw(board, self.t_ms)
            renderer.show()
            P.begin_reply(out, req, True)
            out.key(b"scale")
            out.number(renderer.scale)
            out.key(b"ma")
            out.number(renderer.estimated_ma)
            out.key(b"rgb")
            out.hex_bytes(renderer.frame)
            out.end()

    def _games(self, req, out):
        board = self.board
        word = req.word_arg(0)
        if req.argc == 0:
            pass
        elif word == P.W_CLEAR and req.argc == 1:
            board.reset_games()
        elif word == P.W_X2 and req.argc == 2:
            value = self._arg(req, 1, 0)
            if value not in (0, 1):
                raise GameError("bad_value", "x2 takes 0 or 1")
            board.set_skunk_double(value)
        else:
            raise GameError("bad_arg", "games [clear | x2 0|1]")
        P.begin_reply(out, req, True)
        out.key(b"g")
        out.numbers(board.games, board.players)
        out.key(b"x2")
        out.number(1 if board.skunk_double else 0)
        out.end()

    def _admit(self, req, out):
        admission = self.admission
        word = req.word_arg(0)
        if req.argc == 0:
            pass
        elif word == P.W_OPEN and req.argc == 2:
            value = self._arg(req, 1, 0)
            if value not in (0, 1):
                raise GameError("bad_value", "open takes 0 or 1")
            admission.set_open(value)
        elif word == P.W_CLEAR and req.argc == 1:
            admission.clear(self.links)
        else:
            raise GameError("bad_arg", "admit [open 0|1 | clear]")
        P.begin_reply(out, req, True)
        self._admission_fields(out, self._link)
        out.end()

    def _admission_fields(self, out, link):
        admission = self.admission
        out.key(b"open")
        out.number(1 if admission.open else 0)
        out.key(b"you")
        out.number(1 if link is not None and link.trusted else 0)
        out.key(b"admitted")
        out.number(admission.count)

    def _ok_rev(self, req, out):
        P.begin_reply(out, req, True)
        out.key(b"r")
        out.number(self.board.rev)
        out.end()

    def _ok_settings(self, req, out):
        P.begin_reply(out, req, True)
        self._settings_fields(out)
        out.end()

    def _settings_fields(self, out):
        out.key(b"bright")
        out.number(self.renderer.brightness)
        out.key(b"budget")
        out.number(self.renderer.budget_ma)

    def write_hello_fields(self, out):
        out.key(b"proto")
        out.number(P.PROTOCOL_MAJOR)
        out.byte(46)  # '.'
        out.number(P.PROTOCOL_MINOR)
        out.key(b"fw")
        out.text(self.firmware_version)
        out.key(b"board")
        out.text(self.profile_name)
        out.key(b"layout")
        out.text(b"crib121")
        out.key(b"holes")
        out.number(HOLES)
        out.key(b"max")
        out.number(P.MAX_LINE)
        out.key(b"caps")
        for i in range(len(P.VERBS)):
            if i:
                out.byte(44)
            out.text(P.VERBS[i])
        if self.store:
            out.key(b"store")
            out.text(self.store)
        if self.ble_name:
            out.key(b"ble")
            out.text(self.ble_name)

    # --- events ----------------------------------------------------------------------------

    def publish_if_changed(self):
        """Push the state (and settings) to every link if they changed since last time, whatever
        changed them: a request, a button, a timer."""
        board = self.board
        if board.rev != self._published_rev:
            self._published_rev = board.rev
            P.write_state_event(self.event, board)
            self.broadcast(self.event)
        if self.settings_rev != self._published_settings:
            self._published_settings = self.settings_rev
            ev = self.event
            ev.reset()
            ev.text(b"! cfg")
            self._settings_fields(ev)
            ev.end()
            self.broadcast(ev)
        if self.admission.rev != self._published_admission:
            self._published_admission = self.admission.rev
            ev = self.event
            for link in self.links:  # `you` differs per link
                ev.reset()
                ev.text(b"! admit")
                self._admission_fields(ev, link)
                ev.end()
                link.send(ev.buf, ev.n)

    def announce_button(self, name, action):
        """'! btn n=NAME a=ACTION' on every link: a button on the board was tapped or held."""
        ev = self.event
        ev.reset()
        ev.text(b"! btn")
        ev.key(b"n")
        ev.text(name)
        ev.key(b"a")
        ev.text(action)
        ev.end()
        self.broadcast(ev)

    def announce(self):
        """'! hello ...' on every link: the board (re)started."""
        ev = self.event
        ev.reset()
        ev.text(b"! hello")
        self.write_hello_fields(ev)
        ev.end()
        self.broadcast(ev)

    def broadcast(self, line):
        for link in self.links:
            link.send(line.buf, line.n)
