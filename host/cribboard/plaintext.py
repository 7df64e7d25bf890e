"""Text from people, shown to other people: a player's name must stay a name wherever it is shown.

A name with a right-to-left override (U+202E) shows as another player's name on the projector
and turns the rest of its line around; an ANSI escape colours (or clears) the organiser's
terminal; a line break splits a CSV row. So a name may hold no control character, no
formatting character (the bidirectional overrides, isolates and marks among them; the zero-width
joiners that scripts and emoji need excepted) and no line or paragraph separator
(:func:`unsafe_character`): registering one is refused. A name kept from before that rule (or
any text from outside) is made inert where it is shown (:func:`inert`): each such character is
written as ``\\u202e``, seen and harmless. A CSV cell is also kept from being read as a formula by
a spreadsheet (:func:`csv_cell`)."""

from __future__ import annotations

import unicodedata

_ALLOWED_FORMAT = {"\u200c", "\u200d"}  # zero-width non-joiner and joiner: scripts, emoji
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}
_FORMULA_STARTS = ("=", "+", "-", "@")


def _unsafe(char: str) -> bool:
    return char not in _ALLOWED_FORMAT and unicodedata.category(char) in _UNSAFE_CATEGORIES


def unsafe_character(text: str) -> str | None:
    """The first character of `text` a name may not hold, as ``U+202E``; None when none."""
    for char in text:
        if _unsafe(char):
            return f"U+{ord(char):04X}"
    return None


def inert(text: str) -> str:
    """`text` with every character a name may not hold written out (``\\u202e``)."""
    if unsafe_character(text) is None:
        return text
    return "".join(
        (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}") if _unsafe(c) else c
        for c in text
    )


def csv_cell(text: str) -> str:
    """`text` for a CSV cell a spreadsheet opens: inert, and not taken for a formula."""
    text = inert(text)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text
