"""Where the remote games' topics start on a broker, and the user they log in as: here, below
both, because a hall's private broker lets remote games in (``Broker.create(links=True)``)
and the link (:mod:`cribboard.remote.topics`) builds its topics under it. The hall's own root is
the shared core's (:mod:`cribcore.hall`), which a board uses too."""

from __future__ import annotations

LINK_ROOT = "cribboard/link"  # beside the hall's cribboard/v1/<hall>: a game never meets a hall
LINK_USER = "link"  # the user a hall's private broker gives the links
