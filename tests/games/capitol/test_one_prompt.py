"""Ruling 6a: the target of a Hacker (or of a Mafia the table lets it block) answers once, in the
challenge window: challenge, block (with each role it may claim) or let it pass. The rulings decide the
same choices the same way as the two prompts did (the games of ``old_flow.py``, replayed); the sealed
block is in no one else's view; a target is asked again only after someone else's challenge failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capitol_helpers import B, H, J, M, P, R, act, table
from conflictology.engine import Rng
from conflictology.games.capitol.game import CapitolGame
from conflictology.games.capitol.state import CapitolState
from games.capitol.old_flow import HERE, outcome

GAME = CapitolGame()
DATA = Path(__file__).parent / "data"
PHASE = {"t": "turn", "c": "challenge", "b": "block", "k": "block_challenge", "l": "lose",
         "r": "return", "e": "exchange", "s": "show", "i": "investigate"}


def _replay(game: dict[str, Any]) -> tuple[CapitolState, dict[str, int]]:
    """The game's two-prompt choices played through the one prompt: a target's pass in the challenge
    window becomes its answer in the block window that followed (its block, or a pass), and that
    block window's answer is not asked again unless the rules ask it."""
    state = GAME.new_game(game["players"], seed=game["seed"], options=game["options"])
    table = state.action_table
    moves = game["moves"]
    seen = {"sealed": 0, "reasked": 0, "skipped": 0}
    for i, (seat, index, ph) in enumerate(moves):
        phase = PHASE[ph]
        action = dict(table.actions[index])
        if phase == "block" and not (str(state.phase) == "block" and seat in state.waiting_for()):
            seen["skipped"] += 1  # answered already, in the challenge window
            continue
        if phase == "challenge" and action["type"] == "pass":
            blocks = [a for a in state.legal_actions(seat) if a["type"] == "block"]
            if blocks:
                later = next(
                    (m for m in moves[i + 1:] if m[2] in "bt" and (m[2] == "t" or m[0] == seat)), None
                )
                if later is not None and later[2] == "b":
                    action = dict(table.actions[later[1]])
                    seen["sealed"] += action["type"] == "block"
        if phase == "block" and state.challenger >= 0 and state.challenger != seat:
            seen["reasked"] += 1
        assert str(state.phase) == phase, (game["seed"], i, state.phase, phase)
        state.apply(seat, action)
    assert state.is_over()
    return state, seen


def test_the_two_prompt_games_end_the_same_through_one_prompt() -> None:
    games = json.loads(HERE.read_text())
    total = {"sealed": 0, "reasked": 0, "skipped": 0}
    for game in games:
        state, seen = _replay(game)
        assert outcome(state) == game["outcome"], (game["seed"], game["players"], game["options"])
        assert len(state.log) == game["log"]
        for k, v in seen.items():
            total[k] += v
    # Every path was taken: sealed blocks, answers not asked twice, a pass asked again.
    assert all(v > 5 for v in total.values()), total


# ---------------------------------------------------------------- the one prompt, on stacked decks


def _hacker(hands: list[list[str]] | None = None, **options: Any) -> CapitolState:
    s = table(hands or [[H, M], [B, J], [R, P]], **options)
    s.money[0] += 1
    s.treasury -= 1
    s._lseat = -1
    act(s, 0, "hacker", target=1)
    return s


def test_a_sealed_block_takes_effect_when_the_window_closes_without_asking_again() -> None:
    s = _hacker()
    act(s, 1, "block", card=J)
    assert s.phase == "challenge" and s.waiting_for() == [2]
    assert s.view(1)["pending"]["block_answer"] == J
    assert "block" not in [e[0] for e in s.log], "sealed: not logged while the window is open"
    act(s, 2, "pass")
    assert s.log[-1] == ("block", 1, J, 0)
    assert s.phase == "block_challenge" and s.waiting_for() == [0]
    act(s, 0, "pass")
    act(s, 1, "return", card=B)
    assert s.phase == "turn" and s.revealed[1] == []


def test_a_target_that_lets_it_pass_is_not_asked_again() -> None:
    s = _hacker()
    act(s, 1, "pass")
    act(s, 2, "pass")
    # No block window: the hack resolves at once (the target chooses the card it loses).
    assert s.phase == "lose" and s.waiting_for() == [1]
    act(s, 1, "lose", card=B)
    assert s.phase == "turn" and "block" not in [e[0] for e in s.log]


def test_the_timeout_of_the_one_prompt_lets_it_pass() -> None:
    s = _hacker()
    assert s.timeout_action(1) == {"type": "pass"}
    assert s.decision_kind(1) == "response"


def test_after_someone_elses_failed_challenge_a_target_that_passed_is_asked_again() -> None:
    s = _hacker([[H, M], [B, J], [R, P]])
    act(s, 1, "pass")
    act(s, 2, "challenge")  # seat 0 holds the Hacker
    act(s, 2, "lose", card=R)
    assert s.phase == "block" and s.waiting_for() == [1], "a new situation: its last chance to block"
    assert "block_answer" not in s.view(1)["pending"]
    act(s, 1, "block", card=J)
    assert s.phase == "block_challenge"


def test_after_someone_elses_failed_challenge_a_sealed_block_takes_effect() -> None:
    s = _hacker()
    act(s, 1, "block", card=J)
    act(s, 2, "challenge")
    assert s.phase == "lose" and "block" not in [e[0] for e in s.log]
    assert s.view(1)["pending"]["block_answer"] == J and "block_answer" not in s.view(2)["pending"]
    act(s, 2, "lose", card=R)
    assert [e[0] for e in s.log[-3:]] == ["lose", "replace", "block"]
    assert s.log[-1] == ("block", 1, J, 0)
    assert s.phase == "block_challenge" and s.waiting_for() == [0]


def test_a_caught_bluff_makes_the_sealed_block_moot_and_never_shown() -> None:
    s = _hacker([[B, M], [R, J], [H, P]])  # seat 0 bluffs the Hacker
    act(s, 1, "block", card=J)
    act(s, 2, "challenge")
    act(s, 0, "lose", card=B)
    assert s.phase == "turn" and s.waiting_for() == [1]
    assert "block" not in [e[0] for e in s.log]
    assert "block_answer" not in json.dumps(s.view(1)) and s.block_answer == ""


def test_a_target_that_has_not_answered_is_asked_in_the_block_window_after_a_failed_challenge() -> None:
    s = _hacker()
    act(s, 2, "challenge")
    act(s, 2, "lose", card=R)
    assert s.phase == "block" and s.waiting_for() == [1]


def test_a_mafia_target_may_block_in_its_one_prompt_only_with_the_steal_blockers_option() -> None:
    s = table([[M, B], [R, J], [H, P]])
    act(s, 0, "mafia", target=1)
    assert s.legal_actions(1) == [{"type": "pass"}, {"type": "challenge"}]
    s = table([[M, B], [R, J], [H, P]], steal_blockers=["reporter"])
    act(s, 0, "mafia", target=1)
    assert s.legal_actions(1) == [{"type": "pass"}, {"type": "challenge"}, {"type": "block", "card": R}]
    act(s, 2, "pass")
    act(s, 1, "block", card=R)
    assert s.log[-1] == ("block", 1, R, 0) and s.phase == "block_challenge"


def test_a_police_investigation_offers_its_target_no_block() -> None:
    s = table([[P, B], [R, J], [H, M]], steal_blockers=["mafia", "police", "reporter"])
    act(s, 0, "police_investigate", target=1)
    assert s.legal_actions(1) == [{"type": "pass"}, {"type": "challenge"}]


def test_the_one_prompts_sealed_block_leaks_to_no_other_seat() -> None:
    """Every view but the target's, spectators too, is the same whether the target sealed a block, let
    it pass, or (a save from before ruling 6a) passed with no answer: the others know it answered."""
    for hands, options in (
        ([[H, M], [B, J], [R, P], [B, P]], {}),
        ([[M, H], [B, J], [R, P], [B, P]], {"steal_blockers": ["mafia", "reporter"]}),
    ):
        states = {}
        for answer in ("block", "pass", "unsaid"):
            s = table(hands, **options)
            s.money[0] += 1
            s.treasury -= 1
            s._lseat = -1
            kind = "hacker" if hands[0][0] == H else "mafia"
            act(s, 0, kind, target=1)
            if answer == "block":
                act(s, 1, "block", card=s.legal_actions(1)[-1]["card"])
            else:
                act(s, 1, "pass")
                if answer == "unsaid":
                    s.block_answer = ""
            states[answer] = s
        for seat in (None, 0, 2, 3):
            views = {a: json.dumps(s.view(seat), sort_keys=True) for a, s in states.items()}
            assert len(set(views.values())) == 1, seat
        assert states["block"].view(1)["pending"]["block_answer"] != "pass"
        assert states["pass"].view(1)["pending"]["block_answer"] == "pass"
        # A bystander's challenge fails: the losses are the same until the sealed answer is used.
        for s in states.values():
            act(s, 2, "challenge")
        for seat in (None, 0, 2, 3):
            views = {a: json.dumps(s.view(seat), sort_keys=True) for a, s in states.items()}
            assert len(set(views.values())) == 1, seat


def test_a_seat_that_cannot_see_the_sealed_answer_believes_the_target_may_still_block() -> None:
    s = _hacker()
    act(s, 1, "block", card=J)
    rng = Rng(4)
    world = GAME.determinize(s.view(2), rng)
    assert world.block_answer == ""
    own = GAME.determinize(s.view(1), rng)
    assert own.block_answer == J
    act(own, 2, "pass")
    assert own.log[-1] == ("block", 1, J, 0)


def test_a_sealed_answer_survives_a_save_and_a_bad_one_is_refused() -> None:
    s = _hacker()
    act(s, 1, "block", card=J)
    text = s.to_json()
    copy = GAME.from_json(text)
    assert copy.to_json() == text and copy.block_answer == J
    for bad in ("banker", "nothing", 3):
        doc = json.loads(text)
        doc["block_answer"] = bad
        with pytest.raises(ValueError, match="block_answer"):
            GAME.from_json(json.dumps(doc))
    doc = json.loads(text)
    doc["phase"] = "block"
    with pytest.raises(ValueError):
        GAME.from_json(json.dumps(doc))


def test_an_old_save_mid_challenge_window_loads_and_keeps_the_block_window_it_promised() -> None:
    """``data/old_save_target_passed.json``: saved at 7d0c876 (the two-prompt flow) after the target of
    a Hacker passed the challenge window, a bystander still to answer. It has no ``block_answer``."""
    text = (DATA / "old_save_target_passed.json").read_text()
    assert "block_answer" not in text
    s = GAME.from_json(text)
    assert s.phase == "challenge" and s.waiting_for() == [2] and s.block_answer == ""
    assert not s.one_prompt and s.view(2)["two_prompts"] is True
    act(s, 2, "pass")
    assert s.phase == "block" and s.waiting_for() == [1], "the target passed expecting a block window"
    # It plays on to the end with the two prompts it started with (a world of it too).
    rng = Rng(9)
    while not s.is_over():
        seat = s.waiting_for()[0]
        if s.phase == "challenge":
            assert not any(a["type"] == "block" for a in s.legal_actions(seat))
            world = GAME.determinize(s.view(seat), rng)
            assert not world.one_prompt and world.legal_actions(seat) == s.legal_actions(seat)
        s.apply(seat, rng.choice(s.legal_actions(seat)))
        assert GAME.from_json(s.to_json()).to_json() == s.to_json()
    assert s.winners()


def test_a_new_game_plays_the_one_prompt_and_says_nothing_of_it_in_its_views() -> None:
    s = GAME.new_game(3, seed=1)
    assert s.one_prompt and "two_prompts" not in s.view(0) and "two_prompts" not in s.view(None)
    assert json.loads(s.to_json())["one_prompt"] is True


def _old_record(game: dict[str, Any]) -> dict[str, Any]:
    """An archived record of a game played with the two prompts: its initial state as saved then (no
    ``one_prompt``, no ``block_answer``) and its decisions."""
    state = GAME.new_game(game["players"], seed=game["seed"], options=game["options"])
    doc = json.loads(state.to_json())
    del doc["one_prompt"], doc["block_answer"]
    table = state.action_table
    actions = [
        {"seq": i, "seat": seat, "action": dict(table.actions[index]), "by": "player"}
        for i, (seat, index, _) in enumerate(game["moves"])
    ]
    return {"id": "g", "room": "r", "game": "capitol", "players": [{"name": f"P{i}"} for i in range(state.n)],
            "initial": json.dumps(doc), "actions": actions}


def test_an_archived_game_of_the_two_prompts_replays_exactly_as_it_was_played() -> None:
    from conflictology import replay

    for game in json.loads(HERE.read_text())[::4]:
        record = _old_record(game)
        built = replay.build(record)
        assert len(built["steps"]) == len(game["moves"]) + 1
        state = GAME.from_json(record["initial"])
        for entry in record["actions"]:
            state.apply(entry["seat"], entry["action"])
        assert outcome(state) == game["outcome"]
