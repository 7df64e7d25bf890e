"""The bridge's OpenAPI 3.1 document, generated from the operations table (ops.OPS).

The bridge serves it at /openapi.json; docs/openapi.json is a copy that a test keeps equal:

    python -m cribboard.bridge.openapi > docs/openapi.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

from cribboard import __version__, wire
from cribboard.boarddata import MATCH_KINDS
from cribboard.bridge import DEFAULT_HOST, DEFAULT_HTTP_PORT, recordapi
from cribboard.bridge.ops import KEY_HEADER, KEY_PATTERN, OPS, Op, Param
from cribboard.i18n import LANGUAGES
from cribboard.names import PLAYER_WORDS
from cribcore import protocol
from cribcore.layout import HOLES
from cribcore.limits import MATCH_MOST, MAX_PLAYERS, PLAYER_COUNTS, TARGETS

_ERROR_CODES_HTTP = [
    "bad_request",
    "bad_json",
    "no_board",
    "board_unavailable",
    "unauthorized",
    "cross_origin",
    "bad_host",
    "not_found",
    "method_not_allowed",
    "too_large",
    "key_reused",
    *recordapi.ERROR_CODES,
]


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _int_list(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "integer"}, "description": description}


SCHEMAS: dict[str, Any] = {
    "Health": {
        "type": "object",
        "description": "How the board is doing (GET /api/state only; boards with protocol 1.2). "
        "save_errors above 0: the game is not being kept through a power cut.",
        "required": [
            "uptime",
            "free_heap",
            "saves",
            "save_errors",
            "last_save_error",
            "admission_errors",
            "lost_lines",
            "bad_lines",
        ],
        "properties": {
            "uptime": {"type": "integer", "description": "seconds since the board started"},
            "free_heap": {"type": "integer", "description": "free heap, bytes"},
            "saves": {"type": "integer", "description": "game saves written to the flash"},
            "save_errors": {"type": "integer", "description": "saves that failed"},
            "last_save_error": {
                "type": ["string", "null"],
                "description": "the last failed save's error (OSError:28)",
            },
            "admission_errors": {"type": "integer"},
            "lost_lines": {"type": "integer", "description": "lines lost on Bluetooth links"},
            "bad_lines": {"type": "integer", "description": "lines that were not requests"},
        },
    },
    "State": {
        "type": "object",
        "description": "The game a board shows. Lists have one entry per player.",
        "required": [
            "rev",
            "target",
            "players",
            "dealer",
            "winner",
            "result",
            "front",
            "back",
            "games",
            "pending",
            "undo",
            "skunk_double",
        ],
        "properties": {
            "rev": {"type": "integer", "description": "revision: goes up on every change"},
            "target": {"type": "integer", "enum": list(TARGETS)},
            "players": {"type": "integer", "enum": list(PLAYER_COUNTS)},
            "dealer": {"type": "integer", "description": "the dealer (has the crib)"},
            "winner": {"type": ["integer", "null"], "description": "null while playing"},
            "result": {"type": "string", "enum": list(wire.RESULT_NAMES)},
            "front": _int_list("front pegs: the scores"),
            "back": _int_list("back pegs: the scores before the last move"),
            "games": _int_list("games won"),
            "pending": _int_list(
                "pending counts: each player's count entered but not yet pegged (0: none)"
            ),
            "undo": {"type": "integer", "description": "changes that can be undone"},
            "skunk_double": {
                "type": "boolean",
                "description": "a skunk (or double skunk) counts as two games won, not one "
                "(the board's rule, set over the line protocol: `games x2 1`)",
            },
            "game": {
                "type": ["integer", "null"],
                "minimum": 1,
                "description": "the board's own number for the game (null: a board older than "
                "protocol 1.4)",
            },
            "match": {
                "oneOf": [_ref("Match"), {"type": "null"}],
                "description": "the match the board plays (POST match), null: none",
            },
            "health": _ref("Health"),
        },
    },
    "Match": {
        "type": "object",
        "description": "A match of games: the games won (state.games) are its score; a skunk "
        "wins two of them when state.skunk_double.",
        "required": ["kind", "length", "game", "number", "needed", "winner"],
        "properties": {
            "kind": {"type": "string", "enum": list(MATCH_KINDS)},
            "length": {
                "type": "integer",
                "minimum": 2,
                "maximum": MATCH_MOST,
                "description": "best of this many games, or first to this many wins",
            },
            "game": {"type": "integer", "minimum": 1, "description": "the game of it on the board"},
            "number": {"type": "integer", "description": "the board's own number for the match"},
            "needed": {"type": "integer", "description": "games a player must win to take it"},
            "winner": {
                "type": ["integer", "null"],
                "description": "the player who won it; null: not decided",
            },
        },
    },
    "Change": {
        "type": "object",
        "description": "The board's state after the change.",
        "required": ["rev", "state"],
        "properties": {"rev": {"type": "integer"}, "state": _ref("State")},
    },
    "DealerChange": {
        "type": "object",
        "required": ["dealer", "rev", "state"],
        "properties": {
            "dealer": {"type": "integer"},
            "rev": {"type": "integer"},
            "state": _ref("State"),
        },
    },
    "Frame": {
        "type": "object",
        "required": ["scale", "milliamps", "rgb"],
        "properties": {
            "scale": {
                "type": "integer",
                "description": "output scale of 256 (brightness and current limiter)",
            },
            "milliamps": {"type": "integer", "description": "estimated LED current"},
            "rgb": {
                "type": "string",
                "pattern": "^([0-9a-f]{6})*$",
                "description": f"RRGGBB per hole, in hole order ({HOLES} holes: {6 * HOLES} digits)",
            },
        },
    },
    "Board": {
        "type": "object",
        "required": ["id", "port", "kind", "connected"],
        "properties": {
            "id": {"type": "string", "description": "the id in /api/boards/{board}/..."},
            "port": {"type": "string"},
            "kind": {"type": "string", "enum": ["usb", "ble", "virtual"]},
            "connected": {"type": "boolean"},
            "problem": {"type": ["string", "null"]},
            "board": {"type": ["string", "null"], "description": "board profile (hello)"},
            "firmware": {"type": ["string", "null"]},
            "protocol": {"type": ["string", "null"]},
            "layout": {"type": ["string", "null"]},
        },
    },
    "Boards": {
        "type": "object",
        "required": ["boards"],
        "properties": {"boards": {"type": "array", "items": _ref("Board")}},
    },
    "Error": {
        "type": "object",
        "required": ["error", "message"],
        "description": "Every error. `error` is stable: the board's own codes ("
        + ", ".join(protocol.ERROR_CODES)
        + ") or the bridge's ("
        + ", ".join(_ERROR_CODES_HTTP)
        + ").",
        "properties": {"error": {"type": "string"}, "message": {"type": "string"}},
    },
    "Message": {
        "description": "A WebSocket message (GET /api/ws). `board` names the board.",
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": {
                "type": "string",
                "enum": [
                    "boards",
                    "state",
                    "cfg",
                    "button",
                    "frame",
                    "hello",
                    "admit",
                    "link",
                    "restored",
                    "event",
                    "names",
                ],
            },
            "board": {"type": "string"},
            "boards": {"type": "array", "items": _ref("Board")},
            "state": _ref("State"),
            "bright": {"type": "integer"},
            "budget": {"type": "integer"},
            "name": {
                "type": "string",
                "description": "button: A+, A-, B+, B-, C+, C-, deal; "
                "event: the board's event kind",
            },
            "action": {"type": "string", "enum": ["tap", "hold"]},
            "scale": {"type": "integer"},
            "milliamps": {"type": "integer"},
            "rgb": {"type": "string"},
            "fields": {"type": "object", "additionalProperties": {"type": "string"}},
            "open": {"type": "boolean", "description": "admit: every device may change it"},
            "you": {"type": "boolean", "description": "admit: the bridge's link may change it"},
            "admitted": {"type": "integer", "description": "admit: the devices admitted"},
            "game": {
                "type": ["integer", "null"],
                "description": "names: the board's game in the record of games",
            },
            "names": {
                "type": "array",
                "items": {"type": ["string", "null"]},
                "description": "names: the players of the board's game, one a seat",
            },
        },
    },
}


def _param_schema(param: Param) -> dict[str, Any]:
    """A field's schema, its range in it (the board's: a generated client checks it)."""
    if param.kind == "player":
        return {
            "oneOf": [
                {"type": "integer", "minimum": 0, "maximum": MAX_PLAYERS - 1},
                {"type": "string", "enum": list(PLAYER_WORDS)},
            ],
            "description": param.description,
        }
    if param.kind == "key":
        return {"type": "string", "pattern": KEY_PATTERN, "description": param.description}
    if param.kind == "bool":
        return {"type": "boolean", "description": param.description}
    schema: dict[str, Any] = {"type": "integer", "description": param.description}
    if param.choices:
        schema["enum"] = list(param.choices)
    if param.low is not None:
        schema["minimum"] = param.low
    if param.high is not None:
        schema["maximum"] = param.high
    return schema


def _error_response(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref("Error")}}}


def _operation(op: Op, with_board: bool, old_name: str | None = None) -> dict[str, Any]:
    """An operation's entry; with `old_name`, its old path's, marked deprecated."""
    where = "the board named by `board`" if with_board else "the first board"
    description = f"{op.description} Acts on {where}."
    if old_name is not None:
        description = (
            f"Deprecated: the old path of `/api/{op.name}`, kept for one release; it does the "
            f"same. {description}"
        )
    doc: dict[str, Any] = {
        "summary": op.summary + ("" if with_board else " (first board)"),
        "description": description,
        "operationId": (old_name or op.name) + ("_board" if with_board else ""),
        "tags": ["board"],
        "responses": {
            "200": {
                "description": "done",
                "content": {"application/json": {"schema": _ref(op.result)}},
            },
            "400": _error_response(
                "bad request (a bad field, or the board refused it); nothing changed"
            ),
            "401": _error_response("the token is missing or wrong"),
            "403": _error_response("refused: a request from another origin without a token"),
            "404": _error_response("no such board"),
            "405": {
                **_error_response(f"this path takes {op.method} only"),
                "headers": {
                    "Allow": {
                        "description": "the method this path takes",
                        "schema": {"type": "string"},
                    }
                },
            },
            "503": _error_response("the board is not connected (the bridge is reconnecting)"),
        },
    }
    if op.method == "POST":
        doc["responses"]["409"] = _error_response(
            "the board's game forbids it (game_over, nothing_to_undo), or a condition no longer "
            "holds (stale: the board moved on since the program last looked); nothing changed"
        )
        properties = {p.name: _param_schema(p) for p in op.params}
        example = {p.name: p.example for p in op.params if p.required}
        schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
        required = [p.name for p in op.params if p.required]
        if required:
            schema["required"] = required
        doc["requestBody"] = {
            "required": bool(required),
            "content": {"application/json": {"schema": schema, "example": example}},
        }
    parameters = []
    if with_board:
        parameters.append(
            {
                "name": "board",
                "in": "path",
                "required": True,
                "schema": {"type": "string"},
                "example": "b1",
                "description": "a board id from GET /api/boards",
            }
        )
    if op.keyed:
        doc["responses"]["422"] = _error_response(
            "key_reused: the key named another change before; nothing changed"
        )
        parameters.append(
            {
                "name": KEY_HEADER,
                "in": "header",
                "required": False,
                "schema": {"type": "string", "pattern": KEY_PATTERN},
                "description": "the program's own name for this change, as the body's `key`: "
                "the same key again counts once and gets the first answer (docs/bridge.md)",
            }
        )
    if parameters:
        doc["parameters"] = parameters
    return doc


def _data_path(summary: str, operation_id: str, source: str) -> dict[str, Any]:
    """A GET of the board's fixed data, generated from `source`."""
    return {
        "get": {
            "summary": summary,
            "operationId": operation_id,
            "tags": ["data"],
            "responses": {
                "200": {
                    "description": f"generated from {source}",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                }
            },
        }
    }


def _websocket_path() -> dict[str, Any]:
    return {
        "get": {
            "summary": "WebSocket: every board event, pushed",
            "operationId": "ws",
            "tags": ["bridge"],
            "description": "Upgrade to a WebSocket. The bridge sends JSON text messages (schema "
            "Message): first a snapshot (`boards`, then each board's `state` "
            "and `cfg`), then every event as it happens: `state` (a change, "
            "whatever made it), `cfg` (brightness), `button` (a button on the "
            "board), `hello` (the board restarted), `restored` (it came back from a "
            "power cut older than the bridge saw, and the bridge put back what it had seen "
            "acknowledged: `fields` lost, back, refused; or unknown), `link` (lost, back, gone), "
            "`boards` (a board was added, connected or lost), `event` (a kind "
            "this bridge does not know), `names` (the players of a board's game "
            "were named), and with frames=1 `frame` (the LEDs). "
            "Messages from the client are ignored. See docs/bridge.md.",
            "parameters": [
                {
                    "name": "board",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "only this board's messages",
                },
                {
                    "name": "frames",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "enum": [0, 1]},
                    "description": "1: also the LED frame after each change (and while the board "
                    "animates)",
                },
            ],
            "responses": {
                "101": {"description": "switching to the WebSocket protocol"},
                "401": _error_response("the token is missing or wrong"),
            },
        }
    }


def _fixed_paths() -> dict[str, Any]:
    """The bridge's own paths: the boards, the WebSocket, the board's fixed data."""
    return {
        "/api/boards": {
            "get": {
                "summary": "The boards the bridge holds",
                "operationId": "boards",
                "tags": ["bridge"],
                "responses": {
                    "200": {
                        "description": "the boards, in the order they were added",
                        "content": {"application/json": {"schema": _ref("Boards")}},
                    },
                    "401": _error_response("the token is missing or wrong"),
                },
            }
        },
        "/api/ws": _websocket_path(),
        "/layout.json": _data_path(
            "The hole layout (millimetres), tracks and player colours", "layout", "cribcore.layout"
        ),
        "/protocol.json": _data_path(
            "The line protocol's constants (for a codec)", "protocol", "cribcore.protocol"
        ),
        "/i18n/languages.json": _data_path(
            "The languages the web page speaks", "languages", "cribboard.i18n"
        ),
        **{
            f"/i18n/{code}.json": _data_path(
                f"The web page's messages in {name} ({code})", f"catalog_{code}", "the .mo catalog"
            )
            for code, name in LANGUAGES.items()
        },
    }


def _info() -> dict[str, Any]:
    return {
        "title": "cribboard bridge",
        "version": __version__,
        "description": "Drive LED cribbage boards from any language: a JSON API over HTTP "
        "and a WebSocket of board events (`cribboard serve`). Operations "
        "on /api/OP act on the first board; /api/boards/{board}/OP on the "
        "board named. Bodies are JSON objects. Errors are "
        '{"error": CODE, "message": TEXT} with a 4xx status (5xx when '
        "the board is unreachable), and change nothing. A bridge bound to an "
        "address other than localhost needs its token on every request. "
        "User's guide: docs/bridge.md.",
        "license": {"name": "MIT", "identifier": "MIT"},
    }


def _security_schemes() -> dict[str, Any]:
    return {
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "the bridge's token (--token, $CRIBBOARD_TOKEN); "
            "needed when it is bound to another address than "
            "localhost",
        },
        "queryToken": {
            "type": "apiKey",
            "in": "query",
            "name": "token",
            "description": "the token in the URL (WebSocket, the page)",
        },
    }


def openapi_document() -> dict[str, Any]:
    """The whole document: the fixed paths, then each operation for the first board and by
    board id."""
    paths = _fixed_paths()
    for op in OPS:
        method = op.method.lower()
        paths[f"/api/{op.name}"] = {method: _operation(op, False)}
        paths[f"/api/boards/{{board}}/{op.name}"] = {method: _operation(op, True)}
    for op in OPS:  # the old paths after every current one
        method = op.method.lower()
        for old in op.old_names:
            paths[f"/api/{old}"] = {method: {**_operation(op, False, old), "deprecated": True}}
            paths[f"/api/boards/{{board}}/{old}"] = {
                method: {**_operation(op, True, old), "deprecated": True}
            }
    paths.update(recordapi.record_paths())
    return {
        "openapi": "3.1.0",
        "info": _info(),
        "servers": [
            {"url": f"http://{DEFAULT_HOST}:{DEFAULT_HTTP_PORT}", "description": "cribboard serve"}
        ],
        "security": [{}, {"bearer": []}, {"queryToken": []}],
        "paths": paths,
        "components": {
            "schemas": {**SCHEMAS, **recordapi.SCHEMAS},
            "securitySchemes": _security_schemes(),
        },
    }


def render() -> str:
    return json.dumps(openapi_document(), indent=2) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
