"""``scripts/distill_conspiranoicos.py``: what it records of the searches, and how it scores rules."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

from bot_helpers import load_script


def _script() -> Any:
    return load_script("distill_conspiranoicos")


def test_a_recorded_position_and_the_rules_read_from_it(tmp_path: Path) -> None:
    """Each line: the heuristic's choice and each search's pick among the legal actions, with its root
    statistics; the plain search's pick is its most visited action, which the fit's rules read
    back; the prior rule keeps the heuristic's choice under an unreachable ``z`` and takes the most
    visited under a ``z`` of minus infinity."""
    script = _script()
    out = io.StringIO()
    script.collect(1, 5000, 6, "hard:iterations=12:seconds=99:quick=0", "hard:iterations=24:seconds=99", out)
    lines = [json.loads(t) for t in out.getvalue().splitlines()]
    assert lines
    for line in lines:
        legal = line["legal"]
        assert line["type"] in ("play", "send", "keep")
        assert line["heur"] in legal
        for key in [f"quick{sd}" for sd in script.QUICK_SEEDS] + [f"full{sd}" for sd in script.FULL_SEEDS]:
            stats = script._stats(line[key])
            assert set(stats) <= set(legal)
            assert line[key]["pick"] in legal
            if key.startswith("quick"):
                assert line[key]["pick"] == script.most_visited(stats, legal)
                assert script.prior_rule(stats, legal, line["heur"], math.inf) == line["heur"]
                if line["heur"] in stats:
                    assert script.prior_rule(stats, legal, line["heur"], -math.inf) == line[key]["pick"]
        ref, means = script.reference(line)
        assert ref in legal and set(means) <= set(legal)
    report = io.StringIO()
    path = tmp_path / "positions.jsonl"
    path.write_text(out.getvalue())
    script.fit([str(path)], report)
    assert "every decision" in report.getvalue() and "most visited" in report.getvalue()
