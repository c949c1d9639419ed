"""The state keeps the legal actions of the last seat asked: nothing that is not that seat may find them
(-1, the cache's "nobody", once read as the seat after the last one; True, equal to 1), and a caller
scribbling on what legal_actions handed out changes nothing a later call hands out."""

from __future__ import annotations

from typing import Any

import pytest

from conflictology.engine import IllegalAction
from conflictology.games.capitol import GAME, rules


def test_after_an_action_minus_one_is_not_the_last_seat() -> None:
    s = GAME.new_game(players=3, seed=1, options={"first_player": 0})
    s.legal_actions(0)
    s.apply(0, {"type": "income"})
    assert s.legal_actions(-1) == []
    before = s.to_json()
    with pytest.raises(IllegalAction):
        s.apply(-1, {"type": "income"})
    assert s.to_json() == before


@pytest.mark.parametrize("seat", [True, 1.0, "1", None])
def test_only_the_int_seat_finds_its_cached_actions(seat: Any) -> None:
    s = GAME.new_game(players=3, seed=1, options={"first_player": 1})
    assert s.legal_actions(1)
    assert s.legal_actions(seat) == []
    before = s.to_json()
    with pytest.raises(IllegalAction):
        s.apply(seat, {"type": "income"})
    assert s.to_json() == before


def test_scribbling_on_handed_out_actions_reaches_no_other_state() -> None:
    # The actions of one situation are made once and shared by every state in it; what is handed out
    # is always a copy.
    a = GAME.new_game(players=4, seed=5, options={"first_player": 0})
    b = GAME.new_game(players=4, seed=6, options={"first_player": 0})
    clean = b.legal_actions(0)
    for action in a.legal_actions(0):
        action["type"] = "scandal"
        action["target"] = 0
    b._lseat = -1  # asked afresh, as a new turn would
    assert b.legal_actions(0) == clean
    assert a.legal_actions(0) == clean


def test_the_turns_emptied_when_full_are_made_again_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # A turn's choices are kept by situation in a dict that is emptied when full (the big tables'
    # rarely met situations): a situation met again after that gets the same actions, in order.
    rules._TURNS.clear()  # (only ever a memo: emptying it changes no answer)
    s = GAME.new_game(players=10, seed=3, options={"first_player": 0})
    first = s.legal_actions(0)
    monkeypatch.setattr(rules, "_TURNS_KEPT", 1)
    other = GAME.new_game(players=10, seed=3, options={"first_player": 1})
    assert other.legal_actions(1) != first  # another situation: the dict was full, so emptied
    assert len(rules._TURNS) == 1
    s._lseat = -1  # asked afresh, as a new turn would
    assert s.legal_actions(0) == first
    assert len(rules._TURNS) == 1
