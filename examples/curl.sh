#!/usr/bin/env bash
# Drive a board from the shell through the cribboard bridge (`cribboard serve`; docs/bridge.md).
#   CRIBBOARD_URL    the bridge (default http://127.0.0.1:8321)
#   CRIBBOARD_TOKEN  its token, when it has one (a bridge bound to another address than localhost)
set -euo pipefail
url=${CRIBBOARD_URL:-http://127.0.0.1:8321}
opts=(--silent --show-error --fail-with-body)
if [[ -n ${CRIBBOARD_TOKEN:-} ]]; then opts+=(-H "Authorization: Bearer $CRIBBOARD_TOKEN"); fi
crib() { curl "${opts[@]}" "$@"; echo; }

crib "$url/api/state"                                      # the game on the board
crib -d '{"player": 0, "points": 5}' "$url/api/peg"         # blue scores 5
crib -d '{"player": "orange", "points": 12}' "$url/api/peg" # orange scores 12
crib -X POST "$url/api/undo"                               # take the last one back
crib -d '{"player": 1}' "$url/api/dealer"                   # orange deals (has the crib)
