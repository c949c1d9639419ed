"""Capitol through the contract: options, deck stacking, bad input, views and privacy, JSON, the
action table and determinization."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from capitol_helpers import B, H, J, M, P, R, act, table
from conflictology import IllegalAction, games
from conflictology.engine import Rng
from conflictology.games.capitol import GAME
from conflictology.games.capitol.data import DECK

# ---------------------------------------------------------------- the game description


def test_game_description() -> None:
    game = games.get("capitol")
    assert game is GAME
    assert (game.name, game.title, game.min_players, game.max_players) == (
        "capitol", "Conflictology: Capitol", 2, 6,
    )
    assert game.default_options() == {
        "first_player": None, "forced_scandal": True, "steal_blockers": [], "anyone_challenges_block": False,
    }


def test_action_table_covers_every_action_with_sorted_keeps() -> None:
    table_ = GAME.action_table
    assert table_.size == 83
    assert table_.index({"type": "keep", "cards": [R, B]}) == table_.index({"type": "keep", "cards": [B, R]})
    assert table_.action(table_.index({"type": "keep", "cards": [R, B]})) == {"type": "keep", "cards": [B, R]}
    for seat in range(6):
        table_.index({"type": "hacker", "target": seat})
    with pytest.raises(IllegalAction):
        table_.index({"type": "hacker", "target": 6})
    with pytest.raises(IllegalAction):
        table_.index({"type": "block", "card": H})  # nothing is ever blocked with a Hacker


# ---------------------------------------------------------------- options


@pytest.mark.parametrize(
    "options",
    [
        {"first_player": 3},
        {"first_player": -1},
        {"first_player": True},
        {"first_player": "0"},
        {"forced_scandal": 1},
        {"forced_scandal": "yes"},
        {"anyone_challenges_block": None},
        {"steal_blockers": "mafia"},
        {"steal_blockers": ["banker"]},
        {"steal_blockers": ["mafia", "mafia"]},
        {"steal_blockers": [1]},
        {"colour": "red"},
    ],
)
def test_bad_options_raise_a_clear_value_error(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as info:
        GAME.new_game(players=3, seed=1, options=options)
    assert next(iter(options)) in str(info.value) or "unknown option" in str(info.value)


def test_good_options_are_kept_and_shown_in_views() -> None:
    s = GAME.new_game(
        players=3, seed=1,
        options={"first_player": 1, "forced_scandal": False, "steal_blockers": ("reporter", "mafia"),
                 "anyone_challenges_block": True},
    )
    assert s.waiting_for() == [1]
    for seat in (0, 1, 2, None):
        assert s.view(seat)["options"] == {
            "first_player": 1, "forced_scandal": False, "steal_blockers": ["mafia", "reporter"],
            "anyone_challenges_block": True,
        }


@pytest.mark.parametrize(
    "deck",
    [
        list(DECK[:-1]),
        [*DECK, B],
        [*DECK[:-1], B],
        "banker" * 18,
        [1] * 18,
        [],
    ],
)
def test_bad_decks_raise(deck: Any) -> None:
    with pytest.raises(ValueError):
        GAME.new_game(players=2, seed=1, deck=deck)


def test_stacked_deck_deals_in_seat_order() -> None:
    deck = [P, P, P, R, R, R, J, J, J, H, H, H, M, M, M, B, B, B]
    s = GAME.new_game(players=4, seed=3, options={"first_player": 0}, deck=deck)
    assert s.hidden == [[P, P], [P, R], [R, R], [J, J]]
    assert s.deck == [J, H, H, H, M, M, M, B, B, B]
    assert s.view(1)["players"][1]["hidden"] == [P, R]


def test_bad_seeds_and_players_raise() -> None:
    with pytest.raises(ValueError):
        GAME.new_game(players=7, seed=1)
    with pytest.raises(ValueError):
        GAME.new_game(players=1, seed=1)
    with pytest.raises(ValueError):
        GAME.new_game(players=2, seed="1")  # type: ignore[arg-type]


# ---------------------------------------------------------------- bad input changes nothing


BAD_ACTIONS: list[Any] = [
    None, "income", ["income"], 3, {}, {"type": None}, {"type": "Income"}, {"type": "income", "x": 1},
    {"type": "mafia"}, {"type": "mafia", "target": True}, {"type": "mafia", "target": 1.0},
    {"type": "mafia", "target": "1"}, {"type": "mafia", "target": 0}, {"type": "mafia", "target": 9},
    {"type": "scandal", "target": 1}, {"type": "hacker", "target": 1}, {"type": "pass"},
    {"type": "challenge"}, {"type": "block", "card": B}, {"type": "lose", "card": B},
]


def test_illegal_and_malformed_actions_raise_and_change_nothing() -> None:
    s = table([[B, M], [H, J], [R, P]])
    before = s.to_json()
    for action in BAD_ACTIONS:
        with pytest.raises(IllegalAction):
            s.apply(0, action)
        assert s.to_json() == before, action
    for seat in (1, 2, -1, 3, True, False, 0.0, "0", None):
        with pytest.raises(IllegalAction):
            s.apply(seat, {"type": "income"})  # type: ignore[arg-type]
        assert s.to_json() == before


def test_illegal_actions_in_every_phase_change_nothing() -> None:
    s = table([[R, B], [H, J], [M, P]], pile=[J, M])
    act(s, 0, "reporter")
    before = s.to_json()
    for action in ({"type": "challenge", "x": 1}, {"type": "block", "card": J}, {"type": "income"}):
        with pytest.raises(IllegalAction):
            s.apply(1, action)
    act(s, 1, "pass")
    with pytest.raises(IllegalAction):
        act(s, 1, "pass")
    assert json.loads(s.to_json())["passed"] == [1]
    act(s, 2, "pass")
    before = s.to_json()
    for cards in ([B], [B, B], [R, R], [B, R, J], "BR", [B, 1], [B, None], None):
        with pytest.raises(IllegalAction):
            s.apply(0, {"type": "keep", "cards": cards})
        assert s.to_json() == before
    with pytest.raises(IllegalAction):
        s.apply(0, {"type": "keep", "cards": [B, R], "extra": True})
    s.apply(0, {"type": "keep", "cards": [R, B]})


# ---------------------------------------------------------------- views and privacy


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


# ---------------------------------------------------------------- JSON, clone, determinize


def test_json_round_trip_mid_exchange_and_bad_json() -> None:
    s = table([[R, B], [H, J], [M, P]])
    act(s, 0, "reporter")
    act(s, 1, "pass")
    act(s, 2, "pass")
    copy = GAME.from_json(s.to_json())
    assert copy.to_json() == s.to_json()
    assert copy.view(0) == s.view(0) and copy.legal_actions(0) == s.legal_actions(0)
    unbalanced = s.to_json().replace('"treasury":', '"treasury":1')
    for bad in ("", "[]", "{}", '{"game": "capitol", "version": 1}', unbalanced):
        with pytest.raises(ValueError):
            GAME.from_json(bad)


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


def test_clone_is_independent_and_fast_path_accepts_listed_actions() -> None:
    s = table([[B, M], [H, J], [R, P]])
    legal = s.legal_actions(0)
    twin = s.clone()
    twin.apply(0, legal[0])
    assert s.waiting_for() == [0] and twin.waiting_for() == [1]
    s.apply(0, {"type": "income"})
    assert s.to_json() == twin.to_json()


# ---------------------------------------------------------------- a search's fast paths


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


def test_native_action_indices_are_the_engines_and_an_illegal_index_changes_nothing() -> None:
    """``legal_action_indices``/``apply_index`` map the rules' keys to the table directly: the same
    lists and the same games as the engine's defaults (which go through action dicts)."""
    from conflictology.engine import GameState

    rng = Rng(8)
    table = GAME.action_table
    refused = 0
    for g in range(120):
        n = 2 + g % 5
        fast: Any = GAME.new_game(n, seed=g)
        slow = fast.clone()
        while not fast.is_over():
            for s in range(n):
                assert fast.legal_action_indices(s) == GameState.legal_action_indices(fast, s)
            seat = rng.choice(fast.waiting_for())
            bad = rng.randrange(len(table) + 2) - 1  # -1 and len(table) are out of range
            if bad not in fast.legal_action_indices(seat):
                before = fast.to_json()
                with pytest.raises(IllegalAction):
                    fast.apply_index(seat, bad)
                assert fast.to_json() == before
                refused += 1
            idx = rng.choice(fast.legal_action_indices(seat))
            fast.apply_index(seat, idx)
            GameState.apply_index(slow, seat, idx)
            assert fast.to_json() == slow.to_json()
    assert refused > 1000
