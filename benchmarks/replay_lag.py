"""What a replay's build costs the event loop, by where it is built (server/replay_builds.py).

    python -m benchmarks.replay_lag                 # 5 rounds, thread and process alternated
    python -m benchmarks.replay_lag --rounds 9

The longest game the rules let anyone play (six seats looping Police investigations with
``stalemate_turns`` at 200, as the replay-flood attack plays it: ~1,600 decisions) is built while a
*synthetic move* runs every 10 ms on the event loop: 10 passes of the loop (each pass waits in
``select``, giving the interpreter up, and must take it back) and 0.5 ms of Python, roughly what one
move of a room costs the loop. Figures per round: the build's wall time and the moves' latency
(p50, p99, max) while it runs. ``thread`` is ``replay_workers = 0`` (the old way), ``process`` the
default, ``no build`` the same moves for 2 s with nothing built (the machine's own noise); they
alternate round by round, so a loaded moment falls on all alike: read the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

from conflictology import games
from conflictology.server.replay_builds import ProcessBuilds, ThreadBuilds
from conflictology.server.replay_cache import Builds

LOOP = ("police_investigate", "pass", "let_keep")
MOVE_EVERY = 0.010
MOVE_PASSES = 10
MOVE_WORK = 0.0005
IDLE_SECONDS = 2.0


def long_record() -> dict[str, Any]:
    """The archive record of the longest game (the replay-flood attack's loop, played here)."""
    game = games.get("capitol")
    options = {"stalemate_turns": 200}
    state = game.new_game(players=6, seed=0, options=options)
    record: dict[str, Any] = {
        "id": "f" * 32,
        "room": "BENCH",
        "game": "capitol",
        "public": True,
        "options": options,
        "players": [{"seat": i, "name": f"Name{i}", "bot": False, "level": None} for i in range(6)],
        "initial": state.to_json(),
        "actions": [],
        "started": 1.0,
        "finished": 2.0,
        "keys": [],
    }
    while not state.is_over():
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        action = next((a for kind in LOOP for a in legal if a["type"] == kind), legal[0])
        state.apply(seat, action)
        record["actions"].append(
            {"seq": len(record["actions"]) + 2, "seat": seat, "action": action, "by": "player"}
        )
    record.update(winners=state.winners(), final=state.to_json(), log=state.view(None).get("log", []))
    return record


async def _move() -> None:
    for _ in range(MOVE_PASSES):
        await asyncio.sleep(0)
    end = time.perf_counter() + MOVE_WORK
    while time.perf_counter() < end:
        pass


async def one_round(builds: Builds | None, record: dict[str, Any]) -> tuple[float, list[float]]:
    """Build the replay once while moves run (None: no build, moves for IDLE_SECONDS); the build's
    seconds and the moves' latencies."""
    done = asyncio.Event()
    latencies: list[float] = []

    async def moves() -> None:
        due = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            await _move()
            # From when the move was due: one that could not start on time waited for the loop.
            latencies.append(time.perf_counter() - due)
            due = max(due + MOVE_EVERY, time.perf_counter())  # no backlog after a stall

    mover = asyncio.ensure_future(moves())
    began = time.perf_counter()
    if builds is None:
        await asyncio.sleep(IDLE_SECONDS)
    else:
        await builds.build("replay", record)
    took = time.perf_counter() - began
    done.set()
    await mover
    return took, latencies


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main_async(rounds: int) -> None:
    record = long_record()
    print(f"load average at the start {os.getloadavg()[0]:.1f}", flush=True)
    processes = ProcessBuilds(1)
    sides: dict[str, Builds | None] = {"thread": ThreadBuilds(), "process": processes, "no build": None}
    await processes.build("replay", record)  # the fork server started: not in any round
    rows: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in sides}
    try:
        for i in range(rounds):
            for name in sides if i % 2 == 0 else reversed(list(sides)):
                took, lat = await one_round(sides[name], record)
                ms = [x * 1000 for x in lat]
                rows[name].append((took, _pct(ms, 0.5), _pct(ms, 0.99), max(ms)))
                print(
                    f"round {i + 1} {name:8} build {took:.2f} s; moves p50 {_pct(ms, 0.5):.1f} "
                    f"p99 {_pct(ms, 0.99):.1f} max {max(ms):.1f} ms ({len(ms)} moves)",
                    flush=True,
                )
    finally:
        await processes.stop()
    print(
        f"\nmedians over {rounds} rounds (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):"
    )
    medians = {name: [statistics.median(r[k] for r in rows[name]) for k in range(4)] for name in sides}
    for name, (took, p50, p99, worst) in medians.items():
        print(f"  {name:8} build {took:.2f} s; moves p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {worst:.1f} ms")
    t, p = medians["thread"], medians["process"]
    print(
        f"  thread / process: move p99 {t[2] / p[2]:.1f}×, max {t[3] / p[3]:.1f}×; build {t[0] / p[0]:.2f}×"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rounds", type=int, default=5, help="rounds, each building in a thread, in a process and not at all"
    )
    args = parser.parse_args()
    asyncio.run(main_async(args.rounds))


if __name__ == "__main__":
    main()
