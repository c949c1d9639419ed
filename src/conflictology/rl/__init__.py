"""Reinforcement-learning environments: PettingZoo AEC environments for every game (optional extra).

Install with ``pip install conflictology[rl]`` (PettingZoo, Gymnasium, NumPy). The core package never
imports this module.

>>> from conflictology import rl
>>> env = rl.env("conspiranoicos")          # or rl.capitol_v0.env(players=4)
>>> env.reset(seed=1)
>>> for agent in env.agent_iter():
...     obs, reward, terminated, truncated, info = env.last()
...     action = None if terminated or truncated else env.action_space(agent).sample(obs["action_mask"])
...     env.step(action)

Observation and action layouts: docs/rl.md.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from conflictology.rl.encoding import (
    Layout,
    ObservationEncoder,
    Writer,
    encoder_for,
    register_encoder,
)
from conflictology.rl.env import ConflictologyEnv
from conflictology.rl.policies import BotPolicy, random_policy

__all__ = [
    "BotPolicy",
    "ConflictologyEnv",
    "Layout",
    "ObservationEncoder",
    "Writer",
    "encoder_for",
    "env",
    "random_policy",
    "raw_env",
    "register_encoder",
]


def raw_env(game: str, players: int | None = None, **kwargs: Any) -> ConflictologyEnv:
    """The bare environment (no wrapper): ``players`` defaults to the game's minimum."""
    return ConflictologyEnv(game, players, **kwargs)


def env(game: str, players: int | None = None, **kwargs: Any) -> OrderEnforcingWrapper:
    """The environment wrapped as PettingZoo's own games are (calls out of order raise)."""
    return OrderEnforcingWrapper(raw_env(game, players, **kwargs))
