"""The Capitol search's cheaper walks: rollouts cut a few turns on and scored by a fitted value,
the heuristic's knowledge read from a sampled world's fields instead of a rendered view, and the
worlds of a decision dealt from a view read once. Each is checked against what it replaces."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from bot_helpers import load_script
from conflictology import bots, games
from conflictology.bots.capitol_knowledge import Knowledge, LogMemo
from conflictology.bots.capitol_value import FEATURES, win_shares
from conflictology.engine import Rng

GAME = games.get("capitol")


def _knowledge(k: Knowledge) -> tuple[Any, ...]:
    players = [
        (p.seat, p.money, p.alive, p.hidden, list(p.revealed), dict(p.claims), set(p.caught), p.bluffs_caught,
         p.claims_checked, p.challenges, p.chances_to_challenge, p.habits)
        for p in k.players
    ]
    return (k.me, k.n, k.hand, players, k.deck, k.known, k.unseen, k.pool, k.pending, k.shown, k.turn)


def test_knowledge_read_from_the_state_is_the_knowledge_read_from_the_view() -> None:
    """Every seat, at random points of 60 games at every size, each reading on with its own memo:
    the state-read knowledge equals the view-read one field by field (so it knows no more)."""
    rng = Rng(3)
    compared = 0
    for g in range(60):
        n = 2 + g % 5
        state: Any = GAME.new_game(n, seed=rng.next64())
        players = [bots.make("heuristic-bluffer", GAME, s, seed=rng.next64()) for s in range(n)]
        by_view = [LogMemo() for _ in range(n)]
        by_state = [LogMemo() for _ in range(n)]
        while not state.is_over():
            actor = state.waiting_for()[0]
            for s in range(n):
                if s != actor and rng.random() > 0.3:
                    continue
                log = state.log
                state.log = log[by_view[s].n :]  # as a rollout renders it: the entries not read yet
                view = state.view(s)
                state.log = log
                from_state = Knowledge.of_state(state, s, by_state[s])
                assert _knowledge(Knowledge(view, by_view[s])) == _knowledge(from_state)
                compared += 1
            state.apply(actor, players[actor].act(state.view(actor), state.legal_actions(actor)))
    assert compared > 5000


def test_win_shares_add_up_and_favour_the_player_with_more_cards() -> None:
    state: Any = GAME.new_game(4, seed=1)
    shares = win_shares(state)
    assert math.isclose(sum(shares), 1.0)
    # Seat 2 loses a card (and nothing else changes): its chance drops, the others' rise.
    lost = state.clone()
    lost.revealed[2].append(lost.hidden[2].pop())
    after = win_shares(lost)
    assert after[2] < shares[2]
    assert all(after[i] > shares[i] for i in (0, 1, 3))
    # Out of the game: no chance at all.
    lost.revealed[2].append(lost.hidden[2].pop())
    lost.alive[2] = False
    assert win_shares(lost)[2] == 0.0
    assert math.isclose(sum(win_shares(lost)), 1.0)


@pytest.mark.parametrize("horizon", [1, 3, 6])
def test_a_rollout_stops_at_its_horizon_or_when_the_searcher_is_out(horizon: int) -> None:
    """Cut once ``horizon`` turns were played with three or more players in; face to face, to the
    end; the searcher out, at once."""
    rng = Rng(horizon)
    cut = ended = out = 0
    for g in range(60):
        n = 2 + g % 4
        state: Any = GAME.new_game(n, seed=rng.next64())
        seat = state.waiting_for()[0]
        bot: Any = bots.make(f"pimc:horizon={horizon}", GAME, seat, seed=rng.next64())
        policy = bot.policy
        policy.sampler(bot, state.view(seat))
        world = state.clone()
        world.apply(seat, world.legal_actions(seat)[rng.randrange(len(world.legal_actions(seat)))])
        since, alive_before = len(world.log), sum(world.alive)
        shares = policy.rollout(bot, world, Rng(g))
        assert math.isclose(sum(shares), 1.0)
        turns = [i for i in range(since, len(world.log)) if world.log[i][0] == "action"]
        if len(turns) > horizon:
            # Past the horizon: only when that turn began with two players left.
            gone = sum(1 for e in world.log[since : turns[horizon]] if e[0] == "out")
            assert alive_before - gone <= 2
        if world.is_over():
            ended += 1
            assert shares == [1.0 if i == world.winners()[0] else 0.0 for i in range(n)]
        elif not world.alive[seat]:
            out += 1  # the searcher is out: nothing after that changes its reward
            assert shares[seat] == 0.0
            assert any(e[0] == "out" and e[1] == seat for e in world.log[since:])
        else:
            cut += 1
            assert world.phase == "turn"
            assert len(turns) == horizon
            assert sum(world.alive) >= 3
            assert shares == win_shares(world)
    assert cut > 0
    assert ended > 0  # every two-player game, at least


def test_horizon_zero_plays_to_the_end_unless_the_searcher_is_out() -> None:
    rng = Rng(9)
    for g in range(20):
        state: Any = GAME.new_game(3, seed=g)
        seat = state.waiting_for()[0]
        bot: Any = bots.make("pimc:horizon=0", GAME, seat, seed=g)
        bot.policy.sampler(bot, state.view(seat))
        world = state.clone()
        shares = bot.policy.rollout(bot, world, Rng(rng.next64()))
        assert world.is_over() or not world.alive[seat]
        if not world.is_over():
            assert shares[seat] == 0.0


def _fitter() -> Any:
    return load_script("fit_capitol_value")


def test_the_fit_recovers_known_weights() -> None:
    """Positions whose winners are drawn from a known conditional logit: the fit finds its weights."""
    fitter = _fitter()
    gen = np.random.default_rng(5)
    true = gen.normal(0, 0.7, len(FEATURES))
    rows, won, group = [], [], []
    for g in range(6000):
        size = int(gen.integers(2, 5))
        x = gen.integers(0, 3, (size, len(FEATURES))).astype(float)
        p = np.exp(x @ true)
        winner = gen.choice(size, p=p / p.sum())
        rows.extend(x)
        won.extend(i == winner for i in range(size))
        group.extend([g] * size)
    w = fitter.fit(np.array(rows), np.array(won, dtype=float), np.array(group))
    assert np.abs(w - true).max() < 0.15


def test_the_fit_script_plays_and_fits_rollout_games() -> None:
    fitter = _fitter()
    data = fitter.play(60, seed=1)
    starts = np.flatnonzero(np.r_[True, data["group"][1:] != data["group"][:-1]])
    assert len(starts) > 500
    assert (np.add.reduceat(data["won"], starts) == 1).all()  # one winner per position
    w = fitter.fit(*fitter._split(data, face_to_face=False))
    assert w[FEATURES.index("two_cards")] > 0  # a second card is worth having


def test_a_negative_horizon_is_refused_when_the_bot_is_made() -> None:
    for spec in ("pimc:horizon=-1", "ismcts:horizon=2.5"):
        with pytest.raises(ValueError, match="horizon"):
            bots.make(spec, GAME, 0, seed=1)
