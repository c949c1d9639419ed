"""Fit the quick Conspiranoicos search's rule to the full search's decisions (issue 28; docs/bots.md).

    python scripts/distill_conspiranoicos.py collect --games 24 --seed 5000 --every 2 > positions.jsonl
    python scripts/distill_conspiranoicos.py fit positions.jsonl [...]

``collect`` plays two-player games of the heuristic against itself and, at every second Collect
Evidence decision with a real choice (``--every``), asks the seat's view: the heuristic's choice,
three quick searches (200 iterations: the 30 ms clock's) and two full ones (2,000: ``hard``'s 0.3 s),
each with its own seed, and prints their root statistics (visits and mean reward of each of the
seat's actions) and picks, one JSON line a position. The quick searches run with ``quick=0``: their
statistics are the search's own, before any rule. ``fit`` scores rules for the quick search on
those statistics against a reference, the two full searches pooled (4,000 iterations: the action
most visited over both): how often a rule picks the reference's action, and the reference's mean
of the reference's action less the mean of the rule's pick (a loss in the playouts' win
probability; noisy, as a little-visited action's mean is). The rules: the quick search's most
visited action (what it played), the heuristic's choice, and the heuristic's choice unless the most
visited action's mean beats it by ``z`` standard errors of the two means (a win rate's variance at
most 1/4), for several ``z``.

ISMCTS cannot be cut into blocks of worlds as the flat search is (``scripts/distill_capitol.py``):
its visits follow its own statistics. So each rule is scored on quick searches run apart from the
reference, the same decision asked again with other seeds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from conflictology import bots, games
from conflictology.bots.conspiranoicos import SORT_DECISIONS
from conflictology.bots.ismcts import ISMCTSBot
from conflictology.engine import GameState

QUICK = "hard:iterations=200:seconds=99:quick=0"  # clocks out of reach even on a loaded machine
FULL = "hard:iterations=2000:seconds=99"
QUICK_SEEDS = (1, 2, 3)
FULL_SEEDS = (11, 12)
ZS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)

Stats = dict[int, tuple[int, float]]  # action index -> (visits, mean reward)


def positions(games_n: int, seed: int) -> list[tuple[int, GameState, int]]:
    """(game, state, seat) at every Collect Evidence decision with a real choice, in games of the
    heuristic against itself (seeds ``seed + g``; the seats' bots ``10 g`` and ``10 g + 1``)."""
    game = games.get("conspiranoicos")
    out = []
    for g in range(games_n):
        state = game.new_game(2, seed=seed + g)
        seated = [bots.make("heuristic", game, s, seed=g * 10 + s) for s in range(2)]
        while not state.is_over():
            awaited = state.waiting_for()
            for s in awaited:
                legal = state.legal_actions(s)
                if len(legal) > 1 and not any(a["type"] in SORT_DECISIONS for a in legal):
                    out.append((g, state.clone(), s))
            # The seats awaited together (the plays) choose before either is applied.
            chosen = [(s, seated[s].act(state.view(s), state.legal_actions(s))) for s in awaited]
            for s, action in chosen:
                if s in state.waiting_for():
                    state.apply(s, action)
    return out


def collect(games_n: int, seed: int, every: int, quick: str, full: str, out: Any) -> None:
    game = games.get("conspiranoicos")
    table = game.action_table
    for k, (g, state, seat) in enumerate(positions(games_n, seed)[::every]):
        view, legal = state.view(seat), state.legal_actions(seat)
        idx = [table.index(a) for a in legal]
        heuristic = bots.make("heuristic", game, seat, seed=k)
        line: dict[str, Any] = {
            "g": g,
            "k": k,
            "type": legal[0]["type"],
            "legal": idx,
            "heur": idx[legal.index(heuristic.act(view, legal))],
        }
        for name, spec, seeds in (("quick", quick, QUICK_SEEDS), ("full", full, FULL_SEEDS)):
            for sd in seeds:
                bot = bots.make(spec, game, seat, seed=sd * 1000 + k)
                assert isinstance(bot, ISMCTSBot)
                pick = table.index(bot.act(view, legal))
                stats = {str(i): list(v) for i, v in bot.last_root_stats.items()}
                line[f"{name}{sd}"] = {"pick": pick, "stats": stats}
        print(json.dumps(line), file=out, flush=True)


def _stats(entry: dict[str, Any]) -> Stats:
    return {int(i): (int(v[0]), float(v[1])) for i, v in entry["stats"].items()}


def reference(line: dict[str, Any]) -> tuple[int, Stats]:
    """The full searches pooled: the action most visited over both, and each action's pooled mean."""
    pooled: dict[int, list[float]] = defaultdict(lambda: [0, 0.0])
    for sd in FULL_SEEDS:
        for i, (visits, mean) in _stats(line[f"full{sd}"]).items():
            pooled[i][0] += visits
            pooled[i][1] += visits * mean
    means = {i: (int(v), s / v if v else 0.0) for i, (v, s) in pooled.items()}
    best = max(line["legal"], key=lambda i: (means.get(i, (0, 0.0)), -line["legal"].index(i)))
    return best, means


def most_visited(stats: Stats, legal: list[int]) -> int:
    """The plain search's pick: the most visited action, ties to the higher mean, then the listed order."""
    return max(legal, key=lambda i: (*stats.get(i, (0, 0.0)), -legal.index(i)))


def prior_rule(stats: Stats, legal: list[int], prior: int, z: float) -> int:
    """The heuristic's choice unless the most visited action's mean beats it by ``z`` standard
    errors (the rule of ``ISMCTSBot.act`` with no margin)."""
    best = most_visited(stats, legal)
    if best == prior:
        return prior
    if prior not in stats or best not in stats:
        return prior  # the search never tried one of them: keep the heuristic's
    (vb, mb), (vp, mp) = stats[best], stats[prior]
    noise = z * math.sqrt(0.25 / max(1, vb) + 0.25 / max(1, vp))
    return best if mb - mp >= noise else prior


Rule = Callable[[dict[str, Any], Stats], int]


def rules() -> dict[str, Rule]:
    out: dict[str, Rule] = {
        "most visited (the quick search before)": lambda line, st: most_visited(st, line["legal"]),
        "the heuristic's choice": lambda line, st: int(line["heur"]),
    }
    for z in ZS:
        out[f"the heuristic's unless beaten by {z:g} s.e."] = _prior_rule_at(z)
    return out


def _prior_rule_at(z: float) -> Rule:
    return lambda line, st: prior_rule(st, line["legal"], int(line["heur"]), z)


def score(lines: list[dict[str, Any]], rule: Rule) -> tuple[float, float, int]:
    """(agreement with the reference, the reference's mean lost a decision, picks scored)."""
    agree = 0
    loss = 0.0
    n = 0
    for line in lines:
        ref, means = reference(line)
        for sd in QUICK_SEEDS:
            key = f"quick{sd}"
            if key not in line:
                continue
            pick = rule(line, _stats(line[key]))
            n += 1
            agree += pick == ref
            loss += means[ref][1] - means.get(pick, (0, 0.0))[1]
    return (agree / n, loss / n, n) if n else (0.0, 0.0, 0)


def fit(files: list[str], out: Any) -> None:
    lines = []
    for path in files:
        with open(path) as f:
            lines += [json.loads(t) for t in f if t.startswith("{")]
    kinds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        kinds[line["type"]].append(line)
    for name, subset in [("every decision", lines), *sorted(kinds.items())]:
        print(f"{name}: {len(subset)} positions", file=out)
        for rule_name, rule in rules().items():
            agree, loss, n = score(subset, rule)
            print(f"  {rule_name:46s} agrees {agree:.3f}  loses {loss:.4f}  ({n} picks)", file=out)
        a, b = (f"full{sd}" for sd in FULL_SEEDS)
        same = sum(line[a]["pick"] == line[b]["pick"] for line in subset)
        print(f"  (the two full searches agree on {same / max(1, len(subset)):.3f})", file=out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--games", type=int, default=24)
    c.add_argument("--seed", type=int, default=5000)
    c.add_argument("--every", type=int, default=2)
    c.add_argument("--quick", default=QUICK)
    c.add_argument("--full", default=FULL)
    f = sub.add_parser("fit")
    f.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.games, args.seed, args.every, args.quick, args.full, sys.stdout)
    else:
        fit(args.files, sys.stdout)


if __name__ == "__main__":
    main()
