"""The web plumbing the bridge's page and the hall's projector page share, below both: the
WebSocket fan-out (:mod:`cribboard.web.hub`), the board's fixed data as JSON
(:mod:`cribboard.web.meta`), this computer's addresses (:mod:`cribboard.web.addresses`), and
the files both pages load from ``/board/`` (:data:`BOARD_FILES`)."""

from __future__ import annotations

from pathlib import Path

BOARD_FILES = Path(__file__).resolve().parent / "static"
"""The board's drawing (board.js) and the icon: served at ``/board/`` by every page's server."""
