"""``Rng.shuffle`` draws all its numbers at once (lanes of one big integer); it must shuffle exactly as
Fisher-Yates over ``randrange`` does, draw by draw, and leave the generator where those draws do: every
saved game and golden log depends on it."""

from __future__ import annotations

import pytest

from conflictology.engine import Rng


def reference_shuffle(rng: Rng, items: list[int]) -> None:
    for i in range(len(items) - 1, 0, -1):
        j = rng.randrange(i + 1)
        items[i], items[j] = items[j], items[i]


SEEDS = [0, 1, 7, 12345, 2**32 - 1, 2**63, 2**64 - 1, 0x9E3779B97F4A7C15, 987654321987654321]


@pytest.mark.parametrize("size", [0, 1, 2, 3, 7, 18, 31, 64, 200])
def test_shuffle_is_fisher_yates_over_randrange(size: int) -> None:
    for seed in SEEDS:
        ours, theirs = Rng(seed), Rng(seed)
        a, b = list(range(size)), list(range(size))
        for _ in range(3):  # one after another: the state each leaves is where the next starts
            ours.shuffle(a)
            reference_shuffle(theirs, b)
            assert a == b, (size, seed)
            assert ours.state == theirs.state, (size, seed)
            assert ours.next64() == theirs.next64()


def test_a_generator_with_its_own_randrange_is_asked_for_each_draw() -> None:
    # openspiel's explicit chance scripts randrange (chance.ScriptedRng): shuffle must go through it.
    asked: list[int] = []

    class Scripted(Rng):
        def randrange(self, n: int) -> int:
            asked.append(n)
            return 0

    items = [0, 1, 2, 3]
    Scripted(5).shuffle(items)
    assert asked == [4, 3, 2]
    assert items == [1, 2, 3, 0]
