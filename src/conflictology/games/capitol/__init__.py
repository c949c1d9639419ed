"""Conflictology: Capitol, a game of bluffing for 2–6 players, 7–10 with the big-table variant
(the rules: docs/rules/capitol.md)."""

from __future__ import annotations

from conflictology.games.capitol.game import CapitolGame
from conflictology.games.capitol.state import CapitolState

GAME = CapitolGame()
CapitolState.game = GAME

__all__ = ["GAME", "CapitolGame", "CapitolState"]
