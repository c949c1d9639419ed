"""Bots at big Capitol tables (issue 29): legal play at 7-10 seats by level, and hard's decision time.

    python benchmarks/big_tables.py                  # legality at 7-10 seats, then hard at 4 and 10 seats
    python benchmarks/big_tables.py --games 2 --decisions 150 --json

Legality: for each level (``easy``, ``normal``, ``hard``) and each size from 7 to 10 seats, ``--games``
games in which every seat is that level (``hard`` at most ``--hard-seats`` seats, the rest ``normal``,
so a table of ten searches does not take an hour); every action is checked against the legal list
before it is applied, and a bot's own ``fallbacks`` counter (the rule players that keep one) must
stay at 0. Time: ``hard`` at one seat of a table of ``normal`` bots, at 4 and at 10 seats, until it
has made ``--decisions`` decisions with a real choice; the process CPU time and the wall time of each,
their medians and 90th percentiles. ``hard`` stops on its clock (0.3 s of wall time), so its CPU time
per decision is what a bigger table's longer views and worlds cost it inside that clock.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from conflictology import bots, games
from conflictology.engine import Rng

LEVELS = ("easy", "normal", "hard")


class Checked(bots.Bot):
    """A bot whose every action is checked against the legal list (a wrong one raises), timed."""

    def __init__(self, inner: bots.Bot) -> None:
        self.inner, self.seat, self.game, self.name = inner, inner.seat, inner.game, inner.name
        self.cpu: list[float] = []
        self.wall: list[float] = []

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        wall, cpu = time.perf_counter(), time.process_time()
        action = self.inner.act(view, legal)
        if len(legal) > 1:
            self.cpu.append(time.process_time() - cpu)
            self.wall.append(time.perf_counter() - wall)
        if action not in legal:
            raise AssertionError(f"{self.name} at seat {self.seat} played {action}, not in {legal}")
        return action


def legality(n_games: int, hard_seats: int, seed: int) -> list[dict[str, Any]]:
    game = games.get("capitol")
    master = Rng(seed)
    rows = []
    for level in LEVELS:
        for players in range(7, 11):
            decisions = fallbacks = finished = 0
            for g in range(n_games):
                state = game.new_game(players=players, seed=master.next64())
                names = [level] * players
                if level == "hard":
                    names = [
                        "hard" if (seat + g) % players < hard_seats else "normal" for seat in range(players)
                    ]
                seated = [
                    Checked(bots.make(n, game, seat, seed=master.next64())) for seat, n in enumerate(names)
                ]
                decisions += bots.play_game(state, seated, max_decisions=20_000)
                finished += int(state.is_over() and len(state.winners()) == 1)
                fallbacks += sum(getattr(b.inner, "fallbacks", 0) for b in seated)
            rows.append(
                {
                    "level": level,
                    "players": players,
                    "games": n_games,
                    "finished": finished,
                    "decisions": decisions,
                    "illegal": 0,
                    "fallbacks": fallbacks,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    return rows


def hard_time(players: int, decisions: int, seed: int) -> dict[str, Any]:
    game = games.get("capitol")
    master = Rng(seed)
    cpu: list[float] = []
    wall: list[float] = []
    played = 0
    while len(cpu) < decisions:
        state = game.new_game(players=players, seed=master.next64())
        hard_seat = played % players
        seated = [
            Checked(bots.make("hard" if seat == hard_seat else "normal", game, seat, seed=master.next64()))
            for seat in range(players)
        ]
        bots.play_game(state, seated, max_decisions=20_000)
        cpu += seated[hard_seat].cpu
        wall += seated[hard_seat].wall
        played += 1

    def pct(xs: list[float], q: int) -> float:
        return round(statistics.quantiles(xs, n=10)[q - 1] * 1000, 1)

    row = {
        "players": players, "games": played, "decisions": len(cpu),
        "cpu_ms_median": round(statistics.median(cpu) * 1000, 1), "cpu_ms_p90": pct(cpu, 9),
        "wall_ms_median": round(statistics.median(wall) * 1000, 1), "wall_ms_p90": pct(wall, 9),
        "wall_ms_max": round(max(wall) * 1000, 1),
    }  # fmt: skip
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=2, help="games per level and size (legality)")
    parser.add_argument("--hard-seats", type=int, default=3, help="seats of hard at a legality table")
    parser.add_argument("--decisions", type=int, default=150, help="hard's decisions timed per size")
    parser.add_argument("--seed", type=int, default=2029)
    parser.add_argument("--only", choices=("legal", "time"), default=None)
    parser.add_argument(
        "--sizes", default="4,10", help="table sizes timed, in this order (alternate: 4,10,10,4)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out: dict[str, Any] = {}
    if args.only in (None, "legal"):
        out["legal"] = legality(args.games, args.hard_seats, args.seed)
    if args.only in (None, "time"):
        sizes = [int(n) for n in args.sizes.split(",")]
        out["time"] = [hard_time(n, args.decisions, args.seed + i) for i, n in enumerate(sizes)]
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
