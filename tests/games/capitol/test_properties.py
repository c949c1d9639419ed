"""Capitol invariants under random play (hypothesis): money and cards are conserved, hands never grow
except while an exchange is being chosen, eliminated players never act, every game ends with exactly
one winner, and determinized worlds agree with the view they came from."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conflictology.engine import Rng
from conflictology.games.capitol import GAME, CapitolState
from conflictology.games.capitol.data import DECK, STEAL_BLOCKER_CHOICES

MAX_DECISIONS = 3_000

options_strategy = st.fixed_dictionaries({
    "forced_scandal": st.booleans(),
    "steal_blockers": st.lists(st.sampled_from(STEAL_BLOCKER_CHOICES), unique=True),
    "anyone_challenges_block": st.booleans(),
})


def check_invariants(state: CapitolState) -> None:
    assert state.treasury + sum(state.money) == 50
    assert all(m >= 0 for m in state.money) and state.treasury >= 0
    cards = Counter(state.deck)
    for hand in state.hidden:
        cards.update(hand)
    for shown in state.revealed:
        cards.update(shown)
    assert cards == Counter(DECK), "18 cards: deck + face down + face up"
    view = state.view(None)
    assert view["deck"] + sum(p["hidden"] + len(p["revealed"]) for p in view["players"]) == 18
    for seat in range(state.num_players):
        assert len(state.hidden[seat]) + len(state.revealed[seat]) == 2 or (
            state.phase == "exchange" and seat == state.actor
        )
        assert state.alive[seat] == bool(state.hidden[seat])
        if not state.alive[seat]:
            assert state.money[seat] == 0
            assert seat not in state.waiting_for(), "an eliminated player never acts"


def play(state: CapitolState, rng: Rng) -> int:
    decisions = 0
    check_invariants(state)
    while not state.is_over():
        waiting = state.waiting_for()
        seat = rng.choice(waiting)
        legal = state.legal_actions(seat)
        before = [len(h) for h in state.hidden]
        revealed_before = [list(r) for r in state.revealed]
        state.apply(seat, rng.choice(legal))
        decisions += 1
        after = [len(h) for h in state.hidden]
        for s in range(state.num_players):
            if after[s] > before[s]:
                assert state.phase == "exchange" and s == state.actor, "hands grow only in an exchange"
            # Face-up cards stay face up, in order.
            assert state.revealed[s][: len(revealed_before[s])] == revealed_before[s]
        check_invariants(state)
        if decisions % 7 == 0:
            copy = GAME.from_json(state.to_json())
            assert copy.to_json() == state.to_json()
            assert [copy.view(s) for s in (*range(state.num_players), None)] == [
                state.view(s) for s in (*range(state.num_players), None)
            ]
        assert decisions < MAX_DECISIONS, "every game ends"
    return decisions


@settings(max_examples=300, deadline=None)
@given(
    players=st.integers(2, 6),
    seed=st.integers(0, 2**64 - 1),
    chooser=st.integers(0, 2**64 - 1),
    options=options_strategy,
)
def test_random_games_keep_every_invariant_and_end_with_one_winner(
    players: int, seed: int, chooser: int, options: dict[str, Any]
) -> None:
    state = GAME.new_game(players=players, seed=seed, options=options)
    play(state, Rng(chooser))
    winners = state.winners()
    assert len(winners) == 1
    assert state.alive == [s == winners[0] for s in range(players)]
    assert state.waiting_for() == []


@settings(max_examples=100, deadline=None)
@given(
    players=st.integers(2, 6),
    seed=st.integers(0, 2**64 - 1),
    chooser=st.integers(0, 2**64 - 1),
    options=options_strategy,
)
def test_timeouts_alone_finish_a_game(players: int, seed: int, chooser: int, options: dict[str, Any]) -> None:
    """Mixing random actions with ruling 19's timeout actions keeps every invariant."""
    state = GAME.new_game(players=players, seed=seed, options=options)
    rng = Rng(chooser)
    decisions = 0
    while not state.is_over():
        seat = rng.choice(state.waiting_for())
        action = state.timeout_action(seat) if rng.random() < 0.5 else rng.choice(state.legal_actions(seat))
        assert action in state.legal_actions(seat)
        state.apply(seat, action)
        check_invariants(state)
        decisions += 1
        assert decisions < MAX_DECISIONS
    assert len(state.winners()) == 1


@settings(max_examples=40, deadline=None)
@given(
    players=st.integers(2, 6),
    seed=st.integers(0, 2**64 - 1),
    chooser=st.integers(0, 2**64 - 1),
    options=options_strategy,
)
def test_determinized_worlds_agree_with_the_view(
    players: int, seed: int, chooser: int, options: dict[str, Any]
) -> None:
    state = GAME.new_game(players=players, seed=seed, options=options)
    rng = Rng(chooser)
    while not state.is_over():
        for seat in range(players):
            view = state.view(seat)
            world = GAME.determinize(view, Rng(rng.next64()))
            assert world.view(seat) == view
            assert world.legal_actions(seat) == state.legal_actions(seat)
            assert world.view(None) == state.view(None)
            check_invariants(world)
        seat = rng.choice(state.waiting_for())
        state.apply(seat, rng.choice(state.legal_actions(seat)))
