"""The record of games in the bridge's OpenAPI document (cribboard.bridge.openapi): the paths of
the players' names and of the history (cribboard.bridge.records), and their schemas."""

from __future__ import annotations

from typing import Any

from cribboard.bridge.records import MAX_SEATS, MOST_GAMES
from cribboard.playernames import MAX_NAME
from cribboard.record.stats import HAND_COUNTS
from cribboard.record.store import MATCH_KINDS, RESULTS, SOURCES

ERROR_CODES = ["bad_name", "no_record", "no_game"]
"""The errors these paths add to the bridge's."""


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _int(description: str, minimum: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    return schema


_NULLABLE_INT = {"type": ["integer", "null"]}
_NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME}
# A player's figures that are plain counts, as the record's statistics name them.
_PLAYER_COUNTS = (
    "games",
    "won",
    "lost",
    "skunks_given",
    "double_skunks_given",
    "skunks_taken",
    "double_skunks_taken",
    "matches",
    "matches_won",
)

SCHEMAS: dict[str, Any] = {
    "Names": {
        "type": "object",
        "description": "The names of the players of a board's game, one a seat (blue first; "
        "four players: the partners of a side at seats n and n+2); null: no name.",
        "required": ["board", "game", "names", "max_name"],
        "properties": {
            "board": {"type": "string"},
            "max_name": {"type": "integer", "description": "the longest name taken"},
            "game": {**_NULLABLE_INT, "description": "the game's id in the record"},
            "names": {"type": "array", "items": {"type": ["string", "null"]}},
        },
    },
    "Who": {
        "type": "object",
        "description": "A player: a name, or (a seat without one) the board's colour: `side`.",
        "required": ["name", "side"],
        "properties": {"name": {"type": ["string", "null"]}, "side": _NULLABLE_INT},
    },
    "Counts": {
        "type": "object",
        "required": ["count", "average", "best"],
        "properties": {
            "count": _int("hands counted", 0),
            "average": {"type": ["number", "null"]},
            "best": _NULLABLE_INT,
        },
    },
    "PlayerStats": {
        "type": "object",
        "description": "A player's figures over the games recorded: only finished games are "
        "won or lost; skunks taken by a loser below the skunk line (double: below the double "
        "skunk line); pegging: the play's points over the deals of games kept in detail.",
        "required": ["player", *_PLAYER_COUNTS, "hands", "cribs", "pegging", "muggins"],
        "properties": {
            "player": _ref("Who"),
            **{key: _int(key.replace("_", " "), 0) for key in _PLAYER_COUNTS},
            "hands": _ref("Counts"),
            "cribs": _ref("Counts"),
            "pegging": {
                "type": "object",
                "required": ["points", "deals", "per_deal"],
                "properties": {
                    "points": _int("the play's points", 0),
                    "deals": _int("deals", 0),
                    "per_deal": {"type": ["number", "null"]},
                },
            },
            "muggins": {
                "type": "object",
                "required": ["taken", "points"],
                "properties": {"taken": _int("times", 0), "points": _int("points", 0)},
            },
        },
    },
    "GameSummary": {
        "type": "object",
        "required": [
            "id",
            "board",
            "source",
            "target",
            "started",
            "ended",
            "sides",
            "front",
            "winner",
            "result",
            "deals",
        ],
        "properties": {
            "id": _int("the game's id in the record", 1),
            "board": {"type": "string", "description": "the board's identity"},
            "source": {"type": "string", "enum": list(SOURCES)},
            "target": {"type": "integer", "enum": [61, 121]},
            "started": {"type": "string", "description": "ISO 8601, UTC"},
            "ended": {"type": ["string", "null"]},
            "sides": {
                "type": "array",
                "description": "each side's players",
                "items": {"type": "array", "items": _ref("Who")},
            },
            "front": {"type": "array", "items": {"type": "integer"}},
            "winner": _NULLABLE_INT,
            "result": {"type": "string", "enum": list(RESULTS)},
            "deals": _int("deals recorded", 0),
        },
    },
    "History": {
        "type": "object",
        "description": "What `cribboard history --json` prints.",
        "required": ["finished", "unfinished", "players", "head_to_head", "matches", "games"],
        "properties": {
            "finished": _int("games won", 0),
            "unfinished": _int("games left before their end", 0),
            "players": {"type": "array", "items": _ref("PlayerStats")},
            "head_to_head": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["player", "opponent", "won", "lost"],
                    "properties": {
                        "player": _ref("Who"),
                        "opponent": _ref("Who"),
                        "won": _int("won", 0),
                        "lost": _int("lost", 0),
                    },
                },
            },
            "matches": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": [
                        "id",
                        "kind",
                        "length",
                        "skunk_double",
                        "sides",
                        "score",
                        "winner",
                    ],
                    "properties": {
                        "id": {"type": "integer"},
                        "kind": {"type": "string", "enum": list(MATCH_KINDS)},
                        "length": {"type": "integer"},
                        "skunk_double": {"type": "boolean"},
                        "sides": {
                            "type": "array",
                            "items": {"type": "array", "items": _ref("Who")},
                        },
                        "score": {"type": "array", "items": {"type": "integer"}},
                        "winner": _NULLABLE_INT,
                        "ended": {"type": ["string", "null"]},
                    },
                },
            },
            "games": {"type": "array", "items": _ref("GameSummary")},
        },
    },
    "GameGraph": {
        "type": "object",
        "description": "A game's scores deal by deal: scores[n] when deal n+1 began (the last "
        "row: the end), dealers[n] the side that dealt it.",
        "required": ["game", "scores", "dealers", "skunk_lines"],
        "properties": {
            "game": _ref("GameSummary"),
            "scores": {
                "type": "array",
                "items": {"type": "array", "items": {"type": "integer"}},
            },
            "dealers": {"type": "array", "items": {"type": "integer"}},
            "skunk_lines": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "double skunk line, skunk line (0: none)",
            },
        },
    },
    "HandCounts": {
        "type": "object",
        "description": f"How often a player's hands and cribs counted 0..{HAND_COUNTS - 1}.",
        "required": ["player", "hands", "cribs"],
        "properties": {
            "player": _ref("Who"),
            "hands": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": HAND_COUNTS,
                "maxItems": HAND_COUNTS,
            },
            "cribs": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": HAND_COUNTS,
                "maxItems": HAND_COUNTS,
            },
        },
    },
}


def _response(schema: str, description: str, errors: dict[str, str]) -> dict[str, Any]:
    responses: dict[str, Any] = {
        "200": {
            "description": description,
            "content": {"application/json": {"schema": _ref(schema)}},
        }
    }
    for status, text in errors.items():
        responses[status] = {
            "description": text,
            "content": {"application/json": {"schema": _ref("Error")}},
        }
    return responses


_BOARD = {
    "name": "board",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "example": "b1",
    "description": "a board id from GET /api/boards",
}
_PLAYER = {
    "name": "player",
    "in": "query",
    "required": False,
    "schema": _NAME,
    "description": "a player's name (any case)",
}


def _names_path(with_board: bool) -> dict[str, Any]:
    where = "the board named by `board`" if with_board else "the first board"
    suffix = "_board" if with_board else ""
    errors = {
        "401": "the token is missing or wrong",
        "404": "no such board",
        "503": "the board's games are not recorded (no state seen yet, or no record)",
    }
    path: dict[str, Any] = {
        "get": {
            "summary": "The names of the players of the board's game",
            "description": f"Of {where}'s game, as the record keeps them.",
            "operationId": "names" + suffix,
            "tags": ["record"],
            "responses": _response("Names", "the names", errors),
        },
        "post": {
            "summary": "Name the players of the board's game",
            "description": f"The players of {where}'s game, one name a seat (null or empty: "
            "none), for the record of games: a name is a person, in any game and colour. The "
            "games after it keep them. Each page is told (WebSocket `names`). A name is 1 to "
            f"{MAX_NAME} characters, spaces folded, without control or formatting characters; "
            "two seats never share one.",
            "operationId": "set_names" + suffix,
            "tags": ["record"],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["names"],
                            "additionalProperties": False,
                            "properties": {
                                "names": {
                                    "type": "array",
                                    "minItems": 1,
                                    "maxItems": MAX_SEATS,
                                    "items": {"type": ["string", "null"], "maxLength": MAX_NAME},
                                }
                            },
                        },
                        "example": {"names": ["Ann", "Bob"]},
                    }
                },
            },
            "responses": _response(
                "Names",
                "named",
                {"400": "a name breaks the rules (bad_name); nothing changed", **errors},
            ),
        },
    }
    if with_board:
        for operation in path.values():
            operation["parameters"] = [_BOARD]
    return path


def record_paths() -> dict[str, Any]:
    """The record's paths, for the OpenAPI document."""
    unreadable = {"401": "the token is missing or wrong", "503": "the record cannot be read"}
    return {
        "/api/names": _names_path(False),
        "/api/boards/{board}/names": _names_path(True),
        "/api/history": {
            "get": {
                "summary": "What the record of games tells",
                "description": "Each player's figures, head to head, matches, and the last "
                "games (with `player`: theirs only): `cribboard history --json`.",
                "operationId": "history",
                "tags": ["record"],
                "parameters": [
                    {
                        "name": "games",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1, "maximum": MOST_GAMES},
                        "description": "how many of the last games to list (default 10)",
                    },
                    _PLAYER,
                ],
                "responses": _response(
                    "History", "the statistics", {"400": "a bad parameter", **unreadable}
                ),
            }
        },
        "/api/history/games/{game}": {
            "get": {
                "summary": "A game's scores deal by deal (its graph)",
                "operationId": "history_game",
                "tags": ["record"],
                "parameters": [
                    {
                        "name": "game",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer", "minimum": 1},
                        "description": "the game's id (GameSummary.id)",
                    }
                ],
                "responses": _response(
                    "GameGraph",
                    "the game",
                    {"400": "not a game id", "404": "no such game (no_game)", **unreadable},
                ),
            }
        },
        "/api/history/hands": {
            "get": {
                "summary": "How often a player's hands and cribs counted each score",
                "operationId": "history_hands",
                "tags": ["record"],
                "parameters": [
                    _PLAYER,
                    {
                        "name": "colour",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string"},
                        "description": "instead of `player`: the seats without a name of this "
                        "colour (blue, orange, purple)",
                    },
                ],
                "responses": _response(
                    "HandCounts", "the counts", {"400": "neither player nor colour", **unreadable}
                ),
            }
        },
    }
