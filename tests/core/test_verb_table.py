# cribfw/verbs.py's handlers beside its HANDLERS: tests/docs/test_guides.py holds HANDLERS to
# cribcore.protocol's VERB_TABLE (one a verb, in the table's order), the document, the vectors
# and the model; this holds the module's functions to HANDLERS, so a handler written and never
# put in the tuple (or left behind by a verb taken out) fails too.
# CPython only (it reads the functions' signatures).
import inspect

from cribfw import verbs

HANDLER_PARAMETERS = ["ctx", "link", "req", "out"]
# Functions of cribfw/verbs.py that take a handler's arguments and are no verb's handler.
NOT_HANDLERS = {"answer"}  # a resend's reply fields, for any verb


def test_every_handler_in_the_module_is_in_handlers_once():
    written = {
        name
        for name, value in vars(verbs).items()
        if inspect.isfunction(value)
        and value.__module__ == verbs.__name__
        and list(inspect.signature(value).parameters) == HANDLER_PARAMETERS
    }
    listed = [handler.__name__ for handler in verbs.HANDLERS]
    assert len(set(listed)) == len(listed), "a handler twice in HANDLERS"
    assert written - NOT_HANDLERS == set(listed), "cribfw/verbs.py: a handler not in HANDLERS"
    for handler in verbs.HANDLERS:
        assert list(inspect.signature(handler).parameters) == HANDLER_PARAMETERS, handler
