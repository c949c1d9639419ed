"""Fit the weights of Capitol's position value (``conflictology.bots.capitol_value``).

The search cuts its rollouts a few turns after the move it is weighing and scores the position by
each player's chance of winning from there. This script plays games the way the rollouts play them
(every seat by the search's own model of a player: half the other seats the rule player, the rest the
heuristic), records every player's facts at the start of every turn and who won in the end, and fits
a conditional-logit model (a player's chance of winning is its share of ``exp(weights · facts)``
among the living) by maximum likelihood, face to face apart from three or more players alive. It
prints how well the fit predicts the winners of held-out games, against a uniform guess and against
the material score the search used before, and with ``--write`` puts the weights in the module.

    .venv/bin/python scripts/fit_capitol_value.py                  # 30,000 games, print the fit
    .venv/bin/python scripts/fit_capitol_value.py --write          # and store the weights

Numpy only (the ``test`` extra has it); a minute or two on one core.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from conflictology import bots
from conflictology.bots.capitol_search import CapitolSearch
from conflictology.bots.capitol_value import FEATURES, WEIGHTS, features
from conflictology.bots.ismcts import ISMCTSBot
from conflictology.engine import Rng
from conflictology.games.capitol import GAME
from conflictology.games.capitol.data import TURN

MODULE = Path(__file__).resolve().parents[1] / "src/conflictology/bots/capitol_value.py"
#: the table sizes played, in turn (four players twice: the size most rooms have)
SIZES = (2, 3, 4, 4, 5, 6)


def play(n_games: int, seed: int) -> dict[str, Any]:
    """Positions of rollout play: one row of facts per living player at each turn's start, grouped by
    position, with whether that player went on to win and how many were alive."""
    game = GAME
    rng = Rng(seed)
    rows: list[list[float]] = []
    won: list[bool] = []
    group: list[int] = []
    alive_n: list[int] = []
    positions = 0
    for g in range(n_games):
        n = SIZES[g % len(SIZES)]
        state = game.new_game(n, seed=rng.next64())
        # A searcher's rollout model, asked for every seat of the real game.
        searcher = bots.make("pimc", game, 0, seed=rng.next64())
        assert isinstance(searcher, ISMCTSBot) and isinstance(searcher.policy, CapitolSearch)
        policy = searcher.policy
        policy.sampler(searcher, state.view(0))
        act = policy.actor(searcher, Rng(rng.next64()))
        seen: list[list[int]] = []
        facts: list[list[list[float]]] = []
        for _ in range(5000):
            if state.is_over():
                break
            if state.phase is TURN:
                living = [i for i in range(n) if state.alive[i]]
                seen.append(living)
                facts.append([features(state, i) for i in living])
            seat = state.waiting_for()[0]
            state.apply(seat, act(state, seat))
        if not state.is_over():
            continue
        winner = state.winners()[0]
        for living, fs in zip(seen, facts, strict=True):
            for i, f in zip(living, fs, strict=True):
                rows.append(f)
                won.append(i == winner)
                group.append(positions)
                alive_n.append(len(living))
            positions += 1
    return {
        "x": np.array(rows, dtype=float),
        "won": np.array(won, dtype=float),
        "group": np.array(group),
        "alive": np.array(alive_n),
    }


def _split(data: dict[str, Any], face_to_face: bool) -> tuple[Any, Any, Any]:
    mask = (data["alive"] == 2) if face_to_face else (data["alive"] >= 3)
    return data["x"][mask], data["won"][mask], data["group"][mask]


def log_loss(w: Any, x: Any, won: Any, group: Any) -> tuple[float, Any, Any]:
    """Mean negative log-likelihood per position, its gradient and its Hessian."""
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    which = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(group)]))
    score = x @ w
    top = np.maximum.reduceat(score, starts)
    e = np.exp(score - top[which])
    total = np.add.reduceat(e, starts)
    p = e / total[which]
    loss = -(np.add.reduceat(score * won, starts) - np.log(total) - top).mean()
    grad = -(x.T @ (won - p)) / len(starts)
    # The Hessian of a conditional logit: the covariance of the facts under each position's shares.
    mean = np.add.reduceat(x * p[:, None], starts)
    hess = ((x * p[:, None]).T @ x - mean.T @ mean) / len(starts)
    return float(loss), grad, hess


def fit(x: Any, won: Any, group: Any, ridge: float = 2e-3) -> Any:
    """Newton's method on the (convex) mean log-likelihood, with a ridge (a penalty of ``ridge / 2``
    times the squared weights) for facts that seldom vary."""
    w = np.zeros(x.shape[1])
    for _ in range(30):
        _, grad, hess = log_loss(w, x, won, group)
        step = np.linalg.solve(hess + ridge * np.eye(len(w)), grad + ridge * w)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w


def material_loss(x: Any, won: Any, group: Any) -> float:
    """The former score: each player's (4 × cards + 0.35 × money up to 10)², shared out."""
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    cards = 1.0 + x[:, FEATURES.index("two_cards")]
    strength = (4.0 * cards + 0.35 * np.minimum(x[:, FEATURES.index("money")], 10)) ** 2
    share = np.add.reduceat(strength * won, starts) / np.add.reduceat(strength, starts)
    return float(-np.log(share).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30000)
    parser.add_argument("--test-games", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--write", action="store_true", help="store the weights in capitol_value.py")
    args = parser.parse_args()
    began = time.perf_counter()
    train = play(args.games, args.seed)
    test = play(args.test_games, args.seed + 1)
    print(f"{len(train['won'])} rows from {args.games} games, {time.perf_counter() - began:.0f} s")
    fitted: dict[str, list[float]] = {}
    print("| alive | positions | fitted | uniform | material (before) |")
    print("|---|---|---|---|---|")
    for key, face_to_face in (("two", True), ("more", False)):
        w = fit(*_split(train, face_to_face))
        fitted[key] = [round(float(v), 3) for v in w]
        x, won, group = _split(test, face_to_face)
        positions = len(np.unique(group))
        loss = log_loss(w, x, won, group)[0]
        uniform = log_loss(np.zeros_like(w), x, won, group)[0]
        label = "2" if face_to_face else "3+"
        print(f"| {label} | {positions} | {loss:.4f} | {uniform:.4f} | {material_loss(x, won, group):.4f} |")
    for key, w in fitted.items():
        print(key, dict(zip(FEATURES, w, strict=True)))
    if args.write:
        text = MODULE.read_text()
        for key, w in fitted.items():
            text = re.sub(rf'"{key}": \([^)]*\)', f'"{key}": ({", ".join(map(str, w))})', text)
        MODULE.write_text(text)
        print(f"weights written to {MODULE} (were {WEIGHTS})")


if __name__ == "__main__":
    main()
