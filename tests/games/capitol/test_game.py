"""Capitol through the contract: options, deck stacking, bad input, JSON, clone and the action table
(views: test_views.py; determinization: test_worlds.py)."""

from __future__ import annotations

import json
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
        "capitol", "Conflictology: Capitol", 2, 10,
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
        GAME.new_game(players=11, seed=1)
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


def test_clone_is_independent_and_fast_path_accepts_listed_actions() -> None:
    s = table([[B, M], [H, J], [R, P]])
    legal = s.legal_actions(0)
    twin = s.clone()
    twin.apply(0, legal[0])
    assert s.waiting_for() == [0] and twin.waiting_for() == [1]
    s.apply(0, {"type": "income"})
    assert s.to_json() == twin.to_json()


# ---------------------------------------------------------------- a search's fast paths


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
