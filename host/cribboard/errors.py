"""The host package's one error root and its branches."""

from __future__ import annotations


class CribboardError(Exception):
    """Base of every error the cribboard host package raises on purpose."""


class BoardRejected(CribboardError):
    """The board answered a request with an error reply (`code` is stable, see the protocol)."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(f"board refused: {text} ({code})")
        self.code = code
        self.text = text


class KeyReused(CribboardError):
    """A program's idempotency key came again for another change than the one it named."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} names another change: use a new key for a new change")
        self.key = key


class LinkError(CribboardError):
    """The link to the board failed, closed, or did not answer in time."""


class LinkHandedOver(LinkError):
    """The program whose connection to a board this link rode on closed it (cribboard.portshare):
    the board is still there, and the link opens again (owning it now, or riding on another)."""


class ProtocolMismatch(CribboardError):
    """The board speaks a protocol major version this host does not."""


class NoBoardFound(CribboardError):
    """No board could be found or opened."""


class HallError(CribboardError):
    """Root of the club hall's errors (its topics, payloads, tables and director): a clear
    message, nothing half done."""
