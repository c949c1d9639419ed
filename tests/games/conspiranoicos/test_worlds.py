"""What a seat may believe (worlds.py): ``determinize`` rebuilds a full state from a seat's view,
the same to that seat, with the unseen cards re-dealt among those the view leaves unaccounted for."""

from __future__ import annotations

import pytest

from conflictology.engine import Rng
from conflictology.games.conspiranoicos import GAME, ConspiranoicosState, Phase
from conflictology.games.conspiranoicos.worlds import determinize


def advance(state: ConspiranoicosState, decisions: int) -> None:
    for _ in range(decisions):
        if state.is_over():
            return
        seat = state.waiting_for()[0]
        state.apply(seat, state.timeout_action(seat))


@pytest.mark.parametrize("decisions", [0, 1, 5, 17, 30, 36, 40])
def test_a_world_looks_the_same_to_its_seat_and_keeps_every_card_once(decisions: int) -> None:
    state = GAME.new_game(2, seed=11)
    advance(state, decisions)
    for seat in (0, 1):
        view = state.view(seat)
        world = determinize(ConspiranoicosState, view, Rng(decisions))
        assert isinstance(world, ConspiranoicosState)
        assert world.view(seat) == view
        assert world.legal_actions(seat) == state.legal_actions(seat)
        assert sorted(c for cs in world.where().values() for c in cs) == list(range(18))
        assert world.phase is state.phase  # a Phase member, so the rules' identity checks hold


def test_the_opponent_hand_is_resampled_with_the_backs_it_shows() -> None:
    state = GAME.new_game(2, seed=3)
    view = state.view(0)
    backs = state.deck.backs
    hands = set()
    for i in range(40):
        world = GAME.determinize(view, Rng(i))
        assert [backs[c] for c in world.hands[1]] == view["players"][1]["hand"]
        assert world.hands[0] == state.hands[0]
        hands.add(tuple(world.hands[1]))
    assert len(hands) > 1, "the unseen hand is drawn at random, not copied"


def test_while_rows_are_built_the_opponent_row_is_drawn_from_its_evidence() -> None:
    state = GAME.new_game(2, seed=4)
    while state.phase in (Phase.PLAY, Phase.SEND, Phase.KEEP):
        advance(state, 1)
    while state.phase is not Phase.BUILD:
        state.apply(state.waiting_for()[0], {"type": "pass"})
    state.apply(1, state.timeout_action(1))
    state.apply(1, state.timeout_action(1))
    view = state.view(0)
    rows = set()
    for i in range(30):
        world = GAME.determinize(view, Rng(i))
        assert len(world.rows[1]) == 2 and sorted(world.rows[1] + world.hands[1]) == sorted(
            state.rows[1] + state.hands[1]
        )
        rows.add(tuple(world.rows[1]))
    assert len(rows) > 1


def test_only_a_player_view_can_be_determinized() -> None:
    state = GAME.new_game(2, seed=3)
    with pytest.raises(ValueError, match="a player's own view"):
        GAME.determinize(state.view(None), Rng(1))
    with pytest.raises(ValueError, match="not a Conspiranoicos view"):
        GAME.determinize({"you": 0}, Rng(1))
    broken = state.view(0)
    broken["phase"] = "nap"
    with pytest.raises(ValueError, match="unknown phase 'nap'"):
        GAME.determinize(broken, Rng(1))
