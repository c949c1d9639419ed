"""A finished game's recap (``GET /api/games/{id}/recap``): the story its end screen tells in cards.

A pure function over an archived game record, like ``replay.build``: the deal is rebuilt and every
action applied in order, and the game says what happened (``Game.recap``: the hands revealed, the
decisive moment, its own figures). Where a game needs each position's chances of winning (Capitol's
decisive moment), they are the bots' position value. Only finished games are ever recapped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conflictology import games
from conflictology.bots.capitol_value import win_shares

# Per game, how the chances of winning a position are judged (a game not named needs none).
CHANCES: dict[str, Callable[[Any], list[float]]] = {"capitol": win_shares}


def build(record: dict[str, Any]) -> dict[str, Any]:
    """The recap of the finished game ``record`` (``id``, ``game``, ``initial``, ``actions``,
    ``players``…): the game's story with the game's identity and players."""
    game = games.get(record["game"])
    state = game.from_json(record["initial"])
    actions = ((entry["seat"], entry["action"]) for entry in record["actions"])
    story = game.recap(state, actions, CHANCES.get(record["game"]))
    if not state.is_over():
        raise ValueError(f"game {record['id']} is not over: nothing to recap")
    return {
        "id": record["id"],
        "room": record["room"],
        "game": record["game"],
        "players": record["players"],
        "started": record.get("started"),
        "finished": record.get("finished"),
        **story,
    }
