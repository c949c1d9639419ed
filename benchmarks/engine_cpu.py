"""Fixed work in CPU time: the same seeded random playouts, timed with ``time.process_time``.

`benchmarks/engine.py` counts decisions in a wall-clock window, which a busy machine's preemption
moves by tens of percent; this plays a fixed number of seeded games per cell and prints CPU
microseconds per decision, so two trees can be compared on a shared machine (run it in each, in
turn, and take the ratio pair by pair). The decision counts must come out equal in both trees: the
same seeds play the same games, so a different count is a change of behaviour, not of speed.

    python -m benchmarks.engine_cpu            # from the repository root
"""

from __future__ import annotations

import argparse
import json
import random
import time

from benchmarks.engine import play_random
from conflictology import games

# (game, players, replayed from one cloned root as a search does, games)
CELLS = [
    ("capitol", 2, False, 3000),
    ("capitol", 4, False, 1500),
    ("capitol", 6, False, 1000),
    ("capitol", 4, True, 1500),
    ("conspiranoicos", 2, False, 1000),
    ("conspiranoicos", 2, True, 1000),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every cell's number of games")
    args = parser.parse_args()
    out: dict[str, list[float]] = {}
    for name, players, from_clone, count in CELLS:
        game = games.get(name)
        chooser = random.Random(7)
        root = game.new_game(players=players, seed=7)
        play_random(game.new_game(players=players, seed=1), random.Random(1))  # warm-up
        decisions = 0
        start = time.process_time()
        for _ in range(max(1, int(count * args.scale))):
            if from_clone:
                state = root.clone()
            else:
                state = game.new_game(players=players, seed=chooser.getrandbits(64))
            decisions += play_random(state, chooser)
        spent = time.process_time() - start
        cell = f"{name}/{players}{'+clone' if from_clone else ''}"
        out[cell] = [decisions, round(spent / decisions * 1e6, 3)]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
