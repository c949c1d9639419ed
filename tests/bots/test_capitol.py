"""The Capitol search (bots/capitol.py): its worlds, weighted by the claims standing with the
claimants' recorded bluff rates scaled by ``bluff_scale`` (docs/bots.md, "Worlds as true as the
claims"); and how it reads a sampled world's fields, through ``CapitolState``: a state it cannot read
is refused loudly, never played some other way (it used to fall back to random playouts)."""

from __future__ import annotations

from typing import Any

import pytest

from capitol_helpers import B, J, M, P, R, table
from conflictology import bots, games
from conflictology.bots.capitol_knowledge import Knowledge, LogMemo
from conflictology.bots.capitol_rules import ClaimTrace, RulePlayer
from conflictology.bots.capitol_search import CapitolSearch, capitol_state
from conflictology.bots.capitol_value import win_shares
from conflictology.engine import Rng
from conflictology.games.capitol import GAME, CapitolState
from conflictology.games.capitol.fields import SLOTS


def test_a_playout_reads_the_world_and_decides_as_before() -> None:
    state = GAME.new_game(3, seed=4)
    seat = state.waiting_for()[0]
    action = CapitolSearch().playout_action(state, seat, Rng(1))
    assert action in state.legal_actions(seat)


def without(state: CapitolState, field: str) -> CapitolState:
    """``state`` as a renamed or missing field would leave it: reading ``field`` raises. (A compiled
    state's fields cannot be deleted: conflictology.native.)"""

    def gone(_: object) -> Any:
        raise AttributeError(f"{field} (renamed)")

    missing = type("Missing", (CapitolState,), {"__slots__": (), field: property(gone)})
    copy = missing.__new__(missing)
    for name in SLOTS:
        if name != field:
            setattr(copy, name, getattr(state, name))
    return copy  # type: ignore[no-any-return]


def test_a_world_missing_a_field_raises_instead_of_playing_at_random() -> None:
    state = GAME.new_game(3, seed=4)
    seat = state.waiting_for()[0]
    state = without(state, "hidden")
    with pytest.raises(AttributeError):
        CapitolSearch().playout_action(state, seat, Rng(1))


def test_another_games_state_is_refused_by_every_reader() -> None:
    other = games.get("conspiranoicos").new_game(2, seed=1)
    seat = other.waiting_for()[0]
    with pytest.raises(TypeError, match="CapitolState"):
        capitol_state(other)
    with pytest.raises(TypeError, match="CapitolState"):
        CapitolSearch().playout_action(other, seat, Rng(1))
    with pytest.raises(TypeError, match="CapitolState"):
        CapitolSearch().evaluate(other)


def test_the_readers_of_a_world_need_its_fields() -> None:
    state = GAME.new_game(4, seed=2)
    assert sum(win_shares(state)) == pytest.approx(1.0)
    seat = state.waiting_for()[0]
    legal = state.legal_actions(seat)
    state = without(state, "money")
    with pytest.raises(AttributeError):
        win_shares(state)
    with pytest.raises(AttributeError):
        Knowledge.of_state(state, 0, LogMemo())
    with pytest.raises(AttributeError):
        RulePlayer(Rng(1), ClaimTrace(4)).act(state, seat, legal)


# ---------------------------------------------------------------- the worlds


def _claim_pending() -> Any:
    """A two-player state where seat 1 has claimed a role seat 0 may challenge."""
    for seed in range(200):
        state: Any = GAME.new_game(2, seed=seed)
        players = [bots.make("heuristic-bluffer", GAME, s, seed=seed + s) for s in range(2)]
        while not state.is_over():
            if state.phase == "challenge" and state.actor == 1 and 0 in state.waiting_for():
                return state
            seat = state.waiting_for()[0]
            state.apply(seat, players[seat].act(state.view(seat), state.legal_actions(seat)))
    raise AssertionError("no claim of seat 1 open to seat 0 in 200 games")


def _held_share(state: Any, spec: str, worlds: int = 600) -> float:
    bot = bots.make(spec, GAME, 0, seed=5)
    draw = bot.policy.sampler(bot, state.view(0))  # type: ignore[attr-defined]
    rng = Rng(9)
    return sum(state.claim in draw(rng).hidden[1] for _ in range(worlds)) / worlds


def test_worlds_give_the_claimant_its_role_more_often_the_less_its_record_is_trusted() -> None:
    state = _claim_pending()
    view = state.view(0)
    rng = Rng(9)
    uniform = sum(state.claim in GAME.determinize(view, rng).hidden[1] for _ in range(600)) / 600
    full = _held_share(state, "hard:bluff_scale=1")
    shipped = _held_share(state, "hard")
    none = _held_share(state, "hard:bluff_scale=0")
    assert uniform < full < shipped < none
    # no bluffs at all: every world drawn within the tries holds the claimed role
    assert none > 0.95


@pytest.mark.parametrize("spec", ["hard:bluff_scale=-0.5", "hard:bluff_scale=nan", "hard:bluff_scale=lots",
                                  "pimc:rules=1.5", "pimc:rules=-0.1"])
def test_a_scale_or_share_out_of_range_is_refused_when_the_bot_is_made(spec: str) -> None:
    key = spec.split(":")[1].split("=")[0]
    with pytest.raises(ValueError, match=f"{key} must be a number"):
        bots.make(spec, GAME, 0, seed=1)


def test_the_simulate_command_refuses_a_bad_scale_before_any_game() -> None:
    from typer.testing import CliRunner

    from conflictology.cli import app

    result = CliRunner().invoke(
        app, ["simulate", "capitol", "--games", "1", "--bots", "hard:bluff_scale=-1,random"]
    )
    assert result.exit_code == 2
    assert "bluff_scale must be a number 0 or more" in result.output


@pytest.mark.parametrize("blockers", [[], ["mafia"], ["mafia", "reporter"]])
def test_the_heuristic_knows_who_may_block_a_steal_at_this_table(blockers: list[str]) -> None:
    """Ruling 6's steal_blockers option is in the view's options (the heuristic once looked for it in
    the pending decision, found nothing, and aimed its Mafia as if no steal could ever be blocked)."""
    state = GAME.new_game(3, seed=4, options={"steal_blockers": blockers})
    seat = state.waiting_for()[0]
    from_view = Knowledge(state.view(seat))
    from_state = Knowledge.of_state(state, seat, LogMemo())
    assert from_view.steal_blockers == from_state.steal_blockers == tuple(blockers)


def test_the_bystander_threshold_is_a_param_of_the_heuristic() -> None:
    # Seat 0 claims a Banker; seat 1, holding two of the three, is a bystander (the claim is aimed at
    # nobody, seat 2 may call it too) who doubts it but cannot count it as a certain bluff.
    s = table([[M, R], [B, B], [J, P]])
    s.apply(0, {"type": "banker"})
    assert s.waiting_for()[0] == 1
    view, legal = s.view(1), s.legal_actions(1)
    answer = {
        x: bots.make(f"heuristic:bystander={x}", GAME, 1, seed=3).act(view, legal)["type"] for x in (-5, 5)
    }
    assert answer == {-5: "challenge", 5: "pass"}
    default = bots.make("heuristic", GAME, 1, seed=3).act(view, legal)
    assert default == bots.make("heuristic:bystander=0.4", GAME, 1, seed=3).act(view, legal)
