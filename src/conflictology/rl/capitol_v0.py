"""Capitol as a PettingZoo AEC environment, named after PettingZoo's convention (``capitol_v0.env()``)."""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from conflictology.rl.env import ConflictologyEnv


def raw_env(players: int = 2, **kwargs: Any) -> ConflictologyEnv:
    return ConflictologyEnv("capitol", players, **kwargs)


def env(players: int = 2, **kwargs: Any) -> OrderEnforcingWrapper:
    return OrderEnforcingWrapper(raw_env(players, **kwargs))
