"""Stacked Capitol tables for the rule, API, robustness and summary tests."""

from __future__ import annotations

from collections import Counter
from typing import Any

from conflictology.games.capitol import GAME, CapitolState
from conflictology.games.capitol.data import DECK, ROLES

B, M, H, J, R, P = "banker", "mafia", "hacker", "judge", "reporter", "police"


def table(
    hands: list[list[str]], pile: list[str] | None = None, seed: int = 1, **options: Any
) -> CapitolState:
    """A game where seat i holds ``hands[i]`` and seat 0 plays first; the deck starts with ``pile``
    (top first), then the rest in role order."""
    deck = [c for h in hands for c in h] + list(pile or [])
    rest = Counter(DECK)
    rest.subtract(deck)
    assert all(v >= 0 for v in rest.values()), "more than three copies of a role"
    deck += [r for r in ROLES for _ in range(rest[r])]
    return GAME.new_game(players=len(hands), seed=seed, options={"first_player": 0, **options}, deck=deck)


def act(state: CapitolState, seat: int, kind: str, **fields: Any) -> None:
    state.apply(seat, {"type": kind, **fields})
