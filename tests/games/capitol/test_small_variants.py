"""Small variants (docs/rules/capitol.md, "Small variants"): the `roles`, `influence` and small `copies`
options, and the mini variant they make, played by the rules engine itself and by the bots."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from conflictology import bots
from conflictology.engine import Rng
from conflictology.games.capitol import GAME, data

MINI = {"roles": ["banker", "hacker", "judge"], "copies": 1, "influence": 1, "stalemate_turns": 4}


def test_a_game_that_sets_none_of_them_is_the_rulebook_game() -> None:
    s = GAME.new_game(4, seed=3)
    assert set(s.options) == set(data.DEFAULT_OPTIONS)
    assert all(len(h) == 2 for h in s.hidden) and len(s.deck) == 18 - 8
    types = {a["type"] for a in s.legal_actions(s.actor)}
    assert {"mafia", "reporter", "police_investigate", "police_swap"} <= types


def test_the_mini_deals_one_card_each_from_three() -> None:
    s = GAME.new_game(2, seed=1, options=MINI)
    assert s.options["roles"] == ["banker", "hacker", "judge"] and s.options["influence"] == 1
    assert [len(h) for h in s.hidden] == [1, 1] and len(s.deck) == 1
    assert Counter(s.deck + s.hidden[0] + s.hidden[1]) == {"banker": 1, "hacker": 1, "judge": 1}
    assert s.treasury + sum(s.money) == data.TREASURY_TOTAL


def test_actions_and_blocks_of_roles_out_of_play_are_not_offered() -> None:
    s = GAME.new_game(2, seed=1, options={**MINI, "first_player": 0})
    s.money[0] = 3  # the Hacker is affordable
    s.treasury -= 1
    s._lseat = -1
    types = [a["type"] for a in s.legal_actions(0)]
    assert types == ["income", "foreign_aid", "banker", "hacker"]
    # No Banker in play: Foreign Aid has nobody to block it.
    no_banker = {"roles": ["mafia", "judge", "hacker"], "copies": 2, "first_player": 0}
    s = GAME.new_game(2, seed=1, options=no_banker)
    s.apply(0, {"type": "foreign_aid"})
    assert s.phase is data.TURN and s.actor == 1 and s.money[0] == 4


def test_one_influence_lost_ends_the_game() -> None:
    s = GAME.new_game(2, seed=1, options={**MINI, "first_player": 0}, deck=["banker", "judge", "hacker"])
    s.apply(0, {"type": "banker"})  # seat 0 holds the Banker
    s.apply(1, {"type": "challenge"})
    assert s.is_over() and s.winners() == [0] and s.revealed[1] == ["judge"]


def test_the_mini_ends_after_its_turns_richest_winning() -> None:
    s = GAME.new_game(2, seed=1, options={**MINI, "first_player": 0}, deck=["banker", "judge", "hacker"])
    for seat in (0, 1, 0, 1):
        s.apply(seat, {"type": "income"})
    assert s.is_over() and s.winners() == [0, 1]  # $4M each: a shared win
    s = GAME.new_game(2, seed=1, options={**MINI, "first_player": 0}, deck=["banker", "judge", "hacker"])
    s.apply(0, {"type": "banker"})
    s.apply(1, {"type": "pass"})
    for seat in (1, 0, 1):
        s.apply(seat, {"type": "income"})
    assert s.is_over() and s.winners() == [0]


@pytest.mark.parametrize(
    ("players", "options", "message"),
    [
        (2, {"roles": ["banker"]}, "at least 2 distinct roles"),
        (2, {"roles": ["banker", "duke"]}, "roles must be"),
        (2, {"roles": "banker+judge"}, "roles must be"),
        (2, {"influence": 3}, "influence must be 1 or 2"),
        (2, {"influence": True}, "influence must be"),
        (3, {"copies": 1}, "too few for 3 players"),  # 6 cards, 6 in hands: no Reporter's draw
        (2, {"roles": ["banker", "judge"], "copies": 1}, "too few for 2 players"),
        (2, {"roles": ["banker", "judge", "hacker"], "steal_blockers": ["mafia"]}, "out of play"),
        (2, {"stalemate_turns": 0}, "stalemate_turns"),
    ],
)
def test_bad_small_options_are_refused(players: int, options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GAME.new_game(players, seed=1, options=options)


def test_a_mini_save_loads_back_and_a_world_keeps_its_deck() -> None:
    s = GAME.new_game(2, seed=5, options=MINI)
    again = GAME.from_json(s.to_json())
    assert again.to_json() == s.to_json()
    world = GAME.determinize(s.view(0), Rng(1))
    cards = world.deck + [c for h in world.hidden for c in h]
    assert sorted(cards) == ["banker", "hacker", "judge"] and world.hidden[0] == s.hidden[0]
    doc = json.loads(s.to_json())
    doc["hidden"][0].append(doc["deck"].pop())  # two cards in a one-influence hand
    with pytest.raises(ValueError, match="holds 1 cards"):
        GAME.from_json(json.dumps(doc))


@pytest.mark.parametrize("spec", ["random", "normal", "hard:seconds=0.01"])
def test_the_bots_play_legal_mini_games(spec: str) -> None:
    for seed in range(6 if spec != "hard:seconds=0.01" else 2):
        s = GAME.new_game(2, seed=seed, options=MINI)
        players = [bots.make(spec, GAME, seat, seed=seed) for seat in range(2)]
        while not s.is_over():
            seat = s.waiting_for()[0]
            action = players[seat].act(s.view(seat), s.legal_actions(seat))
            assert action in s.legal_actions(seat)
            s.apply(seat, action)
