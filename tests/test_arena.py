"""The arena (round robin, OpenSkill ratings) and the simulate command's contract output."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conflictology.arena import run_arena, tables, wilson
from conflictology.cli import app

runner = CliRunner()


def test_round_robin_line_ups() -> None:
    assert tables(["a", "b", "c"], 2) == [["a", "b"], ["a", "c"], ["b", "c"]]
    assert tables(["a", "b"], 4) == [["a", "b", "a", "b"]]
    assert len(tables(["a", "b", "c", "d", "e"], 4)) == 5
    with pytest.raises(ValueError):
        tables(["a", "a"], 2)


def test_wilson_interval() -> None:
    lo, hi = wilson(80, 100)
    assert 0.70 < lo < 0.80 < hi < 0.87
    assert wilson(0, 0) == (0.0, 1.0)


def test_arena_rates_the_heuristic_above_random() -> None:
    seen: list[tuple[int, int]] = []
    result = run_arena(
        "capitol", ["random", "heuristic", "easy"], 20, seed=4, on_game=lambda d, t: seen.append((d, t))
    )
    assert result.games == 60 and seen[-1] == (60, 60)
    by_bot = {s.bot: s for s in result.standings}
    assert by_bot["heuristic"].games == 40
    assert sum(s.wins for s in result.standings) == pytest.approx(60)
    assert result.standings[-1].bot == "random"
    assert by_bot["heuristic"].mu > by_bot["random"].mu
    assert result.pairwise["heuristic"]["random"] + result.pairwise["random"]["heuristic"] == 20
    # The same seed plays the same games.
    again = run_arena("capitol", ["random", "heuristic", "easy"], 20, seed=4)
    assert [s.to_json() | {"seconds_per_decision": 0} for s in again.standings] == [
        s.to_json() | {"seconds_per_decision": 0} for s in result.standings
    ]


def test_arena_command_table_and_json() -> None:
    args = ["arena", "capitol", "--bots", "random,heuristic", "--games", "6", "--seed", "1"]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    assert "heuristic" in out.output and "rating" in out.output
    out = runner.invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["games"] == 6 and {s["bot"] for s in data["standings"]} == {"random", "heuristic"}
    bad = runner.invoke(app, ["arena", "capitol", "--bots", "random,nonsense", "--games", "2"])
    assert bad.exit_code == 2


def test_simulate_json_is_exactly_the_contract() -> None:
    out = runner.invoke(
        app,
        ["simulate", "capitol", "--players", "3", "--games", "9", "--seed", "2",
         "--bots", "heuristic,random,heuristic-sceptic", "--json"],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data) == {"games", "wins", "draws", "games_per_second"}
    assert data["games"] == 9
    assert set(data["wins"]) == {"heuristic", "random", "heuristic-sceptic"}
    assert sum(data["wins"].values()) + data["draws"] == 9
    table = runner.invoke(
        app, ["simulate", "conspiranoicos", "--games", "2", "--seed", "2", "--bots", "heuristic,random"]
    )
    assert table.exit_code == 0 and "win share" in table.output
