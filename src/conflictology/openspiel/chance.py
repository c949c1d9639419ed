"""Explicit chance over the engine's own generator: every random outcome of a move, with its probability.

The engine shuffles and draws inside its rules, from the seeded generator a state carries
(``state.rng``, an ``engine.Rng``), so an OpenSpiel game over it is SAMPLED_STOCHASTIC. Exact
algorithms (CFR, a best response) need every outcome of every random event instead. This module finds
them without a second copy of the rules: a move is applied to copies of the state whose generator is
*scripted* (:class:`ScriptedRng`): it answers each ``randrange(n)`` from a script and notes the ``n``
it was asked. Starting from the empty script, every call the rules make is branched over all its
``n`` answers, each as likely as the engine's generator makes it (uniform), so the scripts enumerate
the move's outcomes exactly; scripts whose states come out the same are one outcome, with their
probabilities summed. Each state that results gets a plain generator with a fixed seed: every later
random event is enumerated the same way, so the seed is never read for an outcome.

It applies to the games whose rules draw only through ``randrange`` (and ``shuffle``, which calls
it): Capitol. A rule that asked for ``random()`` or raw bits would be refused (``next64`` raises).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from conflictology.engine import GameState, Rng

# The generator every state gets after a random event: a constant, since no outcome depends on it.
AFTER = 0
# A bound on the scripts one move may need (a shuffle of k cards takes k!): beyond it the game is too
# large for explicit chance, and saying so beats running out of memory.
MAX_SCRIPTS = 50_000


class ScriptedRng(Rng):
    """A generator whose ``randrange`` answers follow ``script`` (0 past its end, noted in ``open``)."""

    __slots__ = ("asked", "open", "script")

    def __init__(self, script: tuple[int, ...]) -> None:
        super().__init__(AFTER)
        self.script = script
        self.asked: list[int] = []  # the n of every call, in order
        self.open = -1  # the n of the first call past the script (-1: none)

    def randrange(self, n: int) -> int:
        if n <= 0:
            raise ValueError("randrange needs n > 0")
        i = len(self.asked)
        self.asked.append(n)
        if i < len(self.script):
            return self.script[i]
        if self.open < 0:
            self.open = n
        return 0

    def next64(self) -> int:
        raise RuntimeError("explicit chance covers randrange and shuffle only")


def with_rng(state: GameState, rng: Rng) -> GameState:
    """A copy of ``state`` drawing from ``rng``."""
    out = state.clone()
    out.rng = rng  # type: ignore[attr-defined]  # the games that carry their generator as ``rng``
    return out


Outcome = tuple[float, tuple[int, ...]]  # a probability and a script that makes the outcome


def outcomes(state: GameState, seat: int, index: int) -> list[Outcome] | None:
    """The distinct outcomes of ``seat`` playing action ``index`` in ``state`` (which is not
    changed), each as its probability and one script that makes it; ``None`` if the move draws
    nothing at all."""
    first = with_rng(state, ScriptedRng(()))
    first.apply_index(seat, index)
    if not first.rng.asked:  # type: ignore[attr-defined]
        return None
    probability: dict[str, Fraction] = {}  # by the resulting state's save
    scripts: dict[str, tuple[int, ...]] = {}
    todo: list[tuple[tuple[int, ...], Fraction]] = [((), Fraction(1))]
    runs = 0
    while todo:
        script, p = todo.pop()
        runs += 1
        if runs > MAX_SCRIPTS:
            raise ValueError(f"a move with over {MAX_SCRIPTS} random outcomes: too large for explicit chance")
        copy = with_rng(state, ScriptedRng(script))
        copy.apply_index(seat, index)
        rng: ScriptedRng = copy.rng  # type: ignore[attr-defined]
        if rng.open >= 0:
            todo += [((*script, k), p / rng.open) for k in reversed(range(rng.open))]
            continue
        copy.rng = Rng(AFTER)  # type: ignore[attr-defined]
        key = copy.to_json()
        probability[key] = probability.get(key, Fraction(0)) + p
        scripts.setdefault(key, script)
    return [(float(probability[key]), scripts[key]) for key in scripts]


def apply_scripted(state: GameState, seat: int, index: int, script: tuple[int, ...]) -> None:
    """Apply to ``state`` itself the outcome ``script`` makes; its generator is then the constant one."""
    state.rng = ScriptedRng(script)  # type: ignore[attr-defined]
    state.apply_index(seat, index)
    state.rng = Rng(AFTER)  # type: ignore[attr-defined]


Deal = tuple[float, tuple[str, ...], int]  # a probability, the deck in dealing order, the first seat


def deals(deck: tuple[str, ...], first_player: int | None, players: int) -> list[Deal]:
    """Every distinct deal of ``deck`` (each distinct order of its cards, top first: a shuffle makes
    them all equally likely, each being as many permutations) and first seat (the option's, or each
    seat: ruling 3 draws it), with its probability."""
    if math.factorial(len(deck)) > MAX_SCRIPTS:
        raise ValueError(f"a deck of {len(deck)} cards has too many orders for explicit chance")
    orders = sorted(set(itertools.permutations(deck)))
    firsts = [first_player] if first_player is not None else list(range(players))
    p = 1 / (len(orders) * len(firsts))
    return [(p, order, first) for order in orders for first in firsts]
