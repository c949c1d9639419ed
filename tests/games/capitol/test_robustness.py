"""Capitol never trusts an action dict by identity: a mutated copy of a legal action is refused and
changes nothing, and mutating what ``legal_actions`` returned never corrupts the state."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from capitol_helpers import B, H, J, M, P, R, table
from conflictology import IllegalAction
from conflictology.games.capitol import GAME, CapitolState
from conflictology.games.capitol.data import TREASURY_TOTAL


def conserved(state: CapitolState) -> bool:
    view = state.view(None)
    return bool(sum(p["money"] for p in view["players"]) + view["treasury"] == TREASURY_TOTAL)


@pytest.mark.parametrize(
    ("pick", "mutation"),
    [
        # A Mafia against oneself: would "steal" from one's own purse.
        ({"type": "mafia", "target": 1}, {"target": 0}),
        # An Income turned into a Scandal with $2M: would pay a fee the purse does not hold.
        ({"type": "income"}, {"type": "scandal", "target": 1}),
        # A seat as a bool or a float is not a seat.
        ({"type": "mafia", "target": 1}, {"target": True}),
        ({"type": "mafia", "target": 1}, {"target": 1.0}),
        # An extra field is not the same action.
        ({"type": "income"}, {"note": "x"}),
    ],
)
def test_a_mutated_legal_action_is_refused_and_changes_nothing(
    pick: dict[str, Any], mutation: dict[str, Any]
) -> None:
    state = table([[B, M], [H, J], [R, P]])
    legal = state.legal_actions(0)
    action = next(a for a in legal if a == pick)
    action.update(mutation)
    before = state.to_json()
    with pytest.raises(IllegalAction):
        state.apply(0, action)
    assert state.to_json() == before
    assert conserved(state)


def test_mutating_returned_actions_does_not_corrupt_later_legal_actions() -> None:
    state = table([[B, M], [H, J]])
    first = state.legal_actions(0)
    pristine = [dict(a) for a in first]
    for a in first:
        a["type"] = "scandal"
        a["target"] = 0
    first.clear()
    assert state.legal_actions(0) == pristine
    assert state.clone().legal_actions(0) == pristine
    # The fresh list is still applied by value.
    state.apply(0, {"type": "mafia", "target": 1})
    assert state.phase == "challenge"


def test_a_kept_hand_mutated_after_listing_is_refused() -> None:
    state = table([[R, B], [H, J]])
    state.apply(0, {"type": "reporter"})
    state.apply(1, {"type": "pass"})
    keeps = state.legal_actions(0)
    assert keeps and all(a["type"] == "keep" for a in keeps)
    bad = keeps[0]
    bad["cards"] = [J, J]  # the seat never held two Judges
    before = state.to_json()
    with pytest.raises(IllegalAction):
        state.apply(0, bad)
    assert state.to_json() == before


def test_random_games_with_mutated_copies_keep_money_and_cards() -> None:
    """Random play where every chosen action's list was scribbled on first: nothing leaks in."""
    rng = random.Random(7)
    for game_no in range(40):
        state = GAME.new_game(players=rng.randint(2, 6), seed=game_no)
        while not state.is_over():
            seat = rng.choice(state.waiting_for())
            legal = state.legal_actions(seat)
            choice = dict(rng.choice(legal))
            for a in legal:  # scribble over every listed dict, as a careless client might
                a["type"] = "scandal"
                a["target"] = seat
            state.apply(seat, choice)
            state.check_invariants()


@pytest.mark.parametrize("entry", [["bluff", 0, "banker"], ["challenge", 1, 0, "banker"]])
def test_a_save_whose_log_challenges_no_claim_is_refused_clearly(entry: list[Any]) -> None:
    """A crafted save with a challenge or a caught bluff before any claim: a ValueError naming the
    problem (what from_json promises for bad input), not an IndexError from deep inside."""
    doc = json.loads(GAME.new_game(3, seed=1).to_json())
    doc["log"] = [entry]
    doc.pop("honesty")
    with pytest.raises(ValueError, match="before any claim"):
        GAME.from_json(json.dumps(doc))


@pytest.mark.parametrize("kind", ["bluff", "challenge"])
def test_a_rendered_log_that_challenges_no_claim_is_refused_too(kind: str) -> None:
    """The same reading of a view's log (what a search bot's worlds are drawn from) refuses it the
    same way instead of making up an empty record."""
    from conflictology.games.capitol.honesty import public_honesty_bits

    with pytest.raises(ValueError, match="before any claim"):
        public_honesty_bits([{"type": kind, "seat": 0}])
    assert public_honesty_bits([{"type": "action", "action": "banker"}, {"type": "bluff"}]) == 0b10


@pytest.mark.parametrize(
    "options",
    [
        {"steal_blockers": ["judge"]},  # not a role that may block a steal (ruling 6)
        {"forced_scandal": "no"},
        {"stalemate_turns": "x"},
        {"stalemate_turns": 0},  # below the stalemate rule's bounds
        {"stalemate_turns": 201},
        {"roles": ["banker"]},  # a small variant needs two roles at least
        {"roles": ["banker", "banker", "judge"]},
        {"influence": 3},
        {"influence": 1},  # a valid option, but the save's hands hold two cards each
        {"copies": 7},
        {"colour": "red"},  # no such option
    ],
)
def test_a_save_with_a_bad_option_is_refused_when_loaded(options: dict[str, Any]) -> None:
    """A save's options pass a new game's checks: a bad value is refused by from_json, not met
    halfway through a later move (which then failed with a TypeError after changing the state)."""
    doc = json.loads(GAME.new_game(3, seed=1).to_json())
    doc["options"] = {**doc["options"], **options}
    with pytest.raises(ValueError, match=r"(malformed|inconsistent) Capitol state"):
        GAME.from_json(json.dumps(doc))


def test_a_save_of_every_option_set_loads_as_it_was() -> None:
    options = {"steal_blockers": ["mafia", "reporter"], "forced_scandal": False, "stalemate_turns": 60}
    state = GAME.new_game(8, seed=2, options=options)
    again = GAME.from_json(state.to_json())
    assert again.options == state.options and again.options["copies"] == 4
    assert again.view(0) == state.view(0)
