"""The PettingZoo environments: the API test, seeding, masks, rewards, and hidden information."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from conflictology import IllegalAction, games, rl
from conflictology.engine import Rng
from conflictology.rl.env import ConflictologyEnv

GAMES = games.names()
# Capitol past six seats too (the big-table variant, its own 99-action table).
TABLES = [
    ("capitol", 2), ("capitol", 3), ("capitol", 6), ("capitol", 7), ("capitol", 10), ("conspiranoicos", 2),
]
ROOT = Path(__file__).resolve().parents[2]


def finish(env: ConflictologyEnv, rng: Rng) -> dict[str, float]:
    """Random legal play to the end; returns each agent's total reward as seen through ``last``."""
    totals: dict[str, float] = {}
    for agent in env.agent_iter(100_000):
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] = totals.get(agent, 0.0) + float(reward)
        env.step(None if terminated or truncated else rl.random_policy(obs, rng))
    return totals


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_pettingzoo_api_test(game: str, players: int) -> None:
    env = rl.env(game, players)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env, num_cycles=400)
    # PettingZoo exempts its own card games by name from these two notices (a dict observation is
    # the card-game convention); anything else it warns about is a defect of ours.
    expected = ("Observation is not a NumPy array", "Observation space for each agent probably should be")
    other = {str(w.message) for w in caught if not str(w.message).startswith(expected)}
    assert not other, other


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_pettingzoo_seed_test(game: str, players: int) -> None:
    seed_test(lambda: rl.env(game, players), num_cycles=300)


@pytest.mark.parametrize("game", GAMES)
def test_same_seed_same_game_and_different_seeds_differ(game: str) -> None:
    def trace(seed: int) -> list[bytes]:
        env = rl.raw_env(game)
        env.reset(seed=seed)
        rng = Rng(99)
        out = []
        for agent in env.agent_iter(400):
            obs, _, terminated, truncated, _ = env.last()
            out.append(agent.encode() + obs["observation"].tobytes() + obs["action_mask"].tobytes())
            env.step(None if terminated or truncated else rl.random_policy(obs, rng))
        return out

    assert trace(5) == trace(5)
    assert trace(5) != trace(6)
    # A reset without a seed follows from the last seed: the second game of a run replays too.
    env_a, env_b = rl.raw_env(game), rl.raw_env(game)
    env_a.reset(seed=11)
    env_b.reset(seed=11)
    env_a.reset()
    env_b.reset()
    assert env_a.state is not None and env_b.state is not None
    assert env_a.state.to_json() == env_b.state.to_json()


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_mask_is_the_legal_actions_and_observation_fits_the_space(game: str, players: int) -> None:
    env = rl.raw_env(game, players)
    env.reset(seed=3)
    rng = Rng(4)
    steps = 0
    for agent in env.agent_iter(3000):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        state = env.state
        assert state is not None
        seat = env.seat(agent)
        assert seat == state.waiting_for()[0], "the agent to act is the first awaited seat"
        legal = state.legal_action_indices(seat)
        assert sorted(np.flatnonzero(obs["action_mask"]).tolist()) == sorted(legal)
        assert env.observation_space(agent).contains(obs)
        assert obs["observation"].shape == (env.obs_size,)
        for other in env.agents:  # nobody else may act now
            if other != agent and env.seat(other) not in state.waiting_for():
                assert not env.observe(other)["action_mask"].any()
        env.step(rl.random_policy(obs, rng))
        steps += 1
    assert steps > 5


@pytest.mark.parametrize("game", GAMES)
def test_illegal_action_raises_and_changes_nothing(game: str) -> None:
    env = rl.raw_env(game)
    env.reset(seed=8)
    assert env.state is not None
    before = env.state.to_json()
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalAction, match="not legal"):
        env.step(illegal)
    with pytest.raises(IllegalAction):
        env.step(env.n_actions + 5)
    with pytest.raises(IllegalAction):
        env.step(None)
    assert env.state.to_json() == before
    assert env.agent_selection == agent


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_rewards_come_at_the_end_to_the_winners(game: str, players: int) -> None:
    for seed in range(4):
        env = rl.raw_env(game, players)
        env.reset(seed=seed)
        totals = finish(env, Rng(seed))
        assert env.state is not None and env.state.is_over()
        winners = env.state.winners()
        assert set(totals) == set(env.possible_agents), "every agent hears the end"
        for agent, total in totals.items():
            seat = env.seat(agent)
            if seat not in winners:
                assert total == -1.0
            else:
                assert total == (1.0 if len(winners) == 1 else 0.0)
        assert env.agents == []


def test_truncation_after_max_steps() -> None:
    env = rl.raw_env("capitol", 3, max_steps=5)
    env.reset(seed=1)
    totals = finish(env, Rng(1))
    assert env.steps == 5
    assert totals == dict.fromkeys(env.possible_agents, 0.0)


@pytest.mark.parametrize("game", GAMES)
def test_observation_reads_only_the_agents_view(game: str) -> None:
    """Two states that differ only in what a seat cannot see give it the same observation.

    ``determinize`` draws such a twin from the seat's view (the hidden cards resampled); the encoded
    vector must not change, whatever else does.
    """
    g = games.get(game)
    encoder = rl.encoder_for(game)
    rng = Rng(17)
    differing_states = 0
    for trial in range(30):
        players = g.min_players + trial % (g.max_players - g.min_players + 1)
        state = g.new_game(players, seed=trial)
        for _ in range(rng.randrange(40)):
            if state.is_over():
                break
            seat = state.waiting_for()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        for seat in range(players):
            view = state.view(seat)
            twin = g.determinize(view, Rng(trial * 7 + seat))
            if twin.to_json() != state.to_json():
                differing_states += 1
            assert np.array_equal(encoder.encode(twin.view(seat), players), encoder.encode(view, players))
    assert differing_states > 10, "the twins should differ in hidden cards"


def test_spectator_view_is_refused_by_the_encoder() -> None:
    state = games.get("capitol").new_game(2, seed=1)
    with pytest.raises(ValueError, match="seat"):
        rl.encoder_for("capitol").encode(state.view(None), 2)


@pytest.mark.parametrize("spec", ["heuristic", "ismcts:iterations=20:seconds=1"])
@pytest.mark.parametrize("game", GAMES)
def test_bot_policy_plays_inside_the_environment(game: str, spec: str) -> None:
    env = rl.env(game)
    env.reset(seed=2)
    policy = rl.BotPolicy(spec, seed=3)
    rng = Rng(5)
    bot_moves = 0
    for agent in env.agent_iter(20_000):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
        elif agent == "player_0":
            action = policy(env, agent)
            assert obs["action_mask"][action] == 1
            env.step(action)
            bot_moves += 1
        else:
            env.step(rl.random_policy(obs, rng))
    assert not env.agents and bot_moves > 0


def test_a_big_table_has_its_own_action_table() -> None:
    small, big = rl.raw_env("capitol", 6), rl.raw_env("capitol", 10)
    assert (small.n_actions, big.n_actions) == (83, 99)
    assert [big.table.action(i) for i in range(83)] == [small.table.action(i) for i in range(83)]
    big.reset(seed=3)
    obs = big.observe(big.agent_selection)
    assert obs["action_mask"].shape == (99,) and obs["observation"].shape == (397,)


def test_bad_construction_is_refused() -> None:
    with pytest.raises(ValueError):
        rl.raw_env("capitol", 11)
    with pytest.raises(ValueError):
        rl.raw_env("no such game")
    with pytest.raises(ValueError):
        rl.raw_env("capitol", 2, options={"nope": 1})
    with pytest.raises(ValueError):
        rl.raw_env("capitol", 2, render_mode="rgb_array")


def test_render_ansi_shows_the_public_table_only() -> None:
    env = rl.raw_env("capitol", 3, render_mode="ansi")
    env.reset(seed=4, options={"deck": ["banker"] * 3 + ["mafia"] * 3 + ["hacker"] * 3
                               + ["judge"] * 3 + ["reporter"] * 3 + ["police"] * 3})
    text = env.render()
    assert isinstance(text, str) and "Treasury" in text
    for role in ("Banker", "Mafia", "Hacker"):  # the three hands, all face down to a spectator
        assert role not in text


@pytest.mark.parametrize(("game", "players"), [("capitol", 2), ("capitol", 4), ("conspiranoicos", 2)])
def test_docs_show_the_current_layouts(game: str, players: int) -> None:
    text = (ROOT / "docs" / "rl.md").read_text("utf-8")
    assert rl.encoder_for(game).layout(players).markdown() in text
