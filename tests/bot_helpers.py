"""Bots under test: a checker of every answer, and mid-game states to ask them about."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from conflictology import bots
from conflictology.engine import Action, Game, GameState, Rng


class Checked(bots.Bot):
    """Asks a bot and checks that its answer is one of the legal actions, as given."""

    def __init__(self, inner: bots.Bot) -> None:
        self.inner = inner
        self.decisions = 0

    def act(self, view: dict, legal: list[Action]) -> Action:
        # Now and then, check that the bot leaves its view and legal actions untouched.
        snapshot = json.dumps([view, legal], sort_keys=True) if self.decisions % 16 == 0 else None
        action = self.inner.act(view, legal)
        assert action in legal, f"{self.inner.name} chose {action!r}, not in {legal!r}"
        if snapshot is not None:
            assert json.dumps([view, legal], sort_keys=True) == snapshot, "a bot changed its view"
        self.decisions += 1
        return action


def midgame_states(game: Game, count: int, seed: int) -> Iterator[tuple[GameState, int]]:
    """States reached by random play, with a seat awaited in each (and more than one choice)."""
    master = Rng(seed)
    found = 0
    while found < count:
        players = game.min_players + master.randrange(game.max_players - game.min_players + 1)
        state = game.new_game(players=players, seed=master.next64())
        stop = master.randrange(60)
        steps = 0
        while not state.is_over():
            seat = master.choice(state.waiting_for())
            legal = state.legal_actions(seat)
            if steps >= stop and len(legal) > 1:
                yield state, seat
                found += 1
                break
            state.apply(seat, master.choice(legal))
            steps += 1


def play_legally(state: GameState, seated: list[bots.Bot], most: int = 3000) -> int:
    """Play ``state`` to its end, each awaited seat answered by its bot from its own view, every answer
    checked to be one of the legal actions; returns the decisions made (the game must end within
    ``most``)."""
    decisions = 0
    while state.waiting_for():
        assert decisions < most, f"no end after {most} decisions"
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        action = seated[seat].act(state.view(seat), legal)
        assert action in legal, f"{seated[seat].name} chose {action!r}, not in {legal!r}"
        state.apply(seat, action)
        decisions += 1
    return decisions


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (the scripts are not a package): its functions under test."""
    path = Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
