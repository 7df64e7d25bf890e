# The places a protocol verb must be, held to cribcore.protocol.VERB_TABLE: the firmware's
# handlers (cribfw/verbs.py's HANDLERS, positional: a verb's number is its handler's index), the
# verb table of docs/protocol.md (section 4), the literal vectors (tests/core/vectors.py) and the
# protocol model's own reading of the document (tests/protocol_model.py). A verb added to one
# and missed in another fails here (the recipe: docs/contributing.md, "A protocol verb").
# CPython only (it reads the sources and the document); the vectors themselves run on both
# interpreters in test_protocol.py.
import inspect
import re
from pathlib import Path

import vectors as V

import protocol_model
from cribcore import protocol as P
from cribfw import verbs

ROOT = Path(__file__).resolve().parents[2]

# A handler is named as its verb, but where the verb is a word Python or the module already
# uses for something else.
HANDLER_NAMES = {b"st": "state", b"set": "set_pegs"}
HANDLER_PARAMETERS = ["ctx", "link", "req", "out"]
# Functions of cribfw/verbs.py that take a handler's arguments and are no verb's handler.
NOT_HANDLERS = {"answer"}  # a resend's reply fields, for any verb


def request_verb(data):
    """The verb of a request line (after its id and its condition)."""
    words = [w for w in data.split() if not w.startswith((b"#", b"@"))]
    return words[0] if words else b""


def handler_name(verb):
    return HANDLER_NAMES.get(verb, verb.decode())


def test_each_verb_has_its_handler_in_the_tables_order():
    names = [handler.__name__ for handler in verbs.HANDLERS]
    assert names == [handler_name(verb) for verb in P.VERBS], (
        "cribfw/verbs.py's HANDLERS must name one handler per verb, in VERB_TABLE's order"
    )
    for handler in verbs.HANDLERS:
        assert list(inspect.signature(handler).parameters) == HANDLER_PARAMETERS, handler


def test_every_handler_in_the_module_answers_a_verb():
    """A handler written and not put in HANDLERS (or left there for a verb gone) is no verb's."""
    handlers = {
        name
        for name, value in vars(verbs).items()
        if inspect.isfunction(value)
        and value.__module__ == verbs.__name__
        and list(inspect.signature(value).parameters) == HANDLER_PARAMETERS
    }
    assert handlers - NOT_HANDLERS == {handler_name(verb) for verb in P.VERBS}


def test_the_documents_verb_table_has_every_verb_in_order():
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = text.split("\n## 4. Verbs\n", 1)[1]
    table = section.split("\n| verb | arguments |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([a-z]+)` \|", table, flags=re.MULTILINE)
    assert rows == [verb.decode() for verb in P.VERBS], "docs/protocol.md, section 4's table"


def test_the_vectors_send_every_verb():
    sent = {request_verb(data) for data, _lines in V.VECTORS + V.RULES}
    for step in V.TWO_LINKS + V.ADMISSION:
        if isinstance(step[1], bytes):  # (link, request, ...), not a button or a restart
            sent.add(request_verb(step[1]))
    missing = [verb for verb in P.VERBS if verb not in sent]
    assert not missing, "no request in tests/core/vectors.py sends %r" % missing


def test_the_protocol_model_reads_the_same_verbs():
    kinds = {P.K_READ: "read", P.K_CHANGE: "change", P.K_SET: "setting", P.K_LINK: "link"}
    table = [(name, fewest, most, kinds[kind]) for name, fewest, most, kind in P.VERB_TABLE]
    model = [(name, *spec) for name, spec in protocol_model.VERBS.items()]
    assert model == table, "tests/protocol_model.py's VERBS"
    assert protocol_model.CAPS == ",".join(verb.decode() for verb in P.VERBS)
