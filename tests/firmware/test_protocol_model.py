"""The board's protocol against a model of docs/protocol.md (tests/protocol_model.py).

First the model itself: it must give every byte example of the document (the vectors' sessions,
which the document quotes). Then a stateful property test: Hypothesis drives the virtual board
through random sequences of every verb, valid and invalid, pipelined, with and without ids, with
resends of earlier lines, over raw pyserial on its USB port and, at times, a second link: a
Bluetooth central on the board's simulated radio (not admitted until the deal button is tapped).
Every line the board writes is checked against the model, in order, on every link: replies,
their ids, fields, revisions, remembered replies, events (brief ones per link), health's count of
bad lines; after every step `st` must agree with the model and the games won are never below
zero. A failure shrinks to a short sequence of steps.

CRIBBOARD_MODEL_EXAMPLES raises the number of examples (`make soak` runs more); the default
profile keeps `make test` quick and is derandomized, so CI sees the same sequences every time.
"""

from __future__ import annotations

import os
import string

import pytest
import vectors as V
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from cribboard.virtual import VirtualBoard, VirtualControl
from cribcore.profiles import PROFILES
from modelcheck import Checker, RadioCentral, SerialWire
from protocol_model import Out, ProtocolModel

EXAMPLES = int(os.environ.get("CRIBBOARD_MODEL_EXAMPLES", "30"))
STEPS = int(os.environ.get("CRIBBOARD_MODEL_STEPS", "40"))
DEAL_PIN = str(PROFILES["sim"].buttons["deal"])
FRESH_ST = (
    b"ok r=0 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=0 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
)
CENTRALS = ("C0:11:22:33:44:55", "D1:22:33:44:55:66")  # two devices, so one may come back


# --- the model gives the document's examples --------------------------------------------------


def replay_session(model: ProtocolModel, steps: list[tuple[object, ...]], links: list[str]) -> None:
    """Run a vectors session through the model: every request's outputs, on every link, must
    be the vector's lines exactly."""
    for step in steps:
        sender, data = step[0], step[1]
        want = {links[i]: list(lines) for i, lines in enumerate(step[2:])}  # type: ignore[arg-type]
        if sender == "start":
            continue  # the board's restart: not the model's to say
        if sender == "tap":
            outputs = model.tap_deal_admits(False) if model.candidate else {}
        elif sender == "button":
            outputs = model.board_peg(*data)  # type: ignore[misc]
        else:
            link = links[sender]  # type: ignore[index]
            outputs = {name: [] for name in links}
            lines = list(model.lines(link, data))  # type: ignore[arg-type]
            if len(lines) > 1:  # read together: the replies, then one push (section 5)
                steps_, push = model.expect_together(link, lines)
            else:
                steps_, push = [model.expect(link, line) for line in lines], {}
            replies = iter(want[link])
            for s in steps_:
                for name, outs in s.outputs.items():
                    outputs[name] += outs
                model.settle(s, next(replies) if s.outputs[link] else b"")
            for name, outs in push.items():
                outputs[name] += outs
        for name in links:
            got: list[Out] = outputs.get(name, [])
            assert len(got) == len(want[name]), (data, name, [str(o) for o in got], want[name])
            for out, line in zip(got, want[name]):
                assert out.matches(line), (data, name, str(out), line)


def test_the_model_gives_every_example_of_the_document() -> None:
    model = ProtocolModel()
    model.hello = b" " + V.HELLO_FIELDS
    model.connect("usb", usb=True)
    replay_session(model, [(0, data, lines) for data, lines in V.VECTORS], ["usb"])

    model = ProtocolModel()
    model.hello = b" " + V.HELLO_FIELDS
    model.connect("usb", usb=True)
    model.connect("ble", usb=False, address=b"\x01\x02\x03\x04\x05\x06\x07")
    model.open = True  # TWO_LINKS: both links may change the board
    model.links["ble"].trusted = True
    replay_session(model, V.TWO_LINKS, ["usb", "ble"])

    model = ProtocolModel()
    model.hello = b" " + V.HELLO_FIELDS
    model.connect("usb", usb=True)
    model.connect("ble", usb=False, address=V.ADMISSION_ADDRESS)
    replay_session(model, V.ADMISSION, ["usb", "ble"])

    model = ProtocolModel()
    model.connect("usb", usb=True)
    replay_session(model, [(0, data, lines) for data, lines in V.RULES], ["usb"])

    model = ProtocolModel()
    model.connect("usb", usb=True)
    replay_session(model, [(0, data, lines) for data, lines in V.MATCH], ["usb"])


# --- the board against the model ----------------------------------------------------------------

ID_CHARS = string.ascii_letters + string.digits
ids = st.one_of(
    st.sampled_from(["1", "7", "a", "x1", "k2", "12345678"]),  # reused often: resends, clashes
    st.text(ID_CHARS, min_size=1, max_size=8),
)
players = st.integers(-1, 3)
points = st.integers(-1, 31)


def number(value: int) -> st.SearchStrategy[str]:
    """A number as the document allows it: plain, or with leading zeros up to 6 digits."""
    text = str(abs(value))
    sign = "-" if value < 0 else ""
    return st.sampled_from([text, text.zfill(6), text.zfill(3)]).map(lambda t: sign + t)


def words_of(*parts: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.tuples(*parts).map(list)


def num(values: st.SearchStrategy[int]) -> st.SearchStrategy[str]:
    return values.flatmap(number)


REQUESTS: st.SearchStrategy[list[str]] = st.one_of(
    st.sampled_from([["hello"], ["ping"], ["st"], ["undo"], ["frame"], ["health"], ["test"]]),
    words_of(st.just("peg"), num(players), num(points)),
    words_of(st.just("peg"), num(st.integers(0, 1)), num(st.integers(1, 29))),
    # conditional on the front (since 1.3): a low guess is often right early in a game
    words_of(st.just("peg"), num(players), num(points), num(st.integers(0, 12))),
    words_of(st.just("set"), num(players), num(st.integers(0, 122))),
    words_of(st.just("set"), num(players), num(st.integers(0, 122)), num(st.integers(0, 121))),
    words_of(st.just("set"), num(st.integers(0, 1)), st.sampled_from(["121", "61", "120"])),
    st.one_of(
        st.just(["new"]),
        words_of(st.just("new"), num(st.sampled_from([0, 61, 121, 100]))),
        words_of(
            st.just("new"), num(st.sampled_from([0, 61, 121])), num(st.sampled_from([0, 2, 3, 4]))
        ),
    ),
    st.one_of(st.just(["deal"]), words_of(st.just("deal"), num(players))),
    words_of(st.just("pend"), num(players), num(points)),
    st.sampled_from(
        [["games"], ["games", "clear"], ["games", "x2", "0"], ["games", "x2", "1"]]
        + [["games", "x2", "2"], ["games", "x2"], ["games", "clear", "1"], ["games", "5"]]
    ),
    st.one_of(st.just(["bright"]), words_of(st.just("bright"), num(st.integers(-1, 256)))),
    st.one_of(st.just(["budget"]), words_of(st.just("budget"), num(st.integers(100, 10001)))),
    st.sampled_from(
        [["admit"], ["admit", "open", "0"], ["admit", "open", "1"], ["admit", "clear"]]
        + [["admit", "open", "2"], ["admit", "open"], ["admit", "5"]]
    ),
    st.sampled_from([["brief"], ["brief", "0"], ["brief", "1"], ["brief", "2"], ["brief", "x2"]]),
    # match play and the history (since 1.4)
    st.one_of(
        st.sampled_from([["match"], ["match", "clear"], ["match", "best"], ["match", "3"]]),
        words_of(st.sampled_from(["match best", "match first"]), num(st.integers(0, 16))).map(
            lambda w: w[0].split() + w[1:]
        ),
        st.just(["hist"]),
        words_of(st.just("hist"), num(st.integers(-1, 12))),
    ),
)


@st.composite
def request_lines(draw: st.DrawFn) -> bytes:
    """One request line as a client would write it: an id or none, single or extra spaces,
    "\\n" or "\\r\\n"."""
    words = draw(REQUESTS)
    if draw(st.integers(0, 5)) == 0:  # conditional on the revision (since 1.3): right or not
        words = ["@" + str(draw(st.integers(0, 12)))] + words
    if draw(st.booleans()):
        words = ["#" + draw(ids)] + words
    gap = draw(st.sampled_from([" ", " ", " ", "  "]))
    lead = draw(st.sampled_from(["", "", "", " "]))
    end = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return (lead + gap.join(words) + end).encode()


PRINTABLE = bytes(range(0x20, 0x7F))
NOT_A_LINE_END = bytes(c for c in range(256) if c not in (0x0A, 0x03))  # 0x03: Ctrl-C (below)


@st.composite
def invalid_lines(draw: st.DrawFn) -> bytes:
    """A line the board must refuse (or ignore): random bytes, too long, bad ids, bad numbers,
    wrong arity, unknown words. Never 0x03: on a board's USB that is MicroPython's Ctrl-C, which
    never reaches the app (the document's section 1), and the virtual board does the same."""
    kind = draw(st.integers(0, 7))
    rid = "#" + draw(ids) + " " if draw(st.booleans()) else ""
    if kind == 0:
        body = draw(
            st.binary(max_size=70).map(lambda b: bytes(c for c in b if c in NOT_A_LINE_END))
        )
        return body + b"\n"
    if kind == 1:  # too long, the id anywhere after spaces
        spaces = " " * draw(st.integers(0, 90))
        if draw(st.booleans()):  # the id last: the line ends with it
            end = draw(st.sampled_from(["\n", "\r\n", "\rx\n"]))
            return (" " * draw(st.integers(60, 90)) + "#" + draw(ids) + end).encode()
        fill = draw(st.text(string.ascii_lowercase + " 0123456789", min_size=0, max_size=40))
        line = (spaces + rid + "peg 0 1 " + fill).encode()
        return line + b"x" * max(0, 64 - len(line)) + draw(st.sampled_from([b"\n", b"\r\n"]))
    if kind == 2:  # malformed ids
        bad = draw(st.sampled_from(["#123456789 ", "#a-b ", "#", "# ", "#a_b ", "#abc", "#9"]))
        return (bad + draw(st.sampled_from(["ping", "peg 0 1", ""])) + "\n").encode()
    if kind == 3:  # malformed numbers
        arg = draw(st.sampled_from(["0000007", "+5", "--1", "5-", "1.5", "-", "1e3", "0x10"]))
        return (rid + "peg 0 " + arg + "\n").encode()
    if kind == 4:  # words
        verb = draw(st.sampled_from(["PING", "Peg", "pegg", "st0", "foo", "clear", "x2", "!"]))
        return (rid + verb + " 1\n").encode()
    if kind == 5:  # wrong arity, words where numbers belong, too many arguments
        line = draw(
            st.sampled_from(
                ["peg 0", "peg", "peg 0 1 2", "peg 0 1 2 3 4", "set 0", "undo 1", "new 121 2 1"]
                + ["deal 0 1", "pend 0", "frame 1", "hello x2", "ping 1", "st clear", "test 1"]
                + ["peg x2 1", "set 5 x2", "set 0 clear", "new x2", "deal open", "pend 0 x2"]
                + ["bright clear", "budget x2", "brief 1 1", "health 0", "admit open x2"]
                + ["@ peg 0 1", "@x peg 0 1", "@1234567890 st", "@7", "@-1 st", "peg 0 1 x2"]
            )
        )
        return (rid + line + "\n").encode()
    if kind == 6:  # control bytes inside a request
        c = draw(st.sampled_from([0, 1, 2, 4, 5, 9, 13, 27, 127, 0xE9, 0xFF]))
        line = (rid + "peg 0 1").encode()
        at = draw(st.integers(0, len(line)))
        return line[:at] + bytes([c]) + line[at:] + b"\n"
    return draw(st.sampled_from([b"\n", b"\r\n", b"   \n", b" \r\n", b"\r\r\n"]))


class ProtocolMachine(RuleBasedStateMachine):
    examples = 0  # machines run, and request lines they checked (for the report)
    lines = 0
    centrals = 0

    def __init__(self) -> None:
        super().__init__()
        ProtocolMachine.examples += 1
        self.vboard = VirtualBoard().start()
        self.model = ProtocolModel()
        self.checker = Checker(self.model)
        self.central: RadioCentral | None = None
        self.sent: list[tuple[str, bytes]] = []  # lines with an id, for resends

    @initialize()
    def fresh_board(self) -> None:
        self.checker.start_usb("usb", SerialWire(self.vboard.port))
        self.checker.send("usb", b"st\n")
        assert self.checker.model.st_fields() == FRESH_ST[2:-1], "not a fresh board"

    def teardown(self) -> None:
        ProtocolMachine.lines += self.checker.lines
        self.checker.close()
        self.vboard.stop()

    def _link(self, to_central: bool) -> str:
        return "ble" if to_central and self.central is not None else "usb"

    def _send(self, link: str, data: bytes, pieces: int = 1) -> None:
        if link == "ble":  # a line starting with "!" is a control pad packet there
            data = b"\n".join(b"x" + ln if ln[:1] == b"!" else ln for ln in data.split(b"\n"))
        self.checker.send(link, data, pieces)
        for line in data.split(b"\n"):
            if line.lstrip().startswith(b"#"):
                self.sent.append((link, line + b"\n"))

    # -- rules ------------------------------------------------------------------------------------

    @rule(line=request_lines(), to_central=st.booleans())
    def request(self, line: bytes, to_central: bool) -> None:
        self._send(self._link(to_central), line)

    @rule(line=invalid_lines(), to_central=st.booleans())
    def invalid(self, line: bytes, to_central: bool) -> None:
        self._send(self._link(to_central), line)

    @rule(
        lines=st.lists(st.one_of(request_lines(), invalid_lines()), min_size=2, max_size=8),
        to_central=st.booleans(),
    )
    def pipelined(self, lines: list[bytes], to_central: bool) -> None:
        """Several lines in one write: the replies come in order. (On Bluetooth within the
        board's 256-byte input buffer, and no frame: its reply takes most of a central's
        1024-byte queue.)"""
        data = b"".join(lines)
        if len(data) > 200 or b"frame" in data:
            to_central = False
        self._send(self._link(to_central), data)

    @rule(line=request_lines(), pieces=st.integers(2, 5), to_central=st.booleans())
    def split(self, line: bytes, pieces: int, to_central: bool) -> None:
        """One line in several writes."""
        self._send(self._link(to_central), line, pieces)

    @precondition(lambda self: bool(self.sent))
    @rule(data=st.data())
    def resend(self, data: st.DataObject) -> None:
        """An earlier line with an id, again (on the link it went on, if it is still there)."""
        link, line = data.draw(st.sampled_from(self.sent[-12:]))
        if link == "ble" and self.central is None:
            link = "usb"
        self._send(link, line)

    @precondition(lambda self: self.central is None)
    @rule(address=st.sampled_from(CENTRALS))
    def connect_central(self, address: str) -> None:
        self.central = RadioCentral(self.vboard.control, address)
        ProtocolMachine.centrals += 1
        raw = b"\x01" + bytes.fromhex(address.replace(":", ""))  # random address type
        self.checker.attach("ble", self.central, usb=False, address=raw)
        self.checker.sync()

    @precondition(lambda self: self.central is not None)
    @rule()
    def disconnect_central(self) -> None:
        self.checker.sync()
        assert self.central is not None
        self.central.close()
        del self.checker.wires["ble"]
        self.model.disconnect("ble")
        self.central = None

    @precondition(lambda self: self.central is not None and self.model.candidate is not None)
    @rule()
    def tap_deal(self) -> None:
        """The refused central is admitted by a tap of the deal button."""
        with VirtualControl(self.vboard.control) as sim:
            sim.press(DEAL_PIN, 60)
        self.checker.expect_outputs(self.model.tap_deal_admits())

    # -- after every step -------------------------------------------------------------------------

    @invariant()
    def board_agrees(self) -> None:
        self.checker.sync()  # every line the board wrote is accounted for, on every link
        self.checker.send("usb", b"st\n")  # st agrees with the model (and g >= 0: check_any)


ProtocolMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.timeout(600)
def test_the_board_follows_the_protocol_model() -> None:
    ProtocolMachine.TestCase().runTest()
    print(
        f"{ProtocolMachine.examples} examples, {ProtocolMachine.lines} request lines checked, "
        f"{ProtocolMachine.centrals} Bluetooth centrals connected"
    )
