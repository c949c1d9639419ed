"""benchmarks/hard_budget.py: one JSON line a game with the seats rotated, in the game asked for, and
a summary that counts a name held by several seats once, its wins together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks.hard_budget import play, summary


def test_each_game_is_one_line_in_the_game_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    play("conspiranoicos", 2, 2, 7, ["random", "heuristic"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["g"] for row in rows] == [0, 1]
    for row in rows:
        assert row["win"] in ("random", "heuristic", None)
        assert set(row["dec"]) == {"random", "heuristic"}


def test_the_lone_seat_and_the_three_others_are_summed_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    play("capitol", 4, 4, 7, ["heuristic", "random", "random", "random"])
    path = tmp_path / "four.jsonl"
    path.write_text(capsys.readouterr().out)
    summary(str(path))
    head, *per_bot = capsys.readouterr().out.splitlines()
    drawn = int(head.split(", ")[1].split()[0])
    wins = {line.split(": ")[0].strip(): int(line.split(": ")[1].split()[0]) for line in per_bot}
    assert set(wins) == {"heuristic", "random"}
    assert sum(wins.values()) + drawn == 4
