# One dispatcher serves every link: it parses a request line, checks it against the protocol's
# verb table (cribcore.protocol.VERB_TABLE: the number of arguments, who may send it), has the
# verb's handler (cribfw/verbs.py) apply it to the board's Context and writes exactly one reply to
# the asking link. When the link has handled every line it had (input_done), what they changed
# goes to all links as one event: a host that pipelines gets its replies, then the state once;
# while a link has asked for an event after every request (`every 1`: ctx.every counts them),
# each request's change goes out after its reply. Handling a score command allocates nothing.
#
# A link is any object with `send(buf, n)` (write buf[:n], a whole line), `recent`, the
# RecentReplies of its sender (cribfw/replies.py: the USB host's, a central's by its address),
# `trusted` (it may change the board: USB always, a Bluetooth central once admitted), `address`
# (None for USB; a central's 7 address bytes; see cribfw/admission.py), `brief` (it asked for
# brief events: `brief 1`) and `every` (`every 1`).

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

    def const(value):  # type: ignore[no-redef]
        return value


from cribcore import protocol
from cribcore.layout import HOLES
from cribcore.protocol import begin_reply, parse_request, remembered, state_into
from cribcore.state import GameError
from cribfw.verbs import HANDLERS, admission_fields, answer, settings_fields, write_hello_fields

OUT_SIZE = 6 * HOLES + 64  # room for the frame reply in hex
# The longest event: `! hello` with every field (about 230 bytes); `! st` is written in place,
# the writer having room for the longest state's line.
EVENT_SIZE = protocol.STATE_LINE_ROOM
DENIED = b"tap the deal button on the board to admit this device"
STALE = b"the board has changed since that revision"
# protocol.E_OK, E_EMPTY and E_IF_REV, as this module's constants: a name of another module is
# looked up at run time (twice per request; tests/core/test_protocol.py holds them equal).
_E_OK = const(0)
_E_EMPTY = const(5)
_E_IF_REV = const(7)
# And the places in protocol.Request.head of the id's start and end, of the verb and of the
# revision the request is conditional on.
_ID_START = const(0)
_ID_END = const(1)
_VERB = const(2)
_IF_REV = const(4)


def _nothing():
    pass


class Dispatcher:
    """Requests in, replies and events out, for every link of the board's Context `ctx`."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.req = protocol.Request()
        self.out = protocol.LineWriter(OUT_SIZE)
        self.event = protocol.LineWriter(EVENT_SIZE)
        self.brief = protocol.LineWriter(32)
        self._published_rev = ctx.game.rev
        self._published_settings = ctx.settings_rev
        self._published_admission = ctx.admission.rev
        # show(): draws what changed on the LEDs (the app sets it to its show_changes).
        self.show = _nothing
        # Bursts of requests handled, from every link: the store erases flash ahead only when
        # this has not moved for a while (cribfw/store.py).
        self.inputs = 0

    def add_link(self, link):
        self.ctx.links.append(link)

    def remove_link(self, link):
        ctx = self.ctx
        if link in ctx.links:
            ctx.links.remove(link)
            if link.every:
                link.every = False
                ctx.every -= 1

    # --- requests ------------------------------------------------------------------------------

    @micropython.native
    def handle_line(self, link, line, n):
        """Handle one request line (line[:n], newline removed) from `link`."""
        req = self.req
        req.line = line
        code = parse_request(req, n)
        if code == _E_EMPTY:
            return  # a blank line is not a request
        out = self.out
        ctx = self.ctx
        recent = link.recent
        # Every reply to a line with an id is remembered, errors included, except replies to
        # reading requests (they simply run again) and `denied` (see below).
        remember = remembered(req, code)
        slot = -1
        id_start = id_end = 0
        verb = -1  # a request applied: its verb (the resend memory keeps the ids of changes)
        head = req.head
        if remember:
            id_start = head[_ID_START]
            id_end = head[_ID_END]
            slot = recent.find(line, id_start, id_end)
        if slot >= 0:
            self.resend(link, recent, slot, code)
            remember = False
        elif code != _E_OK and code != _E_IF_REV:
            if code != protocol.E_BAD_ARG and code != protocol.E_ARITY:
                ctx.bad_lines += 1
            err = protocol.PARSE_ERRORS[code]
            protocol.write_error(out, req, err[0], err[1])
        elif not (link.trusted or ctx.admission.open or protocol.is_open(req)):
            # Not remembered: nothing was applied, so once admitted the same request (same
            # id) may be sent again and is applied then.
            protocol.write_error(out, req, b"denied", DENIED)
            ctx.admission.request(link)
            remember = False
        elif code == _E_IF_REV and head[_IF_REV] != ctx.game.rev:
            protocol.write_error(out, req, b"stale", STALE)
        else:
            begin_reply(out, req, True)
            try:
                applied = head[_VERB]
                HANDLERS[applied](ctx, link, req, out)
                out.end()
                verb = applied
            except GameError as err:
                protocol.write_error(out, req, err.code.encode(), err.text.encode())
        if remember:  # (before the reply goes: its event follows it sooner, 0.3 ms is tight)
            recent.remember(line, id_start, id_end, out, verb)
        link.send(out.buf, out.n)
        if ctx.every:
            self.publish_if_changed()
        elif ctx.on_change is not None:
            ctx.on_change(ctx.game)  # each request's change on its own (the hall's table client)

    @micropython.native
    def input_done(self):
        """A link has handled every request it had for now: push what they changed to every link
        and show it on the LEDs. Requests that came together (a host that pipelines) get their
        replies first, then one event with the state after the last of them."""
        self.publish_if_changed()
        self.show()
        self.inputs += 1  # (last: the event and the frame go first)

    def resend(self, link, recent, slot, code):
        """A resend (`recent` remembers its id at `slot`; `code`: how its line parsed): nothing
        applied again. Its reply; for an id brought back from the flash with the game, the
        verb's fields as the board is now (a line that no longer parses: its error)."""
        out = self.out
        req = self.req
        if recent.kept(slot):
            recent.replay(slot, out)
        elif code == _E_OK or code == _E_IF_REV:
            begin_reply(out, req, True)
            answer(self.ctx, link, req, out)
            out.end()
        else:
            err = protocol.PARSE_ERRORS[code]
            protocol.write_error(out, req, err[0], err[1])

    def deny(self, link):
        """`link` tried to change the board without a request line (a phone's control pad):
        the same refusal as a request gets, without an id."""
        self.send_error(link, b"denied", DENIED)
        self.ctx.admission.request(link)

    def send_error(self, link, code, text):
        """An error reply without an id to `link` (for input that is not a request line)."""
        req = self.req
        req.set_id(0, 0)
        protocol.write_error(self.out, req, code, text)
        link.send(self.out.buf, self.out.n)

    def line_too_long(self, link, request_id, id_len):
        """A link discarded an over-long line whose id (read whole) is request_id[:id_len]
        (id_len 0: none): tell the sender, remembered like any reply to a line with an id."""
        req = self.req
        req.line = request_id
        req.set_id(0, id_len)
        out = self.out
        recent = link.recent
        slot = recent.find(request_id, 0, id_len) if id_len else -1
        if slot >= 0:
            self.resend(link, recent, slot, protocol.E_TOO_LONG)
        else:
            self.ctx.bad_lines += 1  # (a resend answered from memory is not counted again)
            err = protocol.PARSE_ERRORS[protocol.E_TOO_LONG]
            protocol.write_error(out, req, err[0], err[1])
            if id_len:
                recent.remember(request_id, 0, id_len, out, 0)
        link.send(out.buf, out.n)

    # --- events ----------------------------------------------------------------------------

    @micropython.native
    def publish_if_changed(self):
        """Push the state (and settings) to every link if they changed since last time, whatever
        changed them: a request, a button, a timer. A link that asked for brief events gets a
        peg or a preview as one short line when it is the only change since the last push."""
        ctx = self.ctx
        game = ctx.game
        rev = game.rev
        published = self._published_rev
        if rev != published:
            one_change = rev == published + 1
            self._published_rev = rev
            brief = 0  # 0: not written yet (only for a link that asked); 1: written; -1: none
            line = None  # the '! st' line, once written (EVENT_SIZE: in one call), and its end
            end = 0
            for link in ctx.links:
                if link.brief and one_change and brief >= 0:
                    if brief == 0:
                        brief = 1 if protocol.write_brief_event(self.brief, game) else -1
                    if brief == 1:
                        link.send(self.brief.buf, self.brief.n)
                        continue
                if line is None:
                    line = self.event.buf
                    end = state_into(line, 0, game, 1)
                link.send(line, end)
            if line is not None:
                self.event.n = end  # (the writer as it was written, after the sends)
        if ctx.on_change is not None:  # (after the events: they go first)
            ctx.on_change(game)
        if ctx.settings_rev != self._published_settings:
            self._published_settings = ctx.settings_rev
            ev = self.event
            ev.reset()
            ev.text(b"! cfg")
            settings_fields(ctx, ev)
            ev.end()
            self.broadcast(ev)
        if ctx.admission.rev != self._published_admission:
            self._published_admission = ctx.admission.rev
            ev = self.event
            for link in ctx.links:  # `you` differs per link
                ev.reset()
                ev.text(b"! admit")
                admission_fields(ctx, ev, link)
                ev.end()
                link.send(ev.buf, ev.n)

    @micropython.native
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
        write_hello_fields(self.ctx, ev)
        ev.end()
        self.broadcast(ev)

    @micropython.native
    def broadcast(self, line):
        for link in self.ctx.links:
            link.send(line.buf, line.n)
