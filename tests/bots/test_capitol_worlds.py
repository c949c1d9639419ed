"""The Capitol search's worlds: weighted by the claims standing, with the claimants' recorded bluff
rates scaled by ``bluff_scale`` (docs/bots.md, "Worlds as true as the claims")."""

from __future__ import annotations

from typing import Any

import pytest

from conflictology import bots, games
from conflictology.engine import Rng

GAME = games.get("capitol")


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
