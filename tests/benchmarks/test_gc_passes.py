"""benchmarks/gc_passes.py runs the hub under each ``serve --gc`` policy and times every pass of the
collector (it once broke unseen when the bench it drives took a new argument)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest


@pytest.mark.parametrize("policy", ["paced", "python", "off"])
def test_each_policy_runs_and_counts_its_passes(policy: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.gc_passes", "--rooms", "4", "--moves", "300", "--gc", policy],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    passes = re.search(rf"--gc {policy}: (\d+) passes", done.stdout)
    assert passes is not None, done.stdout
    if policy == "paced":
        assert int(passes.group(1)) >= 1  # it starts with a full pass
    if policy == "off":
        assert int(passes.group(1)) == 0
    assert re.search(r"\d+ moves: \d+ µs of CPU per move", done.stdout)
