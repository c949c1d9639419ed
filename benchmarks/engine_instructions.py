"""Instructions per decision under valgrind's callgrind: a figure the machine's load does not move.

    python -m benchmarks.engine_instructions                      # capitol at 6 and 10, coupml at 6
    python -m benchmarks.engine_instructions --cells capitol/6 --games 100 --warmup 300

Each cell runs callgrind twice over the same seeded random playouts (``engine.play_random``, the
driver every engine shares): once with ``--warmup`` games, once with those and ``--games`` more. The
difference of the two totals, over the decisions of the extra games, is what a decision costs once
the interpreter has started, imported the game and filled its caches: start-up cancels out. The same
seeds play the same games in any tree whose rules are the same (the decision counts must match), with
the same string hashes (``PYTHONHASHSEED=0``: coupml's counts move by a few percent from one hash seed
to another). Another tree's engine is measured with ``PYTHONPATH=that/tree/src``.

``--play CELL WARMUP GAMES`` is the child each callgrind run starts; it prints the decisions made.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

DEFAULT_CELLS = ["capitol/6", "capitol/10", "coupml/6"]


def play(cell: str, warmup: int, count: int) -> int:
    """Play ``warmup`` games, then ``count`` more; return the decisions of the ``count``."""
    name, players_text = cell.split("/")
    players = int(players_text)
    chooser = random.Random(players)
    if name == "coupml":
        import numpy as np
        from coupml import Coup

        def one() -> int:
            coup = Coup(players, np.random.RandomState(chooser.getrandbits(32)))
            coup.init_game()
            decisions = 0
            while not coup.is_game_over():
                coup.play_action(chooser.choice(coup.get_legal_actions()))
                decisions += 1
            return decisions
    else:
        from benchmarks.engine import play_random
        from conflictology import games

        game = games.get(name)

        def one() -> int:
            return play_random(game.new_game(players=players, seed=chooser.getrandbits(64)), chooser)

    for _ in range(warmup):
        one()
    return sum(one() for _ in range(count))


def callgrind(argv: list[str]) -> tuple[int, str]:
    """One run of ``argv`` under callgrind: (instructions executed, what it printed)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},  # the same hashes, so the same dict probes
        )  # fmt: skip
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            raise RuntimeError(f"no instruction count from callgrind:\n{done.stderr}")
        return int(found.group(1)), done.stdout


def instructions(cell: str, warmup: int, count: int) -> tuple[int, int]:
    """One callgrind run of the child: (instructions executed, decisions of the counted games)."""
    argv = [sys.executable, "-m", "benchmarks.engine_instructions", "--play", cell, str(warmup), str(count)]
    total, printed = callgrind(argv)
    return total, int(printed.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument(
        "--cells", nargs="*", default=DEFAULT_CELLS, help="game/players (coupml/6 for coupml)"
    )
    parser.add_argument("--games", type=int, default=100, help="the games counted")
    parser.add_argument("--warmup", type=int, default=300, help="the games played first, in both runs")
    parser.add_argument("--play", nargs=3, metavar=("CELL", "WARMUP", "GAMES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.play:
        cell, warmup, count = args.play
        print(play(cell, int(warmup), int(count)))
        return
    for cell in args.cells:
        base, _ = instructions(cell, args.warmup, 0)
        total, decisions = instructions(cell, args.warmup, args.games)
        print(f"{cell}: {(total - base) / decisions:,.0f} instructions per decision ({decisions} decisions)")


if __name__ == "__main__":
    main()
