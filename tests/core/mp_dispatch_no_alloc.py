# MicroPython only (run by mprun.py): once warmed up, handling score command lines allocates
# nothing: assembling the line, parsing it, applying it, the reply (or the remembered reply of a
# resend) and the state event written to the link.
#
# The lines go through a LineAssembler wired to the dispatcher as the USB link wires its own; the
# link's reading of stdin (UsbLink.drain / run) is not part of what this proves.
import micropython
from checks import FakePixels

from cribcore.layout import HOLES
from cribcore.profiles import PROFILES
from cribfw.app import App
from cribfw.linebuffer import LineAssembler


class NullOut:
    """A link's output stream that discards what it is given."""

    def __init__(self):
        self.writes = 0

    def write(self, buf, n):  # (a MicroPython stream's write(buf, max_len))
        self.writes += 1


def app():
    out = NullOut()
    stdin = open("/dev/null", "rb")  # the USB link polls it; the lines come through feed()
    app = App(FakePixels(HOLES), stdin, out, PROFILES["sim"])
    board, dispatcher, usb = app.ctx.game, app.dispatcher, app.usb
    lines = LineAssembler(usb, dispatcher.handle_line, dispatcher.line_too_long)
    return board, lines, out, dispatcher


def feed_locked(lines, data, rounds, input_done=None):
    """Feed every line of `data` `rounds` times with the heap locked; with `input_done`, call it
    after each line (as the USB link does when each line comes alone: the event, the LEDs)."""
    micropython.heap_lock()
    try:
        for _ in range(rounds):
            for line in data:
                lines.feed(line, len(line))
                if input_done is not None:
                    input_done()
    finally:
        micropython.heap_unlock()


def test_score_lines_allocate_nothing():
    board, lines, out, dispatcher = app()
    data = (b"#12 peg 0 3\n", b"peg 1 2\n")
    for line in data * 3:  # warm up
        lines.feed(line, len(line))
        dispatcher.input_done()
    writes = out.writes
    feed_locked(lines, data, 20, dispatcher.input_done)
    # "#12 peg 0 3" was applied once: the later ones are resends, answered from memory
    assert board.front[0] == 3 and board.front[1] == 2 * 23
    assert out.writes == writes + 20 * 3  # per round: the resend's reply, a reply and an event


def test_score_lines_with_new_ids_allocate_nothing():
    board, lines, out, dispatcher = app()
    data = [b"#s%d peg 0 1\n" % i for i in range(20)] + [
        b"#t%d pend 1 %d\n" % (i, i + 1) for i in range(8)
    ]
    lines.feed(b"#w peg 1 1\n", 11)  # warm up
    dispatcher.input_done()
    writes = out.writes
    feed_locked(lines, data, 1)  # as from a host that pipelines: every reply first,
    dispatcher.input_done()  # then one event with the state after the last
    assert out.writes == writes + len(data) + 1
    assert board.front[0] == 20 and board.pending[1] == 8


def test_other_game_lines_allocate_nothing():
    board, lines, out, dispatcher = app()
    data = (
        b"#a ping\n",
        b"st\n",
        b"pend 0 5\n",
        b"peg 0 5\n",
        b"undo\n",
        b"deal\n",
        b"#u set 1 9 4\n",
    )
    for line in data:  # warm up
        lines.feed(line, len(line))
        dispatcher.input_done()
    feed_locked(lines, data, 5, dispatcher.input_done)
    assert board.dealer == 0  # passed on six times


def test_bad_lines_allocate_nothing():
    board, lines, out, _ = app()
    data = (
        b"peg 0 x\n",
        b"bogus\n",
        b"#1\n",
        b"peg 0\x03 1\n",
        b"peg 0 1 2 3\n",
        b"peg " + b"9" * 80 + b"\n",
    )
    for line in data:  # warm up
        lines.feed(line, len(line))
    writes = out.writes
    feed_locked(lines, data, 5)
    assert out.writes == writes + 5 * len(data) and board.rev == 0


def test_showing_each_change_on_the_leds_allocates_nothing():
    # As the USB link does once it has handled what it read: the change drawn and written.
    out = NullOut()
    the_app = App(FakePixels(HOLES), open("/dev/null", "rb"), out, PROFILES["sim"])
    dispatcher, usb = the_app.dispatcher, the_app.usb
    lines = LineAssembler(usb, dispatcher.handle_line, dispatcher.line_too_long)
    pixels = the_app.ctx.renderer.pixels
    data = (b"peg 0 3\n", b"frame\n", b"undo\n", b"pend 1 4\n", b"pend 1 0\n")

    def rounds(count):
        for _ in range(count):
            for line in data:
                lines.feed(line, len(line))
                dispatcher.input_done()

    rounds(2)  # warm up
    writes = pixels.writes
    micropython.heap_lock()
    try:
        rounds(10)
    finally:
        micropython.heap_unlock()
    assert pixels.writes == writes + 40  # a frame for each change, none for reading it


def test_conditional_score_lines_allocate_nothing():
    # `@REV` and a peg's front (since 1.3): each line pegs only while the board is as it says.
    board, lines, out, dispatcher = app()
    for line in (b"#x1 @0 peg 1 1\n", b"#x2 peg 1 1 1\n", b"#x3 undo\n", b"#x4 undo\n"):
        lines.feed(line, len(line))  # warm up
    dispatcher.input_done()
    rev = board.rev
    data = [b"#w%d @%d peg 0 1\n" % (i, rev + i) for i in range(10)]
    data += [b"#f%d peg 1 2 %d\n" % (i, 2 * i) for i in range(10)]
    data += [b"@3 st\n"]  # (stale: answered without an exception)
    feed_locked(lines, data, 1, dispatcher.input_done)
    assert board.front[0] == 10 and board.front[1] == 20


def test_resends_known_from_before_a_restart_allocate_nothing():
    # The ids a record brought back (cribfw/replies.py): answered from the board as it is now.
    board, lines, out, dispatcher = app()
    dispatcher.ctx.books.restore([(b"\xff" * 7, [b"a1", b"a2", b"a3"])])
    data = (b"#a1 peg 0 3\n", b"#a2 deal\n", b"#a3 games x2 1\n")
    for line in data:  # warm up
        lines.feed(line, len(line))
    writes = out.writes
    feed_locked(lines, data, 5, dispatcher.input_done)
    assert board.front[0] == 0 and board.dealer == 0 and not board.skunk_double
    assert out.writes == writes + 15
