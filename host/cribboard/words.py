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


def combo_summary(combos: Sequence[Combo]) -> str:
    """`fifteen 6, pair 2, run of 3 3`: the points of each kind of combination (a single
    combination: its name alone)."""
    parts: dict[str, int] = {}
    for combo in combos:
        label = combo_label(combo)
        parts[label] = parts.get(label, 0) + combo.points
    if len(parts) == 1 and len(combos) == 1:
        return combo_label(combos[0])
    return ", ".join(f"{label} {points}" for label, points in parts.items())
