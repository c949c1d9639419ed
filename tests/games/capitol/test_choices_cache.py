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


def _candidates(legal: list[dict[str, Any]], n: int) -> list[Any]:
    """Every legal action, and each turned into its near misses: another target (every seat of the
    biggest table, one past it, -1, a bool, a float, a string), another card, a hand not held, an extra
    field, no field."""
    out: list[Any] = []
    for action in legal:
        out.append(action)
        out.append({**action, "extra": 1})
        out.append({"type": action["type"]} if len(action) > 1 else {**action, "target": 0})
        if "target" in action:
            out += [{**action, "target": t} for t in [*range(-1, 11), True, 1.0, "1"]]
        if "card" in action:
            out += [{**action, "card": c} for c in ["Banker", "Judge", "Police", "Nobody", 1]]
        if "cards" in action:
            out += [{**action, "cards": list(reversed(action["cards"]))}, {**action, "cards": ["Judge"] * 2}]
    return out


@pytest.mark.parametrize("players", [2, 4, 6, 10])
def test_an_action_is_taken_exactly_when_its_key_is_legal(players: int) -> None:
    # ``apply`` finds an action's key through the choices' tables by type and by value (a turn's hold
    # every seat, and its ``targets`` say which count); it must accept exactly what ``key_of`` reads
    # as one of the legal keys, at every decision of whole games, and a refusal must change nothing.
    import random

    chooser = random.Random(players)
    for seed in range(12):
        s = GAME.new_game(players=players, seed=seed)
        while not s.is_over():
            seat = chooser.choice(s.waiting_for())
            legal = s.legal_actions(seat)
            keys = set(rules.legal_keys(s, seat))
            for action in _candidates(legal, players):
                twin = s.clone()
                key = rules.key_of(action)
                if key in keys:
                    twin.apply(seat, action)
                else:
                    before = twin.to_json()
                    with pytest.raises(IllegalAction):
                        twin.apply(seat, action)
                    assert twin.to_json() == before
            s.apply(seat, chooser.choice(legal))
