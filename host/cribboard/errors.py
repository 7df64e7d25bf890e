"""The host package's one error root."""


class CribboardError(Exception):
    """Base of every error the cribboard host package raises on purpose."""
