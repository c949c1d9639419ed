"""What a Capitol position is worth to each player, for the search's cut-off rollouts.

A rollout played to the end of the game costs about sixty decisions; the search compares its
candidate moves over hundreds of them. Cut after a few turns and scored by how likely each player is
to win from there, a rollout costs a fraction of that and still sees what the candidate changed (a
card lost, money taken, a bluff caught). The chances come from a conditional-logit model: each living
player's score is a weighted sum of plain facts about them in the sampled world (two cards or one,
money, the roles in hand, how soon they act) and their chance of winning is their share of the
exponentials of the scores. The weights were fitted by maximum likelihood to positions of rollout
play (the search's own model of every seat) and who won each game, face to face apart from three or
more players, by ``scripts/fit_capitol_value.py``, which prints how well each fits held-out games.
"""

from __future__ import annotations

import math
from typing import Final

from conflictology.games.capitol.data import ROLES
from conflictology.games.capitol.state import CapitolState

#: the facts scored for each player, in the order of the weights
FEATURES: Final = (
    "two_cards", "money", "money_3", "money_7", "acts_now", "acts_next", *ROLES,
)

#: fitted weights (``scripts/fit_capitol_value.py``): face to face, and three or more players alive
WEIGHTS: Final[dict[str, tuple[float, ...]]] = {
    "two": (1.39, 0.185, 0.062, 0.563, 0.292, -0.025, 0.48, 0.822, -0.213, 0.427, -0.052, -0.074),
    "more": (0.556, -0.016, 0.013, 0.36, 0.017, 0.013, 0.093, 0.356, -0.199, 0.386, -0.004, -0.076),
}


def features(state: CapitolState, seat: int) -> list[float]:
    """The facts :data:`FEATURES` names for ``seat`` in a (sampled, fully known) Capitol state."""
    hand: list[str] = state.hidden[seat]
    money: int = state.money[seat]
    order = (seat - state.actor) % state.n
    return [
        float(len(hand) >= 2),
        float(min(money, 12)),
        float(money >= 3),
        float(money >= 7),
        float(order == 0),
        float(order == 1),
        *(float(hand.count(role)) for role in ROLES),
    ]


def win_shares(state: CapitolState) -> list[float]:
    """Each seat's chance of winning from ``state`` (0 for the eliminated; they add up to 1)."""
    alive = [i for i in range(state.n) if state.alive[i]]
    weights = WEIGHTS["two" if len(alive) == 2 else "more"]
    scores = {i: sum(w * f for w, f in zip(weights, features(state, i), strict=True)) for i in alive}
    top = max(scores.values(), default=0.0)
    exp = {i: math.exp(s - top) for i, s in scores.items()}
    total = sum(exp.values()) or 1.0
    return [exp.get(i, 0.0) / total for i in range(state.n)]
