"""Determinization (worlds.py): the full states a seat's view allows, its own cards kept and the
unseen ones dealt anew for each world."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from capitol_helpers import B, H, J, M, P, R, act, table
from conflictology.engine import Rng
from conflictology.games.capitol import GAME
from conflictology.games.capitol.data import DECK, Phase
from conflictology.games.capitol.worlds import worlds


def test_determinize_keeps_own_cards_and_samples_the_rest() -> None:
    s = table([[R, B], [H, J], [M, P]])
    view = s.view(0)
    hands = set()
    for i in range(30):
        world = GAME.determinize(view, Rng(i))
        assert world.view(0) == view
        assert world.hidden[0] == [R, B]
        assert Counter(world.deck) + Counter(c for h in world.hidden for c in h) == Counter(DECK)
        hands.add(tuple(world.hidden[1]))
    assert len(hands) > 5
    with pytest.raises(ValueError):
        GAME.determinize(s.view(None), Rng(1))


def test_determinize_respects_police_knowledge_and_a_pending_reveal() -> None:
    s = table([[P, B], [M, J], [R, H]])
    act(s, 0, "police_investigate", target=1)
    act(s, 1, "pass")
    act(s, 2, "pass")
    act(s, 1, "show", card=J)
    for i in range(20):
        world = GAME.determinize(s.view(0), Rng(i))
        assert J in world.hidden[1]
        assert world.view(0) == s.view(0)
        world2 = GAME.determinize(s.view(2), Rng(i))
        assert world2.shown in world2.hidden[1]
    act(s, 0, "let_keep")
    act(s, 1, "mafia", target=2)
    act(s, 0, "challenge")  # seat 1 has the Mafia: seat 0 must lose, the Mafia waits to be replaced
    assert s.phase == "lose"
    for i in range(20):
        world = GAME.determinize(s.view(2), Rng(i))
        assert M in world.hidden[1]
        assert world.view(2) == s.view(2) and world.legal_actions(2) == s.legal_actions(2)


def test_worlds_of_a_view_are_its_determinizations_and_independent() -> None:
    rng = Rng(4)
    for g in range(40):
        state: Any = GAME.new_game(2 + g % 5, seed=g)
        for _ in range(rng.randrange(60)):
            if state.is_over():
                break
            seat = rng.choice(state.waiting_for())
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        if state.is_over():
            continue
        seat = state.waiting_for()[0]
        view = state.view(seat)
        deal = GAME.worlds(view)
        first = deal(Rng(g))
        assert first.to_json() == GAME.determinize(view, Rng(g)).to_json()
        first.apply(seat, first.legal_actions(seat)[0])  # playing one world leaves the next alone
        second = deal(Rng(g))
        assert second.to_json() == GAME.determinize(view, Rng(g)).to_json()
        assert second.view(seat)["players"] == view["players"]


def test_a_world_reads_the_phase_of_the_view_as_the_rules_phase() -> None:
    s = table([[B, M], [H, J], [R, P]])
    act(s, 0, "mafia", target=2)
    world = worlds(s.view(1))(Rng(2))
    assert world.phase is Phase.CHALLENGE and world.then is s.then
    assert world.view(1) == s.view(1) and world.legal_actions(1) == s.legal_actions(1)


def test_a_view_whose_cards_do_not_add_up_is_refused() -> None:
    view = table([[B, M], [H, J], [R, P]]).view(0)
    view["deck"] += 1
    with pytest.raises(ValueError, match="do not add up"):
        worlds(view)
