"""A turn's choices are made from their action templates alone (a new situation costs less), their key
dict made only when asked for (``rules.keys_of``), and they list the seats the turn's challenge window
awaits: whatever asks gets what the actions handed out say."""

from __future__ import annotations

from conflictology.games.capitol import GAME, rules


def test_a_new_turns_keys_and_indices_are_its_actions() -> None:
    rules._TURNS.clear()  # (only ever a memo: emptying it changes no answer)
    s = GAME.new_game(players=10, seed=3, options={"first_player": 0})
    legal = s.legal_actions(0)
    assert rules.legal_keys(s, 0) == [rules.key_of(a) for a in legal]
    table = s.action_table
    assert s.legal_action_indices(0) == [table.index(a) for a in legal]
    mafia = table.index({"type": "mafia", "target": 7})
    s.apply_index(0, mafia)  # a key found in the dict made when asked
    assert s.waiting_for() == [1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_a_challenge_window_awaits_the_others_alive_after_an_elimination() -> None:
    s = GAME.new_game(players=5, seed=4, options={"first_player": 0})
    s.hidden[3] = []  # seat 3 out, as a test may set it (a turn met anew: ``alive`` is in its key)
    s.revealed[3] = ["banker", "judge"]
    s.alive[3] = False
    s.apply(0, {"type": "banker"})
    assert s.waiting_for() == [1, 2, 4]
