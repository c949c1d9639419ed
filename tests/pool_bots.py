"""Bots for the bot pool's tests. A server's workers register them through the setup hook
``pool_bots:register`` (``ServerConfig.bot_worker_setup``, see :data:`SETUP`); the test process
offers them with :func:`install` (monkeypatched, so they are gone after the test).

Misbehaving bots misbehave in a worker only: in the test process (the server before the pool, or a
fallback) the sleeper and the spinner stop after :data:`HERE_SECONDS` and the crasher raises, so a
regression cannot hang or kill the test run for good."""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any

import pytest

from conflictology import bots
from conflictology.bots import ismcts
from conflictology.engine import Action, View

SETUP = ["pool_bots:register"]
HERE_SECONDS = 30.0


def _in_worker() -> bool:
    return multiprocessing.parent_process() is not None


class Sleeper(bots.Bot):
    """Never answers (it waits for what never comes)."""

    def act(self, view: View, legal: list[Action]) -> Action:
        time.sleep(600.0 if _in_worker() else HERE_SECONDS)
        return legal[0]


class Napper(bots.Bot):
    """A search that always takes 0.3 s."""

    def act(self, view: View, legal: list[Action]) -> Action:
        time.sleep(0.3)
        return legal[0]


class Spinner(bots.Bot):
    """Never answers either, busy all the while (a runaway search)."""

    def act(self, view: View, legal: list[Action]) -> Action:
        end = time.monotonic() + (600.0 if _in_worker() else HERE_SECONDS)
        n = 0
        while time.monotonic() < end:
            n += 1
        return legal[n % len(legal)]


class Crasher(bots.Bot):
    """Takes its process down (a segfault in an extension, the OOM killer)."""

    def act(self, view: View, legal: list[Action]) -> Action:
        if _in_worker():
            os._exit(3)
        raise RuntimeError("the crasher only crashes in a bot worker")


# A real search, short enough for a test to play a whole game with it.
FAST_SEARCH = ismcts.flat_factory(iterations=20, seconds=0.05)

BOTS: dict[str, tuple[Any, bots.BotCost]] = {
    "sleeper": (Sleeper, "search"),
    "napper": (Napper, "search"),
    "spinner": (Spinner, "search"),
    "crasher": (Crasher, "quick"),
    "fastsearch": (FAST_SEARCH, "search"),
}


def register() -> None:
    """The workers' setup hook."""
    for name, (factory, cost) in BOTS.items():
        bots.register(name, factory, cost=cost)


def install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offer the test bots in this process for one test."""
    for name, (factory, cost) in BOTS.items():
        monkeypatch.setitem(bots._REGISTRY, name, factory)
        monkeypatch.setitem(bots._COSTS, (name, None), cost)
