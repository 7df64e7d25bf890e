# The protocol's verbs: one small handler each, in HANDLERS in the order of cribcore.protocol's
# VERB_TABLE (where each verb's name, number of arguments and kind are). The dispatcher has parsed
# the request, checked its arguments' count and who may send it, and started the `ok` reply;
# a handler applies the request to the board (the Context) and writes the reply's fields, or
# raises GameError (the dispatcher turns it into the error reply; nothing was changed).
# Adding a verb touches about ten places, the document first: docs/contributing.md's recipe
# names each, and tests/docs/test_guides.py fails on a missed one it can see (HANDLERS against
# VERB_TABLE among them). Handling a score command allocates nothing.

try:
    import micropython
except ImportError:  # CPython
    from cribcore import nomicropython as micropython

from cribcore import protocol
from cribcore.history import HIST_ENTRY_ROOM, History
from cribcore.layout import HOLES
from cribcore.limits import (
    MATCH_BEST_OF,
    MATCH_FIRST_TO,
    MAX_BRIGHTNESS,
    MAX_BUDGET_MA,
    MIN_BUDGET_MA,
)
from cribcore.state import GameError
from cribcore.twins import ptr8, ptr32
from cribfw.clock import ticks_diff, ticks_ms

HEAP_MS = 10_000  # health measures the free heap at most this often (about 9 ms on an RP2040)
# A page of the history stops before an entry could take it past this many bytes (a game's
# entry takes at most HIST_ENTRY_ROOM): it stays shorter than the frame's reply, which every
# link's queue has room for.
HIST_REPLY_MOST = 700


@micropython.native
def number(req, i, default=0):
    """Argument i as a number (`default` when absent); a word there is bad_arg."""
    value = req.int_arg(i, default)
    if value is None:
        raise GameError("bad_arg", "expected a number")
    return value


@micropython.native
def flag(req, i, what):
    """Argument i as 0 or 1."""
    value = number(req, i)
    if value != 0 and value != 1:
        raise GameError("bad_value", what)
    return value


@micropython.native
def revision(ctx, out):
    out.field(b"r", ctx.game.rev)


# --- reading ------------------------------------------------------------------------------------


@micropython.native
def hello(ctx, link, req, out):
    write_hello_fields(ctx, out)


@micropython.native
def ping(ctx, link, req, out):
    pass


@micropython.native
def state(ctx, link, req, out):
    protocol.write_state_fields(out, ctx.game)


@micropython.native
def frame(ctx, link, req, out):
    # What the LEDs show: a reading request never writes them itself (a change not yet shown,
    # from this burst of requests, is shown first, as it would be once the burst is handled).
    ctx.refresh()
    renderer = ctx.renderer
    out.field(b"scale", renderer.scale)
    out.field(b"ma", renderer.estimated_ma)
    out.key(b"rgb")
    out.hex_bytes(renderer.frame)


@micropython.native
def health(ctx, link, req, out):
    store = ctx.store
    out.field(b"up", ctx.up_s)
    out.field(b"heap", free_heap(ctx))
    out.field(b"saves", store.saves if store is not None else 0)
    out.field(b"serr", store.errors if store is not None else 0)
    if store is not None and store.last_error:
        out.key(b"slast")
        out.text(store.last_error)
    out.field(b"aerr", ctx.admission.errors)
    out.field(b"lost", ctx.ble.lost() if ctx.ble is not None else 0)
    if ctx.ble is not None:
        out.field(b"bconn", ctx.ble.connected())
        out.field(b"badv", 1 if ctx.ble.advertising else 0)
        out.field(b"bheld", ctx.ble.queued_most)
        out.field(b"bheap", ctx.ble.queued_most_bytes)
        out.field(b"bkept", ctx.ble.kept)
    out.field(b"bad", ctx.bad_lines)
    if ctx.web is not None:
        web_fields(ctx, out)


def web_fields(ctx, out):
    """The page's address and its sockets (a board that serves its page)."""
    net = ctx.net
    out.key(b"wifi")
    out.text(net.mode)
    if net.ip:
        out.key(b"web")
        out.text(b"http://")
        out.text(net.ip)
        if net.port != 80:
            out.byte(58)  # ':'
            out.number(net.port)
        out.byte(47)  # '/'
    out.key(b"name")
    out.text(net.name)
    out.field(b"wconn", ctx.web.sockets())


@micropython.native
def free_heap(ctx):
    """The free heap as last measured, at most HEAP_MS old: garbage not yet collected counts
    as used (docs/protocol.md). The app collects only when the heap runs out, and measuring
    walks the whole heap: a host polling health does not pay it every time."""
    now = ticks_ms()
    if ctx.heap_free < 0 or ticks_diff(now, ctx.heap_at) >= HEAP_MS:
        ctx.heap_free = _mem_free()
        ctx.heap_at = now
    return ctx.heap_free


def _mem_free():
    import gc  # (only when the figure is stale: at most once every HEAP_MS)

    return gc.mem_free() if hasattr(gc, "mem_free") else 0  # (CPython, tests: 0)


# --- the game -----------------------------------------------------------------------------------


@micropython.viper
def peg(ctx, link, req, out):
    # (Viper, the arguments read straight from the request: the board's most frequent request.)
    kinds = ptr8(req.kinds)
    if kinds[0] | kinds[1]:  # a word, not a number (ARG_INT is 0)
        raise GameError("bad_arg", "expected a number")
    args = ptr32(req.args)
    game = ctx.game
    if kinds[2] != 2:  # `peg P N F` (not ARG_NONE): only while P's front is F (since 1.3)
        front_is(game, req)
    out.field(b"r", int(game.score(args[0], args[1])))  # (score returns the revision)


def front_is(game, req):
    """A conditional peg's third argument: refused (`stale`) unless the player's front is that
    (a player that does not exist is the peg's own error)."""
    front = number(req, 2)
    player = req.args[0]
    if 0 <= player < game.players and game.front[player] != front:
        raise GameError("stale", "the front is not that")


@micropython.native
def set_pegs(ctx, link, req, out):
    game = ctx.game
    player = number(req, 0)
    if player < 0 or player >= game.players:
        raise GameError("bad_player", "no such player")
    game.set_pegs(player, number(req, 1), number(req, 2, game.back[player]))
    revision(ctx, out)


@micropython.native
def undo(ctx, link, req, out):
    ctx.game.undo()
    revision(ctx, out)


@micropython.native
def new(ctx, link, req, out):
    ctx.game.new_game(number(req, 0), number(req, 1))
    revision(ctx, out)


@micropython.native
def deal(ctx, link, req, out):
    game = ctx.game
    if req.arg_count():
        game.set_dealer(number(req, 0))
    else:
        game.next_dealer()
    out.field(b"d", game.dealer)


@micropython.native
def pend(ctx, link, req, out):
    ctx.game.set_pending(number(req, 0), number(req, 1))
    revision(ctx, out)


@micropython.native
def games(ctx, link, req, out):
    game = ctx.game
    word = req.word_arg(0)
    if req.arg_count() == 0:
        pass
    elif word == protocol.W_CLEAR and req.arg_count() == 1:
        game.reset_games()
    elif word == protocol.W_X2 and req.arg_count() == 2:
        game.set_skunk_double(flag(req, 1, "x2 takes 0 or 1"))
    else:
        raise GameError("bad_arg", "games [clear | x2 0|1]")
    games_fields(game, out)


def games_fields(game, out):
    out.key(b"g")
    out.numbers(game.games, game.players)
    out.field(b"x2", 1 if game.skunk_double else 0)


def match(ctx, link, req, out):
    game = ctx.game
    word = req.word_arg(0)
    count = req.arg_count()
    if count == 0:
        pass
    elif word == protocol.W_CLEAR and count == 1:
        game.end_match()
    elif (word == protocol.W_BEST or word == protocol.W_FIRST) and count == 2:
        kind = MATCH_FIRST_TO if word == protocol.W_FIRST else MATCH_BEST_OF
        game.start_match(kind, number(req, 1))
    else:
        raise GameError("bad_arg", "match [best N | first N | clear]")
    match_fields(game, out)


def match_fields(game, out):
    out.field(b"r", game.rev)
    out.field(b"m", game.match_len)
    out.field(b"mk", game.match_kind)
    out.field(b"mg", game.match_game)
    out.field(b"mn", game.match_no)


def hist(ctx, link, req, out):
    # A page of the board's finished games, oldest first, from game number `from` on (0: the
    # oldest kept), then `next`: the number to ask for the next page (0: this one reached the
    # newest).
    start = number(req, 0)
    if start < 0:
        raise GameError("bad_value", "hist takes a game number")
    history = ctx.game.history
    if history is None:  # (a board keeps one: a host's copy of the rules does not)
        history = History(0)
    count = history.count
    out.field(b"kept", count)
    out.field(b"most", history.kept)
    out.field(b"at", history.life())
    i = 0
    while i < count and history.game_of(i) < start:
        i += 1
    while i < count and out.n + HIST_ENTRY_ROOM <= HIST_REPLY_MOST:
        history.write(out, i)
        i += 1
    out.field(b"next", history.game_of(i) if i < count else 0)


# --- the LEDs -----------------------------------------------------------------------------------


def bright(ctx, link, req, out):
    if req.arg_count():
        value = number(req, 0)
        if value < 0 or value > MAX_BRIGHTNESS:
            raise GameError("bad_value", "brightness must be 0..255")
        if value != ctx.renderer.brightness:
            ctx.renderer.brightness = value
            ctx.settings_rev += 1
    settings_fields(ctx, out)


def budget(ctx, link, req, out):
    if req.arg_count():
        value = number(req, 0)
        if value < MIN_BUDGET_MA or value > MAX_BUDGET_MA:
            raise GameError("bad_value", "budget must be 150..10000 mA")
        if value != ctx.renderer.budget_ma:
            ctx.renderer.budget_ma = value
            ctx.settings_rev += 1
    settings_fields(ctx, out)


def test(ctx, link, req, out):
    ctx.selftest_requested = True  # the render task runs it; the game is untouched


@micropython.native
def settings_fields(ctx, out):
    out.field(b"bright", ctx.renderer.brightness)
    out.field(b"budget", ctx.renderer.budget_ma)


# --- links --------------------------------------------------------------------------------------


def admit(ctx, link, req, out):
    admission = ctx.admission
    word = req.word_arg(0)
    if req.arg_count() == 0:
        pass
    elif word == protocol.W_OPEN and req.arg_count() == 2:
        admission.set_open(flag(req, 1, "open takes 0 or 1"))
    elif word == protocol.W_CLEAR and req.arg_count() == 1:
        admission.clear(ctx.links)
    else:
        raise GameError("bad_arg", "admit [open 0|1 | clear]")
    admission_fields(ctx, out, link)


def brief(ctx, link, req, out):
    if req.arg_count():
        link.brief = flag(req, 0, "brief takes 0 or 1") == 1
    out.field(b"brief", 1 if link.brief else 0)


def every(ctx, link, req, out):
    # While any link has asked (ctx.every counts them), every request's change is pushed after
    # its reply: a host that tells its own changes from others' by the revisions needs that.
    if req.arg_count():
        wanted = flag(req, 0, "every takes 0 or 1") == 1
        if wanted != link.every:
            link.every = wanted
            ctx.every += 1 if wanted else -1
    out.field(b"every", 1 if link.every else 0)


@micropython.native
def admission_fields(ctx, out, link):
    admission = ctx.admission
    out.field(b"open", 1 if admission.open else 0)
    out.field(b"you", 1 if link is not None and link.trusted else 0)
    out.field(b"admitted", admission.count)


@micropython.native
def write_hello_fields(ctx, out):
    head = ctx.hello_head
    if head is None:  # (the first hello, at power-on: its fixed fields, once)
        head = ctx.hello_head = _hello_head(ctx)
    out.text(head)
    if ctx.stored:
        out.key(b"store")
        out.text(ctx.stored)
    if ctx.boot_fs:
        out.key(b"fs")
        out.text(ctx.boot_fs)
    if ctx.boot_failed:
        out.field(b"boots", ctx.boot_failed)
    if ctx.ble_name:
        out.key(b"ble")
        out.text(ctx.ble_name)
        if ctx.ble is not None:
            out.field(b"bmax", ctx.ble.max_centrals)


def _hello_head(ctx):
    """The hello's fields that stay as they are while the board runs (the protocol, firmware,
    board, layout and the verbs it takes), as bytes."""
    out = protocol.LineWriter(256)
    out.field(b"proto", protocol.PROTOCOL_MAJOR)
    out.byte(46)  # '.'
    out.number(protocol.PROTOCOL_MINOR)
    out.key(b"fw")
    out.text(ctx.firmware_version)
    out.key(b"board")
    out.text(ctx.profile_name)
    out.key(b"layout")
    out.text(b"crib121")
    out.field(b"holes", HOLES)
    out.field(b"max", protocol.MAX_LINE)
    out.key(b"caps")
    out.text(b",".join(protocol.VERBS))
    if ctx.uid:
        out.key(b"uid")
        out.text(ctx.uid)
    return bytes(out.buf[: out.n])


# --- a resend known from before a restart ------------------------------------------------------


def answer(ctx, link, req, out):
    """The reply's fields to a request whose id the board brought back from its flash with the
    game (cribfw/replies.py): not applied again, and its reply was not kept, so the verb's
    fields as the board is now. Only changes the board saves have such ids."""
    handler = HANDLERS[req.head[2]]
    if handler is deal:
        out.field(b"d", ctx.game.dealer)
    elif handler is games:
        games_fields(ctx.game, out)
    elif handler is bright or handler is budget:
        settings_fields(ctx, out)
    elif handler is match:
        match_fields(ctx.game, out)
    elif handler is not test:
        revision(ctx, out)


# In cribcore.protocol.VERB_TABLE's order.
HANDLERS = (
    hello,
    ping,
    state,
    peg,
    set_pegs,
    undo,
    new,
    deal,
    pend,
    games,
    bright,
    budget,
    frame,
    test,
    admit,
    brief,
    health,
    every,
    match,
    hist,
)
