"""The RL example runs and prints win rates for both match-ups of every game."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_example_prints_win_rates() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "rl_play.py"), "--games", "4", "--seed", "3"],
        capture_output=True, text=True, timeout=300, check=True,
    ).stdout
    assert out.count("random everywhere") == 2
    assert out.count("against random opponents") == 2
    assert "Capitol" in out and "Conspiranoicos" in out
