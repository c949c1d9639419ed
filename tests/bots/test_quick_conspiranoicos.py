"""The quick Conspiranoicos search (issue 28; docs/bots.md, "Hard at scale").

ISMCTS on a small budget (200 iterations, or a busy server's 30 ms clock) is *quick*: at a Collect
Evidence decision it keeps the heuristic's choice unless its most visited action's mean beats it by
``ConspiranoicosSearch.quick_z`` standard errors (fitted by ``scripts/distill_conspiranoicos.py``).
``hard``'s full search (its 0.3 s clock, or 2,000 iterations) weighs no prior and never asks for one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot_helpers import play_legally
from conflictology import bots, games
from conflictology.bots.conspiranoicos import (
    EYE,
    SORT_DECISIONS,
    Catalogue,
    ConspiranoicosSearch,
    free_measures,
    outcome,
    points,
)
from conflictology.bots.ismcts import ISMCTSBot
from conflictology.engine import Action, GameState, Rng, View
from conflictology.games.conspiranoicos.views import read_view

GAME = games.get("conspiranoicos")


def _decisions(seed: int, count: int) -> list[tuple[GameState, int]]:
    """Collect Evidence states of a game of heuristics where a seat awaited has a real choice."""
    state = GAME.new_game(2, seed=seed)
    heuristics = [bots.make("heuristic", GAME, s, seed=seed + s) for s in range(2)]
    out: list[tuple[GameState, int]] = []
    while state.waiting_for() and len(out) < count:
        awaited = state.waiting_for()
        for s in awaited:
            legal = state.legal_actions(s)
            if len(legal) > 1 and not any(a["type"] in SORT_DECISIONS for a in legal):
                out.append((state.clone(), s))
        chosen = [(s, heuristics[s].act(state.view(s), state.legal_actions(s))) for s in awaited]
        for s, action in chosen:
            if s in state.waiting_for():
                state.apply(s, action)
    return out[:count]


@pytest.mark.parametrize(
    ("spec", "quick"),
    [
        ("hard:iterations=200:seconds=99", True),
        ("hard:seconds=0.03", True),  # what a busy pool plays (bots.with_clock)
        ("hard:iterations=2000:seconds=99", False),
        ("hard", False),
        ("search", False),
        ("ismcts", False),
        ("hard:iterations=200:seconds=99:quick=0", False),
        ("hard:iterations=2000:seconds=99:quick=1", True),
    ],
)
def test_which_searches_are_quick(spec: str, quick: bool) -> None:
    bot = bots.make(spec, GAME, 1, seed=4)
    assert isinstance(bot, ISMCTSBot)
    assert bot.quick is quick


@pytest.mark.parametrize(
    ("spec", "asked"),
    [("iterations=30", True), ("iterations=30:quick=0", False), ("iterations=30:z=2", False)],
)
def test_only_a_quick_search_weighs_the_heuristic(
    spec: str, asked: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full search (or one given its own ``z``) asks neither the quick rule nor the heuristic: its
    play is the one from before, random numbers included."""
    calls: list[str] = []
    rule, prior = ConspiranoicosSearch.quick_rule, ConspiranoicosSearch.prior

    def spy_rule(self: ConspiranoicosSearch, bot: ISMCTSBot, view: View) -> tuple[float, float] | None:
        calls.append("rule")
        return rule(self, bot, view)

    def spy_prior(self: ConspiranoicosSearch, bot: ISMCTSBot, view: View, legal: list[Action]) -> Any:
        calls.append("prior")
        return prior(self, bot, view, legal)

    monkeypatch.setattr(ConspiranoicosSearch, "quick_rule", spy_rule)
    monkeypatch.setattr(ConspiranoicosSearch, "prior", spy_prior)
    for state, seat in _decisions(6, 6):
        bot = bots.make(f"hard:{spec}:seconds=99", GAME, seat, seed=4)
        bot.act(state.view(seat), state.legal_actions(seat))
    assert (calls.count("rule"), calls.count("prior")) == ((6, 6) if asked else (0, 0))


def test_the_quick_search_keeps_the_heuristics_choice_unless_clearly_beaten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under a margin out of reach it plays the heuristic's choice; under none, its most visited."""
    priors: list[Action | None] = []
    prior = ConspiranoicosSearch.prior

    def spy(self: ConspiranoicosSearch, bot: ISMCTSBot, view: View, legal: list[Action]) -> Any:
        priors.append(prior(self, bot, view, legal))
        return priors[-1]

    monkeypatch.setattr(ConspiranoicosSearch, "prior", spy)
    decisions = _decisions(11, 8)
    monkeypatch.setattr(ConspiranoicosSearch, "quick_z", 1e9)
    for state, seat in decisions:
        bot = bots.make("hard:iterations=40:seconds=99", GAME, seat, seed=5)
        action = bot.act(state.view(seat), state.legal_actions(seat))
        assert priors[-1] is not None
        assert action == priors[-1]
    overruled = 0
    monkeypatch.setattr(ConspiranoicosSearch, "quick_z", -1e9)
    for state, seat in decisions:
        bot = bots.make("hard:iterations=40:seconds=99", GAME, seat, seed=5)
        assert isinstance(bot, ISMCTSBot)
        legal = state.legal_actions(seat)
        action = bot.act(state.view(seat), legal)
        stats = [bot.last_root_stats.get(GAME.action_table.index(a), (0, 0.0)) for a in legal]
        most = max(range(len(legal)), key=lambda i: (*stats[i], -i))
        assert action == legal[most]  # the search's own pick: its most visited action
        overruled += action != priors[-1]
    assert overruled  # the search does overrule the heuristic, given the chance


@pytest.mark.parametrize("seed", [3, 8])
def test_a_quick_decision_depends_only_on_the_view(seed: int) -> None:
    """The same view behind another world (the other's hand and play dealt anew) and the same seed:
    the same decision and the same statistics (the search never reads the other's hidden cards)."""
    for state, seat in _decisions(seed, 6):
        view = state.view(seat)
        world = GAME.determinize(view, Rng(seed + 1))
        assert world.view(seat) == view
        seen = set()
        for s in (state, world):
            bot = bots.make("hard:iterations=30:seconds=99", GAME, seat, seed=seed)
            assert isinstance(bot, ISMCTSBot) and bot.quick
            action = bot.act(s.view(seat), s.legal_actions(seat))
            assert action in state.legal_actions(seat)
            seen.add(json.dumps([action, sorted(bot.last_root_stats.items())], sort_keys=True))
        assert len(seen) == 1


def test_a_quick_search_plays_whole_games_legally() -> None:
    for g in range(3):
        state = GAME.new_game(2, seed=60 + g)
        players = [
            bots.make("hard:iterations=20:seconds=99", GAME, g % 2, seed=g),
            bots.make("heuristic", GAME, 1 - g % 2, seed=g),
        ]
        players.sort(key=lambda b: b.seat)
        play_legally(state, players, most=500)
        assert state.is_over()


def _score_from_view(state: GameState) -> list[float]:
    """The cut-off's score as the search first read it: from the spectator view of the world."""
    view = read_view(state.view(None))
    cat = Catalogue(view)
    sym = view["pyramid_symbols"]
    assert sym is not None
    hands = [list(p["evidence"] or []) for p in view["players"]]
    measured = [free_measures(cat, h, list(sym["T"]), sym["S"], list(view["gained"])) for h in hands]
    fw = -1 if view["final_winner"] is None else view["final_winner"]
    a, b = points(measured[0], measured[1], fw == 0, fw == 1)
    eye = next((p for p in (0, 1) if any(cat[c].special == EYE for c in hands[p])), -1)
    r0 = outcome(a, b, fw, 0, eye)
    return [r0, 1.0 - r0]


def test_the_cut_off_is_scored_as_its_view_shows_it() -> None:
    """The search scores a playout at the end of Collect Evidence from the world's own fields (and
    remembers the measures): the same score as read from the world's spectator view, at the cut-off
    of 200 random playouts in 40 deals (the memo kept across them)."""
    policy = ConspiranoicosSearch()
    rng = Rng(17)
    cut = 0
    for g in range(200):
        state = GAME.new_game(2, seed=900 + g % 40)
        while not policy.cutoff(state):
            seat = state.waiting_for()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        assert not state.is_over()
        assert policy.evaluate(state) == _score_from_view(state)
        cut += 1
    assert cut == 200
