# Protocol tests: the literal vectors of vectors.py against the real firmware (the app as
# cribfw.app.App wires it, its USB link reading the bytes through select.poll), and the host
# side of the codec (encode_request, decode_line, decode_state) both ways.
# Runs under CPython (pytest) and MicroPython (mprun.py): plain asserts, nothing MicroPython lacks.
import os
import sys

import vectors as V
from checks import FakePixels

from cribboard import wire as W
from cribcore import protocol as P
from cribcore.layout import HOLES
from cribcore.profiles import PROFILES
from cribfw.app import App
from cribfw.usblink import UsbLink

# --- a board to talk to ---------------------------------------------------------------------------


def _temp_dir():
    try:
        import tempfile
    except ImportError:  # MicroPython
        return "/tmp"
    return tempfile.gettempdir()


def _input_stream():
    """(writer, reader): bytes written to writer become readable on reader, a real file that
    select.poll accepts on both interpreters (MicroPython's unix port has no os.pipe)."""
    name = "".join("%02x" % b for b in os.urandom(6))
    path = _temp_dir() + "/cribboard-protocol-" + name
    writer = open(path, "wb", buffering=0)
    reader = open(path, "rb", buffering=0)
    os.remove(path)
    return writer, reader


CENTRAL = b"\x00\x1a\x7d\xda\x71\x13\x01"  # the second link's address: a sender of its own


class Out:
    """The link's output stream: collects what the firmware writes, one line per write."""

    def __init__(self):
        self.lines = []

    def write(self, buf, n):  # (a MicroPython stream's write(buf, max_len))
        line = bytes(buf[:n])
        assert line.endswith(b"\n") and line.count(b"\n") == 1, "not one line: %r" % line
        self.lines.append(line)

    def take(self):
        lines = self.lines
        self.lines = []
        return lines


class Session:
    """A fresh board (profile "sim") and its USB link; send() writes bytes to the link's input and
    lets the link read them exactly as the app does."""

    def __init__(self):
        self.out = Out()
        self._writer, self._reader = _input_stream()
        app = App(FakePixels(HOLES), self._reader, self.out, PROFILES["sim"])
        self.board, self.renderer, self.dispatcher = app.ctx.game, app.ctx.renderer, app.dispatcher
        self.link = app.usb
        self._files = [self._writer, self._reader]

    def feed(self, data):
        self._writer.write(data)
        self.link.handle_ready()

    def send(self, data):
        """Feed `data`, return the lines written back."""
        self.feed(data)
        return self.out.take()

    def add_link(self, address=CENTRAL):
        """A second link on the same dispatcher, a sender of its own (as a Bluetooth central at
        `address`, trusted); returns a send(data) function for it and its Out."""
        writer, reader = _input_stream()
        self._files += [writer, reader]
        out = Out()
        link = UsbLink(reader, out, self.dispatcher)
        link.address = address
        link.recent = self.dispatcher.ctx.books.join(address, lambda known: False)
        self.dispatcher.add_link(link)

        def send(data):
            writer.write(data)
            link.handle_ready()

        return send, out

    def close(self):
        for f in self._files:
            f.close()


def snapshot(board, renderer):
    """Everything a request may change."""
    return (
        board.rev,
        board.target,
        board.players,
        board.dealer,
        board.winner,
        board.award,
        list(board.front),
        list(board.back),
        list(board.games),
        list(board.pending),
        board.undo_count,
        board.skunk_double,
        board.game_no,
        (board.match_len, board.match_kind, board.match_game, board.match_no),
        board.history.count,
        renderer.brightness,
        renderer.budget_ma,
    )


def board_state(board):
    """The board's state as decode_state names it."""
    n = board.players
    return {
        "rev": board.rev,
        "target": board.target,
        "players": n,
        "dealer": board.dealer,
        "winner": board.winner,
        "result": board.result(),
        "front": list(board.front[:n]),
        "back": list(board.back[:n]),
        "games": list(board.games[:n]),
        "pending": list(board.pending[:n]),
        "undo": board.undo_count,
        "skunk_double": 1 if board.skunk_double else 0,
        "game": board.game_no,
        "match": board.match_len,
        "match_kind": board.match_kind,
        "match_game": board.match_game,
        "match_number": board.match_no,
    }


def request_id(data):
    """The id of a request line (spaces before it allowed), or None."""
    data = data.lstrip(b" ")
    if not data.startswith(b"#"):
        return None
    end = 1
    while end < len(data) and data[end] not in b" \r\n":
        end += 1
    return data[1:end].decode() if end > 1 else None


def request_verb(data):
    words = data.strip().split(b" ")
    if words and words[0].startswith(b"#"):
        words = words[1:]
    if words and words[0].startswith(b"@"):  # a condition (`@REV`)
        words = words[1:]
    return words[0] if words else b""


# --- the vectors against the firmware --------------------------------------------------------


def _run_session(steps):
    """Run a vectors session (VECTORS, RULES) on a fresh board: every step's lines exactly, the
    state its events show the board's own, nothing changed where no event says so; returns the
    last step's lines and the board's state after it."""
    s = Session()
    try:
        for data, expected in steps:
            before = snapshot(s.board, s.renderer)
            got = s.send(data)
            assert got == expected, "%r: got %r, expected %r" % (data, got, expected)
            state_event = cfg_event = False
            for line in expected:
                if line.startswith(b"! st "):
                    state_event = True
                    event = W.decode_line(line)
                    assert W.decode_state(event.fields) == board_state(s.board), line
                elif line.startswith(b"! p ") or line.startswith(b"! q "):
                    state_event = True  # a brief event: the one change it names, and its rev
                    event = W.decode_line(line)
                    rev, player, values = W.decode_brief(event)
                    board = s.board
                    assert rev == board.rev == before[0] + 1, line
                    if event.name == W.BRIEF_PEG:
                        assert values == [board.front[player], board.back[player]], line
                    else:
                        assert values == [board.pending[player]], line
                cfg_event = cfg_event or line.startswith(b"! cfg ")
            after = snapshot(s.board, s.renderer)
            if not state_event:  # no event, no change: errors and resends apply nothing
                assert after[:15] == before[:15], "%r changed the board" % data
            if not cfg_event:
                assert after[15:] == before[15:], "%r changed the settings" % data
        return got, board_state(s.board)
    finally:
        s.close()


def test_vectors_against_the_firmware():
    got, state = _run_session(V.VECTORS)
    end = W.decode_line(got[0])
    assert W.decode_state(end.fields) == V.END_STATE
    assert state == V.END_STATE


def test_the_rules_session_against_the_firmware():
    got, state = _run_session(V.RULES)
    assert W.decode_state(W.decode_line(got[0]).fields) == state


def test_the_match_session_against_the_firmware():
    got, state = _run_session(V.MATCH)
    assert W.decode_line(got[0]).code == "bad_arg"
    assert state["match_game"] == 2 and state["game"] == 3


def test_vectors_cover_every_verb_and_error_code():
    verbs = set()
    codes = set()
    for data, lines in V.VECTORS + V.MATCH:
        verbs.add(request_verb(data))
        for line in lines:
            decoded = W.decode_line(line)
            if decoded.kind == "err":
                codes.add(decoded.code)
    for verb in P.VERBS:
        # health's reply carries the uptime and free heap: test_health_reports_the_board, not
        # a literal vector
        assert verb in verbs or verb == b"health", verb
    for code in codes:
        assert code in P.ERROR_CODES, code
    for _sender, _data, lines0, lines1 in V.ADMISSION:
        for line in lines0 + lines1:
            decoded = W.decode_line(line)
            if decoded.kind == "err":
                codes.add(decoded.code)
    for code in P.ERROR_CODES:
        # busy: flow control, sent only by a BLE link whose input overflowed
        assert code in codes or code == "busy", code


def test_exactly_one_reply_per_request_with_its_id():
    for data, lines in V.VECTORS:
        if not lines:
            assert not data.strip(), data  # only blank lines go unanswered
            continue
        reply = W.decode_line(lines[0])
        assert reply.kind in ("ok", "err"), lines
        for line in lines[1:]:
            assert W.decode_line(line).kind == "event", lines
        if reply.kind == "ok" or reply.request_id is not None:
            # an error to a line whose id could not be read carries no id
            assert reply.request_id == request_id(data), (data, lines[0])


def test_every_line_the_firmware_writes_decodes_and_reencodes():
    """decode_line loses nothing: the decoded parts rebuild the line (fields in any order)."""
    for _data, lines in V.VECTORS:
        for line in lines:
            d = W.decode_line(line)
            words = line[:-1].decode().split(" ")
            head = []
            if d.kind == "event":
                head = ["!", d.name]
            else:
                if d.request_id is not None:
                    head.append("#" + d.request_id)
                head.append(d.kind)
            if d.kind == "err":
                assert " ".join(head + [d.code, d.text]) == line[:-1].decode()
                continue
            fields = sorted([k + "=" + v for k, v in d.fields.items()])
            assert head == words[: len(head)], line
            assert sorted(fields + d.words) == sorted(words[len(head) :]), line


# Errors about the line itself, whatever the board's state.
MALFORMED = ("bad_line", "unknown", "bad_arg", "too_long")


def test_malformed_lines_leave_the_state_unchanged():
    s = Session()
    try:
        s.send(b"peg 0 12\npeg 1 5\npend 1 3\nbright 90\n")
        state_line = s.send(b"st\n")
        before = snapshot(s.board, s.renderer)
        malformed = 0
        for data, expected in V.VECTORS:
            reply = W.decode_line(expected[0]) if expected else None
            if reply and reply.kind == "err" and reply.code in MALFORMED:
                malformed += 1
                got = s.send(data)
                assert got == expected, (data, got)
        assert malformed > 40
        assert s.send(b"st\n") == state_line
        assert snapshot(s.board, s.renderer) == before
    finally:
        s.close()


def _run_two_links(steps, address=None):
    """Run TWO_LINKS-style steps; with `address`, link 1 is a Bluetooth central that is not
    admitted (trusted False, that address)."""
    s = Session()
    try:
        send1, out1 = s.add_link()
        if address is not None:
            link1 = s.dispatcher.ctx.links[-1]
            link1.trusted = False
            link1.address = address
        sends = (s.feed, send1)
        for sender, data, lines0, lines1 in steps:
            before = snapshot(s.board, s.renderer)
            if sender == "button":
                s.board.peg(data[0], data[1])
                s.dispatcher.publish_if_changed()
            elif sender == "start":
                s.dispatcher.announce()
            elif sender == "tap":
                s.dispatcher.ctx.admission.take_tap()
                s.dispatcher.publish_if_changed()
            else:
                sends[sender](data)
            got0 = s.out.take()
            got1 = out1.take()
            assert got0 == lines0, (sender, data, got0)
            assert got1 == lines1, (sender, data, got1)
            for line in lines0 + lines1:
                if line.startswith(b"#") or line.startswith(b"ok") or line.startswith(b"err"):
                    if W.decode_line(line).code == "denied":  # refused: nothing changed
                        assert snapshot(s.board, s.renderer) == before, (sender, data)
    finally:
        s.close()


def test_events_reach_every_link_and_ids_are_per_sender():
    _run_two_links(V.TWO_LINKS)


def test_a_central_changes_the_board_only_once_admitted():
    _run_two_links(V.ADMISSION, V.ADMISSION_ADDRESS)


NO_MATCH = b" gn=1 m=0 mk=0 mg=0 mn=0\n"  # a state's end: the board's first game, no match


def test_requests_read_together_get_their_replies_then_one_event_unless_a_link_asks_every():
    # A host that pipelines: each reply as its request is handled, then the state once, after
    # the last change; the other link (asking for brief events) gets that state as `! st` too.
    s = Session()
    try:
        send1, out1 = s.add_link()
        send1(b"brief 1\n")
        assert out1.take() == [b"ok brief=1\n"]
        got = s.send(b"#a peg 0 5\n#b peg 1 3\n#c ping\n#d peg 0 2\n")
        event = b"! st r=3 t=121 n=2 d=0 w=-1 x=0 f=7,3 b=5,0 g=0,0 q=0,0 u=3 x2=0" + NO_MATCH
        assert got == [b"#a ok r=1\n", b"#b ok r=2\n", b"#c ok\n", b"#d ok r=3\n", event]
        assert out1.take() == [event]
        # One request at a time: its reply, then its event (brief on the link that asked).
        event = b"! st r=4 t=121 n=2 d=0 w=-1 x=0 f=7,7 b=5,3 g=0,0 q=0,0 u=4 x2=0" + NO_MATCH
        assert s.send(b"#e peg 1 4\n") == [b"#e ok r=4\n", event]
        assert out1.take() == [b"! p 4 1 7 3\n"]
        assert s.send(b"#f ping\n") == [b"#f ok\n"] and out1.take() == []  # nothing changed
        # While a link asks for an event after every request, requests read together get
        # theirs one by one, on every link; once it stops asking, once again.
        send1(b"every 1\n")
        assert out1.take() == [b"ok every=1\n"]
        got = s.send(b"#g peg 0 1\n#h peg 0 2\n")
        assert [line.split(b" r=")[0] for line in got] == [b"#g ok", b"! st", b"#h ok", b"! st"]
        assert b" f=8,7 " in got[1] and b" f=10,7 " in got[3]
        assert out1.take() == [b"! p 5 0 8 7\n", b"! p 6 0 10 8\n"]
        send1(b"every 0\n")
        assert out1.take() == [b"ok every=0\n"]
        assert len(s.send(b"#i peg 1 1\n#j peg 1 1\n")) == 3  # two replies, one event
    finally:
        s.close()


# --- the host side of the codec ----------------------------------------------------------


def _parse(data):
    req = P.Request()
    body = data[:-1]
    for i in range(len(body)):
        req.line[i] = body[i]
    return req, P.parse_request(req, len(body))


def test_encode_vectors_both_ways():
    for call, expected in V.ENCODE_VECTORS:
        assert W.encode_request(*call) == expected, (call, expected)
        # ...and the firmware's parser reads back what was encoded
        req, code = _parse(expected)
        assert code == (P.E_IF_REV if len(call) > 3 else P.E_OK), expected
        id_start, id_end, verb, argc, if_rev = req.head
        assert P.VERBS[verb] == call[0].encode()
        assert if_rev == (call[3] if len(call) > 3 else -1), expected
        args = call[1] if len(call) > 1 else ()
        assert argc == len(args) == req.arg_count()
        for i in range(len(args)):
            if isinstance(args[i], int):
                assert req.int_arg(i, None) == args[i], expected
            else:
                assert P.WORDS[req.word_arg(i)] == args[i].encode(), expected
        rid = call[2] if len(call) > 2 else None
        if rid is None:
            assert id_start == id_end  # no id
        else:
            assert bytes(req.line[id_start:id_end]) == str(rid).encode()


def test_encode_rejects():
    for call in V.ENCODE_REJECTS:
        try:
            W.encode_request(*call)
        except ValueError:
            continue
        raise AssertionError("encode_request%r was accepted" % (call,))


def test_decode_vectors():
    for line, parts, state in V.DECODE_VECTORS:
        for given in (line, bytearray(line), line.decode()):
            d = W.decode_line(given)
            got = (d.kind, d.request_id, d.name, d.fields, d.code, d.text)
            assert got == parts, (line, got)
            assert W.decode_state(d.fields) == state, line


def test_decode_rejects():
    for line in V.DECODE_REJECTS:
        try:
            W.decode_line(line)
        except ValueError:
            continue
        raise AssertionError("decode_line(%r) was accepted" % line)


def test_decode_state_merges_partial_updates():
    full = W.decode_state(
        W.decode_line(b"! st r=1 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0\n").fields
    )
    full.update(W.decode_state(W.decode_line(b"#a1b2 ok r=3\n").fields))
    full.update(W.decode_state(W.decode_line(b"ok d=1\n").fields))
    assert full["rev"] == 3 and full["dealer"] == 1 and full["front"] == [12, 0]


def test_frame_reply_decodes():
    d = W.decode_line(b"#4 ok " + V.FRESH_FRAME + b"\n")
    rgb = W.decode_frame(d.fields["rgb"])
    assert rgb == V.FRESH_FRAME_RGB and len(rgb) == 3 * HOLES
    assert d.fields["scale"] == "129"


def test_typical_commands_fit_one_ble_packet():
    """A default BLE ATT MTU of 23 leaves 20 bytes per packet."""
    typical = (
        ("peg", (0, 12), "a1b2"),
        ("peg", (1, 29), "12345678"),
        ("set", (0, 120, 110), "a1b2"),
        ("pend", (1, 29), "a1b2"),
        ("new", (121, 3), "a1b2"),
        ("deal", (2,), "a1b2"),
        ("undo", (), "12345678"),
        ("games", ("x2", 1), "a1b2"),
        ("bright", (255,), "a1b2"),
        ("budget", (10000,), "a1b2"),
        ("ping", (), "12345678"),
        ("hello", (), "12345678"),
    )
    for call in typical:
        assert len(W.encode_request(*call)) <= 20, call
    assert W.encode_request("peg", (0, 12), "a1b2") == b"#a1b2 peg 0 12\n"
    assert len(b"#a1b2 peg 0 12\n") == 15
    assert P.MAX_LINE == 64


def test_error_codes_are_stable():
    assert len(set(P.ERROR_CODES)) == len(P.ERROR_CODES)
    for i in range(1, len(P.PARSE_ERRORS)):
        code, text = P.PARSE_ERRORS[i]
        if i == P.E_EMPTY or i == P.E_IF_REV:
            assert code == b"" and text == b""  # a blank line gets no reply; E_IF_REV: read
        else:
            assert code.decode() in P.ERROR_CODES and text
    for code in P.ERROR_CODES:
        assert 0 < len(code) <= 16 and code == code.lower() and " " not in code


# --- the protocol document quotes only real bytes ---------------------------------------


def _byte_literals(text):
    found = []
    i = text.find('b"')
    while i >= 0:
        if i == 0 or not (text[i - 1].isalpha() or text[i - 1].isdigit() or text[i - 1] == "_"):
            j = i + 2
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            found.append(eval(text[i : j + 1]))
            i = j
        i = text.find('b"', i + 1)
    return found


def _mask_fw(line):
    """The firmware version is whatever version.py says: the document's may be older."""
    i = line.find(b" fw=")
    if i < 0:
        return line
    j = line.find(b" ", i + 1)
    return line[:i] + b" fw=*" + (line[j:] if j >= 0 else b"")


def _document():
    here = __file__.replace("\\", "/")
    parts = here.split("/")
    root = "/".join(parts[:-3]) if len(parts) > 3 else "."
    try:
        with open(root + "/docs/protocol.md") as f:
            return f.read()
    except OSError:
        return None


def test_document_examples_are_real_bytes():
    text = _document()
    assert text is not None, "docs/protocol.md not found"
    known = set()
    for data, lines in V.VECTORS + V.RULES + V.MATCH:
        known.add(data)
        for line in lines:
            known.add(line)
    for step in V.TWO_LINKS + V.ADMISSION:
        if isinstance(step[1], bytes):
            known.add(step[1])
        for line in step[2] + step[3]:
            known.add(line)
    for _call, data in V.ENCODE_VECTORS:
        known.add(data)
    for line, _parts, _state in V.DECODE_VECTORS:
        known.add(line)
    for line in V.DECODE_REJECTS:
        known.add(line)
    known = set(_mask_fw(k) for k in known)
    literals = _byte_literals(text)
    assert len(literals) > 30
    for literal in literals:
        assert _mask_fw(literal) in known, (
            "docs/protocol.md quotes %r, not in the vectors" % literal
        )


def test_every_error_text_the_board_sends_is_in_the_documents_table():
    """Section 8 lists, per code, every text the board sends: each error line of the vectors'
    sessions is there, in its code's row."""
    text = _document()
    assert text is not None, "docs/protocol.md not found"
    table = text[text.find("## 8. Error codes") :]
    table = table[: table.find("\n## ")]
    rows = {}
    for row in table.split("\n"):
        if row.startswith("| `"):
            rows[row[3 : row.find("`", 3)]] = row
    lines = []
    for _data, got in V.VECTORS + V.RULES + V.MATCH:
        lines += got
    for step in V.TWO_LINKS + V.ADMISSION:
        lines += step[2] + step[3]
    checked = 0
    for line in lines:
        decoded = W.decode_line(line)
        if decoded.kind == "err":
            quoted = "`" + decoded.text.replace("|", "\\|") + "`"
            row = rows[decoded.code]
            assert quoted in row, "section 8 lacks %s for %s" % (quoted, decoded.code)
            checked += 1
    assert checked > 30


def test_every_remembered_reply_fits_the_memory_with_the_longest_id():
    """A reply too long for RECENT_REPLY would silently not be remembered (and a resend would
    run again): every reply a non-reading request gets must fit with an 8-character id."""
    from cribfw.replies import RECENT_REPLY

    longest = b""
    for data, lines in V.VECTORS + V.MATCH:
        if not lines or request_verb(data) in (b"hello", b"ping", b"st", b"frame", b"hist"):
            continue
        reply = W.decode_line(lines[0])
        if reply.kind == "err" and reply.code == "denied":
            continue  # never remembered
        text = lines[0]
        if reply.request_id is not None:
            text = text[len(reply.request_id) + 2 :]
        text = b"#12345678 " + text
        if len(text) > len(longest):
            longest = text
    assert len(longest) <= RECENT_REPLY, longest


def test_health_reports_the_board():
    s = Session()
    try:
        s.send(b"#1 peg 9 1\n")  # errors count only when they are not requests at all
        s.send(b"\x01\n")
        s.send(b"nonsense\n")
        s.send(b"x" * 100 + b"\n")
        got = s.send(b"#h health\n")
        assert len(got) == 1, got
        reply = W.decode_line(got[0])
        assert reply.kind == "ok" and reply.request_id == "h"
        fields = reply.fields
        assert sorted(fields) == ["aerr", "bad", "heap", "lost", "saves", "serr", "up"], fields
        assert int(fields["up"]) >= 0
        # The free heap: MicroPython's gc.mem_free(); CPython has no such figure (0).
        assert (int(fields["heap"]) > 0) == (sys.implementation.name == "micropython")
        # No store, no radio on this bare board: nothing saved, nothing lost; three bad lines.
        assert [fields[k] for k in ("saves", "serr", "aerr", "lost", "bad")] == [
            "0",
            "0",
            "0",
            "0",
            "3",
        ]
        assert s.send(b"health 1\n") == [b"err bad_arg wrong number of arguments\n"]
        # It only reads: not remembered, so the same id runs again.
        assert W.decode_line(s.send(b"#h health\n")[0]).fields["bad"] == "3"
    finally:
        s.close()


def test_the_hello_event_carries_every_field_of_the_hello_reply():
    """The `! hello` a board pushes when it starts is the hello reply's fields whole, with the
    longest values a board's start can give them (a cut line would lose the Bluetooth name)."""
    s = Session()
    try:
        ctx = s.dispatcher.ctx
        ctx.stored = b"fresh-version"
        ctx.boot_fs = b"formatted"
        ctx.boot_failed = 99
        ctx.ble_name = b"Cribboard-FFFF"
        ctx.firmware_version = b"10.10.10-dev"
        reply = s.send(b"hello\n")[0]
        s.dispatcher.announce()
        assert s.out.take() == [b"! hello" + reply[2:]], reply
        assert reply.endswith(b" ble=Cribboard-FFFF\n"), reply
    finally:
        s.close()


def test_a_too_long_line_ending_in_its_id_and_crlf_keeps_the_id():
    """ "\\r\\n" ends a line as "\\n" does, also after the id of a line too long to keep; a
    "\\r" inside the line is not part of an id."""
    s = Session()
    try:
        assert s.send(b" " * 70 + b"#abc\r\n") == [b"#abc err too_long line too long\n"]
        assert s.send(b" " * 70 + b"#abc\n") == [b"#abc err too_long line too long\n"]
        assert s.send(b" " * 70 + b"#abc\rx\n") == [b"err too_long line too long\n"]
        assert s.send(b"#abd\r" + b" " * 70 + b"\r\n") == [b"err too_long line too long\n"]
    finally:
        s.close()


def test_health_counts_a_bad_line_once_however_often_it_is_resent():
    """`bad` counts the request lines the board could not read; a resend answered from memory
    is not counted again, for a too-long line as for any other."""
    s = Session()
    try:
        long_line = b" " * 70 + b"#t1\n"
        for line in (long_line, long_line, b"#u1 pegg 0 1\n", b"#u1 pegg 0 1\n", b"#b1 #\n"):
            assert len(s.send(line)) == 1
        reply = s.send(b"health\n")[0]
        assert reply.startswith(b"ok ") and reply.endswith(b" bad=3\n"), reply
    finally:
        s.close()


def test_a_line_too_long_for_its_writer_is_cut_and_still_ends():
    # Words and numbers go in whole when they fit, byte by byte up to the end when not.
    out = P.LineWriter(12)
    out.text(b"ok r=")
    out.number(-123)
    assert (bytes(out.buf[: out.n]), out.overflow) == (b"ok r=-123", False)
    out.key(b"f")
    out.number(4567)
    out.end()
    assert out.overflow and bytes(out.buf[: out.n]) == b"ok r=-123 f\n"
    out.reset()
    out.text(b"0123456789")
    out.hex_bytes(b"\xab\xcd")
    out.end()
    assert out.overflow and bytes(out.buf[: out.n]) == b"0123456789a\n"
    out.reset()
    out.number(0)
    out.byte(32)
    out.hex_bytes(b"\x0f\xf0")
    assert bytes(out.buf[: out.n]) == b"0 0ff0" and not out.overflow


def test_the_state_is_the_same_written_in_place_or_aside_and_cut():
    # A writer with room for the longest state gets the fields in place; a shorter one gets
    # them written aside and cut as any line is: the same bytes up to its end.
    from cribcore.state import GameState

    game = GameState(players=3)
    game.peg(0, 12)
    game.peg(1, 5)
    game.set_pending(2, 29)
    game.set_dealer(2)
    roomy = P.LineWriter(P.STATE_ROOM + 8)
    P.write_state_event(roomy, game)
    line = bytes(roomy.buf[: roomy.n])
    assert line.startswith(b"! st r=") and line.endswith(b" u=3 x2=0" + NO_MATCH)
    assert not roomy.overflow
    assert b" f=12,5,0 b=0,0,0 g=0,0,0 q=0,0,29 " in line and b" d=2 w=-1 " in line
    for size in (12, 40, len(line) - 1, len(line), len(line) + 1):
        short = P.LineWriter(size)
        P.write_state_event(short, game)
        cut = bytes(short.buf[: short.n])
        if size >= len(line):
            assert cut == line and not short.overflow
        else:
            assert cut == line[: size - 1] + b"\n" and short.overflow


def test_frame_reads_what_the_leds_show_without_writing_them():
    s = Session()
    pixels = s.renderer.pixels
    s.send(b"peg 0 5\n")
    first = s.send(b"frame\n")  # the peg not shown yet (no tick, no burst's end): shown now
    writes = pixels.writes
    for _ in range(3):
        assert s.send(b"frame\n") == first
    assert pixels.writes == writes  # reading it again writes nothing
    rgb = W.decode_frame(W.decode_line(first[0]).fields["rgb"])
    assert rgb == bytes(s.renderer.frame) and rgb != bytes(3 * HOLES)


class _Board:
    """Any state's fields, as numbers a board may hold (the writer reads only these)."""

    def __init__(self, seed):
        rng = seed * 7919 + 13
        values = []
        for _ in range(20):
            rng = (rng * 1103515245 + 12345) % 2147483648
            values.append(rng)
        players = 2 + values[0] % 2
        big = (0, 1, 9, 10, 99, 100, 121, 999999, 1000000000, 2147483647)
        self.players = players
        self.rev = big[values[1] % len(big)]
        self.target = 61 + values[2] % 61
        self.dealer = values[3] % players - (1 if seed % 5 == 0 else 0)
        self.winner = -1 if seed % 3 else values[4] % players
        self.front = [values[5 + i] % 122 for i in range(3)]
        self.back = [values[8 + i] % 122 for i in range(3)]
        self.games = [big[values[11 + i] % len(big)] for i in range(3)]
        self.pending = [
            -(values[14 + i] % 30) if seed % 7 == 0 else values[14 + i] % 30 for i in range(3)
        ]
        self.undo_count = values[17] % 64
        self.skunk_double = seed % 2 == 0
        self.game_no = big[values[19] % len(big)]
        self.match_len = values[18] % 16
        # Without a match its kind and game are 0 (GameState's rule, which the writer relies on).
        self.match_kind = values[17] % 2 if self.match_len else 0
        self.match_game = big[values[16] % len(big)] if self.match_len else 0
        self.match_no = big[values[15] % len(big)]
        # As GameState.result(): playing (0) until there is a winner.
        self._result = values[18] % 4 if self.winner >= 0 else 0

    def result(self):
        return self._result

    def expected(self):
        """The fields as plain formatting writes them."""
        n = self.players

        def join(values):
            return ",".join(str(v) for v in values[:n])

        return (
            " r=%d t=%d n=%d d=%d w=%d x=%d f=%s b=%s g=%s q=%s u=%d x2=%d gn=%d m=%d mk=%d"
            " mg=%d mn=%d"
            % (
                self.rev,
                self.target,
                n,
                self.dealer,
                self.winner,
                self._result,
                join(self.front),
                join(self.back),
                join(self.games),
                join(self.pending),
                self.undo_count,
                1 if self.skunk_double else 0,
                self.game_no,
                self.match_len,
                self.match_kind,
                self.match_game,
                self.match_no,
            )
        ).encode()


def test_the_state_writer_equals_plain_formatting_on_every_interpreter():
    # On a board the state's fields are written by native code (viper); its plain twin is the
    # same source run as Python (CPython here). Both must write what plain formatting writes,
    # for every number a field may hold, negative and 10-digit ones included.
    from cribcore.state import NO_WINNER, PLAYING

    assert PLAYING == 0 and NO_WINNER < 0  # (the writer's shortcut for a game without a winner)
    buf = bytearray(P.STATE_LINE_ROOM + 4)
    for seed in range(300):
        board = _Board(seed)
        expected = board.expected()
        for line, head, tail, room in (
            (0, b"", b"", P.STATE_ROOM),
            (1, b"! st", b"\n", P.STATE_LINE_ROOM),
        ):
            buf[:] = b"\xff" * len(buf)
            end = P.state_into(buf, 2, board, line)
            assert bytes(buf[2:end]) == head + expected + tail, (seed, line, bytes(buf[2:end]))
            assert buf[0] == 0xFF and buf[1] == 0xFF and buf[end] == 0xFF  # nothing else touched
            assert end - 2 <= room


def test_the_dispatchers_own_constants_are_the_protocols() -> None:
    # cribfw/dispatch.py keeps E_OK, E_EMPTY, the room for an id and the places in a request's
    # head as its own constants, and cribfw/linebuffer.py MAX_LINE (a name of another module is
    # looked up at run time); MicroPython compiles them away, CPython keeps the names to compare.
    if sys.implementation.name == "micropython":
        return
    from cribfw import dispatch, gamerecord, linebuffer, replies

    assert (dispatch._E_OK, dispatch._E_EMPTY, dispatch._E_IF_REV) == (
        P.E_OK,
        P.E_EMPTY,
        P.E_IF_REV,
    )
    assert replies._REPLY_AT - replies._ID_AT == P.MAX_ID
    assert replies.SENDER == len(replies.USB_SENDER)
    assert gamerecord._MAX_ID == P.MAX_ID
    assert linebuffer._MAX_LINE == P.MAX_LINE
    assert P._VERB_COUNT == len(P.VERBS)
    assert (dispatch._ID_START, dispatch._ID_END, dispatch._VERB, dispatch._IF_REV) == (
        P._ID_START,
        P._ID_END,
        P._VERB,
        P._IF_REV,
    )
    assert replies._VERBS == len(P.VERBS) and replies._SAVES < 1 << len(P.VERBS)
    assert P.ARG_NONE == 2  # (cribfw/verbs.py's peg reads its third argument's kind as 2)
    saved = (b"peg", b"set", b"undo", b"new", b"deal", b"games", b"bright", b"budget", b"match")
    assert [P.VERBS[v] for v in range(len(P.VERBS)) if replies._SAVES >> v & 1] == list(saved)


def _won(board, winner, game):
    """`winner` wins the game on `board` (a two-player 121 game; the loser's score from `game`),
    then the board leaves it for a new one."""
    loser = 1 - winner
    board.set_pegs(loser, 40 + game % 60, 35 + game % 60)
    board.set_pegs(winner, 120, 115)
    board.peg(winner, 1)
    board.new_game()


def _read_history(s, start=None):
    """Every page of `hist` from `start`: (pages' lines, entries in order)."""
    pages = []
    entries = []
    while True:
        line = s.send(b"hist\n" if start is None else b"hist %d\n" % start)
        assert len(line) == 1, line
        pages.append(line[0])
        reply = W.decode_line(line[0])
        entries += [W.decode_history_entry(word) for word in reply.words]
        start = int(reply.fields["next"])
        if not start:
            return pages, entries


def test_the_history_is_read_page_by_page_oldest_first():
    s = Session()
    try:
        board = s.board
        board.start_match(0, 3)
        for game in range(40):
            _won(board, game % 2, game)
        assert board.game_no == 42 and board.history.count == 32
        s.dispatcher.publish_if_changed()  # (the state those changes made, before the reading)
        s.out.take()
        pages, entries = _read_history(s)
        assert [e["game"] for e in entries] == list(range(10, 42))  # the oldest 8 dropped
        assert len(pages) == 3 and all(len(page) <= 700 for page in pages)
        assert all(W.decode_line(page).fields["kept"] == "32" for page in pages)
        first = entries[0]
        assert first["front"] == [121, 48] and first["back"] == [120, 43]
        assert (first["winner"], first["result"], first["players"]) == (0, 3, 2)
        assert (first["target"], first["match"], first["match_kind"]) == (121, 3, 0)
        # Winners by turns, a best of 3: each match 2-1 in three games (game 1 was left fresh)
        places = [(e["match_number"], e["match_game"], e["games"]) for e in entries[:4]]
        assert places == [(3, 3, [2, 1]), (4, 1, [0, 1]), (4, 2, [1, 1]), (4, 3, [1, 2])]
        # From a game number on: that one and those after it.
        assert [e["game"] for e in _read_history(s, 40)[1]] == [40, 41]
        assert _read_history(s, 42)[1] == []
    finally:
        s.close()


def test_a_page_of_the_longest_entries_still_holds_six_and_fits():
    s = Session()
    try:
        board = s.board
        board.new_game(0, 3)
        board.start_match(1, 15)  # first to 15
        board.game_no = 2000000000
        board.match_no = 2000000000
        board.match_game = 300
        for game in range(8):
            for p in range(3):
                board.games[p] = 32000  # (the tally's most: an int16 in the undo steps)
                board.set_pegs(p, 120 - p, 99 - p)
            board.peg(2, 3)
            board.history.won_at = 2000000000 + game
            board.new_game()
            board.match_no = 2000000000
        board.history.life_base = 2000000000
        s.dispatcher.publish_if_changed()
        s.out.take()
        line = s.send(b"hist\n")[0]
        reply = W.decode_line(line)
        assert 6 <= len(reply.words) < 8 and len(line) <= 700, line
        longest = max(len(word) for word in reply.words)
        assert longest > 90, reply.words
        entry = W.decode_history_entry(reply.words[0])
        assert entry["game"] == 2000000000 and entry["match_game"] == 255, entry  # (at most)
        assert entry["front"] == [120, 119, 121] and entry["games"] == [32000, 32000, 32001]
    finally:
        s.close()


def test_the_hello_names_the_board_by_its_uid():
    s = Session()
    try:
        s.dispatcher.ctx.uid = b"E6614103E7452D2F"
        line = s.send(b"hello\n")[0]
        assert W.decode_line(line).fields["uid"] == "E6614103E7452D2F"
        s.dispatcher.announce()
        assert s.out.take() == [b"! hello " + line[len(b"ok ") :]]
    finally:
        s.close()
