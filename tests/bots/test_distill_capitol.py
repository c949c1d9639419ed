"""``scripts/distill_capitol.py``: what it collects of the full search, and how it scores rules."""

from __future__ import annotations

import io
import json
from typing import Any

from bot_helpers import load_script
from conflictology import bots, games
from conflictology.bots.ismcts import FlatSearchBot


def _script() -> Any:
    return load_script("distill_capitol")


def test_a_recorded_decision_is_the_searchs_own() -> None:
    """Each line: the view the seat saw, the candidates with the heuristic's choice and the search's
    among them, and one reward per world and candidate; the search's pick is what it played."""
    script = _script()
    game = games.get("capitol")
    state = game.new_game(players=2, seed=12)
    out = io.StringIO()
    seated = []
    for seat in range(2):
        inner = bots.make("hard:iterations=6:seconds=99", game, seat, seed=seat)
        assert isinstance(inner, FlatSearchBot)
        seated.append(script._Recorder(inner, out, 1))
    played: list[dict[str, Any]] = []
    for _ in range(30):
        if not state.waiting_for():
            break
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        action = seated[seat].act(state.view(seat), legal)
        if len(legal) > 1:
            played.append(action)
        state.apply(seat, action)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines
    for line in lines:
        assert line["view"]["you"] in (0, 1)
        assert line["cands"][line["chosen"]] in played
        assert 0 <= line["prior"] < len(line["cands"])
        assert len(line["results"]) == len(line["cands"])
        assert {len(r) for r in line["results"]} == {6}


def test_a_rule_is_scored_on_worlds_it_did_not_see() -> None:
    """A rule that picks whatever won its own block gains nothing where the worlds are coin flips
    unrelated to the pick, and the gain of an always-better candidate is counted in full."""
    script = _script()
    flips = [[float((w * 7919 + c * 104729) % 3 == 0) for w in range(200)] for c in range(3)]
    decision = {"prior": 0, "results": flips, "feats": [{}, {}, {}]}
    greedy = lambda d, r: max(range(len(r)), key=lambda j: sum(r[j]))  # noqa: E731
    gain, _ = script._score([decision], greedy)
    assert abs(gain) < 0.05
    better = {"prior": 0, "results": [[0.0] * 200, [1.0] * 200], "feats": [{}, {}]}
    assert script._score([better], greedy) == (1.0, 1.0)
    assert script._score([better], lambda d, r: d["prior"]) == (0.0, 0.0)
