"""The quick Capitol search (issue 28; docs/bots.md, "Hard at scale").

A flat search on a small budget (a few worlds, or a busy server's short clock) is *quick*: face to
face it overrules the heuristic on fewer standard errors (``CapitolSearch.quick_z``, fitted to the
full search's decisions by ``scripts/distill_capitol.py``). ``hard``'s full search (its 0.3 s clock,
or 200 worlds) keeps its own rule; so does a quick search with three or more players in.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot_helpers import play_legally
from conflictology import bots, games
from conflictology.bots.capitol_search import CapitolSearch
from conflictology.bots.ismcts import FlatSearchBot, SearchPolicy
from conflictology.engine import Rng
from conflictology.games.capitol.game import CapitolGame


def _decisions(seed: int, count: int, players: int = 2) -> list[tuple[Any, int]]:
    """States of a game of heuristics where the seat to act has a real choice."""
    game = games.get("capitol")
    state = game.new_game(players=players, seed=seed)
    heuristics = [bots.make("heuristic", game, s, seed=seed + s) for s in range(players)]
    out = []
    while state.waiting_for() and len(out) < count:
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        if len(legal) > 1:
            out.append((state.clone(), seat))
        state.apply(seat, heuristics[seat].act(state.view(seat), legal))
    return out


@pytest.mark.parametrize(
    ("spec", "quick"),
    [
        ("hard:iterations=20:seconds=99", True),
        ("hard:seconds=0.03", True),  # what a busy pool plays (bots.with_clock)
        ("hard:iterations=200:seconds=99", False),
        ("hard", False),
        ("hard:iterations=20:seconds=99:quick=0", False),
        ("hard:iterations=200:seconds=99:quick=1", True),
    ],
)
def test_which_searches_are_quick(spec: str, quick: bool) -> None:
    bot = bots.make(spec, games.get("capitol"), 1, seed=4)
    assert isinstance(bot, FlatSearchBot)
    assert bot.quick is quick


@pytest.mark.parametrize("game", ["capitol", "conspiranoicos"])
@pytest.mark.parametrize("value", ["2", "yes", "-1", "0.5"])
def test_a_quick_param_other_than_0_or_1_is_refused_clearly(game: str, value: str) -> None:
    with pytest.raises(ValueError, match="quick must be 0 or 1"):
        bots.make(f"hard:iterations=20:seconds=99:quick={value}", games.get(game), 0, seed=1)


def test_the_quick_rule_is_face_to_face_only() -> None:
    search = CapitolSearch()
    bot = bots.make("hard:iterations=20:seconds=99", games.get("capitol"), 0, seed=1)
    assert isinstance(bot, FlatSearchBot)
    (two, seat2), *_ = _decisions(3, 1, players=2)
    (four, seat4), *_ = _decisions(3, 1, players=4)
    assert search.quick_rule(bot, two.view(seat2)) == (0.0, search.quick_z)
    assert search.quick_rule(bot, four.view(seat4)) is None
    assert search.quick_z < 2.0  # below the full search's two standard errors


@pytest.mark.parametrize(
    ("spec", "asked"), [("iterations=8", True), ("iterations=8:quick=0", False), ("iterations=8:z=2", False)]
)
def test_only_a_quick_search_takes_the_quick_rule(
    spec: str, asked: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full rule's path is the one from before: the policy's quick rule is not even read."""
    game = games.get("capitol")
    calls: list[int] = []
    original = CapitolSearch.quick_rule

    def spy(self: SearchPolicy, bot: Any, view: Any) -> tuple[float, float] | None:
        calls.append(1)
        assert isinstance(self, CapitolSearch)
        return original(self, bot, view)

    monkeypatch.setattr(CapitolSearch, "quick_rule", spy)
    for state, seat in _decisions(6, 12):
        bot = bots.make(f"hard:{spec}:seconds=99", game, seat, seed=4)
        bot.act(state.view(seat), state.legal_actions(seat))
    assert bool(calls) is asked


@pytest.mark.parametrize("seed", [3, 8])
def test_a_quick_decision_depends_only_on_the_view(seed: int) -> None:
    """The same view behind another world (the other's cards dealt anew) and the same seed: the same
    decision and the same statistics."""
    game = games.get("capitol")
    assert isinstance(game, CapitolGame)
    for state, seat in _decisions(seed, 6):
        view = state.view(seat)
        world = game.worlds(view)(Rng(seed + 1))
        assert world.view(seat) == view
        seen = set()
        for s in (state, world):
            bot = bots.make("hard:iterations=10:seconds=99", game, seat, seed=seed)
            action = bot.act(s.view(seat), s.legal_actions(seat))
            assert action in state.legal_actions(seat)
            seen.add(json.dumps([action, bot.last_root_stats], sort_keys=True))
        assert len(seen) == 1


def test_a_quick_search_plays_whole_games_legally() -> None:
    game = games.get("capitol")
    for g in range(2):
        state = game.new_game(players=2, seed=40 + g)
        players = [
            bots.make("hard:iterations=12:seconds=99", game, 0, seed=g),
            bots.make("heuristic", game, 1, seed=g),
        ]
        play_legally(state, players, most=2000)
        assert state.is_over()
