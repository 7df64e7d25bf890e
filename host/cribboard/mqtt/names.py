"""The name of a hall or of a remote game, one level of their topics: one rule for both."""

from __future__ import annotations

import re

from cribboard.i18n import N_

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}\Z")
# What an error says (marked: translated where it is shown).
NAME_RULE = N_("1 to 32 of a-z, 0-9, '_' and '-', starting with a-z or 0-9")


def is_topic_name(text: str) -> bool:
    """Whether `text` can name a hall or a remote game: :data:`NAME_RULE`. Nothing else (no
    ``/``, ``+``, ``#`` or capitals) gets into a topic through it."""
    return _NAME.match(text) is not None
