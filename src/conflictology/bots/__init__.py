"""Bots: players that decide from their own seat's view and legal actions, never from the full state.

A bot is made by ``bots.make(name, game, seat, seed)`` and asked ``bot.act(view, legal)``. Search bots
draw full states consistent with the view through ``game.determinize``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from conflictology.engine import Action, Game, GameState, Rng, View


class Bot:
    """The interface every bot implements."""

    name = "bot"

    def __init__(self, game: Game, seat: int, seed: int | None = None, **params: Any) -> None:
        self.game = game
        self.seat = seat
        self.rng = Rng(Rng.fresh_seed() if seed is None else seed)
        self.params = params

    def act(self, view: View, legal: list[Action]) -> Action:
        raise NotImplementedError


class RandomBot(Bot):
    """Picks uniformly among the legal actions."""

    name = "random"

    def act(self, view: View, legal: list[Action]) -> Action:
        return self.rng.choice(legal)


BotFactory = Callable[..., Bot]

_REGISTRY: dict[str, BotFactory] = {"random": RandomBot}

# The level a server seats when the host names none: "a good opponent" (raised as better bots land).
DEFAULT_LEVEL = "random"


def register(name: str, factory: BotFactory) -> None:
    _REGISTRY[name] = factory


def names() -> list[str]:
    return list(_REGISTRY)


def make(name: str, game: Game, seat: int, seed: int | None = None, **params: Any) -> Bot:
    """A bot by name; an unknown name raises ``ValueError``."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; known bots: {', '.join(_REGISTRY)}") from None
    return factory(game, seat, seed, **params)


def play_game(state: GameState, players: Sequence[Bot], max_decisions: int = 100_000) -> int:
    """Play ``state`` to its end, asking the first awaited seat each time; returns decisions made."""
    decisions = 0
    while True:
        waiting = state.waiting_for()
        if not waiting:
            return decisions
        seat = waiting[0]
        action = players[seat].act(state.view(seat), state.legal_actions(seat))
        state.apply(seat, action)
        decisions += 1
        if decisions >= max_decisions:
            raise RuntimeError(f"game did not end within {max_decisions} decisions")
