"""The game's words as a person reads them, in the language in use: what a combination scores
for (`fifteen`, `run of 3`, `his nobs`), and a count's combinations summed by kind. The rules
engine keeps its own English names (`Kind`, `Combo.label`) for code and logs."""

from __future__ import annotations

from collections.abc import Sequence

from cribboard.i18n import N_, _
from cribboard.rules.show import Combo, Kind

_KIND_WORDS = {
    # Translators: each distinct set of cards adding up to 15 scores 2.
    Kind.FIFTEEN: N_("fifteen"),
    Kind.PAIR: N_("pair"),
    Kind.FLUSH: N_("flush"),
    # Translators: his nobs: the jack of the starter's suit in the hand, 1 point.
    Kind.NOBS: N_("nobs"),
    Kind.THIRTY_ONE: N_("thirty-one"),
    # Translators: three of a kind laid in a row in the play, 6 points.
    Kind.PAIR_ROYAL: N_("pair royal"),
    # Translators: four of a kind laid in a row in the play, 12 points.
    Kind.DOUBLE_PAIR_ROYAL: N_("double pair royal"),
    # Translators: the point for the last card laid before the count starts again.
    Kind.GO: N_("go"),
    Kind.LAST_CARD: N_("last card"),
}


def combo_label(combo: Combo) -> str:
    """What `combo` scores for: `fifteen`, `pair`, `run of 3`, `flush`, `nobs`, ..."""
    if combo.kind is Kind.RUN:
        return _("run of %(cards)d", cards=len(combo.cards))
    return _(_KIND_WORDS[combo.kind])


_RUN_WORDS = {
    3: (N_("run of three"), N_("runs of three")),
    4: (N_("run of four"), N_("runs of four")),
    5: (N_("run of five"), N_("runs of five")),
    6: (N_("run of six"), N_("runs of six")),
    7: (N_("run of seven"), N_("runs of seven")),
}
_MANY_WORDS = {
    Kind.FIFTEEN: (N_("fifteen"), N_("fifteens")),
    Kind.PAIR: (N_("pair"), N_("pairs")),
}


def _kind_label(kind: Kind, cards: int, count: int) -> str:
    """A kind of combination in a breakdown, as many as there are: `runs of three`. A run's
    length is a word, so that no number stands next to its points."""
    # The catalogs' languages all say one and many as English does: each form is its own entry.
    if kind is Kind.RUN and cards in _RUN_WORDS:
        return _(_RUN_WORDS[cards][count > 1])
    if kind in _MANY_WORDS:
        return _(_MANY_WORDS[kind][count > 1])
    if kind is Kind.RUN:
        return _("run of %(cards)d", cards=cards)
    return _(_KIND_WORDS[kind])


def combo_summary(combos: Sequence[Combo]) -> str:
    """`fifteens 6, pair 2, runs of three 12`: the points of each kind of combination (a single
    combination: its name alone)."""
    parts: dict[tuple[Kind, int], list[int]] = {}
    for combo in combos:
        key = (combo.kind, len(combo.cards) if combo.kind is Kind.RUN else 0)
        parts.setdefault(key, []).append(combo.points)
    if len(combos) == 1:
        return combo_label(combos[0])
    return ", ".join(
        f"{_kind_label(kind, cards, len(points))} {sum(points)}"
        for (kind, cards), points in parts.items()
    )
