"""The bold rule player (``bots/capitol_rules.py``): the search's second model of a Capitol player.

It acts on a sampled world's state, so these check what a view-based bot gets for free: it plays
only legal moves, reads only what its seat may know, and reads the public record the same from the
rendered entries a sampled world starts with as from the engine's own.
"""

from __future__ import annotations

import pytest

from conflictology import bots, games
from conflictology.bots.capitol_rules import ClaimTrace, RulePlayer
from conflictology.engine import GameState, Rng
from conflictology.games.capitol.views import render_entry


def play_at_random(state: GameState, rng: Rng, steps: int = 100_000) -> None:
    """Random legal moves, up to ``steps`` of them or the end of the game."""
    for _ in range(steps):
        if state.is_over():
            return
        seat = rng.choice(state.waiting_for())
        state.apply(seat, rng.choice(state.legal_actions(seat)))


def test_it_plays_whole_games_legally_at_every_table_size() -> None:
    game = games.get("capitol")
    decisions = 0
    for g in range(150):
        players = 2 + g % 5
        state = game.new_game(players=players, seed=g)
        player = RulePlayer(Rng(g), ClaimTrace(players))
        steps = 0
        while not state.is_over():
            seat = state.waiting_for()[0]
            legal = state.legal_actions(seat)
            action = player.act(state, seat, legal)
            assert action in legal
            state.apply(seat, action)
            steps += 1
            assert steps < 2000, "a game of rule players did not end"
        decisions += steps
    assert player.fallbacks == 0
    assert decisions > 3000


def test_its_decisions_depend_only_on_what_the_seat_may_know() -> None:
    """The same view with other hidden cards elsewhere (and another deck) gets the same decision."""
    game = games.get("capitol")
    master = Rng(7)
    compared = 0
    for g in range(300):
        state = game.new_game(players=2 + g % 5, seed=g)
        play_at_random(state, master, master.randrange(40))
        if state.is_over():
            continue
        seat = state.waiting_for()[0]
        view = state.view(seat)
        world = game.determinize(view, master)
        if world.to_json() == state.to_json():
            continue
        seed = master.next64()
        answers = []
        for s in (state, world):
            trace = ClaimTrace(s.num_players)
            answers.append(RulePlayer(Rng(seed), trace).act(s, seat, s.legal_actions(seat)))
        assert answers[0] == answers[1]
        compared += 1
    assert compared > 150


def test_the_claim_record_reads_rendered_and_engine_entries_alike() -> None:
    game = games.get("capitol")
    rng = Rng(3)
    checked = 0
    for g in range(60):
        state = game.new_game(players=2 + g % 5, seed=100 + g)
        play_at_random(state, rng)
        log = state.log  # type: ignore[attr-defined]
        cut = rng.randrange(len(log))
        engine = ClaimTrace(state.num_players)
        engine.read(log)
        mixed = ClaimTrace(state.num_players)
        mixed.read([("_raw", render_entry(e)) for e in log[:cut]] + log[cut:])
        assert (mixed.claimed, mixed.caught) == (engine.claimed, engine.caught)
        checked += sum(len(c) for c in engine.claimed) + sum(len(c) for c in engine.caught)
    assert checked > 50


def test_a_claim_is_dropped_when_shown_and_remembered_as_a_bluff_when_caught() -> None:
    trace = ClaimTrace(3)
    trace.read([
        ("action", 1, "banker", -1),
        ("action", 2, "mafia", 0),
        ("challenge", 0, 2, "mafia"),
        ("bluff", 2, "mafia"),
        ("block", 0, "judge", 1),
        ("reveal", 0, "judge"),
    ])
    assert trace.claimed == [set(), {"banker"}, set()]
    assert trace.caught == [set(), set(), {"mafia"}]
    copy = trace.copy()
    copy.read([*[("start", 0)] * 6, ("exchange", 2, 2)])
    assert copy.caught[2] == set() and trace.caught[2] == {"mafia"}


def test_the_search_plays_the_other_seats_by_the_model_asked() -> None:
    """``opp=rules``: every other seat by the rule player; ``opp=heuristic``: none; the default
    (``mix``) some of them, drawn per rollout, the same draw for the same random numbers (every
    candidate of a world meets the same table)."""
    game = games.get("capitol")
    state = game.new_game(players=5, seed=5)
    view = state.view(0)

    def seats(spec: str, seed: int) -> list[int]:
        bot = bots.make(spec, game, 0, seed=1)
        bot.policy.sampler(bot, view)  # type: ignore[attr-defined]
        models = bot.policy.seat_models(bot, Rng(seed))  # type: ignore[attr-defined]
        assert all(isinstance(m, RulePlayer) for m in models.values())
        return sorted(models)

    assert seats("hard:iterations=3:opp=rules", 1) == [1, 2, 3, 4]
    assert seats("hard:iterations=3:opp=heuristic", 1) == []
    drawn = [seats("hard:iterations=3", s) for s in range(40)]
    assert all(0 not in d for d in drawn)
    assert 40 < sum(map(len, drawn)) < 4 * 40 - 40
    assert seats("hard:iterations=3", 11) == seats("hard:iterations=3", 11)
    assert seats("hard:iterations=3:rules=0", 2) == []


def test_the_search_with_each_model_plays_legally_from_its_own_view() -> None:
    game = games.get("capitol")
    for spec in ("hard:iterations=4:seconds=600", "hard:iterations=4:seconds=600:opp=rules"):
        for g in range(4):
            players = 2 + 2 * (g % 2)
            state = game.new_game(players=players, seed=g)
            seated = [bots.make(spec if s == 0 else "heuristic", game, s, seed=g) for s in range(players)]
            while not state.is_over():
                seat = state.waiting_for()[0]
                legal = state.legal_actions(seat)
                action = seated[seat].act(state.view(seat), legal)
                assert action in legal
                state.apply(seat, action)
    with pytest.raises(ValueError, match="opp must be one of"):
        bots.make("hard:opp=psychic:iterations=2", game, 0, seed=1)


def test_the_outside_ai_itself_can_stand_in_the_rollouts_for_measurement() -> None:
    """``opp=outside`` (a benchmark's upper bound, needing coupml): every other seat of a rollout is
    treason's AI, drawing from the rollout's random numbers."""
    from conflictology.bots.outside import OutsideTreason

    game = games.get("capitol")
    state = game.new_game(players=3, seed=2)
    bot = bots.make("hard:iterations=3:opp=outside", game, 1, seed=1)
    bot.policy.sampler(bot, state.view(1))  # type: ignore[attr-defined]
    rng = Rng(4)
    models = bot.policy.seat_models(bot, rng)  # type: ignore[attr-defined]
    assert sorted(models) == [0, 2]
    assert all(isinstance(m, OutsideTreason) and m.rng is rng for m in models.values())
