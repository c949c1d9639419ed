"""The games registry: ``games.names()`` and ``games.get(name)``.

Each game is a sub-package exposing ``GAME`` (a :class:`conflictology.engine.Game`). Games import
nothing from the server, the web client or the bots.
"""

from __future__ import annotations

import importlib

from conflictology.engine import Game

_PACKAGES: dict[str, str] = {
    "capitol": "conflictology.games.capitol",
    "conspiranoicos": "conflictology.games.conspiranoicos",
}

_loaded: dict[str, Game] = {}


def names() -> list[str]:
    """The registered games, in a stable order."""
    return list(_PACKAGES)


def module_name(name: str) -> str:
    """The module that defines the game called ``name`` (what a fork server preloads); an unknown
    name raises ``ValueError``."""
    if name not in _PACKAGES:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(_PACKAGES)}")
    return _PACKAGES[name]


def get(name: str) -> Game:
    """The game called ``name``; an unknown name raises ``ValueError``."""
    game = _loaded.get(name)
    if game is not None:
        return game
    module = importlib.import_module(module_name(name))
    game = module.GAME
    if not isinstance(game, Game):
        raise TypeError(f"{_PACKAGES[name]}.GAME is not a Game")
    _loaded[name] = game
    return game
