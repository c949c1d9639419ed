"""Capitol's mini variant in OpenSpiel: explicit chance over the engine's own shuffles, the whole game
as an EFG table equal to the Python game, CFR on it, and bots as policies (cfr_mini.py). The tree is
cut to two turns (``stalemate_turns=2``: 805 histories) to keep these tests fast; the four-turn
figures are a benchmark (docs/bots.md)."""

from __future__ import annotations

import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability

from conflictology.openspiel import cfr_mini
from conflictology.openspiel.game import ConflictologyState

MINI = "python_conflictology_capitol_mini"
SHORT = {"stalemate_turns": 2}


@pytest.fixture(scope="module")
def tree() -> cfr_mini.Tree:
    return cfr_mini.build(pyspiel.load_game(MINI, SHORT))


def test_the_mini_game_type_and_its_deal() -> None:
    game = pyspiel.load_game(MINI)
    kind = game.get_type()
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.min_num_players == kind.max_num_players == 2
    assert game.options == {
        "first_player": None, "forced_scandal": True, "steal_blockers": [], "anyone_challenges_block": False,
        "copies": 1, "stalemate_turns": 4, "roles": ["banker", "hacker", "judge"], "influence": 1,
    }
    root = game.new_initial_state()
    assert root.is_chance_node()
    outcomes = root.chance_outcomes()
    assert len(outcomes) == 12 and all(p == pytest.approx(1 / 12) for _, p in outcomes)  # 3! deals, 2 seats
    state = root.child(0)
    assert state.current_player() in (0, 1) and [len(h) for h in state.engine_state.hidden] == [1, 1]
    with pytest.raises(ValueError, match="2–2 players"):
        pyspiel.load_game(MINI, {"players": 3})


def test_a_shuffle_is_a_chance_node_with_the_engine_s_outcomes() -> None:
    # Seat 0 holds the Judge and blocks a Hacker in its one prompt (ruling 6a); accepted, it puts the
    # Judge back and draws from the deck's one card and the Judge: two outcomes, even (ruling 8).
    game = pyspiel.load_game(MINI)
    state: ConflictologyState = game.new_initial_state()
    wanted = (("judge", "hacker", "banker"), 1)
    deal = next(i for i, (_, order, first) in enumerate(game.deals) if (order, first) == wanted)
    state.apply_action(deal)

    def play(text: str) -> None:
        legal = {state.action_to_string(state.current_player(), a): a for a in state.legal_actions()}
        state.apply_action(legal[text])

    for move in ("income", "income", "hacker target=0", "block card=judge", "pass"):
        play(move)
    assert state.is_chance_node()
    assert [p for _, p in state.chance_outcomes()] == [0.5, 0.5]
    hands = set()
    for a, _ in state.chance_outcomes():
        child = state.child(a)
        hands.add(tuple(child.engine_state.hidden[0]))
        assert child.current_player() == 0 and "return" in child.information_state_string(0)
    assert hands == {("judge",), ("banker",)}


def test_openspiel_random_sim_test_on_the_mini() -> None:
    pyspiel.random_sim_test(pyspiel.load_game(MINI), num_sims=5, serialize=False, verbose=False)


def test_the_efg_table_is_the_python_game(tree: cfr_mini.Tree) -> None:
    game = pyspiel.load_game(MINI, SHORT)
    efg = pyspiel.load_efg_game(tree.efg)
    assert tree.histories == 805 and len(tree.infosets) == 144
    uniform = exploitability.nash_conv(game, policy_lib.UniformRandomPolicy(game))
    assert pyspiel.nash_conv(efg, pyspiel.UniformRandomPolicy(efg)) == pytest.approx(uniform)
    ids = cfr_mini.efg_actions(efg)
    random_policy = cfr_mini.as_efg_policy(tree, cfr_mini.bot_policy(tree, "random", 1), ids)
    assert pyspiel.nash_conv(efg, random_policy) == pytest.approx(uniform)


def test_cfr_nash_conv_decreases(tree: cfr_mini.Tree) -> None:
    efg = pyspiel.load_efg_game(tree.efg)
    for plus in (False, True):
        figures = [nash for _, nash, _ in cfr_mini.cfr(efg, [1, 10, 50], plus=plus)]
        assert figures[0] > figures[1] > figures[2] and figures[2] < 0.1, figures


@pytest.mark.parametrize("spec", ["random", "normal"])
def test_a_bot_policy_is_a_policy(tree: cfr_mini.Tree, spec: str) -> None:
    policy = cfr_mini.bot_policy(tree, spec, samples=3)
    assert set(policy) == set(tree.infosets)
    for key, probabilities in policy.items():
        assert [a for a, _ in probabilities] == tree.infosets[key].actions  # the legal ones, each
        assert all(p >= 0 for _, p in probabilities) and sum(p for _, p in probabilities) == pytest.approx(1)
    efg = pyspiel.load_efg_game(tree.efg)
    nash = pyspiel.nash_conv(efg, cfr_mini.as_efg_policy(tree, policy, cfr_mini.efg_actions(efg)))
    assert 0 <= nash <= 2 + 1e-9
