"""Both games as OpenSpiel games (optional extra: ``pip install conflictology[openspiel]``).

Importing this package registers them, as OpenSpiel's own Python games register on import::

    import pyspiel
    import conflictology.openspiel  # noqa: F401  (registers the games)

    game = pyspiel.load_game("python_conflictology_capitol", {"players": 4})
    game = pyspiel.load_game("python_conflictology_conspiranoicos")  # simultaneous plays

How each game is presented (sequential or simultaneous, chance, information states, returns):
:mod:`conflictology.openspiel.game` and docs/rl.md.
"""

from __future__ import annotations

from conflictology.openspiel.game import (
    PREFIX,
    ConflictologyGame,
    ConflictologyState,
    action_text,
    register,
    returns_for,
)

__all__ = [
    "PREFIX",
    "ConflictologyGame",
    "ConflictologyState",
    "action_text",
    "register",
    "returns_for",
]

register()
