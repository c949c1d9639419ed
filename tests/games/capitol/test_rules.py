"""Capitol scenarios on stacked decks: one test (at least) per rule of the rulebook and per ruling.

Each test is named after the rule or ruling it checks (``test_ruling_11_…``, ``test_book_…``); the
"where implementations got the rules wrong" list of what-players-ask.md has its own tests at the end.
"""

from __future__ import annotations

from collections import Counter

import pytest

from capitol_helpers import B, H, J, M, P, R, act, table
from conflictology import IllegalAction
from conflictology.games.capitol import GAME, CapitolState
from conflictology.games.capitol.data import DECK, ROLES


def give(state: CapitolState, seat: int, amount: int) -> None:
    """Move money from the Treasury to a purse (setting up a position; conservation still holds)."""
    state.money[seat] += amount
    state.treasury -= amount
    state._lseat = -1


def types(state: CapitolState, seat: int) -> list[str]:
    return [a["type"] for a in state.legal_actions(seat)]


def log_types(state: CapitolState) -> list[str]:
    return [e["type"] for e in state.view(None)["log"]]


def cards_total(state: CapitolState) -> Counter[str]:
    total = Counter(state.deck)
    for h in state.hidden:
        total.update(h)
    for r in state.revealed:
        total.update(r)
    return total


# ---------------------------------------------------------------- ruling 1, 2, 3: setup


def test_ruling_1_deck_of_18_and_two_cards_dealt_from_the_stacked_deck() -> None:
    s = table([[B, M], [H, J], [R, P]], pile=[J, J])
    assert s.hidden == [[B, M], [H, J], [R, P]]
    assert s.deck[:2] == [J, J]
    assert len(s.deck) == 18 - 6
    assert cards_total(s) == Counter({r: 3 for r in ROLES})
    v = s.view(None)
    assert v["deck"] + sum(p["hidden"] for p in v["players"]) == 18


def test_ruling_2_starting_money_and_treasury_of_50() -> None:
    for n in range(2, 7):
        s = GAME.new_game(players=n, seed=n)
        assert s.money == [2] * n
        assert s.treasury == 50 - 2 * n


def test_ruling_2_treasury_pays_what_it_holds() -> None:
    s = table([[B, M], [H, J]], forced_scandal=False)
    give(s, 1, s.treasury - 1)  # one $1M left in the Treasury
    act(s, 0, "banker")
    act(s, 1, "pass")
    assert s.money[0] == 3 and s.treasury == 0
    assert sum(s.money) + s.treasury == 50
    act(s, 1, "income")
    assert s.money[1] == 47 and s.treasury == 0


def test_ruling_3_first_player_option_and_random_first_player_by_seed() -> None:
    s = table([[B, M], [H, J], [R, P]], first_player=2)
    assert s.waiting_for() == [2]
    firsts = {GAME.new_game(players=4, seed=seed).waiting_for()[0] for seed in range(40)}
    assert firsts == {0, 1, 2, 3}
    assert GAME.new_game(players=4, seed=5).to_json() == GAME.new_game(players=4, seed=5).to_json()


def test_ruling_3_play_passes_clockwise_skipping_eliminated_players() -> None:
    s = table([[B, M], [H, H], [R, P]])
    give(s, 0, 5)
    act(s, 0, "scandal", target=1)  # two Hackers: both lost... one per Scandal
    assert s.revealed[1] == [H] and s.waiting_for() == [1]
    act(s, 1, "income")
    act(s, 2, "income")
    give(s, 0, 7)
    act(s, 0, "scandal", target=1)
    assert not s.hidden[1] and s.view(None)["players"][1]["alive"] is False
    assert s.waiting_for() == [2], "seat 1 is out: seat 2 plays next"
    act(s, 2, "income")
    assert s.waiting_for() == [0]


# ---------------------------------------------------------------- ruling 4: forced Scandal


def test_ruling_4_forced_scandal_at_ten_at_the_start_of_the_turn() -> None:
    s = table([[B, M], [H, J], [R, P]])
    give(s, 0, 8)
    assert s.money[0] == 10
    assert all(a["type"] == "scandal" for a in s.legal_actions(0))
    assert [a["target"] for a in s.legal_actions(0)] == [1, 2]
    with pytest.raises(IllegalAction):
        act(s, 0, "income")


def test_ruling_4_forced_scandal_is_checked_when_the_turn_starts_not_later() -> None:
    s = table([[B, M], [H, J], [R, P]])
    give(s, 0, 7)  # $9M
    act(s, 0, "income")  # ends the turn with $10M: nothing is forced now
    assert s.money[0] == 10 and s.waiting_for() == [1]
    assert "income" in types(s, 1)
    # Seat 1 steals from seat 0 before seat 0's next turn: back under $10M, not forced.
    act(s, 1, "mafia", target=0)
    act(s, 0, "pass")
    act(s, 2, "pass")
    assert s.money[0] == 8
    act(s, 2, "income")
    assert "income" in types(s, 0)


def test_ruling_4_option_off_does_not_force() -> None:
    s = table([[B, M], [H, J]], forced_scandal=False)
    give(s, 0, 12)
    assert "income" in types(s, 0) and "scandal" in types(s, 0)


# ---------------------------------------------------------------- ruling 5: the order of a turn


def test_ruling_5_income_foreign_aid_and_scandal_have_no_challenge_window() -> None:
    s = table([[B, M], [H, J], [R, P]])
    act(s, 0, "income")
    assert s.money[0] == 3 and s.waiting_for() == [1]
    act(s, 1, "foreign_aid")
    assert s.phase == "block", "Foreign Aid goes straight to the block window"
    assert types(s, 0) == ["pass", "block"]


def test_ruling_5_challenge_window_every_other_living_player_in_seat_order() -> None:
    s = table([[B, M], [H, J], [R, P], [J, P]], first_player=2)
    act(s, 2, "banker")
    assert s.phase == "challenge"
    assert s.waiting_for() == [0, 1, 3]
    act(s, 3, "pass")
    assert s.waiting_for() == [0, 1]
    with pytest.raises(IllegalAction):
        act(s, 3, "challenge")  # a pass is final
    assert s.view(1)["pending"]["passed"] == [3]
    act(s, 0, "pass")
    act(s, 1, "pass")
    assert s.money[2] == 5 and s.waiting_for() == [3]


def test_ruling_5_first_challenge_closes_the_window() -> None:
    s = table([[B, M], [H, J], [R, P]])
    act(s, 0, "banker")
    act(s, 2, "challenge")
    assert s.phase == "lose" and s.waiting_for() == [2]
    assert 1 not in s.waiting_for()


def test_ruling_5_all_actions_listed_each_turn() -> None:
    s = table([[B, M], [H, J], [R, P]])
    give(s, 0, 5)  # $7M
    kinds = Counter(types(s, 0))
    assert kinds == Counter({
        "income": 1, "foreign_aid": 1, "scandal": 2, "banker": 1, "mafia": 2, "hacker": 2, "reporter": 1,
        "police_investigate": 2, "police_swap": 1,
    })


# ---------------------------------------------------------------- ruling 6: who may block


def test_ruling_6_foreign_aid_blocked_by_any_other_player_claiming_banker() -> None:
    s = table([[B, M], [H, J], [R, P]])
    act(s, 0, "foreign_aid")
    assert s.waiting_for() == [1, 2]
    assert s.legal_actions(1) == [{"type": "pass"}, {"type": "block", "card": B}]
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert s.money[0] == 4


def test_ruling_6_hacker_blocked_only_by_its_target_claiming_judge() -> None:
    s = table([[H, M], [B, J], [R, P]])
    give(s, 0, 1)
    act(s, 0, "hacker", target=1)
    # Ruling 6a: the target's one prompt holds the block; a bystander may only challenge or pass.
    assert s.legal_actions(1) == [{"type": "pass"}, {"type": "challenge"}, {"type": "block", "card": J}]
    assert s.legal_actions(2) == [{"type": "pass"}, {"type": "challenge"}]
    act(s, 1, "block", card=J)
    act(s, 2, "pass")
    assert s.phase == "block_challenge" and s.waiting_for() == [0]


def test_ruling_6_mafia_unblockable_by_default() -> None:
    s = table([[M, M], [B, J], [R, P]])
    act(s, 0, "mafia", target=1)
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert s.money == [4, 0, 2] and s.waiting_for() == [1]


def test_ruling_6_steal_blockers_option_lets_the_target_block_mafia() -> None:
    s = table([[M, M], [B, J], [R, P]], steal_blockers=["reporter", "mafia"])
    act(s, 0, "mafia", target=1)
    assert s.legal_actions(1) == [
        {"type": "pass"}, {"type": "challenge"}, {"type": "block", "card": M}, {"type": "block", "card": R},
    ]
    assert s.legal_actions(2) == [{"type": "pass"}, {"type": "challenge"}]
    assert s.view(None)["options"]["steal_blockers"] == ["mafia", "reporter"]


@pytest.mark.parametrize("action", ["banker", "reporter", "police_swap", "police_investigate"])
def test_ruling_6_other_character_actions_are_unblockable(action: str) -> None:
    s = table([[B, R], [P, J], [P, R]], steal_blockers=["mafia", "police", "reporter"])
    fields = {"target": 1} if action == "police_investigate" else {}
    act(s, 0, action, **fields)
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert "block" not in log_types(s)
    assert s.phase != "block"


def test_ruling_6_target_whose_own_challenge_failed_still_gets_the_block_window() -> None:
    s = table([[M, B], [R, J], [R, P]], steal_blockers=["reporter"])
    act(s, 0, "mafia", target=1)
    act(s, 1, "challenge")  # seat 0 has the Mafia
    act(s, 1, "lose", card=J)
    assert s.phase == "block" and s.waiting_for() == [1], "the target's last chance to block"
    act(s, 1, "block", card=R)
    act(s, 0, "pass")
    assert s.money == [2, 2, 2]


# ---------------------------------------------------------------- ruling 7: challenging a block


def test_ruling_7_only_the_actor_answers_a_block_by_default() -> None:
    s = table([[B, M], [B, J], [R, P]])
    act(s, 0, "foreign_aid")
    act(s, 2, "block", card=B)
    assert s.phase == "block_challenge" and s.waiting_for() == [0]
    assert s.legal_actions(1) == []
    assert s.legal_actions(0) == [{"type": "pass"}, {"type": "challenge"}]


def test_ruling_7_anyone_challenges_block_option_opens_the_window_to_all_but_the_blocker() -> None:
    s = table([[B, M], [B, J], [R, P], [H, J]], anyone_challenges_block=True)
    act(s, 0, "foreign_aid")
    act(s, 2, "block", card=B)  # a bluff
    assert s.waiting_for() == [0, 1, 3]
    act(s, 0, "pass")
    act(s, 3, "pass")
    assert s.waiting_for() == [1]
    act(s, 1, "challenge")
    assert s.phase == "lose" and s.waiting_for() == [2]
    act(s, 2, "lose", card=P)
    assert s.money[0] == 4, "the block failed: Foreign Aid resolves"


def test_ruling_7_block_stands_when_all_have_passed_with_the_option() -> None:
    s = table([[B, M], [B, J], [R, R]], anyone_challenges_block=True)
    act(s, 0, "foreign_aid")
    act(s, 1, "block", card=B)
    act(s, 0, "pass")
    assert s.waiting_for() == [2]
    act(s, 2, "pass")
    assert s.phase == "return" and s.waiting_for() == [1]


# ---------------------------------------------------------------- ruling 8: a block that stands


def test_ruling_8_accepted_block_the_blocker_returns_a_card_of_their_choice_and_draws() -> None:
    s = table([[B, M], [B, J], [R, P]], pile=[H, H, H])
    act(s, 0, "foreign_aid")
    act(s, 1, "block", card=B)
    act(s, 0, "pass")  # accept
    assert s.phase == "return" and s.waiting_for() == [1]
    assert s.legal_actions(1) == [{"type": "return", "card": B}, {"type": "return", "card": J}]
    deck_before = Counter(s.deck)
    act(s, 1, "return", card=J)
    assert s.money[0] == 2, "the action is not executed"
    assert len(s.hidden[1]) == 2 and B in s.hidden[1]
    assert Counter(s.deck) + Counter(s.hidden[1]) == deck_before + Counter([B, J])
    assert s.waiting_for() == [1], "the actor's turn ended"
    assert "return" in log_types(s)


def test_ruling_8_accepted_block_with_a_forced_return_is_automatic() -> None:
    s = table([[B, M], [B, B], [R, P]])
    act(s, 0, "foreign_aid")
    act(s, 1, "block", card=B)
    act(s, 0, "pass")
    assert s.waiting_for() == [1] and s.phase == "turn"
    assert log_types(s)[-1] == "return"


def test_ruling_8_block_that_survived_a_challenge_has_no_second_exchange() -> None:
    s = table([[B, M], [B, J], [R, P]])
    act(s, 0, "foreign_aid")
    act(s, 1, "block", card=B)
    act(s, 0, "challenge")  # seat 1 has the Banker
    act(s, 0, "lose", card=M)
    assert s.phase == "turn" and s.waiting_for() == [1], "no return phase after a survived challenge"
    assert s.money[0] == 2
    assert "return" not in log_types(s)
    assert log_types(s)[-2:] == ["lose", "replace"]


# ---------------------------------------------------------------- ruling 9: challenges


def test_ruling_9_bluff_caught_bluffer_loses_a_card_of_their_choice_and_the_action_fails() -> None:
    s = table([[M, J], [H, J], [R, P]])
    act(s, 0, "banker")
    act(s, 1, "challenge")
    assert s.phase == "lose" and s.waiting_for() == [0]
    assert s.legal_actions(0) == [{"type": "lose", "card": M}, {"type": "lose", "card": J}]
    act(s, 0, "lose", card=J)
    assert s.money[0] == 2 and s.revealed[0] == [J]
    assert s.waiting_for() == [1]


def test_ruling_9_true_claim_challenger_loses_then_card_replaced_then_action_goes_on() -> None:
    s = table([[B, M], [H, J], [R, P]], pile=[P, P])
    act(s, 0, "banker")
    act(s, 2, "challenge")
    # The book's order: the challenger loses first; the revealed Banker waits in seat 0's hand.
    assert s.phase == "lose" and s.waiting_for() == [2]
    assert B in s.hidden[0]
    pending = s.view(1)["pending"]
    assert pending["reveal"] == {"seat": 0, "card": B}
    act(s, 2, "lose", card=R)
    assert s.money[0] == 5, "the action goes on"
    kinds = log_types(s)
    assert kinds.index("lose") < kinds.index("replace") < kinds.index("gain")
    assert cards_total(s) == Counter(DECK)


def test_ruling_9_revealed_card_goes_back_and_the_deck_is_shuffled() -> None:
    orders = set()
    for seed in range(12):
        s = table([[B, M], [H, J], [R, P]], seed=seed)
        before = list(s.deck)
        act(s, 0, "banker")
        act(s, 1, "challenge")
        act(s, 1, "lose", card=H)
        # The Banker went into the deck (18 cards still), the deck was shuffled, seat 0 drew its top card.
        assert Counter(s.deck) + Counter(s.hidden[0]) == Counter(before) + Counter([B, M])
        assert len(s.hidden[0]) == 2 and M in s.hidden[0]
        orders.add(tuple(s.deck))
    assert len(orders) > 1, "the deck is shuffled, not just appended to"


def test_ruling_9_bluffing_a_block_fails_and_the_action_resolves() -> None:
    s = table([[B, M], [H, J], [R, P]])
    act(s, 0, "foreign_aid")
    act(s, 1, "block", card=B)
    act(s, 0, "challenge")
    act(s, 1, "lose", card=J)
    assert s.money[0] == 4 and s.revealed[1] == [J]


# ---------------------------------------------------------------- ruling 10: the Hacker's fee


def test_ruling_10_hacker_fee_paid_on_announcement_and_needs_3() -> None:
    s = table([[H, M], [B, J], [R, P]])
    assert "hacker" not in types(s, 0)
    give(s, 0, 1)
    treasury = s.treasury
    act(s, 0, "hacker", target=1)
    assert s.money[0] == 0 and s.treasury == treasury + 3


def test_ruling_10_hacker_fee_not_refunded_when_blocked() -> None:
    s = table([[H, M], [B, J], [R, P]])
    give(s, 0, 1)
    act(s, 0, "hacker", target=1)
    act(s, 1, "block", card=J)  # ruling 6a: its one answer, sealed until the window closes
    act(s, 2, "pass")
    act(s, 0, "pass")
    act(s, 1, "return", card=B)
    assert s.money[0] == 0 and s.revealed[1] == []


def test_ruling_10_hacker_fee_not_refunded_when_caught_bluffing() -> None:
    s = table([[B, M], [B, J], [R, P]])
    give(s, 0, 1)
    act(s, 0, "hacker", target=1)
    act(s, 2, "challenge")
    act(s, 0, "lose", card=M)
    assert s.money[0] == 0 and s.revealed[1] == []


# ---------------------------------------------------------------- ruling 11: double losses


def test_ruling_11_target_who_challenges_a_true_hacker_loses_two() -> None:
    s = table([[H, B], [J, M], [R, P]])
    give(s, 0, 1)
    act(s, 0, "hacker", target=1)
    act(s, 1, "challenge")
    assert s.phase == "lose" and s.waiting_for() == [1]
    act(s, 1, "lose", card=J)
    # The hack follows at once, with no Judge window; the second card is the other one.
    assert s.revealed[1] == [J, M]
    assert not s.alive[1]
    assert "block" not in [p for p in log_types(s)]
    assert s.waiting_for() == [2]


def test_ruling_11_non_target_who_challenges_a_true_hacker_loses_one_and_target_gets_judge_window() -> None:
    s = table([[H, B], [J, M], [R, P]])
    give(s, 0, 1)
    act(s, 0, "hacker", target=1)
    act(s, 2, "challenge")
    act(s, 2, "lose", card=P)
    assert s.revealed[2] == [P]
    assert s.phase == "block" and s.waiting_for() == [1], "the target's last chance to block"
    act(s, 1, "block", card=J)
    act(s, 0, "pass")
    assert s.revealed[1] == []


def test_ruling_11_false_judge_block_challenged_loses_two() -> None:
    s = table([[H, B], [R, M], [R, P]])
    give(s, 0, 1)
    act(s, 0, "hacker", target=1)
    act(s, 1, "block", card=J)  # ruling 6a: its one answer, sealed until the window closes
    act(s, 2, "pass")
    act(s, 0, "challenge")
    act(s, 1, "lose", card=M)
    assert s.revealed[1] == [M, R] and not s.alive[1]


def test_ruling_11_one_card_left_loses_only_that_one() -> None:
    s = table([[H, B], [J, M], [R, P]])
    give(s, 0, 1)
    act(s, 0, "income")
    act(s, 1, "income")
    act(s, 2, "income")
    # Seat 1 has lost one card already.
    give(s, 0, 3)  # $7M
    act(s, 0, "scandal", target=1)
    act(s, 1, "lose", card=M)
    act(s, 1, "income")
    act(s, 2, "income")
    give(s, 0, 3)
    act(s, 0, "hacker", target=1)
    act(s, 1, "challenge")  # wrong, with one card: loses it and is out; the hack does nothing more
    assert s.revealed[1] == [M, J] and not s.alive[1]
    assert "no_effect" in log_types(s)
    assert s.waiting_for() == [2]


def test_ruling_11_a_player_cannot_lose_the_same_card_twice() -> None:
    s = table([[H, B], [M, J], [R, P]])
    give(s, 0, 1)
    act(s, 0, "hacker", target=1)
    act(s, 1, "challenge")
    assert s.legal_actions(1) == [{"type": "lose", "card": M}, {"type": "lose", "card": J}]
    act(s, 1, "lose", card=M)
    assert sorted(s.revealed[1]) == [J, M], "the second loss is the other card"


# ---------------------------------------------------------------- ruling 12 and 12a: losing influence


def test_ruling_12_lost_card_face_up_and_eliminated_money_returns_to_treasury() -> None:
    s = table([[B, M], [H, J]])
    give(s, 0, 5)
    give(s, 1, 3)
    act(s, 0, "scandal", target=1)
    act(s, 1, "lose", card=H)
    assert s.revealed[1] == [H]
    assert s.view(0)["players"][1]["revealed"] == [H]
    act(s, 1, "income")
    give(s, 0, 7)
    act(s, 0, "scandal", target=1)
    assert not s.alive[1] and s.money[1] == 0
    assert sum(s.money) + s.treasury == 50
    assert s.is_over() and s.winners() == [0]


def test_ruling_12_target_eliminated_before_the_action_resolves_gets_nothing_more() -> None:
    s = table([[M, B], [J, J], [R, P]])
    give(s, 0, 5)
    act(s, 0, "scandal", target=1)  # seat 1 loses one Judge (automatic: two of the same role)
    assert s.revealed[1] == [J]
    act(s, 1, "income")
    act(s, 2, "income")
    act(s, 0, "mafia", target=1)
    money = list(s.money)
    act(s, 1, "challenge")  # wrong: loses the last card; the steal does nothing more
    assert not s.alive[1]
    assert log_types(s)[-3:] == ["eliminated", "replace", "no_effect"]
    assert "steal" not in log_types(s)
    assert s.money[0] == money[0] and s.money[1] == 0 and s.waiting_for() == [2]


def test_ruling_12a_forced_loss_is_automatic_and_other_losses_are_asked() -> None:
    s = table([[B, M], [J, J], [R, P]])
    give(s, 0, 5)
    act(s, 0, "scandal", target=1)
    assert s.revealed[1] == [J] and s.phase == "turn", "two of the same role: automatic"
    act(s, 1, "income")
    give(s, 2, 5)
    act(s, 2, "scandal", target=0)
    assert s.phase == "lose" and s.waiting_for() == [0], "two different roles: asked"


def test_ruling_12a_forced_show_and_return_are_automatic() -> None:
    s = table([[P, M], [J, J], [R, P]])
    act(s, 0, "police_investigate", target=1)
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert s.phase == "investigate" and s.waiting_for() == [0]
    assert s.view(0)["pending"]["shown"] == J


# ---------------------------------------------------------------- rulings 13–16: the characters


def test_ruling_13_mafia_takes_min_2_and_a_target_with_0_may_be_chosen() -> None:
    s = table([[M, B], [H, J], [R, P]])
    give(s, 1, -1)  # seat 1 has $1M
    act(s, 0, "mafia", target=1)
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert s.money[:2] == [3, 0]
    s2 = table([[M, B], [H, J]])
    give(s2, 1, -2)
    assert {"type": "mafia", "target": 1} in s2.legal_actions(0)
    act(s2, 0, "mafia", target=1)
    act(s2, 1, "pass")
    assert s2.money == [2, 0]


def test_ruling_14_reporter_draws_two_keeps_as_many_as_held_returns_the_rest() -> None:
    s = table([[R, B], [H, J], [M, P]], pile=[J, M])
    act(s, 0, "reporter")
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert s.phase == "exchange" and s.waiting_for() == [0]
    assert sorted(s.hidden[0]) == sorted([R, B, J, M])
    view = s.view(0)
    assert view["pending"]["hand"] == [R, B] and view["pending"]["drawn"] == [J, M]
    assert view["pending"]["keep"] == 2
    assert s.view(1)["players"][0]["hidden"] == 4, "drawn cards count as face-down cards"
    assert s.view(None)["deck"] + sum(p["hidden"] for p in s.view(None)["players"]) == 18
    legal = s.legal_actions(0)
    assert len(legal) == 6 and all(len(a["cards"]) == 2 for a in legal)
    act(s, 0, "keep", cards=[M, J])  # any order is accepted
    assert s.hidden[0] == [J, M]
    assert len(s.deck) == 18 - 6
    assert cards_total(s) == Counter(DECK)
    assert s.log[-1] == ("exchange", 0, 2)


def test_ruling_14_reporter_with_one_card_keeps_one() -> None:
    s = table([[R, B], [H, J]], pile=[J, M])
    give(s, 1, 5)
    act(s, 0, "income")
    act(s, 1, "scandal", target=0)
    act(s, 0, "lose", card=B)
    act(s, 0, "reporter")
    act(s, 1, "pass")
    assert s.view(0)["pending"]["keep"] == 1
    assert sorted(a["cards"][0] for a in s.legal_actions(0)) == sorted(set(s.hidden[0]))


def test_ruling_14_a_reporter_who_wins_a_challenge_still_exchanges() -> None:
    s = table([[R, B], [H, J], [M, P]])
    act(s, 0, "reporter")
    act(s, 1, "challenge")
    act(s, 1, "lose", card=H)
    assert s.phase == "exchange"


def test_ruling_15_investigate_target_chooses_the_card_police_lets_keep() -> None:
    s = table([[P, B], [M, J], [R, H]])
    act(s, 0, "police_investigate", target=1)
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert s.phase == "show" and s.waiting_for() == [1]
    assert s.legal_actions(1) == [{"type": "show", "card": M}, {"type": "show", "card": J}]
    act(s, 1, "show", card=J)
    assert s.waiting_for() == [0]
    assert s.legal_actions(0) == [{"type": "let_keep"}, {"type": "force_redraw"}]
    assert s.view(0)["pending"]["shown"] == J
    assert s.view(1)["pending"]["shown"] == J
    assert "shown" not in s.view(2)["pending"] and "shown" not in s.view(None)["pending"]
    act(s, 0, "let_keep")
    assert s.hidden[1] == [M, J]
    assert s.view(0)["known"] == [{"seat": 1, "card": J}]
    assert s.view(2)["known"] == []
    assert log_types(s)[-1] == "let_keep"


def test_ruling_15_force_redraw_puts_the_card_back_shuffles_and_draws() -> None:
    s = table([[P, B], [M, J], [R, H]], pile=[H, H])
    act(s, 0, "police_investigate", target=1)
    act(s, 1, "pass")
    act(s, 2, "pass")
    act(s, 1, "show", card=J)
    deck_before = Counter(s.deck)
    act(s, 0, "force_redraw")
    assert M in s.hidden[1] and len(s.hidden[1]) == 2
    assert Counter(s.deck) + Counter(s.hidden[1]) == deck_before + Counter([M, J])
    assert s.view(0)["known"] == [], "the card went back: where it is is no longer known"
    assert log_types(s)[-1] == "force_redraw"


def test_ruling_15_police_knowledge_lasts_until_that_hand_changes() -> None:
    s = table([[P, B], [M, J], [R, H]])
    act(s, 0, "police_investigate", target=1)
    act(s, 1, "pass")
    act(s, 2, "pass")
    act(s, 1, "show", card=M)
    act(s, 0, "let_keep")
    assert s.view(0)["known"] == [{"seat": 1, "card": M}]
    act(s, 1, "income")
    act(s, 2, "income")
    assert s.view(0)["known"] == [{"seat": 1, "card": M}]
    give(s, 0, 5)
    act(s, 0, "scandal", target=1)
    act(s, 1, "lose", card=J)
    assert s.view(0)["known"] == []


def test_ruling_16_police_swap_draws_one_and_returns_one() -> None:
    s = table([[P, B], [M, J], [R, H]], pile=[H, M])
    act(s, 0, "police_swap")
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert s.hidden[0] == [P, B, H] and s.view(0)["pending"]["drawn"] == [H]
    assert s.legal_actions(0) == [
        {"type": "keep", "cards": [B, H]},
        {"type": "keep", "cards": [B, P]},
        {"type": "keep", "cards": [H, P]},
    ]
    act(s, 0, "keep", cards=[H, B])
    assert s.hidden[0] == [B, H]
    assert P in s.deck and len(s.deck) == 18 - 6


# ---------------------------------------------------------------- rulings 17, 18


def test_ruling_17_targets_are_other_living_players_and_scandal_needs_7() -> None:
    s = table([[B, M], [J, J], [R, P]])
    give(s, 0, 4)  # $6M
    assert "scandal" not in types(s, 0)
    assert all(a.get("target") != 0 for a in s.legal_actions(0))
    with pytest.raises(IllegalAction):
        act(s, 0, "mafia", target=0)
    give(s, 0, 1)
    act(s, 0, "scandal", target=1)
    act(s, 1, "income")
    act(s, 2, "income")
    give(s, 0, 7)
    act(s, 0, "scandal", target=1)
    act(s, 2, "income")
    assert all(a.get("target") != 1 for a in s.legal_actions(0)), "seat 1 is out"


def test_ruling_18_the_last_player_with_a_face_down_card_wins() -> None:
    s = table([[B, M], [H, J]])
    give(s, 0, 12)
    act(s, 0, "scandal", target=1)
    act(s, 1, "lose", card=H)
    act(s, 1, "income")
    act(s, 0, "scandal", target=1)
    assert s.is_over() and s.winners() == [0] and s.waiting_for() == []
    assert s.view(1)["winners"] == [0]
    assert all(s.legal_actions(seat) == [] for seat in range(2))
    assert log_types(s)[-1] == "win"


# ---------------------------------------------------------------- ruling 19: timeouts


def test_ruling_19_timeout_actions() -> None:
    s = table([[B, M], [H, J], [R, P]])
    assert s.timeout_action(0) == {"type": "income"}
    give(s, 0, 8)
    assert s.timeout_action(0) == {"type": "scandal", "target": 1}
    s = table([[B, M], [H, J], [R, P]], first_player=2)
    give(s, 2, 8)
    assert s.timeout_action(2) == {"type": "scandal", "target": 0}, "the next living seat, clockwise"
    s = table([[R, B], [H, J], [M, P]])
    act(s, 0, "reporter")
    assert s.timeout_action(1) == {"type": "pass"}
    act(s, 1, "pass")
    act(s, 2, "pass")
    assert s.timeout_action(0) == {"type": "keep", "cards": [B, R]}, "an exchange keeps the current hand"
    before = s.to_json()
    s.apply(0, s.timeout_action(0))
    assert s.hidden[0] == [B, R] and before != s.to_json()
    give(s, 1, 5)
    act(s, 1, "scandal", target=0)
    first = s.timeout_action(0)
    assert first in s.legal_actions(0) and first["type"] == "lose"
    assert s.timeout_action(0) == first, "asking twice gives the same answer and changes nothing"
    with pytest.raises(IllegalAction):
        s.timeout_action(1)


# ---------------------------------------------------------------- the rulebook's own texts


def test_book_income_foreign_aid_banker_amounts() -> None:
    s = table([[B, M], [H, J], [R, P]])
    act(s, 0, "income")
    act(s, 1, "foreign_aid")
    act(s, 0, "pass")
    act(s, 2, "pass")
    act(s, 2, "banker")
    act(s, 0, "pass")
    act(s, 1, "pass")
    assert s.money == [3, 4, 5]


def test_book_scandal_costs_7_and_the_target_loses_one() -> None:
    s = table([[B, M], [H, J], [R, P]])
    give(s, 0, 5)
    treasury = s.treasury
    act(s, 0, "scandal", target=2)
    assert s.money[0] == 0 and s.treasury == treasury + 7
    act(s, 2, "lose", card=R)
    assert s.revealed[2] == [R]


def test_book_accept_the_block_skips_the_turn() -> None:
    s = table([[H, M], [B, J], [R, P]])
    give(s, 0, 1)
    act(s, 0, "hacker", target=1)
    act(s, 1, "block", card=J)  # ruling 6a: its one answer, sealed until the window closes
    act(s, 2, "pass")
    act(s, 0, "pass")
    act(s, 1, "return", card=J)
    assert s.phase == "turn" and s.waiting_for() == [1]


# ---------------------------------------------------------------- what-players-ask.md: where others erred


def test_asked_challenged_block_on_a_steal_true_blocker() -> None:
    s = table([[M, B], [R, J], [H, P]], steal_blockers=["mafia", "reporter"])
    act(s, 0, "mafia", target=1)
    act(s, 1, "block", card=R)  # ruling 6a: its one answer, sealed until the window closes
    act(s, 2, "pass")
    act(s, 0, "challenge")  # wrong: seat 1 has a Reporter
    act(s, 0, "lose", card=B)
    assert s.money == [2, 2, 2], "the block stands: nothing stolen"
    assert s.revealed[0] == [B]
    assert len(s.hidden[1]) == 2 and s.phase == "turn" and s.waiting_for() == [1]


def test_asked_challenged_block_on_a_steal_bluffing_blocker() -> None:
    s = table([[M, B], [R, J], [H, P]], steal_blockers=["mafia", "reporter"])
    act(s, 0, "mafia", target=1)
    act(s, 1, "block", card=M)  # ruling 6a: its one answer, sealed until the window closes
    act(s, 2, "pass")
    act(s, 0, "challenge")  # right: seat 1 has no Mafia
    act(s, 1, "lose", card=J)
    assert s.money == [4, 0, 2], "the block failed: the steal resolves"


def test_asked_role_table_who_blocks_what() -> None:
    from conflictology.games.capitol import data

    assert data.BLOCK_ROLES == {"foreign_aid": ("banker",), "hacker": ("judge",)}
    assert set(data.BLOCKED_BY_ANYONE) == {"foreign_aid"}
    assert data.CLAIM == {
        "banker": "banker", "mafia": "mafia", "hacker": "hacker", "reporter": "reporter",
        "police_investigate": "police", "police_swap": "police",
    }
    assert data.COST == {"scandal": 7, "hacker": 3}


def test_asked_lost_cards_stay_face_up_and_out_of_the_deck() -> None:
    s = table([[R, B], [H, J], [M, P]])
    give(s, 2, 5)
    act(s, 0, "income")
    act(s, 1, "income")
    act(s, 2, "scandal", target=0)
    act(s, 0, "lose", card=B)
    assert B not in s.hidden[0] and s.revealed[0] == [B]
    act(s, 0, "reporter")  # an exchange reshuffles the deck: the lost Banker must not come back
    act(s, 1, "pass")
    act(s, 2, "pass")
    act(s, 0, "keep", cards=[s.hidden[0][-1]])
    assert s.revealed[0] == [B]
    assert cards_total(s) == Counter(DECK)
    assert Counter(s.deck)[B] + sum(h.count(B) for h in s.hidden) == 2
    assert all(p["revealed"] == s.revealed[p["seat"]] for p in s.view(None)["players"])


def test_asked_target_last_chance_to_block_a_steal_after_someone_elses_failed_challenge() -> None:
    s = table([[M, B], [R, J], [H, P]], steal_blockers=["reporter"])
    act(s, 0, "mafia", target=1)
    act(s, 2, "challenge")  # wrong: seat 0 has the Mafia
    act(s, 2, "lose", card=H)
    assert s.phase == "block" and s.waiting_for() == [1]
    act(s, 1, "block", card=R)
    act(s, 0, "pass")
    act(s, 1, "return", card=J)
    assert s.money == [2, 2, 2]


def test_ruling_12_an_actor_eliminated_by_a_caught_bluff_passes_play_to_the_next_living_seat() -> None:
    s = table([[B, B], [H, J], [R, P], [M, J]])
    give(s, 3, 5)
    act(s, 0, "income")
    act(s, 1, "income")
    act(s, 2, "income")
    act(s, 3, "scandal", target=0)  # seat 0 loses a Banker (automatic: a pair)
    assert s.revealed[0] == [B]
    act(s, 0, "mafia", target=1)  # a bluff
    act(s, 3, "challenge")
    assert not s.alive[0] and s.money[0] == 0
    assert s.waiting_for() == [1]


def test_ruling_5_pass_then_challenge_by_another_seat_in_any_order() -> None:
    s = table([[B, M], [H, J], [R, P], [J, P]])
    act(s, 0, "reporter")  # a bluff
    act(s, 2, "pass")
    act(s, 3, "challenge")
    assert s.phase == "lose" and s.waiting_for() == [0]
    assert s.view(1)["pending"]["passed"] == [2] and s.view(1)["pending"]["challenger"] == 3


def test_golden_scripted_game_log() -> None:
    """A whole two-player game on a stacked deck, checked against its full public log."""
    s = table([[B, M], [H, J]])
    act(s, 0, "banker")
    act(s, 1, "pass")
    act(s, 1, "foreign_aid")
    act(s, 0, "block", card=B)
    act(s, 1, "challenge")
    act(s, 1, "lose", card=H)
    act(s, 0, "mafia", target=1)
    act(s, 1, "pass")
    act(s, 1, "income")
    act(s, 0, "scandal", target=1)
    assert s.winners() == [0]
    assert [e["text"] for e in s.view(None)["log"]] == [
        "Seat 0 plays first.",
        "Seat 0 claims Banker to take $3M from the Treasury.",
        "Seat 0 takes $3M from the Treasury.",
        "Seat 1 asks for Foreign Aid.",
        "Seat 0 blocks Seat 1, claiming Banker.",
        "Seat 1 challenges Seat 0's claim of Banker.",
        "Seat 0 reveals Banker: the challenge fails.",
        "The block by Seat 0 stands: Seat 1's action is not executed.",
        "Seat 1 loses an influence: Hacker is turned face up.",
        "Seat 0 shuffles the revealed Banker into the deck and draws a new card.",
        "Seat 0 claims Mafia to steal from Seat 1.",
        "Seat 0 steals $2M from Seat 1.",
        "Seat 1 takes Income.",
        "Seat 1 takes $1M from the Treasury.",
        "Seat 0 pays $7M to launch a Scandal against Seat 1.",
        "Seat 1 loses an influence: Judge is turned face up.",
        "Seat 1 has no influence left and is out; $1M return to the Treasury.",
        "Seat 0 wins.",
    ]
    assert s.money == [0, 0] and s.treasury == 50


# ---------------------------------------------------------------- rules.py as functions over a state


def test_the_rules_functions_drive_a_state_without_its_methods() -> None:
    from conflictology.games.capitol import rules
    from conflictology.games.capitol.data import Phase, Then

    s = table([[B, M], [H, J], [R, P]])
    assert rules.legal_actions(s, 0) == s.legal_actions(0) and rules.legal_keys(s, 1) == []
    key = rules.key_of({"type": "mafia", "target": 2})
    assert key in rules.legal_keys(s, 0)
    rules.apply_key(s, 0, key, None)
    assert s.phase is Phase.CHALLENGE and s.awaiting == [1, 2] and s.claim == M
    rules.apply_key(s, 1, ("challenge", None, None), None)  # seat 0 holds the Mafia: seat 1 loses
    assert s.phase is Phase.LOSE and s.then is Then.CONTINUE and s.losses == [1]
    assert rules.legal_keys(s, 1) == [("lose", "card", H), ("lose", "card", J)]
    assert all(type(a["type"]) is str for a in rules.legal_actions(s, 1))  # a plain str, not the phase
    assert rules.decision_kind(s, 1) == "choice" and rules.timeout_action(s, 1)["type"] == "lose"


@pytest.mark.parametrize("action", [
    {"type": "mafia", "target": True}, {"type": "mafia", "target": 1.0}, {"type": "lose", "card": 3},
    {"type": "keep", "cards": "banker"}, {"type": "income", "extra": 1}, {"type": 5}, [], "income",
])
def test_key_of_refuses_what_is_not_exactly_an_action(action: object) -> None:
    from conflictology.games.capitol import rules

    assert rules.key_of(action) is None


def test_a_save_with_an_unknown_phase_is_refused() -> None:
    s = table([[B, M], [H, J], [R, P]])
    with pytest.raises(ValueError, match="phase 'dancing'"):
        GAME.from_json(s.to_json().replace('"phase":"turn"', '"phase":"dancing"'))
