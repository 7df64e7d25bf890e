"""The web plumbing the bridge's page and the hall's projector page share, below both: the
WebSocket fan-out (:mod:`cribboard.web.hub`), the board's fixed data as JSON
(:mod:`cribboard.web.meta`), and this computer's addresses (:mod:`cribboard.web.addresses`)."""
