"""Fit the quick Capitol search's rule to the full search's decisions (issue 28; docs/bots.md).

    python scripts/distill_capitol.py collect --games 400 --seed 7001 > decisions.jsonl
    python scripts/distill_capitol.py fit decisions.jsonl [...]

``collect`` plays two-player games of the full search against itself (200 worlds a decision) and
prints, for every searched decision, the seat's view, the candidates, the heuristic's choice
(``prior``), the full search's and every world's reward after each candidate. ``fit`` reads those
lines back and scores rules for a quick search (20 worlds: the 30 ms clock's) by what they would
gain over the heuristic's choice: each decision's worlds are cut in blocks of 20, a rule is given
one block and its pick is scored on the decision's other worlds (which played no part in the pick,
so the score is unbiased). The rules scored: the full search's own (0.02 + 2 standard errors) on 20
worlds and on 180, the same with fewer standard errors, and a linear model of the full search's
gains from facts of the seat's view (ridge regression on the decisions of four games in five,
scored on the fifth), alone or weighed with the 20 worlds by precision.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from typing import Any

from conflictology import bots, games
from conflictology.bots.capitol_knowledge import Knowledge
from conflictology.bots.ismcts import FlatSearchBot, _paired
from conflictology.engine import Rng
from conflictology.games.capitol.data import CLAIM

Action = dict[str, Any]

FULL = "hard:iterations=200:seconds=99"  # a clock out of reach even on a loaded machine


class _Recorder(bots.Bot):
    def __init__(self, inner: FlatSearchBot, out: Any, game_id: int) -> None:
        self.inner, self.out, self.game_id = inner, out, game_id
        self.seat, self.game = inner.seat, inner.game

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        self.inner.last_results = []
        self.inner.last_candidates = []
        action = self.inner.act(view, legal)
        results = self.inner.last_results
        if len(legal) > 1 and results and len(results) > 1 and results[0]:
            cands = self.inner.last_candidates
            line = {
                "g": self.game_id,
                "view": view,
                "cands": cands,
                "prior": cands.index(self.inner.last_prior) if self.inner.last_prior in cands else None,
                "chosen": cands.index(action) if action in cands else None,
                "results": [[round(x, 4) for x in r] for r in results],
            }
            print(json.dumps(line), file=self.out, flush=True)
        return action


def collect(games_n: int, seed: int, spec: str) -> None:
    game = games.get("capitol")
    master = Rng(seed)
    for g in range(games_n):
        state = game.new_game(players=2, seed=master.next64())
        seated: list[bots.Bot] = []
        for seat in range(2):
            inner = bots.make(spec, game, seat, seed=master.next64())
            assert isinstance(inner, FlatSearchBot)
            seated.append(_Recorder(inner, sys.stdout, seed * 100_000 + g))
        with contextlib.suppress(bots.GameTooLong):  # a stalled game: its decisions are kept
            bots.play_game(state, seated, max_decisions=2000)


# -- a linear model of the full search's gains (tried; not shipped: no better than the threshold) --


def kind(phase: str, pending: dict[str, Any], action: Action) -> str:
    """The move's name in its situation: a turn's action, or the answer and what it answers."""
    t = action["type"]
    if phase == "turn":
        return str(t)
    what = pending.get("action") or ""
    if t == "block":
        return f"block:{action.get('card')}:{what}"
    if phase == "block_challenge":
        return f"{t}:block:{pending.get('block_claim')}"
    if t in ("challenge", "pass"):
        return f"{t}:{phase}:{what}"
    if t in ("lose", "show"):
        return f"{t}:{action.get('card')}"
    return f"{t}:{phase}"


def _claimed_role(phase: str, action: Action) -> str | None:
    t = action["type"]
    if phase == "turn":
        return CLAIM.get(t)
    if t == "block":
        card = action.get("card")
        return None if card is None else str(card)
    return None


def _odds(k: Knowledge, phase: str, pending: dict[str, Any], action: Action, other: int) -> float:
    """How likely the other holds the role that decides this move: for an answer to a claim, the
    claimed role; for a Hacker, the Judge that blocks it; for Foreign Aid, the Banker."""
    t = action["type"]
    if phase == "turn":
        role = {"hacker": "judge", "foreign_aid": "banker"}.get(t)
        return 0.0 if role is None else k.p_holds(other, role)
    if phase == "block_challenge":
        role = pending.get("block_claim")
        blocker = pending.get("blocker")
        if role and isinstance(blocker, int):
            return k.p_holds(blocker, role, claimed=True, block=True)
        return 0.0
    actor = pending.get("actor")
    what = pending.get("action")
    role = CLAIM.get(what or "")
    if role and isinstance(actor, int) and actor != k.me:
        return k.p_holds(actor, role, claimed=True)
    return 0.0


def features(k: Knowledge, phase: str, pending: dict[str, Any], action: Action) -> dict[str, float]:
    """The facts an action is scored by (name -> value): its kind, and the kind crossed with the
    seat's situation. Face to face: ``other`` is the one other living player."""
    base = kind(phase, pending, action)
    others = k.living_others()
    other = others[0].seat if others else k.me
    me, them = k.players[k.me], k.players[other]
    role = _claimed_role(phase, action)
    out: dict[str, float] = {base: 1.0}
    if role is not None:
        out[base + "|honest"] = float(role in k.hand)
    out[base + "|me1"] = float(me.hidden <= 1)
    out[base + "|them1"] = float(them.hidden <= 1)
    out[base + "|money"] = min(me.money, 10) / 10.0
    out[base + "|their_money"] = min(them.money, 10) / 10.0
    out[base + "|odds"] = _odds(k, phase, pending, action, other)
    if action["type"] == "keep":
        for card in action.get("cards") or ():
            out[f"keep:{card}"] = out.get(f"keep:{card}", 0.0) + 1.0
    return out


def predicted_gain(weights: dict[str, float], mine: dict[str, float], prior: dict[str, float]) -> float:
    """The estimated gain of one action over another: the difference of their scores."""
    score = sum(weights.get(name, 0.0) * v for name, v in mine.items())
    return score - sum(weights.get(name, 0.0) * v for name, v in prior.items())


def combined_gain(predicted: float, tau: float, measured: float, se: float) -> float:
    """The gain estimated from the model (``predicted``, spread ``tau``) and the worlds (``measured``,
    standard error ``se``), each weighed by its precision."""
    a = 1.0 / (tau * tau)
    b = 1.0 / max(se * se, 1e-6)
    return (a * predicted + b * measured) / (a + b)


def paired(a: list[float], b: list[float], floor: float) -> tuple[float, float]:
    """The mean paired difference a - b and its standard error, at least ``floor`` / sqrt(n) (a few
    worlds that all agree do not make a certainty)."""
    n = len(a)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 1.0
    return mean, math.sqrt(max(var, floor * floor) / n)


QUICK = 20  # the quick search's worlds (the 30 ms clock's, docs/bots.md "Hard at scale")


def _decisions(files: list[str]) -> list[dict[str, Any]]:
    out = []
    for path in files:
        with open(path) as f:
            for line in f:
                if not line.startswith("{"):
                    continue
                d = json.loads(line)
                view = d["view"]
                alive = sum(1 for p in view["players"] if p["alive"])
                if d["prior"] is None or alive != 2 or len(d["results"][0]) < 2 * QUICK:
                    continue
                k = Knowledge(view)
                pending = view.get("pending") or {}
                d["feats"] = [features(k, view["phase"], pending, a) for a in d["cands"]]
                out.append(d)
    return out


def _held_out(d: dict[str, Any]) -> bool:
    return int(d["g"]) % 5 == 0


def _pairs(decisions: list[dict[str, Any]]) -> tuple[list[dict[str, float]], list[float], list[float]]:
    """Every candidate against the heuristic's choice: the difference of their facts, the full
    search's measured gain and its variance."""
    xs, ys, vs = [], [], []
    for d in decisions:
        p = d["prior"]
        base = d["feats"][p]
        for j, feats in enumerate(d["feats"]):
            if j == p:
                continue
            x = dict(feats)
            for name, v in base.items():
                x[name] = x.get(name, 0.0) - v
            diffs = [a - b for a, b in zip(d["results"][j], d["results"][p], strict=True)]
            n = len(diffs)
            mean = sum(diffs) / n
            xs.append(x)
            ys.append(mean)
            vs.append(sum((t - mean) ** 2 for t in diffs) / (n - 1) / n)
    return xs, ys, vs


def _old_rule(results: list[list[float]], p: int, z: float, margin: float) -> int:
    means = [sum(r) / len(r) for r in results]
    best = max(range(len(results)), key=lambda j: (means[j], -j))
    if best == p:
        return p
    mean, se = _paired(results[best], results[p])
    return best if mean > margin + z * se else p


def _model_rule(
    d: dict[str, Any],
    results: list[list[float]],
    w: dict[str, float],
    tau: float,
    margin: float,
    floor: float,
    search: bool = True,
) -> int:
    p = d["prior"]
    best, best_gain = p, margin
    for j in range(len(results)):
        if j == p:
            continue
        g = predicted_gain(w, d["feats"][j], d["feats"][p])
        if search:
            measured, se = paired(results[j], results[p], floor)
            g = combined_gain(g, tau, measured, se)
        if g > best_gain:
            best, best_gain = j, g
    return best


def _score(decisions: list[dict[str, Any]], rule: Any, pick_on_block: bool = True) -> tuple[float, float]:
    """A rule's mean gain over the heuristic's choice a decision (win probability), and how often it
    overrules it. Each decision's worlds are cut in blocks of ``QUICK``: the rule picks on one block
    and is scored on the other worlds, or (``pick_on_block=False``, the full search) picks on all but
    one block and is scored on it; either way unbiased, the scoring worlds played no part in the pick."""
    total = overrides = 0.0
    count = 0
    for d in decisions:
        r = d["results"]
        p = d["prior"]
        for b in range(len(r[0]) // QUICK):
            lo, hi = b * QUICK, (b + 1) * QUICK
            block, rest = [x[lo:hi] for x in r], [x[:lo] + x[hi:] for x in r]
            seen, scored = (block, rest) if pick_on_block else (rest, block)
            q = rule(d, seen)
            total += (sum(scored[q]) - sum(scored[p])) / len(scored[q])
            overrides += q != p
            count += 1
    return total / count, overrides / count


def _score_full(decisions: list[dict[str, Any]]) -> tuple[float, float]:
    """The full rule on all worlds but one block, scored on that block (the full search's gain, at
    nine tenths of its worlds)."""
    return _score(decisions, lambda d, seen: _old_rule(seen, d["prior"], 2.0, 0.02), pick_on_block=False)


def fit(files: list[str], ridge: float) -> None:
    import numpy as np

    decisions = _decisions(files)
    train = [d for d in decisions if not _held_out(d)]
    test = [d for d in decisions if _held_out(d)]
    print(f"{len(decisions)} decisions, {len(train)} to fit, {len(test)} held out", file=sys.stderr)
    xs, ys, _ = _pairs(train)
    names = sorted({name for x in xs for name in x})
    col = {name: i for i, name in enumerate(names)}
    a = np.zeros((len(xs), len(names)))
    for i, x in enumerate(xs):
        for name, v in x.items():
            a[i, col[name]] = v
    y = np.array(ys)
    w = np.linalg.solve(a.T @ a + ridge * np.eye(len(names)), a.T @ y)
    weights = {name: round(float(v), 5) for name, v in zip(names, w, strict=True) if abs(v) > 1e-5}
    txs, tys, tvs = _pairs(test)
    pred = np.array([predicted_gain(weights, x, {}) for x in txs])
    resid = float(np.mean((np.array(tys) - pred) ** 2))
    noise = float(np.mean(tvs))
    tau = math.sqrt(max(resid - noise, 1e-4))
    print(
        f"held out: {len(tys)} pairs, gain variance {float(np.var(tys)):.5f}, residual {resid:.5f}, "
        f"of which the full search's own noise {noise:.5f}: tau {tau:.4f}",
        file=sys.stderr,
    )
    floor = 0.5
    rows = [("full search (180 worlds, z=2)", _score_full(test))]
    print("all decisions (the thresholds fit nothing):")
    for z, margin in ((2.0, 0.02), (1.0, 0.0), (0.75, 0.0), (0.5, 0.0)):
        gain, over = _score(decisions, lambda d, r, z=z, m=margin: _old_rule(r, d["prior"], z, m))
        print(f"  20 worlds, z={z}, margin {margin}: gain {gain:+.4f} a decision, overrules {over:.3f}")
    gain, over = _score_full(decisions)
    print(f"  the full search (180 worlds): gain {gain:+.4f} a decision, overrules {over:.3f}")
    print("held out (a fifth of the games):")
    for z, margin in ((2.0, 0.02), (1.5, 0.0), (1.0, 0.02), (1.0, 0.0), (0.75, 0.0), (0.5, 0.0), (0.0, 0.0)):
        rows.append(
            (
                f"20 worlds, z={z}, margin {margin}",
                _score(test, lambda d, r, z=z, m=margin: _old_rule(r, d["prior"], z, m)),
            )
        )
    for scale in (0.5, 1.0, 2.0):
        for margin in (0.0, 0.01, 0.02, 0.04):
            rows.append(
                (
                    f"20 worlds + model, tau x{scale}, margin {margin}",
                    _score(
                        test, lambda d, r, s=scale, m=margin: _model_rule(d, r, weights, tau * s, m, floor)
                    ),
                )
            )
    for margin in (0.0, 0.02, 0.04):
        rows.append(
            (
                f"model alone, margin {margin}",
                _score(test, lambda d, r, m=margin: _model_rule(d, r, weights, tau, m, floor, search=False)),
            )
        )
    for label, (gain, over) in rows:
        print(f"{label:45s} gain {gain:+.4f} a decision, overrules {over:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--games", type=int, default=100)
    c.add_argument("--seed", type=int, default=7001)
    c.add_argument("--bot", default=FULL)
    f = sub.add_parser("fit")
    f.add_argument("files", nargs="+")
    f.add_argument("--ridge", type=float, default=3.0)
    args = parser.parse_args()
    if args.cmd == "collect":
        collect(args.games, args.seed, args.bot)
    else:
        fit(args.files, args.ridge)


if __name__ == "__main__":
    main()
