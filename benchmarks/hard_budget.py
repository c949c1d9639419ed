"""How strong ``hard`` is on a short clock (issue 28): head to head, seats rotated, one game at a time.

    python benchmarks/hard_budget.py --bots hard:iterations=20:seconds=9,heuristic --games 600 > quick.jsonl
    python benchmarks/hard_budget.py --bots hard:iterations=200:seconds=9,heuristic --games 200 > full.jsonl
    python benchmarks/hard_budget.py --summary quick.jsonl full.jsonl
    python benchmarks/hard_budget.py --players 4 \
        --bots hard:iterations=20:seconds=9,outside-treason,outside-treason,outside-treason
    python benchmarks/hard_budget.py --game conspiranoicos \
        --bots hard:iterations=200:seconds=9,hard:iterations=2000:seconds=9

A search's budget is given in worlds (``iterations``, with a clock far away), not seconds, so a loaded
machine changes its CPU time, never its decisions: on the 2-core machine 20 worlds took 29-40 ms of
CPU a decision (the pool's 30 ms quick search) and 200 worlds 320 ms (``hard``'s 0.3 s on a quiet
machine); in Conspiranoicos, where ``hard`` is ISMCTS, 200 iterations took 29 ms and 2,000 took 300 ms
(since its cheaper cut-off and quick rule, 250 iterations cost what 200 did: docs/bots.md, "A quick
Conspiranoicos search").
Game ``g`` is ``conflictology simulate GAME --games 1 --seed SEED*100000+g`` with the seats rotated by
``g`` (a name given for several seats counts their wins together), printed as one JSON line as soon
as it ends (a run cut short still counts); ``--summary`` reads such lines back: each bot's wins with a
95 % Wilson interval and its CPU milliseconds a decision (decisions with a real choice only).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from conflictology.simulate import simulate


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    p = wins / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return centre - half, centre + half


def play(game: str, players: int, games: int, seed: int, names: list[str], start: int = 0) -> None:
    for g in range(start, start + games):
        order = [names[(i + g) % players] for i in range(players)]
        r = simulate(game, players, 1, order, seed=seed * 100_000 + g)
        won = [name for name, w in r.wins.items() if w]
        line = {"g": g, "win": won[0] if won else None, "dec": r.bot_decisions, "cpu": r.bot_cpu_seconds}
        print(json.dumps(line), flush=True)


def summary(path: str) -> None:
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.startswith("{")]
    n = len(rows)
    wins: dict[str | None, int] = {}
    decisions: dict[str, int] = {}
    cpu: dict[str, float] = {}
    for row in rows:
        wins[row["win"]] = wins.get(row["win"], 0) + 1
        for name, count in row["dec"].items():
            decisions[name] = decisions.get(name, 0) + count
            cpu[name] = cpu.get(name, 0.0) + row["cpu"].get(name, 0.0)
    print(f"{path}: {n} games, {wins.get(None, 0)} drawn")
    for name in decisions:
        k = wins.get(name, 0)
        lo, hi = wilson(k, n)
        ms = 1000 * cpu[name] / decisions[name]
        print(f"  {name}: {k} wins, {k / n:.3f} (95 % CI {lo:.3f}-{hi:.3f}); {ms:.1f} ms CPU a decision")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", help="one bot spec per seat, comma-separated")
    parser.add_argument("--game", default="capitol")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--start", type=int, default=0, help="the first game's number (split a run in two)")
    parser.add_argument("--summary", nargs="*", help="JSON-lines files of earlier runs to sum up")
    args = parser.parse_args()
    if args.summary:
        for path in args.summary:
            summary(path)
        return
    if not args.bots:
        sys.exit("--bots or --summary")
    names = args.bots.split(",")
    if len(names) != args.players:
        sys.exit(f"{args.players} seats need {args.players} bots")
    play(args.game, args.players, args.games, args.seed, names, args.start)


if __name__ == "__main__":
    main()
