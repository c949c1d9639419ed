"""What a seat's view of a Capitol state shows and hides (views.py): its own cards and the counts of
the others', the deck's size and never its order, what is being chosen in secret only to who may see
it, and the claims' honesty bits only once the game is over."""

from __future__ import annotations

import json
from typing import Any

import pytest

from capitol_helpers import B, H, J, M, P, R, act, table
from conflictology.engine import Rng
from conflictology.games.capitol import GAME, CapitolState
from conflictology.games.capitol.data import Phase
from conflictology.games.capitol.views import render_entry, summary


def test_view_minimum_fields() -> None:
    s = table([[B, M], [H, J], [R, P]])
    v = s.view(1)
    for key in ("game", "you", "turn", "treasury", "deck", "players", "pending", "log", "options", "phase",
                "awaiting", "known"):
        assert key in v
    assert v["game"] == "capitol" and v["you"] == 1 and v["turn"] == 0
    assert v["players"][1] == {"seat": 1, "money": 2, "hidden": [H, J], "revealed": [], "alive": True}
    assert v["players"][0] == {"seat": 0, "money": 2, "hidden": 2, "revealed": [], "alive": True}
    assert v["pending"] is None and v["phase"] == "turn"
    assert v["log"] == [{"type": "start", "seat": 0, "text": "Seat 0 plays first."}]
    assert json.loads(json.dumps(v)) == v


def test_spectator_sees_no_face_down_card() -> None:
    s = table([[B, M], [H, J], [R, P]])
    v = s.view(None)
    assert v["you"] is None and "known" not in v
    assert all(isinstance(p["hidden"], int) for p in v["players"])
    with pytest.raises(ValueError):
        s.view(3)


def test_others_never_see_your_hidden_cards_nor_the_exchange_nor_police() -> None:
    s = table([[R, P], [H, J], [M, B]], pile=[J, M])
    act(s, 0, "reporter")
    act(s, 1, "pass")
    act(s, 2, "pass")
    for seat in (1, 2, None):
        v = s.view(seat)
        assert v["players"][0]["hidden"] == 4
        assert "hand" not in v["pending"] and "drawn" not in v["pending"]
    act(s, 0, "keep", cards=[H if H in s.hidden[0] else J, M])
    text = json.dumps(s.view(1)["log"])
    assert '"exchange"' in text
    quiet = [e for e in s.view(1)["log"] if e["type"] in ("exchange", "draw")]
    assert quiet and all("card" not in e and "cards" not in e for e in quiet)
    act(s, 1, "police_investigate", target=2)
    act(s, 0, "pass")
    act(s, 2, "pass")
    act(s, 2, "show", card=B)
    assert s.view(1)["pending"]["shown"] == B
    assert s.view(2)["pending"]["shown"] == B
    assert "shown" not in s.view(0)["pending"] and "shown" not in s.view(None)["pending"]
    assert "banker" not in json.dumps(s.view(0)) or B in s.hidden[0]
    act(s, 1, "let_keep")
    assert s.view(1)["known"] == [{"seat": 2, "card": B}]
    assert s.view(0)["known"] == [] and s.view(2)["known"] == []


def test_views_depend_only_on_what_the_viewer_may_know() -> None:
    """Two games that differ only in seat 0's hand and the deck order look the same to seats 1, 2."""
    a = table([[R, B], [H, J], [M, P]], pile=[J, M, B, P])
    b = table([[P, M], [H, J], [M, P]], pile=[R, B, B, R])
    for state in (a, b):
        act(state, 0, "income")
        act(state, 1, "foreign_aid")
        act(state, 2, "pass")
        act(state, 0, "pass")
    for seat in (1, 2, None):
        assert a.view(seat) == b.view(seat)
    assert a.view(0) != b.view(0)


def test_log_entries_are_structured_with_an_english_text() -> None:
    s = table([[B, M], [H, J], [R, P]])
    act(s, 0, "mafia", target=2)
    act(s, 1, "challenge")
    act(s, 1, "lose", card=J)
    log = s.view(None)["log"]
    assert log[1] == {"type": "action", "seat": 0, "action": "mafia", "target": 2,
                      "text": "Seat 0 claims Mafia to steal from Seat 2."}
    assert log[2]["type"] == "challenge" and log[2]["seat"] == 1 and log[2]["challenged"] == 0
    assert log[3] == {
        "type": "reveal", "seat": 0, "card": M, "text": "Seat 0 reveals Mafia: the challenge fails.",
    }
    assert log[4]["type"] == "lose" and log[4]["card"] == J
    for entry in log:
        assert isinstance(entry["text"], str) and entry["text"].endswith(".")
        assert "Seat" in entry["text"]


def _played(seed: int, players: int) -> list[CapitolState]:
    """Every state of one random game, from the deal to the end."""
    rng = Rng(seed)
    state = GAME.new_game(players, seed=seed)
    states = [state.clone()]
    while not state.is_over():
        seat = rng.choice(state.waiting_for())
        state.apply(seat, rng.choice(state.legal_actions(seat)))
        states.append(state.clone())
    return states


@pytest.mark.parametrize("seed", [3, 8])
def test_a_seat_sees_its_own_hand_and_only_counts_of_the_others_and_of_the_deck(seed: int) -> None:
    for state in _played(seed, 4)[::3]:
        for seat in (0, 1, 2, 3, None):
            v = state.view(seat)
            assert v["deck"] == len(state.deck) and "deck_cards" not in v
            for i, p in enumerate(v["players"]):
                if i == seat:
                    assert p["hidden"] == state.hidden[i]
                else:
                    assert p["hidden"] == len(state.hidden[i])
                assert p["revealed"] == state.revealed[i]  # face up: everyone sees them
                assert p["money"] == state.money[i]
            assert v["treasury"] == state.treasury
            assert json.loads(json.dumps(v)) == v


def test_the_phase_is_shown_by_its_name() -> None:
    s = table([[B, M], [H, J], [R, P]])
    v = s.view(0)
    assert v["phase"] == "turn" and json.dumps(v["phase"]) == '"turn"'
    act(s, 0, "banker")
    v = s.view(1)
    shown = [v["phase"], v["pending"]["phase"], v["pending"]["then"]]
    assert json.dumps(shown) == '["challenge", "challenge", null]'
    assert [p.value for p in Phase] == [
        "turn", "challenge", "block", "block_challenge", "lose", "return", "exchange", "show", "investigate",
        "over",
    ]


def test_an_unchallenged_bluff_looks_like_a_true_claim_to_everyone_else() -> None:
    """Seat 0 claims Banker holding it in one game and bluffing in the other: nobody else (nor a
    spectator) can tell the two apart before the end; only the state's private record differs."""
    honest = table([[B, M], [H, J], [R, P]])
    bluff = table([[R, M], [H, J], [B, P]])
    for s in (honest, bluff):
        act(s, 0, "banker")
        act(s, 1, "pass")
        act(s, 2, "pass")
    assert honest.honesty != bluff.honesty
    assert honest.view(None) == bluff.view(None)
    assert honest.view(1) == bluff.view(1)  # seat 1 holds the same cards in both
    for seat in (0, 1, 2, None):
        v = honest.view(seat)
        assert "summary" not in v and "winners" not in v
        assert "honest" not in json.dumps(v)


@pytest.mark.parametrize("seed", [1, 5])
def test_the_summary_appears_at_the_end_the_same_for_everyone_and_never_before(seed: int) -> None:
    states = _played(seed, 3)
    for state in states[:-1]:
        for seat in (0, 1, 2, None):
            v = state.view(seat)
            assert "summary" not in v and "winners" not in v
    end = states[-1]
    views = [end.view(seat) for seat in (0, 1, 2, None)]
    assert all(v["phase"] == "over" and v["winners"] == end.winners() for v in views)
    assert all(v["summary"] == views[0]["summary"] for v in views)
    assert views[0]["summary"] == summary(views[0]["log"], end.honesty, 3)


def test_an_exchange_shows_the_drawn_cards_to_the_actor_only() -> None:
    s = table([[R, P], [H, J], [M, B]], pile=[J, M])
    act(s, 0, "reporter")
    act(s, 1, "pass")
    act(s, 2, "pass")
    mine = s.view(0)["pending"]
    assert mine["phase"] == "exchange" and mine["keep"] == 2
    assert mine["hand"] == [R, P] and mine["drawn"] == [J, M]
    for seat in (1, 2, None):
        pending: dict[str, Any] = s.view(seat)["pending"]
        assert pending["keep"] == 2 and "hand" not in pending and "drawn" not in pending


def test_an_unknown_log_entry_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown log entry"):
        render_entry(("nonsense", 1))
