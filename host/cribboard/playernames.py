"""Players' names as people type them: for `keep --names`, `play --names`, the bridge's page and
the record of games (cribboard.record), one rule in one place.

A name is text from a stranger, shown to other people (a terminal, the page, a CSV): spaces are
folded to one, it holds 1 to `MAX_NAME` characters, and no control or formatting character
(cribboard.plaintext: a direction override would show one name as another, an escape would
colour the terminal). A name that breaks the rule is refused with a sentence saying why; none is
cut short or changed silently. Names are told apart without regard to case (``ann`` is ``Ann``):
`name_key` is what the record compares.
"""

from __future__ import annotations

from cribboard.i18n import _, n_
from cribboard.plaintext import unsafe_character
from cribcore.hall import MAX_NAME_CHARS

MAX_NAME = MAX_NAME_CHARS
"""The longest name, in characters: as long as a hall's table takes (longer ones are cut
there), so that a name goes everywhere whole."""

SEPARATOR = ","
"""Between the names of `--names Ann,Bob` (a name may hold spaces)."""


class BadName(ValueError):
    """A name that breaks the rule; the message says which part, in the language in use."""


def clean_name(text: str) -> str:
    """`text` as a player's name: its runs of spaces folded to one, the ends trimmed. BadName
    when it is empty, longer than MAX_NAME, or holds a control or formatting character."""
    unsafe = unsafe_character(text)
    if unsafe is not None:
        raise BadName(
            _(
                "a name may not hold %(character)s (a control or formatting character)",
                character=unsafe,
            )
        )
    name = " ".join(text.split())
    if not name:
        raise BadName(_("a name needs a letter or two"))
    if len(name) > MAX_NAME:
        raise BadName(
            _(
                "%(name)s: a name is at most %(most)d characters",
                name=name[:MAX_NAME],
                most=MAX_NAME,
            )
        )
    return name


def name_key(name: str) -> str:
    """What tells names apart: the same for ``Åsa`` and ``åsa``."""
    return " ".join(name.split()).casefold()


def parse_names(text: str, seats: int) -> list[str | None]:
    """The names of `seats` players from ``Ann,Bob`` (seat order: blue first); an empty part
    leaves that seat without a name (``,Bob``). BadName when there are more or fewer parts
    than seats, two seats have one name, or a name breaks the rule."""
    parts = text.split(SEPARATOR)
    if len(parts) != seats:
        raise BadName(
            n_(
                "%(count)d name for %(seats)d players: one for each, separated by commas (Ann,Bob)",
                "%(count)d names for %(seats)d players: one for each, separated by commas "
                "(Ann,Bob)",
                len(parts),
                seats=seats,
            )
        )
    return check_seats([clean_name(part) if part.strip() else None for part in parts])


def check_seats(names: list[str | None]) -> list[str | None]:
    """`names` (one a seat, None for none), checked: BadName when two seats share a name."""
    seen: set[str] = set()
    for name in names:
        if name is None:
            continue
        if name_key(name) in seen:
            raise BadName(_("%(name)s sits at two seats: each player once", name=name))
        seen.add(name_key(name))
    return names
