"""Both games as OpenSpiel games: their types, OpenSpiel's own random simulation test, a Python
simulation with serialisation round trips at every state, information states that hold only what a
seat saw, and OpenSpiel's ISMCTS and MCTS playing a few moves."""

from __future__ import annotations

import json

import numpy as np
import pyspiel  # the test extra installs open-spiel: a missing one is a failure, not a skip
import pytest

from conflictology import games
from conflictology.engine import IllegalAction, Rng
from conflictology.openspiel import ConflictologyState, returns_for

CAPITOL = "python_conflictology_capitol"
CONSPIRANOICOS = "python_conflictology_conspiranoicos"
CONFIGS = [
    (CAPITOL, {"players": 2}),
    (CAPITOL, {"players": 4}),
    (CAPITOL, {"players": 6}),
    (CONSPIRANOICOS, {}),
    (CONSPIRANOICOS, {"turn_based": True}),
]


def test_game_types() -> None:
    capitol = pyspiel.load_game(CAPITOL, {"players": 4})
    kind = capitol.get_type()
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert capitol.num_players() == 4
    assert capitol.num_distinct_actions() == games.get("capitol").action_table.size == 83
    assert capitol.observation_tensor_shape() == [193]  # the PettingZoo encoder's layout (docs/rl.md)

    consp = pyspiel.load_game(CONSPIRANOICOS)
    assert consp.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    assert consp.num_distinct_actions() == 103
    assert consp.observation_tensor_shape() == [441]
    turns = pyspiel.load_game(CONSPIRANOICOS, {"turn_based": True})
    assert turns.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="2–10 players"):
        pyspiel.load_game(CAPITOL, {"players": 11})
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'nope'"):
        pyspiel.load_game(CAPITOL, {"nope": 1})
    with pytest.raises(ValueError, match="steal_blockers"):
        pyspiel.load_game(CAPITOL, {"steal_blockers": "banker"})  # the engine's own check
    with pytest.raises(ValueError, match="2–2 players"):
        pyspiel.load_game(CONSPIRANOICOS, {"players": 3})


def test_every_rule_option_is_a_parameter_and_the_game_string_loads_back() -> None:
    game = pyspiel.load_game(
        CAPITOL, {"players": 4, "steal_blockers": "mafia+reporter", "anyone_challenges_block": True}
    )
    options = {
        "first_player": None, "forced_scandal": True, "steal_blockers": ["mafia", "reporter"],
        "anyone_challenges_block": True,
    }
    assert game.options == options
    assert game.new_initial_state().engine_state.view(0)["options"] == options
    again = pyspiel.load_game(str(game))
    assert str(again) == str(game) and again.options == game.options
    spec = pyspiel.load_game(CONSPIRANOICOS).get_type().parameter_specification
    assert set(games.get("conspiranoicos").default_options()) < set(spec)
    consp = pyspiel.load_game(CONSPIRANOICOS, {"face_up_slots": 56, "sequence_any_order": True})
    assert consp.options == {
        "deck_file": None, "face_up_slots": [5, 6], "sequence_any_order": True,
        "head_to_head_ties_score_both": False,
    }
    assert pyspiel.load_game(str(consp)).options == consp.options


def test_options_and_seed_reach_the_engine() -> None:
    game = pyspiel.load_game(CAPITOL, {"players": 3, "seed": 11, "first_player": 2})
    a, b = game.new_initial_state(), game.new_initial_state()
    assert a.current_player() == 2
    assert str(a) == str(b)  # a fixed seed deals the same game every time
    assert str(a) == str(ConflictologyState(game, games.get("capitol").new_game(
        3, seed=11, options={"first_player": 2})))


@pytest.mark.parametrize(("name", "params"), CONFIGS)
def test_openspiel_random_sim_test(name: str, params: dict[str, object]) -> None:
    # OpenSpiel's own checks (legal actions, clones, observations, returns). Its serialisation leg
    # asks a sampled-stochastic game for its generator's state, which Python games cannot give:
    # test_simulation_with_serialisation does that part.
    pyspiel.random_sim_test(pyspiel.load_game(name, params), num_sims=2, serialize=False, verbose=False)


def snapshot(state: object, players: int) -> tuple[object, ...]:
    s = state
    return (
        str(s),
        s.current_player(),
        s.is_terminal(),
        tuple(s.returns()),
        tuple(tuple(s.legal_actions(p)) for p in range(players)),
        tuple(s.information_state_string(p) for p in range(players)),
        tuple(s.observation_string(p) for p in range(players)),
        tuple(tuple(s.observation_tensor(p)) for p in range(players)),
    )


def random_move(state: object, rng: Rng) -> list[int]:
    if state.is_simultaneous_node():
        return [rng.choice(state.legal_actions(p)) for p in range(state.num_players())]
    return [rng.choice(state.legal_actions())]


def apply(state: object, move: list[int]) -> None:
    if state.is_simultaneous_node():
        state.apply_actions(move)
    else:
        state.apply_action(move[0])


@pytest.mark.parametrize(("name", "params"), CONFIGS)
def test_simulation_with_serialisation(name: str, params: dict[str, object]) -> None:
    """At every state: a serialised copy and a clone look the same to everyone, and the game goes on
    the same in all three (the engine's generator travels with the state)."""
    game = pyspiel.load_game(name, params)
    n = game.num_players()
    for seed in range(2):
        rng = Rng(seed)
        state = game.new_initial_state()
        restored = game.deserialize_state(state.serialize())
        cloned = state.clone()
        steps = 0
        while not state.is_terminal():
            expected = snapshot(state, n)
            assert snapshot(restored, n) == expected
            assert snapshot(cloned, n) == expected
            move = random_move(state, rng)
            for s in (state, restored, cloned):
                apply(s, move)
            if steps % 5 == 0:  # now and then, start again from fresh copies
                restored = game.deserialize_state(state.serialize())
                cloned = state.clone()
            steps += 1
        assert snapshot(restored, n) == snapshot(state, n)
        returns = state.returns()
        assert sum(returns) == pytest.approx(0.0)
        winners = state.engine_state.winners()
        assert returns == pytest.approx(returns_for(winners, n))
        assert all(r > 0 for p, r in enumerate(returns) if p in winners) or len(winners) == n


def test_returns() -> None:
    assert returns_for([1], 2) == [-1.0, 1.0]
    assert returns_for([2], 4) == pytest.approx([-1 / 3, -1 / 3, 1.0, -1 / 3])
    assert returns_for([0, 1], 2) == [0.0, 0.0]  # Conspiranoicos' shared victory
    assert returns_for([], 3) == [0.0, 0.0, 0.0]


def test_a_game_cut_at_max_game_length_is_a_draw() -> None:
    state = pyspiel.load_game(CAPITOL, {"players": 2, "seed": 1, "max_game_length": 3}).new_initial_state()
    for _ in range(3):
        state.apply_action(state.legal_actions()[0])
    assert state.is_terminal() and not state.engine_state.is_over()
    assert state.returns() == [0.0, 0.0]


def test_simultaneous_plays_are_one_joint_move() -> None:
    state = pyspiel.load_game(CONSPIRANOICOS, {"seed": 4}).new_initial_state()
    assert state.is_simultaneous_node()
    move = [state.legal_actions(0)[0], state.legal_actions(1)[0]]
    state.apply_actions(move)
    assert not state.is_simultaneous_node()  # the round's winner sends, alone
    assert state.engine_state.view(0)["table"]["revealed"] is True
    fresh = pyspiel.load_game(CONSPIRANOICOS, {"seed": 4}).new_initial_state()
    bad = next(a for a in range(103) if a not in fresh.legal_actions(1))
    with pytest.raises(IllegalAction, match="not legal for seat 1"):
        fresh.apply_actions([fresh.legal_actions(0)[0], bad])
    assert fresh.is_simultaneous_node() and fresh.engine_state.waiting_for() == [0, 1]  # nothing applied


def stacked(deck: list[str]) -> ConflictologyState:
    game = pyspiel.load_game(CAPITOL, {"players": 2})
    engine = games.get("capitol").new_game(2, seed=5, options={"first_player": 0}, deck=deck)
    return ConflictologyState(game, engine)


def test_information_state_holds_only_what_the_seat_saw() -> None:
    # Two deals that differ only in seat 1's cards: seat 0 cannot tell them apart, seat 1 can.
    rest = ["banker", "banker", "hacker", "hacker", "hacker", "judge", "reporter", "reporter", "reporter",
            "police", "police", "mafia"]
    deck_a = ["judge", "judge", "mafia", "mafia", "police", "banker", *rest]
    deck_b = ["judge", "judge", "police", "banker", "mafia", "mafia", *rest]
    a, b = stacked(deck_a), stacked(deck_b)
    for _ in range(4):  # Income, turn after turn: nothing is revealed
        assert a.information_state_string(0) == b.information_state_string(0)
        assert a.observation_string(0) == b.observation_string(0)
        assert a.observation_tensor(0) == b.observation_tensor(0)
        assert a.information_state_string(1) != b.information_state_string(1)
        income = a.legal_actions()[0]
        assert a.action_to_string(income) == "income"
        a.apply_action(income)
        b.apply_action(income)
    assert "players.1.hidden=2" in a.information_state_string(0)  # seat 1's cards: a count
    assert 'players.1.hidden=["mafia","mafia"]' in a.information_state_string(1)


def test_information_state_is_perfect_recall() -> None:
    """What a seat drew and gave back in an exchange is gone from its view, not from its trace."""
    game = pyspiel.load_game(CAPITOL, {"players": 2, "seed": 2})
    for seed in range(30):
        state, rng = game.new_initial_state(), Rng(seed)
        while not state.is_terminal():
            before = state.information_state_string(0)
            apply(state, random_move(state, rng))
            assert state.information_state_string(0).startswith(before)
        assert state.information_state_string(0).count("\n") > 5


@pytest.mark.parametrize(("name", "params"), CONFIGS)
def test_resample_from_infostate(name: str, params: dict[str, object]) -> None:
    """A resampled world (the engine's determinize) looks the same to the seat: information state,
    observation, tensor, legal actions; and it plays on."""
    game = pyspiel.load_game(name, params)
    rng = Rng(8)
    state = game.new_initial_state()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    differs = 0
    while not state.is_terminal():
        if not state.is_simultaneous_node():
            p = state.current_player()
            world = state.resample_from_infostate(p, sampler)
            assert world.information_state_string(p) == state.information_state_string(p)
            assert world.observation_string(p) == state.observation_string(p)
            assert world.observation_tensor(p) == state.observation_tensor(p)
            assert world.legal_actions(p) == state.legal_actions(p)
            differs += str(world) != str(state)
            world.apply_action(world.legal_actions()[0])
        apply(state, random_move(state, rng))
    assert differs > 0  # the hidden cards were redrawn at least once


@pytest.mark.parametrize(
    ("name", "params"),
    [(CAPITOL, {"players": 3, "seed": 1}), (CONSPIRANOICOS, {"turn_based": True, "seed": 1})],
)
def test_openspiel_search_plays(name: str, params: dict[str, object]) -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game(name, params)
    random_state = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
    bots = [
        ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=15, random_state=random_state),
        mcts.MCTSBot(game, 2.0, 10, evaluator, random_state=random_state),
    ]
    state = game.new_initial_state()
    for step in range(6):
        assert not state.is_terminal()
        action = bots[step % 2].step(state)
        assert action in state.legal_actions()
        state.apply_action(action)


def test_openspiel_observation_helpers_use_the_observer() -> None:
    from open_spiel.python.observation import INFO_STATE_OBS_TYPE, make_observation

    game = pyspiel.load_game(CAPITOL, {"players": 3, "seed": 6})
    state = game.new_initial_state()
    observation = make_observation(game)
    observation.set_from(state, 1)
    assert list(observation.tensor) == state.observation_tensor(1)
    assert observation.string_from(state, 1) == state.observation_string(1)
    info = make_observation(game, INFO_STATE_OBS_TYPE)
    assert info.tensor is None and info.string_from(state, 2) == state.information_state_string(2)
    everyone = pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.ALL_PLAYERS
    )
    with pytest.raises(ValueError, match="only a seat's own observation"):
        make_observation(game, everyone)


def test_a_play_submitted_first_stays_out_of_the_other_seats_trace() -> None:
    import re

    state = pyspiel.load_game(CONSPIRANOICOS, {"seed": 9, "turn_based": True}).new_initial_state()
    card = state.action_to_string(0, state.legal_actions(0)[0]).split("=")[1]
    word = re.compile(rf"(?<![A-Z0-9]){card}(?![A-Z0-9])")
    assert word.search(state.information_state_string(0))  # seat 0 holds it
    assert not word.search(state.information_state_string(1))
    state.apply_action(state.legal_actions(0)[0])
    assert state.current_player() == 1
    assert not word.search(state.information_state_string(1)), "seat 1 sees only the back"
    assert not word.search(state.observation_string(1))
    state.apply_action(state.legal_actions(1)[0])
    assert word.search(state.information_state_string(1))  # revealed with both plays


def test_the_examples_of_docs_rl_md_openspiel_section_run() -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "rl.md").read_text("utf-8")
    section = text[text.index("## OpenSpiel") :]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 2
    namespace: dict[str, object] = {"__name__": "__doc_example__"}
    for block in blocks:
        quick = block.replace("max_simulations=100", "max_simulations=5")
        exec(compile(quick, "docs/rl.md", "exec"), namespace)
    assert namespace["state"].move_number() == 1  # type: ignore[attr-defined]  # the bot's move


def test_max_game_length_bounds_every_capitol_game() -> None:
    # The stalemate rule ends a game at the end of the turn of its 2,000th decision: OpenSpiel's bound
    # must hold that whole turn, at the largest table and with the option that widens a window most.
    from conflictology.games.capitol import data

    game = pyspiel.load_game(CAPITOL, {"players": 10, "anyone_challenges_block": True})
    assert game.max_game_length() >= data.MOVE_CAP + 3 * 9
    engine = games.get("capitol")
    rng = Rng(7)
    for seed in range(20):
        start = engine.new_game(10, seed=seed, options={"anyone_challenges_block": True})
        doc = json.loads(start.to_json())
        doc["moves"] = data.MOVE_CAP - 1  # the next decision is the 2,000th
        state = ConflictologyState(game, engine.from_json(json.dumps(doc)))
        state._moves = data.MOVE_CAP - 1
        while not state.is_terminal():
            legal = state.legal_actions()
            # Passes first keep every window open as long as it can be, then a random answer.
            passes = [a for a in legal if state.action_to_string(state.current_player(), a) == "pass"]
            state.apply_action(passes[0] if passes and rng.random() < 0.8 else rng.choice(legal))
        assert state.engine_state.is_over(), "cut by OpenSpiel before the rules ended the game"
        assert state._moves <= game.max_game_length()


def test_late_options_are_parameters_left_out_when_not_set() -> None:
    # Capitol lists copies, stalemate_turns, roles and influence only when set: "not set" (0, "") keeps
    # a game exactly the rulebook's, and a set one reaches the engine and the game string.
    game = pyspiel.load_game(CAPITOL, {"players": 7, "copies": 5, "stalemate_turns": 20})
    assert game.options["copies"] == 5 and game.options["stalemate_turns"] == 20
    assert len(game.new_initial_state().engine_state.deck) == 30 - 14
    assert pyspiel.load_game(str(game)).options == game.options
    plain = pyspiel.load_game(CAPITOL, {"players": 4})
    assert set(plain.options) == set(games.get("capitol").default_options())
    with pytest.raises(ValueError, match="copies must be"):
        pyspiel.load_game(CAPITOL, {"players": 7, "copies": 7})
    with pytest.raises(ValueError, match="stalemate_turns"):
        pyspiel.load_game(CAPITOL, {"stalemate_turns": 500})
