"""The rules corpus: language-neutral scenarios (``corpus/*.jsonl``, docs/corpus.md) and their
reference runner, ``conflictology corpus run [PATH…]``."""

from conflictology.corpus.runner import CORPUS, Outcome, Scenario, ScenarioError, load, run, run_all

__all__ = ["CORPUS", "Outcome", "Scenario", "ScenarioError", "load", "run", "run_all"]
