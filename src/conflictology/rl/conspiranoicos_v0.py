"""Conspiranoicos as a PettingZoo AEC environment (``conspiranoicos_v0.env()``; two players)."""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from conflictology.rl.env import ConflictologyEnv


def raw_env(**kwargs: Any) -> ConflictologyEnv:
    return ConflictologyEnv("conspiranoicos", 2, **kwargs)


def env(**kwargs: Any) -> OrderEnforcingWrapper:
    return OrderEnforcingWrapper(raw_env(**kwargs))
