"""The end-of-game summary that marks the bluffs (what-players-ask.md: "a game summary that marks the
bluffs at the end"): a private record of every claim, secret while the game goes on, in every view
once it is over."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from capitol_helpers import B, H, J, M, P, R, act, table
from conflictology.engine import Rng
from conflictology.games.capitol import GAME, CapitolState
from conflictology.games.capitol.data import CLAIM
from conflictology.games.capitol.honesty import public_honesty


def all_views(state: CapitolState) -> list[dict[str, Any]]:
    return [state.view(s) for s in [*range(state.n), None]]


def with_honesty(state: CapitolState, honesty: Any) -> CapitolState:
    """The same state with another private record (through a save, as a server would reload it)."""
    doc = json.loads(state.to_json())
    doc["honesty"] = honesty
    return GAME.from_json(json.dumps(doc))


def finish(state: CapitolState) -> None:
    """Play on without any claim: Scandal when affordable, else Income; losses take the first card."""
    while not state.is_over():
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        kinds = [a["type"] for a in legal]
        if "scandal" in kinds:
            state.apply(seat, legal[kinds.index("scandal")])
        elif "income" in kinds:
            act(state, seat, "income")
        elif "pass" in kinds:
            act(state, seat, "pass")
        else:
            state.apply(seat, legal[0])


def test_a_stacked_game_marks_the_bluff_the_caught_bluff_and_the_honest_claims() -> None:
    s = table([[B, M], [H, J], [R, P]])
    # Seat 0 claims the Banker it holds; nobody challenges.
    act(s, 0, "banker")
    act(s, 1, "pass")
    act(s, 2, "pass")
    # Seat 1 claims a Mafia it does not hold; seat 0 challenges and catches it.
    act(s, 1, "mafia", target=0)
    act(s, 0, "challenge")
    act(s, 1, "lose", card=J)
    # Seat 2 claims a Banker it does not hold; nobody challenges: a bluff that got away.
    act(s, 2, "banker")
    act(s, 0, "pass")
    act(s, 1, "pass")
    act(s, 0, "income")
    # Seat 1 asks for Foreign Aid; seat 0 blocks with its real Banker and wins seat 1's challenge.
    act(s, 1, "foreign_aid")
    act(s, 0, "block", card=B)
    act(s, 1, "challenge")
    assert s.alive == [True, False, True] and not s.is_over()

    # Nothing of it shows while the game goes on.
    for view in all_views(s):
        assert "summary" not in view
        assert "honest" not in json.dumps(view)
    finish(s)

    expected_claims = [
        {"seat": 0, "role": B, "action": "banker", "target": None,
         "honest": True, "challenged": False, "challenger": None, "caught": False},
        {"seat": 1, "role": M, "action": "mafia", "target": 0,
         "honest": False, "challenged": True, "challenger": 0, "caught": True},
        {"seat": 2, "role": B, "action": "banker", "target": None,
         "honest": False, "challenged": False, "challenger": None, "caught": False},
        {"seat": 0, "role": B, "block": "foreign_aid", "actor": 1,
         "honest": True, "challenged": True, "challenger": 1, "caught": False},
    ]
    for view in all_views(s):  # every seat, the eliminated one and the spectator alike
        assert view["summary"] == {"claims": expected_claims, "bluffs": [0, 1, 1], "caught": [0, 1, 0]}


def test_an_honest_claim_whose_card_was_replaced_stays_honest() -> None:
    """Honesty is judged at the moment of the claim: a Hacker revealed to win a challenge is shuffled
    back and replaced (the claimant may no longer hold one), and the claim still counts as honest."""
    s = table([[H, B], [J, M], [R, P]])
    s.money[0] += 3
    s.treasury -= 3
    s._lseat = -1
    act(s, 0, "hacker", target=1)
    act(s, 2, "challenge")  # a bystander challenges and loses; the Hacker is replaced, the hack goes on
    act(s, 2, "lose", card=R)
    assert any(e["type"] == "replace" for e in s.view(None)["log"])
    act(s, 1, "pass")  # no Judge block
    act(s, 1, "lose", card=M)
    finish(s)
    claim = s.view(None)["summary"]["claims"][0]
    assert claim == {"seat": 0, "role": H, "action": "hacker", "target": 1,
                     "honest": True, "challenged": True, "challenger": 2, "caught": False}


def test_no_view_before_the_end_depends_on_the_claims_record() -> None:
    """Non-interference for the record: before the end, a state whose claims are all recorded as
    bluffs, or all honest but the caught ones, gives every seat and the spectator the same view and
    the same legal actions; at the end the summary follows the record."""
    rng = random.Random(17)
    before_end = 0
    for g in range(60):
        s = GAME.new_game(players=2 + g % 5, seed=rng.getrandbits(64))
        while True:
            real = json.loads(s.to_json())["honesty"]
            for record in ([False] * len(real), public_honesty(s.log)):
                other = with_honesty(s, record)
                if s.is_over():
                    # The end is where the record shows: another record, another summary.
                    summaries = [v["summary"] for v in all_views(other)]
                    assert (summaries == [v["summary"] for v in all_views(s)]) == (record == real)
                else:
                    assert all_views(other) == all_views(s)
                    legal = [s.legal_actions(x) for x in range(s.n)]
                    assert [other.legal_actions(x) for x in range(s.n)] == legal
                    before_end += 1
            if s.is_over():
                break
            seat = rng.choice(s.waiting_for())
            s.apply(seat, rng.choice(s.legal_actions(seat)))
    assert before_end > 1000


def test_the_record_is_what_the_claimants_held_and_the_counts_match_the_log() -> None:
    """An independent oracle: before each claiming action or block, note whether the claimant holds the
    role; the summary must say the same, and its caught bluffs are exactly the log's caught bluffs."""
    rng = random.Random(3)
    claims_seen = 0
    for g in range(200):
        s = GAME.new_game(players=2 + g % 5, seed=g, options={"steal_blockers": ["mafia", "police"]})
        oracle: list[tuple[int, str, bool]] = []
        sealed: tuple[int, str, bool] | None = None
        while not s.is_over():
            seat = rng.choice(s.waiting_for())
            action = rng.choice(s.legal_actions(seat))
            role = CLAIM.get(action["type"]) if s.phase == "turn" else action.get("card")
            if action["type"] == "block" or (s.phase == "turn" and role is not None):
                assert role is not None
                if s.phase == "challenge":
                    # Ruling 6a: a sealed block is claimed when it takes effect (if the action stands).
                    sealed = (seat, role, role in s.hidden[seat])
                else:
                    oracle.append((seat, role, role in s.hidden[seat]))
            blocks = sum(e[0] == "block" for e in s.log)
            s.apply(seat, action)
            if sealed is not None and sum(e[0] == "block" for e in s.log) > blocks:
                oracle.append(sealed)
                sealed = None
            if s.phase == "turn":
                sealed = None
        view = s.view(None)
        summary = view["summary"]
        assert [(c["seat"], c["role"], c["honest"]) for c in summary["claims"]] == oracle
        caught_in_log = Counter(e["seat"] for e in view["log"] if e["type"] == "bluff")
        assert summary["caught"] == [caught_in_log[i] for i in range(s.n)]
        assert summary["bluffs"] == [sum(1 for c in summary["claims"] if c["seat"] == i and not c["honest"])
                                     for i in range(s.n)]
        challenges = [e["seat"] for e in view["log"] if e["type"] == "challenge"]
        assert [c["challenger"] for c in summary["claims"] if c["challenged"]] == challenges
        claims_seen += len(oracle)
    assert claims_seen > 500


def test_json_round_trip_and_determinize_keep_the_record() -> None:
    rng = random.Random(8)
    for g in range(40):
        s = GAME.new_game(players=2 + g % 5, seed=g)
        while not s.is_over():
            seat = rng.choice(s.waiting_for())
            s.apply(seat, rng.choice(s.legal_actions(seat)))
            text = s.to_json()
            copy = GAME.from_json(text)
            assert copy.to_json() == text and copy.honesty == s.honesty
            if not s.is_over():
                # Mid-game the world rebuilds the record from the public log: a claim counts as
                # honest unless a challenge caught it (no view says more).
                world = GAME.determinize(s.view(seat), Rng(g))
                assert json.loads(world.to_json())["honesty"] == public_honesty(s.log)
        # Once over, the summary is public: a determinized world carries the very same record.
        for seat in range(s.n):
            world = GAME.determinize(s.view(seat), Rng(g))
            assert world.honesty == s.honesty
            assert world.view(seat) == s.view(seat) and world.view(None) == s.view(None)


def test_saves_without_a_record_load_and_bad_records_are_refused() -> None:
    s = table([[B, M], [H, J]])
    act(s, 0, "banker")
    act(s, 1, "pass")
    act(s, 1, "mafia", target=0)  # a bluff (seat 1 holds Hacker and Judge)
    act(s, 0, "challenge")
    doc = json.loads(s.to_json())
    assert doc["honesty"] == [True, False]
    assert with_honesty(s, [False, False]).to_json() != s.to_json()
    del doc["honesty"]  # a save written before the record existed: the public log's version
    old = GAME.from_json(json.dumps(doc))
    assert json.loads(old.to_json())["honesty"] == [True, False] and old.view(1) == s.view(1)
    # Not bools, not one per claim of the log, or a caught bluff recorded as honest.
    for bad in ([1, 0], "10", 3, [True], [True, False, True], [True, True]):
        with pytest.raises(ValueError):
            with_honesty(s, bad)
