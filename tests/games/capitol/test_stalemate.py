"""The stalemate rule (docs/rules/capitol.md): a game with no influence lost for ``stalemate_turns``
turns in a row ends, and so does any game at the hard cap of decisions; most influence, then most
money wins, a full tie shares the win."""

from __future__ import annotations

import pytest

from conflictology.engine import Rng
from conflictology.games.capitol import data
from conflictology.games.capitol.game import CapitolGame
from conflictology.games.capitol.state import CapitolState

GAME = CapitolGame()


def _reporter_loop(state: CapitolState, limit: int = 10_000) -> int:
    """Every seat claims the Reporter, nobody challenges, every exchange keeps the hand: no money, no
    influence ever changes hands. The decisions made until the end."""
    moves = 0
    while not state.is_over() and moves < limit:
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        action = next((a for a in legal if a["type"] in ("reporter", "pass")), legal[0])
        state.apply(seat, action)
        moves += 1
    return moves


def test_the_reporter_loop_ends_after_the_default_quiet_turns() -> None:
    state = GAME.new_game(2, seed=1, options={"first_player": 0})
    moves = _reporter_loop(state)
    assert state.is_over()
    assert moves == 3 * data.STALEMATE_TURNS  # a claim, a pass, a kept hand per turn
    end = state.view(None)["log"][-1]
    assert end["type"] == "stalemate" and end["reason"] == "quiet" and end["count"] == data.STALEMATE_TURNS
    # Two cards and $2M each: a full tie, a shared win.
    assert state.winners() == [0, 1] == end["winners"] == state.view(0)["winners"]


@pytest.mark.parametrize("turns", [10, 57, 200])
def test_the_option_sets_the_number_of_quiet_turns(turns: int) -> None:
    state = GAME.new_game(3, seed=2, options={"first_player": 1, "stalemate_turns": turns})
    assert _reporter_loop(state) == 4 * turns  # a claim, two passes, a kept hand
    assert state.view(None)["log"][-1]["count"] == turns
    assert state.view(None)["options"]["stalemate_turns"] == turns  # shown to the players when set


@pytest.mark.parametrize("value", [0, 201, None, -1, 40.0, "40", True])  # 1-9: the short variants
def test_the_option_has_bounds_and_no_off(value: object) -> None:
    with pytest.raises(ValueError, match="stalemate_turns"):
        GAME.new_game(2, seed=1, options={"stalemate_turns": value})


def test_the_option_left_alone_is_not_in_the_options() -> None:
    # The views of games that never set it stay byte for byte what they were.
    assert "stalemate_turns" not in GAME.new_game(2, seed=1).view(0)["options"]
    assert "stalemate_turns" not in GAME.default_options()


def test_a_lost_influence_starts_the_count_again() -> None:
    state = GAME.new_game(2, seed=3, options={"first_player": 0, "stalemate_turns": 10})
    for _ in range(9 * 3):  # nine quiet turns
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        state.apply(seat, next((a for a in legal if a["type"] in ("reporter", "pass")), legal[0]))
    assert state.quiet == 9 and state.phase == "turn" and state.actor == 1
    state.apply(1, {"type": "reporter"})
    state.apply(0, {"type": "challenge"})  # seat 1 is honest or bluffing: someone loses a card
    while state.phase != "turn":
        seat = state.waiting_for()[0]
        state.apply(seat, state.legal_actions(seat)[0])
    assert state.quiet == 0 and not state.is_over()
    assert sum(len(r) for r in state.revealed) == 1


def _ended(money: list[int], hidden: list[list[str]]) -> CapitolState:
    state = GAME.new_game(len(money), seed=4, options={"first_player": 0, "stalemate_turns": 10})
    deck = list(data.DECK)
    for h in hidden:
        for c in h:
            deck.remove(c)
    for i, h in enumerate(hidden):
        lost = [c for c in deck if c not in h][: 2 - len(h)]
        for c in lost:
            deck.remove(c)
        state.hidden[i] = list(h)
        state.revealed[i] = lost
        state.alive[i] = bool(h)
    state.deck = deck
    state.treasury = data.TREASURY_TOTAL - sum(money)
    state.money = list(money)
    state.quiet = 9
    state.actor = 0
    state.check_invariants()
    state.apply(0, {"type": "reporter"})
    for seat in list(state.waiting_for()):
        state.apply(seat, {"type": "pass"})
    state.apply(0, {"type": "keep", "cards": sorted(hidden[0])})
    assert state.is_over()
    return state


def test_most_influence_wins_before_money() -> None:
    state = _ended([9, 1, 0], [["banker"], ["judge", "police"], ["mafia"]])
    assert state.winners() == [1]


def test_money_breaks_a_tie_of_influence() -> None:
    state = _ended([1, 4, 4], [["banker"], ["judge"], ["mafia"]])
    assert state.winners() == [1, 2]  # shared: same influence, same money
    state = _ended([1, 4, 3], [["banker"], ["judge"], ["mafia"]])
    assert state.winners() == [1]
    assert state.view(2)["winners"] == [1]


def test_an_eliminated_player_never_wins_the_tiebreak() -> None:
    state = _ended([1, 0, 3], [["banker"], [], ["mafia"]])
    assert state.winners() == [2]


def test_the_hard_cap_ends_any_game_at_the_end_of_the_turn() -> None:
    state = GAME.new_game(2, seed=5, options={"first_player": 0, "stalemate_turns": 200})
    state.moves = data.MOVE_CAP - 2
    state.apply(0, {"type": "reporter"})
    state.apply(1, {"type": "pass"})
    assert state.moves == data.MOVE_CAP and not state.is_over()  # the turn goes on to its end
    state.apply(0, {"type": "keep", "cards": sorted(state.ex_hand)})
    assert state.is_over()
    end = state.view(None)["log"][-1]
    assert end["reason"] == "cap" and end["count"] == data.MOVE_CAP + 1
    assert state.winners() == [0, 1]


def test_no_option_lifts_the_hard_cap() -> None:
    # Six seats looping police investigations: 8 decisions a turn, the largest quiet count allowed.
    state = GAME.new_game(6, seed=6, options={"first_player": 0, "stalemate_turns": 200})
    state.moves = data.MOVE_CAP - 20
    moves = 0
    while not state.is_over():
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        state.apply(seat, next((a for a in legal if a["type"] in ("reporter", "pass")), legal[0]))
        moves += 1
    assert state.moves <= data.MOVE_CAP + 6  # within the turn of the cap
    assert state.view(None)["log"][-1]["reason"] == "cap"


def test_the_counters_survive_a_save_and_a_clone() -> None:
    state = GAME.new_game(2, seed=7, options={"first_player": 0, "stalemate_turns": 12})
    for _ in range(5 * 3):
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        state.apply(seat, next((a for a in legal if a["type"] in ("reporter", "pass")), legal[0]))
    saved = GAME.from_json(state.to_json())
    assert isinstance(saved, CapitolState)
    assert (saved.quiet, saved.moves, saved.opt_stalemate) == (5, 15, 12)
    assert _reporter_loop(saved) == _reporter_loop(state.clone()) == 7 * 3
    over = GAME.from_json(saved.to_json())
    assert over.is_over() and over.winners() == saved.winners() == [0, 1]


def test_a_world_counts_the_quiet_turns_of_the_view() -> None:
    state = GAME.new_game(3, seed=8, options={"first_player": 0})
    for _ in range(13):
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        state.apply(seat, next((a for a in legal if a["type"] in ("reporter", "pass")), legal[0]))
        for seen in state.waiting_for():
            world = GAME.determinize(state.view(seen), Rng(1))
            assert isinstance(world, CapitolState)
            assert world.quiet == state.quiet
