"""Conspiranoicos: two players collect evidence, build a Pyramid and sort it into a row.

``GAME`` is the :class:`conflictology.engine.Game` the registry serves as ``games.get("conspiranoicos")``.
"""

from .cards import Card, Deck, DeckError, bundled_decks, load_deck, parse_deck
from .game import GAME, ConspiranoicosGame, ConspiranoicosState
from .state import Phase

__all__ = [
    "GAME",
    "Card",
    "ConspiranoicosGame",
    "ConspiranoicosState",
    "Deck",
    "DeckError",
    "Phase",
    "bundled_decks",
    "load_deck",
    "parse_deck",
]
