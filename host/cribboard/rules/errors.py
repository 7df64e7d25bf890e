"""The rules engine's errors: all derive from cribboard.errors.CribboardError."""

from __future__ import annotations

from cribboard.errors import CribboardError


class RulesError(CribboardError):
    """Base of the rules engine's errors."""


class CardError(RulesError, ValueError):
    """A card written wrongly (`5X`, `1H`, `11S`), a duplicated card, or the wrong number of
    cards for what was asked."""


class IllegalMove(RulesError):
    """A move the rules do not allow now: a card not in the hand, a card that would pass 31,
    the wrong player, a step out of order, or any move after the game has ended."""
