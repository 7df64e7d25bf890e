"""The bridge: `cribboard serve`. It holds the connection to one or more boards (USB, the virtual
board, any pyserial URL) and offers them to game engines in any language and to browsers:

* a JSON API over HTTP (described by an OpenAPI document at /openapi.json, copy in
  docs/openapi.json),
* a WebSocket (/api/ws) that pushes every board event to every subscriber,
* a web page (/) that draws the board from the layout data, mirrors its LEDs live and drives it;
  the same page can drive a board straight over Web Bluetooth, without the bridge.

docs/bridge.md is the user's guide. This package imports aiohttp lazily: importing
`cribboard.bridge` (as the command line does to add `serve`) stays cheap.
"""

from __future__ import annotations

DEFAULT_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8321
TOKEN_ENV = "CRIBBOARD_TOKEN"
