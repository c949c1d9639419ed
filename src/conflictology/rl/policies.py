"""Policies for the environments: a uniform random one and an adapter that lets any bot play.

A bot (``conflictology.bots``) decides from its seat's view and legal actions, exactly what the
environment exposes for the agent to act (``env.view(agent)``, ``env.legal_actions(agent)``), so it
plays inside the environment without ever seeing another seat's cards.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conflictology import bots
from conflictology.engine import Rng
from conflictology.rl.env import ConflictologyEnv


def random_policy(observation: dict[str, np.ndarray], rng: Rng) -> int:
    """A uniformly random legal action, read from the observation's action mask."""
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError("the action mask is empty: this agent is not awaited")
    return int(legal[rng.randrange(int(legal.size))])


class BotPolicy:
    """Plays an agent's seat with a named bot (``"heuristic"``, ``"ismcts:iterations=200"``, …).

    One bot is made per seat, lazily; ``reset`` forgets them (call it at every new game, since bots may
    keep memory within a game).
    """

    def __init__(self, name: str, seed: int | None = None) -> None:
        self.name = name
        self._rng = Rng(Rng.fresh_seed() if seed is None else seed)
        self._bots: dict[int, bots.Bot] = {}

    def reset(self) -> None:
        self._bots.clear()

    def __call__(self, env: Any, agent: str) -> int:
        raw: ConflictologyEnv = env.unwrapped
        seat = raw.seat(agent)
        bot = self._bots.get(seat)
        if bot is None:
            bot = self._bots[seat] = bots.make(self.name, raw.game, seat, seed=self._rng.next64())
        action = bot.act(raw.view(agent), raw.legal_actions(agent))
        return raw.table.index(action)
