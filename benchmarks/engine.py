"""Engine speed: random playouts, decisions/s and games/s, beside the peers a user would compare.

    scripts/bench                          # installs the peers (the "bench" extra), then runs this
    python benchmarks/engine.py [--seconds 2] [--runs 5] [--json]

Every engine is driven the same way: ask for the legal actions of the player to move, pick one with
Python's ``random.choice``, apply it; count decisions (an engine's games differ in length). Peers:
``coupml`` (a Python Coup engine, 2–6 players: its 15 cards cannot deal ten, so Capitol's ten-seat
big table is compared with coupml at six, its own largest table) and OpenSpiel's Python-implemented
``python_liars_poker`` (2 players; chance nodes are sampled and not counted as decisions). Each cell
is the median of ``--runs`` timed runs of ``--seconds`` each; ``--cpu`` times them in CPU seconds of this
process (``time.process_time``), which leaves out the time a busy machine keeps it waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from conflictology import games, native
from conflictology.engine import GameState

# One timed run: plays whole games until the time is up; returns (decisions, games, seconds).
Runner = Callable[[float, int], tuple[int, int, float]]
# What a run is timed with: wall-clock seconds, or this process's CPU seconds (--cpu).
Clock = Callable[[], float]


@dataclass
class Row:
    engine: str
    game: str
    players: int
    decisions_per_s: float
    games_per_s: float
    decisions_per_game: float
    peer: str | None = None


def play_random(state: GameState, chooser: random.Random) -> int:
    """Play ``state`` to its end with uniformly random legal actions; returns the decisions made."""
    decisions = 0
    waiting = state.waiting_for()
    while waiting:
        seat = waiting[0] if len(waiting) == 1 else chooser.choice(waiting)
        state.apply(seat, chooser.choice(state.legal_actions(seat)))
        decisions += 1
        waiting = state.waiting_for()
    return decisions


def ours(game_name: str, players: int, from_clone: bool = False, clock: Clock = time.perf_counter) -> Runner:
    """Fresh deals; or, with ``from_clone``, the search-bot loop: one clone of a fixed root per playout
    (ISMCTS pays this once per iteration)."""
    game = games.get(game_name)

    def run(seconds: float, seed: int) -> tuple[int, int, float]:
        chooser = random.Random(seed)
        root = game.new_game(players=players, seed=seed)
        decisions = played = 0
        start = clock()
        deadline = start + seconds
        while True:
            if from_clone:
                state = root.clone()
            else:
                state = game.new_game(players=players, seed=chooser.getrandbits(64))
            decisions += play_random(state, chooser)
            played += 1
            now = clock()
            if now >= deadline:
                return decisions, played, now - start

    return run


# coupml deals 15 cards (three of five roles): two each to six players leaves three, its largest table.
COUPML_MAX_PLAYERS = 6


def coupml(players: int, clock: Clock = time.perf_counter) -> Runner | None:
    try:
        import numpy as np
        from coupml import Coup
    except ImportError:
        return None

    def run(seconds: float, seed: int) -> tuple[int, int, float]:
        chooser = random.Random(seed)
        decisions = played = 0
        start = clock()
        deadline = start + seconds
        while True:
            coup = Coup(players, np.random.RandomState(chooser.getrandbits(32)))
            coup.init_game()
            while not coup.is_game_over():
                coup.play_action(chooser.choice(coup.get_legal_actions()))
                decisions += 1
            played += 1
            now = clock()
            if now >= deadline:
                return decisions, played, now - start

    return run


def liars_poker(clock: Clock = time.perf_counter) -> Runner | None:
    try:
        import pyspiel
        from open_spiel.python.games import liars_poker as _registers_game  # noqa: F401
    except ImportError:
        return None
    game = pyspiel.load_game("python_liars_poker")

    def run(seconds: float, seed: int) -> tuple[int, int, float]:
        chooser = random.Random(seed)
        decisions = played = 0
        start = clock()
        deadline = start + seconds
        while True:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                    state.apply_action(chooser.choices(outcomes, probs)[0])
                else:
                    state.apply_action(chooser.choice(state.legal_actions()))
                    decisions += 1
            played += 1
            now = clock()
            if now >= deadline:
                return decisions, played, now - start

    return run


def measure_group(
    cells: list[tuple[str, str, int, Runner]], seconds: float, runs: int, console: Console
) -> list[Row]:
    """Time the cells of one comparison interleaved, run after run, so that a noisy moment of the
    machine falls on all of them alike; one short warm-up run each first."""
    results: list[list[tuple[int, int, float]]] = [[] for _ in cells]
    for _, _, _, runner in cells:
        runner(min(0.2, seconds), 1)
    for i in range(runs):
        for k, (engine, game, players, runner) in enumerate(cells):
            console.log(f"run {i + 1}/{runs}: {engine} {game} {players}p")
            results[k].append(runner(seconds, 1000 + i))
    rows = []
    for (engine, game, players, _), res in zip(cells, results, strict=True):
        dps = statistics.median(d / s for d, _, s in res)
        gps = statistics.median(g / s for _, g, s in res)
        per_game = sum(d for d, _, _ in res) / max(1, sum(g for _, g, _ in res))
        rows.append(Row(engine, game, players, dps, gps, per_game))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one timed run")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per cell (the median is shown)")
    parser.add_argument("--players", type=int, nargs="*", default=[2, 3, 4, 5, 6, 10], help="Capitol tables")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--cpu", action="store_true", help="time runs in this process's CPU seconds")
    args = parser.parse_args()
    console = Console(stderr=True)
    clock: Clock = time.process_time if args.cpu else time.perf_counter
    rows: list[Row] = []
    missing: list[str] = []

    def group(cells: list[tuple[str, str, int, Runner | None, str | None]]) -> None:
        present = [(e, g, n, r) for e, g, n, r, _ in cells if r is not None]
        missing.extend(e for e, _, _, r, _ in cells if r is None)
        for row, peer in zip(
            measure_group(present, args.seconds, args.runs, console),
            [p for _, _, _, r, p in cells if r is not None],
            strict=True,
        ):
            row.peer = peer
            rows.append(row)

    for n in args.players:
        peer = min(n, COUPML_MAX_PLAYERS)  # past six, the peer is coupml's own largest table
        group([
            ("conflictology", "capitol", n, ours("capitol", n, clock=clock), f"coupml/{peer}"),
            ("conflictology+clone", "capitol", n, ours("capitol", n, True, clock), f"coupml/{peer}"),
            *([("coupml", "coup", n, coupml(n, clock), None)] if n <= COUPML_MAX_PLAYERS else []),
        ])
    group([
        ("conflictology", "conspiranoicos", 2, ours("conspiranoicos", 2, clock=clock), "open_spiel/2"),
        (
            "conflictology+clone", "conspiranoicos", 2,
            ours("conspiranoicos", 2, True, clock), "open_spiel/2",
        ),
        ("open_spiel", "python_liars_poker", 2, liars_poker(clock), None),
    ])

    by_key = {f"{r.engine}/{r.players}": r for r in rows}
    if args.json:
        print(json.dumps([r.__dict__ for r in rows], indent=2))
        return
    seconds = "CPU s" if args.cpu else "s"
    table = Table(
        title=f"Random playouts (median of {args.runs} runs × {args.seconds:g} {seconds}); "
        f"the rules {native.running}"
    )
    for col in ("engine", "game", "players", "decisions/s", "games/s", "decisions/game", "vs peer"):
        table.add_column(col, justify="left" if col in ("engine", "game") else "right")
    for r in rows:
        peer = by_key.get(r.peer) if r.peer else None
        ratio = f"{r.decisions_per_s / peer.decisions_per_s:.2f}× {peer.engine}" if peer else ""
        table.add_row(
            r.engine, r.game, str(r.players), f"{r.decisions_per_s:,.0f}", f"{r.games_per_s:,.1f}",
            f"{r.decisions_per_game:.1f}", ratio,
        )
    Console(width=140).print(table)
    for name in dict.fromkeys(missing):
        Console().print(f"[yellow]{name} is not installed: pip install -e '.[bench]'[/yellow]")


if __name__ == "__main__":
    main()
