"""Big tables (docs/rules/capitol.md, "Big tables: 7 to 10 players"): the deck and the Treasury grow past
six seats, the `copies` option, and the action table that keeps every 2-6-seat index."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from conflictology.engine import Rng
from conflictology.games.capitol import GAME, data
from conflictology.games.capitol.table import table_for


@pytest.mark.parametrize(
    ("players", "copies", "deck_left", "total"),
    [(2, 3, 14, 50), (6, 3, 6, 50), (7, 4, 10, 60), (8, 4, 8, 70), (9, 5, 12, 75), (10, 5, 10, 85)],
)
def test_deck_and_money_follow_the_table(players: int, copies: int, deck_left: int, total: int) -> None:
    s = GAME.new_game(players, seed=1)
    cards = Counter(s.deck + [c for h in s.hidden for c in h])
    assert cards == dict.fromkeys(data.ROLES, copies)
    assert len(s.deck) == deck_left
    assert s.treasury + sum(s.money) == total
    assert s.money == [data.STARTING_MONEY] * players


def test_small_tables_show_and_save_the_rulebook_options() -> None:
    """A 2-6-seat game says nothing of copies: its views and saves are what they were."""
    for players in range(2, 7):
        s = GAME.new_game(players, seed=2)
        assert "copies" not in s.options
        assert "copies" not in s.view(0)["options"]
    assert "copies" not in GAME.default_options()


def test_a_big_table_shows_its_copies() -> None:
    s = GAME.new_game(10, seed=3)
    assert s.view(None)["options"]["copies"] == 5
    assert GAME.from_json(s.to_json()).options["copies"] == 5


def test_the_copies_option() -> None:
    s = GAME.new_game(8, seed=4, options={"copies": 5})
    assert len(s.deck) == 30 - 16
    s = GAME.new_game(4, seed=4, options={"copies": 4})
    assert s.options["copies"] == 4 and len(s.deck) == 24 - 8
    assert GAME.new_game(8, seed=4, options={"copies": 3}).deck.__len__() == 2  # the least that works
    with pytest.raises(ValueError, match="too few for 9 players"):
        GAME.new_game(9, seed=4, options={"copies": 3})
    with pytest.raises(ValueError, match="too few for 7 players"):
        GAME.new_game(7, seed=4, options={"copies": 2})  # 1 and 2: the small variants' (docs/rules)
    for bad in (0, 6, "5", True, 4.0):
        with pytest.raises(ValueError, match="copies must be"):
            GAME.new_game(7, seed=4, options={"copies": bad})
    with pytest.raises(ValueError, match="30 cards"):
        GAME.new_game(10, seed=4, deck=list(data.DECK))


def test_the_big_table_extends_the_small_one() -> None:
    small, big = table_for(6), table_for(10)
    assert small is GAME.action_table and table_for(2) is small and table_for(7) is big
    assert small.size == 83 and big.size == 99
    assert [big.action(i) for i in range(small.size)] == [small.action(i) for i in range(small.size)]
    for kind in sorted(data.TARGETED):
        for target in range(10):
            assert big.action(big.index({"type": kind, "target": target})) == {"type": kind, "target": target}


def test_ten_seats_play_by_index_and_determinize() -> None:
    """Random games at 7-10 seats by table index; every few steps the save reads back and a world
    drawn from a seat's view keeps the deck's copies (the invariants are checked on reading)."""
    for players in range(7, 11):
        s = GAME.new_game(players, seed=players)
        rng = random.Random(players)
        steps = 0
        while not s.is_over():
            seat = rng.choice(s.waiting_for())
            legal = s.legal_action_indices(seat)
            assert legal == [s.action_table.index(a) for a in s.legal_actions(seat)]
            s.apply_index(seat, rng.choice(legal))
            steps += 1
            if steps % 5 == 0:
                assert GAME.from_json(s.to_json()).to_json() == s.to_json()
                world = GAME.determinize(s.view(seat), Rng(steps))
                world.check_invariants()
        assert len(s.winners()) == 1
