"""The Capitol search reads the sampled world's fields through ``CapitolState``: a state it cannot
read is refused loudly, never played some other way (it used to fall back to random playouts)."""

from __future__ import annotations

import pytest

from conflictology import games
from conflictology.bots.capitol import CapitolSearch, Knowledge, LogMemo, capitol_state
from conflictology.bots.capitol_rules import ClaimTrace, RulePlayer
from conflictology.bots.capitol_value import win_shares
from conflictology.engine import Rng
from conflictology.games.capitol import GAME


def test_a_playout_reads_the_world_and_decides_as_before() -> None:
    state = GAME.new_game(3, seed=4)
    seat = state.waiting_for()[0]
    action = CapitolSearch().playout_action(state, seat, Rng(1))
    assert action in state.legal_actions(seat)


def test_a_world_missing_a_field_raises_instead_of_playing_at_random() -> None:
    state = GAME.new_game(3, seed=4)
    seat = state.waiting_for()[0]
    del state.hidden  # a renamed or missing field
    with pytest.raises(AttributeError):
        CapitolSearch().playout_action(state, seat, Rng(1))


def test_another_games_state_is_refused_by_every_reader() -> None:
    other = games.get("conspiranoicos").new_game(2, seed=1)
    seat = other.waiting_for()[0]
    with pytest.raises(TypeError, match="CapitolState"):
        capitol_state(other)
    with pytest.raises(TypeError, match="CapitolState"):
        CapitolSearch().playout_action(other, seat, Rng(1))
    with pytest.raises(TypeError, match="CapitolState"):
        CapitolSearch().evaluate(other)


def test_the_readers_of_a_world_need_its_fields() -> None:
    state = GAME.new_game(4, seed=2)
    assert sum(win_shares(state)) == pytest.approx(1.0)
    seat = state.waiting_for()[0]
    legal = state.legal_actions(seat)
    del state.money
    with pytest.raises(AttributeError):
        win_shares(state)
    with pytest.raises(AttributeError):
        Knowledge.of_state(state, 0, LogMemo())
    with pytest.raises(AttributeError):
        RulePlayer(Rng(1), ClaimTrace(4)).act(state, seat, legal)
