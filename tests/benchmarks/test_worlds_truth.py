"""benchmarks/worlds_truth.py: every chance to challenge counted once in each of its rows, the truth
and the worlds' share bounded by the chances, and the same seed the same figures."""

from __future__ import annotations

from benchmarks.worlds_truth import measure


def test_each_chance_is_counted_once_by_role_and_once_by_cards() -> None:
    counts = measure(players=3, n_games=4, seed=7, worlds=10)
    total = counts[("all", "all")]
    assert total[0] > 0
    by_role = [c for (window, what), c in counts.items() if window != "all" and "v" not in what]
    by_cards = [c for (window, what), c in counts.items() if window != "all" and "v" in what]
    for rows in (by_role, by_cards):
        assert sum(c[0] for c in rows) == total[0]
        assert sum(c[1] for c in rows) == total[1]
    for chances, held, shares in counts.values():
        assert 0 <= held <= chances and 0.0 <= shares <= chances
    assert measure(players=3, n_games=4, seed=7, worlds=10) == counts
